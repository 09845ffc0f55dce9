"""kill -9 torture: a mixed stream of inputs dropped while the daemon is SIGKILLed again and again.

    .venv/bin/python bench/torture.py [--envelopes 600] [--kills 30] [--seed S] [--keep]

A writer thread drops handshakes, notes, handoffs, queries, instigates (the executor appends the
id to a journal outside the hub, then sleeps 0-300 ms), signed orders (a real `ssh-keygen`
key, allowed_signers outside the hub, an action that appends to a second journal), invalid
files, exact duplicates and conflict copies into a hub, while the daemon is started, SIGKILLed
after a random delay and restarted, `--kills` times; `slopd run --once` finishes the run.

Then every invariant is checked: all inputs archived, exactly one terminal reply per id and no
other reply file, every id at most once in the journals and every id missing from its journal
answered "interrupted, not retried", no temp files in any lane, and a ledger that agrees with
the files. Prints the seed, the counts and the run time; exits 1 when an invariant broke.
tests/e2e/test_torture.py calls `torture` with the same code.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

SLOPD = [sys.executable, "-m", "slopd"]
SSH_KEYGEN = "ssh-keygen"
OPERATOR = "operator@example.com"
INTERRUPTED = "interrupted, not retried"
KILL_DELAY = (0.25, 1.8)  # seconds between a daemon's start and its SIGKILL
ORPHAN_DEADLINE = 20.0

EXECUTOR = r"""
import os, random, sys, time
ident = os.environ["SLOP_ID"]
sys.stdin.buffer.read()
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
os.write(fd, (ident + "\n").encode())
os.close(fd)
time.sleep(random.Random(ident).uniform(0, 0.3))
sys.stdout.write(sys.argv[2] + " " + ident + "\n")
"""

# What a handful of sync clients call a conflict copy of NAME.md.
CONFLICT_NAMES = (
    "{stem}.sync-conflict-20260704-101010-ABCDEFG.md",
    "{stem} (conflicted copy 2026-07-04).md",
    "{stem} (1).md",
    "{stem}-laptop.md",
)
# Kinds of input, with their weights in the mix.
MIX = {
    "handshake": 18,
    "note": 10,
    "handoff": 14,
    "query": 10,
    "instigate": 22,
    "order": 14,
    "invalid": 8,
    "invalid-json": 2,
    "garbage": 2,
}
TERMINAL = {"handshake": "ack", "note": "ack", "handoff": "result", "query": "result"}
RUNS = ("instigate", "order")


@dataclass
class Input:
    """One input and everything dropped for it: the lane, file names and bytes, in drop order."""

    ident: str
    kind: str
    lane: str
    drops: list[tuple[str, bytes]]  # (name, data); an order's .sig is one of them
    copies: list[tuple[str, bytes]] = field(default_factory=list)  # duplicates, conflict copies

    @property
    def conflicts(self) -> int:
        """Copies with other bytes under the id: each is refused as a conflict (SPEC §14), one
        `ID.invalid-…` error each; a copy with the same bytes is a duplicate, answered by nothing."""
        own = {data for _name, data in self.drops}
        return sum(1 for _name, data in self.copies if data not in own)


@dataclass
class Report:
    seed: int
    envelopes: int  # distinct inputs (ids and invalid files)
    files: int  # every file dropped: inputs, signatures, duplicates, conflict copies
    copies: int  # duplicates and conflict copies among them
    conflicts: int  # conflict copies (other bytes under an id) among the copies: refused, not duplicates
    kills: int
    executions: int  # lines in the two journals
    interruptions: int  # executions answered "interrupted, not retried"
    duplicates: int  # rows in the ledger's `duplicates` table
    seconds: float
    problems: list[str]

    def summary(self) -> str:
        return (
            f"torture seed {self.seed}: {self.envelopes} envelopes ({self.files} files, "
            f"{self.copies} duplicates and conflict copies), {self.kills} kills, "
            f"{self.executions} executions, {self.interruptions} interruptions, "
            f"{self.duplicates} duplicates archived, {self.seconds:.1f} s, "
            f"{len(self.problems)} broken invariants"
        )


# -- set-up -----------------------------------------------------------------------------------


class Lab:
    """The hub, its state dir and config, the key, allowed_signers, the scripts and the journals."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.hub = base / "hub"
        self.state = base / "state"
        self.config = base / "config.toml"
        self.stage = base / "stage"
        self.tools = base / "tools"
        self.key = base / "keys" / "operator"
        self.allowed = base / "trust" / "allowed_signers"
        self.executor_journal = base / "journals" / "executor"
        self.action_journal = base / "journals" / "action"
        self.env = {
            key: value
            for key, value in os.environ.items()
            if key not in ("NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID")
        }
        self.env.update(
            XDG_CONFIG_HOME=str(base / "xdg-config"),
            XDG_STATE_HOME=str(base / "xdg-state"),
            PYTHONDONTWRITEBYTECODE="1",
        )

    def make(self) -> None:
        for directory in (self.stage, self.tools, self.key.parent, self.allowed.parent, self.state):
            directory.mkdir(parents=True)
        self.executor_journal.parent.mkdir()
        made = subprocess.run(
            [*SLOPD, "init", "--home", "watcher:torture", str(self.hub)],
            env=self.env,
            capture_output=True,
            text=True,
            check=False,
        )
        if made.returncode != 0:
            raise RuntimeError(f"slopd init failed: {made.stderr}")
        keygen = subprocess.run(
            [SSH_KEYGEN, "-q", "-t", "ed25519", "-N", "", "-C", OPERATOR, "-f", str(self.key)],
            capture_output=True,
            text=True,
            check=False,
        )
        if keygen.returncode != 0:
            raise RuntimeError(f"ssh-keygen failed: {keygen.stderr}")
        public = " ".join(Path(f"{self.key}.pub").read_text().split()[:2])
        self.allowed.write_text(f"{OPERATOR} {public}\n")
        script = self.tools / "journal.py"
        script.write_text(EXECUTOR)
        executor = [sys.executable, "-S", str(script), str(self.executor_journal), "done"]
        action = [sys.executable, "-S", str(script), str(self.action_journal), "deployed"]
        self.config.write_text(
            'names = ["watcher", "watcher:torture"]\n'
            "settle = 0.2\n"
            "rescan_interval = 1\n"
            "[executor]\n"
            f"command = {json.dumps(executor)}\n"
            "timeout = 60\n"
            "max_parallel = 4\n"
            "[auth]\n"
            f"allowed_signers = {json.dumps(str(self.allowed))}\n"
            "sig_grace = 5\n"
            "max_age = 86400\n"
            "[actions.record]\n"
            f"command = {json.dumps(action)}\n"
            "timeout = 60\n"
        )

    def run_args(self, *extra: str) -> list[str]:
        return [
            *SLOPD,
            "run",
            "--hub",
            str(self.hub),
            "--state",
            str(self.state),
            "--config",
            str(self.config),
            *extra,
        ]

    def sign(self, name: str, data: bytes) -> bytes:
        """`ssh-keygen -Y sign` over the order's exact bytes, staged outside the hub."""
        path = self.stage / name
        path.write_bytes(data)
        signed = subprocess.run(
            [SSH_KEYGEN, "-Y", "sign", "-f", str(self.key), "-n", "slop", str(path)],
            capture_output=True,
            text=True,
            check=False,
        )
        if signed.returncode != 0:
            raise RuntimeError(f"ssh-keygen -Y sign failed: {signed.stderr}")
        return Path(f"{path}.sig").read_bytes()

    def drop(self, lane: str, name: str, data: bytes) -> None:
        """Drop a file the way a careful agent does: a dot temp file renamed into the lane."""
        temp = self.hub / lane / f".{name}.part"
        temp.write_bytes(data)
        temp.rename(self.hub / lane / name)

    def journal(self, path: Path) -> list[str]:
        return path.read_text().split() if path.exists() else []


# -- the inputs -------------------------------------------------------------------------------


def envelope(ident: str, kind: str, body: str, sender: str = "torture-agent", **extra: str) -> bytes:
    fields = {
        "protocol": "slop.v1",
        "id": ident,
        "type": kind,
        "from": sender,
        "to": "watcher",
        "in_reply_to": "null",
        "created_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "auth": "none",
        **extra,
    }
    return ("---\n" + "".join(f"{key}: {value}\n" for key, value in fields.items()) + "---\n" + body).encode()


def plan(lab: Lab, rng: random.Random, count: int) -> list[Input]:
    kinds = rng.choices(list(MIX), weights=list(MIX.values()), k=count)
    inputs = []
    for number, kind in enumerate(kinds):
        ident = f"20260704t1{number:05d}z-{kind}"
        name = f"{ident}.md"
        body = f"# {kind} {number}\n\nWork item {number} of the torture run.\n"
        if kind == "order":
            data = envelope(ident, "instigate", body, OPERATOR, auth=f"signed:{name}.sig", action="record")
            signature = (f"{name}.sig", lab.sign(name, data))
            drops = [(name, data), signature]
            if rng.random() < 0.5:
                drops.reverse()  # the signature arrives first
            item = Input(ident, kind, "authorized", drops)
            if rng.random() < 0.08:  # a sync client's copy: the same bytes, another name
                item.copies.append((rng.choice(CONFLICT_NAMES).format(stem=ident), data))
        elif kind == "invalid":  # a valid id, a type that does not exist
            item = Input(ident, kind, "inbox", [(name, envelope(ident, "bogus", body))])
        elif kind == "invalid-json":
            data = json.dumps({"protocol": "slop.v1", "id": ident, "type": "handoff"}).encode()
            item = Input(ident, kind, "inbox", [(f"{ident}.json", data)])
        elif kind == "garbage":  # no front matter: no id to answer
            data = f"just some notes, no envelope ({number})\n".encode()
            item = Input(ident, kind, "inbox", [(name, data)])
        else:
            data = envelope(ident, kind, body)
            item = Input(ident, kind, "inbox", [(name, data)])
            roll = rng.random()
            if roll < 0.07:  # an exact duplicate under another name
                item.copies.append((f"{ident}.copy.md", data))
            elif roll < 0.14:  # a conflict copy: same id, an edited body
                edited = envelope(ident, kind, body + "\nEdited on the laptop.\n")
                item.copies.append((rng.choice(CONFLICT_NAMES).format(stem=ident), edited))
        inputs.append(item)
    return inputs


def drop_order(rng: random.Random, inputs: list[Input]) -> list[tuple[str, str, bytes]]:
    """Every file to drop as (lane, name, data): inputs in order, each copy at a random later place."""
    order = [(item.lane, name, data) for item in inputs for name, data in item.drops]
    for index, item in enumerate(inputs):
        for name, data in item.copies:
            at = rng.randint(min(index * 2, len(order)), len(order))
            order.insert(at, (item.lane, name, data))
    return order


# -- the run ----------------------------------------------------------------------------------


def write_all(lab: Lab, drops: list[tuple[str, str, bytes]], seconds: float, seed: int) -> None:
    rng = random.Random(seed)
    pause = 2 * seconds / max(len(drops), 1)
    for lane, name, data in drops:
        lab.drop(lane, name, data)
        time.sleep(rng.uniform(0, pause))


def script_processes(lab: Lab) -> list[int]:
    """Executor and action processes of this run still alive (orphans of a SIGKILLed daemon)."""
    marker = str(lab.tools).encode()
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            if marker in Path(entry.path, "cmdline").read_bytes():
                state = Path(entry.path, "stat").read_text().rsplit(")", 1)[1].split()[0]
                if state != "Z":
                    found.append(int(entry.name))
        except (OSError, IndexError):
            continue
    return found


def wait_for_orphans(lab: Lab) -> None:
    deadline = time.monotonic() + ORPHAN_DEADLINE
    while script_processes(lab) and time.monotonic() < deadline:
        time.sleep(0.05)
    for pid in script_processes(lab):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def torture(
    base: Path, *, envelopes: int, kills: int, seed: int, say: Callable[[str], None] = print
) -> Report:
    """Run the whole torture in `base` (a new directory) and check every invariant."""
    rng = random.Random(seed)
    lab = Lab(base)
    lab.make()
    inputs = plan(lab, rng, envelopes)
    drops = drop_order(rng, inputs)
    say(f"torture seed {seed}: {len(inputs)} envelopes, {len(drops)} files, {kills} kills")
    delays = [rng.uniform(*KILL_DELAY) for _ in range(kills)]
    began = time.monotonic()
    writer = threading.Thread(
        target=write_all, args=(lab, drops, 0.85 * sum(delays), rng.randrange(2**32)), daemon=True
    )
    writer.start()
    daemon: subprocess.Popen[bytes] | None = None
    try:
        for delay in delays:
            daemon = subprocess.Popen(
                lab.run_args(), env=lab.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
            )
            time.sleep(delay)  # the random moment of this kill
            if daemon.poll() is not None:
                raise RuntimeError(
                    f"seed {seed}: slopd run exited on its own with {daemon.returncode}; see {lab.state}"
                )
            daemon.send_signal(signal.SIGKILL)
            daemon.wait()
        writer.join()
        final = subprocess.run(
            lab.run_args("--once"), env=lab.env, capture_output=True, text=True, timeout=300, check=False
        )
        seconds = time.monotonic() - began
    finally:
        if daemon is not None and daemon.poll() is None:
            daemon.kill()
            daemon.wait()
        wait_for_orphans(lab)
    problems = [] if final.returncode == 0 else [f"slopd run --once exited {final.returncode}"]
    problems += check(lab, inputs)
    executions = lab.journal(lab.executor_journal) + lab.journal(lab.action_journal)
    outbox = lab.hub / "outbox"
    interruptions = sum(
        1 for path in outbox.glob("*.error.md") if INTERRUPTED in path.read_text(encoding="utf-8")
    )
    with contextlib.closing(sqlite3.connect(lab.state / "ledger.sqlite3")) as db:
        duplicates = db.execute("SELECT count(*) FROM duplicates").fetchone()[0]
    return Report(
        seed=seed,
        envelopes=len(inputs),
        files=len(drops),
        copies=sum(len(item.copies) for item in inputs),
        conflicts=sum(item.conflicts for item in inputs),
        kills=len(delays),
        executions=len(executions),
        interruptions=interruptions,
        duplicates=duplicates,
        seconds=seconds,
        problems=problems,
    )


# -- the invariants ---------------------------------------------------------------------------


def front_matter(text: str) -> dict[str, Any]:
    head = text.removeprefix("---\n").split("\n---\n", 1)[0]
    loaded = yaml.safe_load(head)
    return loaded if isinstance(loaded, dict) else {}


def check(lab: Lab, inputs: list[Input]) -> list[str]:
    """Every broken invariant, one line each (empty: the run kept every guarantee)."""
    problems: list[str] = []
    hub = lab.hub
    by_ident = {item.ident: item for item in inputs}

    # 1. Every input archived: the input lanes are empty, the archive holds every file dropped.
    for lane in ("inbox", "authorized"):
        left = sorted(os.listdir(hub / lane))
        if left:
            problems.append(f"{lane}/ still holds {left[:10]} ({len(left)} entries)")
    dropped = Counter(name for item in inputs for name, _ in [*item.drops, *item.copies])
    archived = Counter(path.name for path in (hub / "archive").glob("*/*"))
    if archived != dropped:
        problems.append(
            f"archive differs from what was dropped: missing {sorted((dropped - archived).elements())[:10]}, "
            f"extra {sorted((archived - dropped).elements())[:10]}"
        )

    # 2. Replies: exactly the expected set per input, nothing else in outbox/.
    replies: dict[str, dict[str, dict[str, Any]]] = {}  # ident -> reply file -> headers
    by_file = {f"{i.lane}/{name}": i.ident for i in inputs for name, _ in [*i.drops, *i.copies]}
    for path in sorted((hub / "outbox").iterdir()):
        if path.name == "drafts" and path.is_dir():
            continue  # where agents' drafts wait for a human (SPEC §2): no reply
        if not path.is_file():
            problems.append(f"outbox/{path.name} is not a reply file")
            continue
        headers = front_matter(path.read_text(encoding="utf-8"))
        headers["body"] = path.read_text(encoding="utf-8").split("\n---\n", 1)[-1]
        about = headers.get("in_reply_to")
        if about is None and isinstance(headers.get("file"), str):  # an invalid input without an id
            about = by_file.get(headers["file"])
            if about is not None and by_ident[about].kind in (*TERMINAL, *RUNS):
                problems.append(f"outbox/{path.name} rejects {headers['file']} of {about}, a valid input")
        if about not in by_ident:
            problems.append(f"outbox/{path.name} answers nothing that was dropped ({about!r})")
            continue
        replies.setdefault(str(about), {})[path.name] = headers
    executed = Counter(lab.journal(lab.executor_journal) + lab.journal(lab.action_journal))
    journals = {
        "instigate": set(lab.journal(lab.executor_journal)),
        "order": set(lab.journal(lab.action_journal)),
    }
    for item in inputs:
        got = replies.get(item.ident, {})
        names = set(got)
        ident = item.ident
        if item.kind in (*TERMINAL, *RUNS):
            refused = {name for name in names if name.startswith(f"{ident}.invalid-")}
            if len(refused) != item.conflicts:
                problems.append(
                    f"{ident}: {len(refused)} conflict refusals for {item.conflicts} conflict copies"
                )
            for name in refused:
                if "conflict: id " not in got[name]["body"] or got[name].get("type") != "error":
                    problems.append(f"{ident}: {name} is not a conflict error")
            names -= refused
        if item.kind in TERMINAL:
            expected = {f"{ident}.{TERMINAL[item.kind]}.md"}
            if names != expected:
                problems.append(
                    f"{ident} ({item.kind}): replies {sorted(names)}, expected {sorted(expected)}"
                )
        elif item.kind in RUNS:
            ack, result, error = (f"{ident}.{kind}.md" for kind in ("ack", "result", "error"))
            if names not in ({ack, result}, {ack, error}):
                problems.append(
                    f"{ident} ({item.kind}): replies {sorted(names)}, expected ack + result|error"
                )
                continue
            ran = ident in journals[item.kind]
            if error in names and INTERRUPTED not in got[error]["body"]:
                problems.append(f"{ident} ({item.kind}): an error that is not an interruption")
            if not ran and error not in names:
                problems.append(f"{ident} ({item.kind}): answered {sorted(names)} but never ran")
            word = "done" if item.kind == "instigate" else "deployed"
            if result in names and got[result]["body"].strip() != f"{word} {ident}":
                problems.append(f"{ident} ({item.kind}): result body {got[result]['body']!r}")
        else:
            invalid = [name for name in names if ".invalid-" in name]
            if len(names) != 1 or len(invalid) != 1:
                problems.append(f"{ident} ({item.kind}): replies {sorted(names)}, expected one invalid error")
            elif got[invalid[0]].get("type") != "error":
                problems.append(f"{ident} ({item.kind}): its reply is not an error")
    for ident, times in executed.items():
        if times > 1:
            problems.append(f"{ident} ran {times} times")
        kind = by_ident[ident].kind if ident in by_ident else None
        if kind not in RUNS or ident not in journals[kind]:
            problems.append(f"{ident} ran but is not an {'/'.join(RUNS)} of that journal")

    # 3. No temp or half-written files anywhere in the hub.
    temps = [str(path.relative_to(hub)) for path in hub.rglob(".*") if path != hub / ".slopd"]
    if temps:
        problems.append(f"temp files left: {temps[:10]}")

    # 4. The ledger agrees with the files.
    problems += check_ledger(lab, inputs)
    return problems


def check_ledger(lab: Lab, inputs: list[Input]) -> list[str]:
    problems: list[str] = []
    hub = lab.hub
    with contextlib.closing(sqlite3.connect(lab.state / "ledger.sqlite3")) as db:
        db.row_factory = sqlite3.Row
        rows = [dict(row) for row in db.execute("SELECT * FROM inputs")]
        reply_rows = [dict(row) for row in db.execute("SELECT * FROM replies")]
    for row in rows:
        if row["status"] != "done":
            problems.append(f"ledger: {row['key']} is {row['status']}, not done")
        if row["archive"] is None or not (hub / row["archive"]).is_file():
            problems.append(f"ledger: {row['key']} archive {row['archive']!r} is not a file")
        for reply in row["replies"].split():
            if not (hub / "outbox" / f"{reply}.md").is_file():
                problems.append(f"ledger: {row['key']} lists reply {reply} that is not in outbox/")
    valid = {item.ident for item in inputs if item.kind in (*TERMINAL, *RUNS)}
    ledgered = {row["id"] for row in rows if not row["key"].startswith("invalid:")}
    if ledgered != valid:
        problems.append(
            f"ledger ids differ: missing {sorted(valid - ledgered)[:10]}, "
            f"extra {sorted(ledgered - valid)[:10]}"
        )
    invalid_inputs = sum(1 for item in inputs if item.kind not in (*TERMINAL, *RUNS))
    invalid_inputs += sum(item.conflicts for item in inputs)  # refused conflict copies: rows of their own
    invalid_rows = sum(1 for row in rows if row["key"].startswith("invalid:"))
    if invalid_rows != invalid_inputs:
        problems.append(f"ledger: {invalid_rows} invalid rows for {invalid_inputs} invalid files")
    recorded = {row["id"] for row in reply_rows}
    on_disk = {path.name.removesuffix(".md") for path in (hub / "outbox").iterdir() if path.is_file()}
    if recorded != on_disk:
        problems.append(
            f"ledger replies differ from outbox/: unrecorded {sorted(on_disk - recorded)[:10]}, "
            f"missing {sorted(recorded - on_disk)[:10]}"
        )
    return problems


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--envelopes", type=int, default=600)
    parser.add_argument("--kills", type=int, default=30)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--keep", action="store_true", help="keep the work dir (printed) for inspection")
    args = parser.parse_args()
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**32)
    base = Path(tempfile.mkdtemp(prefix="slopd-torture-", dir=os.environ.get("BENCH_TMP", "/var/tmp")))
    report = torture(base / "run", envelopes=args.envelopes, kills=args.kills, seed=seed)
    print(report.summary())
    for problem in report.problems:
        print(f"BROKEN: {problem}")
    if args.keep or report.problems:
        print(f"work dir kept: {base}")
    else:
        shutil.rmtree(base, ignore_errors=True)
    sys.exit(1 if report.problems else 0)


if __name__ == "__main__":
    main()
