"""slopd side by side with the physical floor (bench/floor.py) and the naive peer (bench/peer/).

    .venv/bin/python bench/compare.py                       # every workload, 3 rounds (12-16 min)
    .venv/bin/python bench/compare.py --workloads a,c --runs 5
    .venv/bin/python bench/compare.py --quick               # smoke pass: tiny counts, 1 round

Each workload runs its contenders interleaved — slopd, floor, peer, slopd, floor, peer, … — one
fresh hub per run, so the ratios printed are measured side by side in the same minutes of a
shared, noisy machine. A reply is recognised by its deterministic name, `outbox/ID.result.md`,
timestamped by a bare inotify watch in this process (the same for all three).

Workloads (issue 7, point 3):
  a  drop → terminal-reply latency, handoffs dropped by atomic rename at --rate/s
  b  the same for files written in place in inbox/ (slopd waits `settle` for those)
  c  saturation: --sat envelopes dropped as fast as possible: throughput, latency, CPU/message
  d  --backlog files waiting when the daemon starts: spawn → last reply, peak RSS
  e  signed orders at saturation: SSHSIG sidecar dropped first, then the order, into authorized/
     e-verify: `mode: discuss` orders (verified, answered, nothing runs)
     e-action: orders that run the configured action (`true`, envelope JSON on stdin)
  f  idle CPU% and RSS over --idle seconds, with inotify and with polling (all six at once)
  g  scale: saturation with --scale entries already in the ledger and archive/ (prefilled once)

The peer runs one Python process per file, so in c, d, e and g it gets at most --peer-max files
and its rate is measured on those (its 10,000-file drain time is extrapolated, and says so).
The peer is left out of g (its per-file cost is a process start, and it has no ledger) unless
--peer-in-g. Raw figures: --json FILE.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from common import (
    SLOPD,
    ReplyWatcher,
    envelope,
    machine_line,
    percentiles,
    precompile,
    render_table,
    scratch,
    spread,
    tree_cpu_seconds,
    tree_rss_mb,
)

HERE = Path(__file__).resolve().parent
CONTENDERS = ("slopd", "floor", "peer")
NOT_RUN = "the peer did not run (--contenders)"
OPERATOR = "operator@example.com"
TRUE = shutil.which("true") or "/bin/true"


# -- labs: one hub per run ---------------------------------------------------------------------


@dataclass
class Lab:
    base: Path
    hub: Path
    state: Path
    config: Path
    staging: Path

    def lane(self, name: str) -> Path:
        return self.hub / name


class Signer:
    """An Ed25519 key, its allowed_signers file (outside every hub), and signed orders."""

    def __init__(self) -> None:
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey  # noqa: PLC0415

        from slopd.core import sshkeys, sshsig  # noqa: PLC0415

        self._sshsig = sshsig
        self.key = Ed25519PrivateKey.generate()
        self.allowed_signers = scratch("keys-") / "allowed_signers"
        public = self.key.public_key().public_bytes_raw()
        self.allowed_signers.write_text(f"{OPERATOR} {sshkeys.ed25519(public).line()}\n", encoding="utf-8")
        self.created_at = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")

    def orders(self, count: int, nonce: str, action: bool) -> list[tuple[str, bytes, bytes]]:
        """`count` orders: (id, order bytes, SSHSIG sidecar bytes)."""
        made = []
        for index in range(count):
            order_id = f"20260704t071553z-{nonce}-{index:07d}"
            how = "action: noop" if action else "mode: discuss"
            text = (
                f"---\nprotocol: slop.v1\nid: {order_id}\ntype: instigate\nfrom: {OPERATOR}\nto: watcher\n"
                f"in_reply_to: null\ncreated_at: {self.created_at}\nauth: signed:{order_id}.md.sig\n{how}\n"
                f"---\nRun the nightly report for the {index}th time.\n"
            )
            data = text.encode()
            made.append((order_id, data, self._sshsig.sign(data, self.key)))
        return made


class Contender:
    name = ""
    group_stop = False  # SIGTERM to the whole process group (the peer: a shell, watchmedo, handlers)

    def __init__(self, signer: Signer) -> None:
        self.signer = signer

    def lab(self) -> Lab:
        base = scratch(f"{self.name}-")
        hub = base / "hub"
        for lane in ("inbox", "authorized", "outbox", "archive"):
            (hub / lane).mkdir(parents=True)
        (base / "staging").mkdir()
        return Lab(base, hub, base / "state", base / "config.toml", base / "staging")

    def argv(self, lab: Lab, polling: bool) -> list[str]:
        raise NotImplementedError

    def env(self) -> dict[str, str]:
        return dict(os.environ)


class Slopd(Contender):
    name = "slopd"
    _templates: dict[str, Path] = {}  # noqa: RUF012  # one `slopd init` per variant, copied per run
    serve_http = False  # `--http 127.0.0.1:0`: the HTTP transport, /mcp and the console with their extras
    source: Path | None = None  # another revision's tree, put first on PYTHONPATH

    def lab(self) -> Lab:
        if self.name not in Slopd._templates:
            template = scratch("template-") / "hub"
            subprocess.run(
                [*SLOPD, "init", "--home", "watcher:bench", str(template)],
                check=True,
                capture_output=True,
                env=self.env(),
            )
            Slopd._templates[self.name] = template
        base = scratch(f"{self.name.replace('/', '-')}-")
        hub = base / "hub"
        shutil.copytree(Slopd._templates[self.name], hub, symlinks=True)
        (base / "staging").mkdir()
        config = base / "config.toml"
        config.write_text(
            'names = ["watcher", "watcher:bench"]\n\n'
            f'[auth]\nallowed_signers = "{self.signer.allowed_signers}"\n\n'
            f'[actions.noop]\ncommand = ["{TRUE}"]\n',
            encoding="utf-8",
        )
        return Lab(base, hub, base / "state", config, base / "staging")

    def argv(self, lab: Lab, polling: bool) -> list[str]:
        extra = ["--polling"] if polling else []
        if self.serve_http:
            extra.append("--http=127.0.0.1:0")
        return [
            *SLOPD,
            "run",
            "--hub",
            str(lab.hub),
            "--state",
            str(lab.state),
            "--config",
            str(lab.config),
            *extra,
        ]

    def env(self) -> dict[str, str]:
        env = dict(os.environ, XDG_CONFIG_HOME="/nonexistent", XDG_STATE_HOME="/nonexistent")
        if self.source is not None:
            env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(self.source), env.get("PYTHONPATH")]))
            env["PYTHONSAFEPATH"] = "1"  # `python -m slopd` run in a checkout would import its ./slopd first
        return env


def variant(spec: str, signer: Signer) -> Slopd:
    """`slopd+http`, `slopd@REV` or `slopd@REV+http`: slopd with `--http 127.0.0.1:0`, or from commit
    REV's tree (`git archive`, byte-compiled, first on PYTHONPATH), or both."""
    match = re.fullmatch(r"slopd(?:@([0-9A-Za-z._/-]+?))?(\+http)?", spec)
    if match is None or spec == "slopd":
        raise ValueError(
            f"not a contender: {spec!r} (slopd, floor, peer, slopd+http, slopd@REV, slopd@REV+http)"
        )
    made = Slopd(signer)
    made.name, made.serve_http = spec, match.group(2) is not None
    if match.group(1):
        made.source = snapshot(match.group(1))
    return made


def snapshot(revision: str) -> Path:
    """Commit `revision`'s tree under the scratch dir, byte-compiled; its path."""
    tree = scratch(f"source-{revision.replace('/', '-')}-")
    archive = subprocess.run(
        ["git", "-C", str(HERE.parent), "archive", "--format=tar", revision], capture_output=True, check=False
    )
    if archive.returncode != 0:
        raise ValueError(f"git archive {revision}: {archive.stderr.decode(errors='replace').strip()}")
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive.stdout, check=True)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "slopd")], check=True)
    return tree


class Floor(Contender):
    name = "floor"

    def argv(self, lab: Lab, polling: bool) -> list[str]:
        extra = ["--polling"] if polling else []
        return [
            sys.executable,
            str(HERE / "floor.py"),
            "--hub",
            str(lab.hub),
            "--ledger",
            str(lab.base / "floor-ledger.sqlite3"),
            "--allowed-signers",
            str(self.signer.allowed_signers),
            "--action",
            f"noop={TRUE}",
            *extra,
        ]


class Peer(Contender):
    name = "peer"
    group_stop = True

    def argv(self, lab: Lab, polling: bool) -> list[str]:
        return ["sh", str(HERE / "peer" / "peer.sh"), str(lab.hub)]

    def env(self) -> dict[str, str]:
        return dict(
            os.environ,
            PYTHON=sys.executable,
            PEER_ALLOWED_SIGNERS=str(self.signer.allowed_signers),
            PEER_ACTION=TRUE,
        )


class Running:
    """A contender's daemon on a lab, with the reply watcher on its outbox."""

    probes = 0  # probe ids are unique across runs: a lab reused in g must not see a duplicate

    def __init__(self, contender: Contender, lab: Lab, *, polling: bool = False) -> None:
        self.contender, self.lab = contender, lab
        self.watcher = ReplyWatcher(lab.lane("outbox"))
        self.log = open(lab.base / f"{contender.name}.log", "ab")  # noqa: SIM115
        env = contender.env()
        if polling and contender.name == "peer":
            env["PEER_POLLING"] = "1"
        self.t_spawn = time.monotonic()
        self.process = subprocess.Popen(
            contender.argv(lab, polling),
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=self.log,
            stderr=self.log,
            start_new_session=True,
        )

    @property
    def pid(self) -> int:
        return self.process.pid

    def ready(self, timeout: float = 90.0) -> float:
        """Drop probes until one is answered; returns spawn → first probe reply, in seconds."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"{self.contender.name} exited with {self.process.returncode}: {self.lab.base}"
                )
            Running.probes += 1
            probe_id, data = envelope(Running.probes, nonce=f"probe{os.getpid()}")
            drop_renamed(self.lab, "inbox", f"{probe_id}.md", data)
            if self.watcher.wait_for([f"{probe_id}.result.md"], timeout=3.0):
                return self.watcher.seen[f"{probe_id}.result.md"] - self.t_spawn
        raise RuntimeError(f"{self.contender.name} never answered a probe: {self.lab.base}")

    def stop(self) -> int | None:
        """SIGTERM; the exit code (None when it had to be killed)."""
        code: int | None = None
        if self.process.poll() is None:
            if self.contender.group_stop:
                os.killpg(self.process.pid, signal.SIGTERM)
            else:
                self.process.send_signal(signal.SIGTERM)
            try:
                code = self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        else:
            code = self.process.returncode
        if self.contender.group_stop:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)  # leftover handlers of the peer
        self.watcher.close()
        self.log.close()
        return code


def drop_renamed(lab: Lab, lane: str, name: str, data: bytes) -> float:
    staged = lab.staging / name
    staged.write_bytes(data)
    began = time.monotonic()
    os.rename(staged, lab.lane(lane) / name)
    return began


def drop_in_place(lab: Lab, name: str, data: bytes) -> float:
    fd = os.open(lab.lane("inbox") / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        os.write(fd, data)
        began = time.monotonic()
    finally:
        os.close(fd)
    return began


# -- settings --------------------------------------------------------------------------------


@dataclass
class Settings:
    runs: int
    rate: float
    low_count: int
    sat: int
    backlog: int
    orders: int
    action_orders: int
    idle: float
    scale: list[int]
    scale_count: int
    peer_max: int
    peer_in_g: bool
    order_kinds: list[str]
    quick: bool


def parse_scale(text: str) -> list[int]:
    levels = []
    for part in text.split(","):
        word = part.strip().lower()
        factor = 1_000_000 if word.endswith("m") else 1_000 if word.endswith("k") else 1
        levels.append(int(float(word.rstrip("mk")) * factor))
    return levels


# -- statistics helpers ----------------------------------------------------------------------


def ms(value: float) -> str:
    if math.isnan(value):
        return "n/a"
    if value >= 10_000:
        return f"{value / 1000:.1f} s"
    if value >= 100:
        return f"{value:.0f} ms"
    return f"{value:.2f} ms" if value < 10 else f"{value:.1f} ms"


def rate(value: float) -> str:
    return "n/a" if math.isnan(value) else f"{value:,.0f}/s" if value >= 100 else f"{value:.1f}/s"


def seconds(value: float) -> str:
    return "n/a" if math.isnan(value) else f"{value:.2f} s"


def ratio(value: float) -> str:
    if math.isnan(value):
        return "n/a"
    return f"{value:.3f}x" if value < 0.1 else f"{value:.2f}x"


def per_round_ratios(results: list[dict[str, Any]], key: str, top: str, bottom: str) -> list[float]:
    """`top`/`bottom` of `key`, round by round (only rounds where both ran)."""
    values = []
    for one_round in results:
        a, b = one_round.get(top), one_round.get(bottom)
        if a is None or b is None or a.get(key) is None or b.get(key) is None:
            continue
        if b[key] and not math.isnan(a[key]) and not math.isnan(b[key]):
            values.append(a[key] / b[key])
    return values


def verdict(values: list[float], target: float, higher_is_better: bool) -> str:
    if not values:
        return "n/a"
    middle = statistics.median(values)
    met = middle >= target if higher_is_better else middle <= target
    sign = ">=" if higher_is_better else "<="
    return f"target {sign} {target:g}x: {'MET' if met else 'MISSED'}"


def ratio_line(label: str, values: list[float], what: str, target: str = "") -> str:
    shown = spread(values, ratio) if values else "n/a"
    return f"ratio {label}: {what} {shown}" + (f"  ({target})" if target else "")


# -- the workloads -------------------------------------------------------------------------


@dataclass
class Context:
    settings: Settings
    signer: Signer
    contenders: dict[str, Contender]
    results: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    scale_labs: dict[tuple[str, int], Lab] = field(default_factory=dict)
    order: tuple[str, ...] = CONTENDERS  # who runs in a-e, in this order within each round

    @property
    def variants(self) -> list[str]:
        """The slopd variants beside slopd itself (`--contenders`), each compared with it."""
        return [who for who in self.order if who.startswith("slopd") and who != "slopd"]

    def check_exit(self, name: str, code: int | None, where: str) -> None:
        if name != "peer" and code != 0:
            self.failures.append(f"{name} exited with {code} after {where}")


def wait_replies(
    run: Running, names: list[str], timeout: float, sample_rss: bool = False
) -> tuple[bool, float]:
    """Wait for every reply; returns (all came, peak RSS MB seen while waiting)."""
    deadline = time.monotonic() + timeout
    peak = 0.0
    while True:
        if sample_rss:
            peak = max(peak, tree_rss_mb(run.pid))
        if run.watcher.wait_for(names, timeout=0.05 if sample_rss else 1.0):
            return True, peak
        if time.monotonic() > deadline or run.process.poll() is not None:
            return False, peak


def latencies(run: Running, dropped: dict[str, float]) -> list[float]:
    seen = run.watcher.seen
    return [(seen[f"{i}.result.md"] - t) * 1000 for i, t in dropped.items() if f"{i}.result.md" in seen]


def flow_low_rate(ctx: Context, who: str, round_no: int, in_place: bool) -> dict[str, Any]:
    settings = ctx.settings
    contender = ctx.contenders[who]
    lab = contender.lab()
    run = Running(contender, lab)
    try:
        startup = run.ready()
        time.sleep(0.5)
        nonce = f"{'b' if in_place else 'a'}{round_no}"
        batch = [envelope(index, nonce=nonce) for index in range(settings.low_count)]
        dropped: dict[str, float] = {}
        began = time.monotonic()
        for index, (envelope_id, data) in enumerate(batch):
            time.sleep(max(began + index / settings.rate - time.monotonic(), 0))
            name = f"{envelope_id}.md"
            dropped[envelope_id] = (
                drop_in_place(lab, name, data) if in_place else drop_renamed(lab, "inbox", name, data)
            )
        complete, _ = wait_replies(run, [f"{i}.result.md" for i in dropped], 120 + settings.low_count)
        samples = latencies(run, dropped)
    finally:
        ctx.check_exit(who, run.stop(), "a low-rate run")
    return {
        "samples": samples,
        "median": statistics.median(samples) if samples else float("nan"),
        "startup": startup,
        "missing": len(dropped) - len(samples),
        "complete": complete,
    }


def flow_saturation(
    ctx: Context,
    who: str,
    count: int,
    nonce: str,
    *,
    orders: str | None = None,
    lab: Lab | None = None,
) -> dict[str, Any]:
    """Drop `count` envelopes (or signed orders) as fast as possible into a ready daemon."""
    contender = ctx.contenders[who]
    lab = lab or contender.lab()
    run = Running(contender, lab)
    try:
        startup = run.ready()
        time.sleep(0.3)
        if orders is None:
            batch = [
                (i, f"{i}.md", data, None) for i, data in (envelope(n, nonce=nonce) for n in range(count))
            ]
        else:
            made = ctx.signer.orders(count, nonce, action=orders == "action")
            batch = [(i, f"{i}.md", data, sig) for i, data, sig in made]
        for _, name, data, sig in batch:
            (lab.staging / name).write_bytes(data)
            if sig is not None:
                (lab.staging / f"{name}.sig").write_bytes(sig)
        os.sync()
        lane = "inbox" if orders is None else "authorized"
        cpu_before = tree_cpu_seconds(run.pid)
        dropped: dict[str, float] = {}
        for envelope_id, name, _, sig in batch:
            if sig is not None:
                os.rename(lab.staging / f"{name}.sig", lab.lane(lane) / f"{name}.sig")
            dropped[envelope_id] = time.monotonic()
            os.rename(lab.staging / name, lab.lane(lane) / name)
        first = min(dropped.values())
        complete, _ = wait_replies(run, [f"{i}.result.md" for i in dropped], 300 + count * 0.5)
        cpu = tree_cpu_seconds(run.pid) - cpu_before
        samples = latencies(run, dropped)
        seen = run.watcher.seen
        last = max((seen[f"{i}.result.md"] for i in dropped if f"{i}.result.md" in seen), default=first)
    finally:
        ctx.check_exit(who, run.stop(), "a saturation run")
    return {
        "throughput": len(samples) / (last - first) if last > first else float("nan"),
        "samples": samples,
        "median": statistics.median(samples) if samples else float("nan"),
        "cpu_per_msg_ms": cpu / max(len(samples), 1) * 1000,
        "count": count,
        "missing": len(dropped) - len(samples),
        "complete": complete,
        "overflowed": run.watcher.overflowed,
        "startup": startup,
    }


def flow_backlog(ctx: Context, who: str, count: int, nonce: str) -> dict[str, Any]:
    contender = ctx.contenders[who]
    lab = contender.lab()
    ids = []
    for index in range(count):
        envelope_id, data = envelope(index, nonce=nonce)
        (lab.lane("inbox") / f"{envelope_id}.md").write_bytes(data)
        ids.append(envelope_id)
    old = time.time() - 60  # written a minute ago: nothing left to settle
    for envelope_id in ids:
        os.utime(lab.lane("inbox") / f"{envelope_id}.md", (old, old))
    os.sync()
    run = Running(contender, lab)
    try:
        complete, peak = wait_replies(
            run, [f"{i}.result.md" for i in ids], 600 + count * 0.5, sample_rss=True
        )
        seen = run.watcher.seen
        got = [seen[f"{i}.result.md"] for i in ids if f"{i}.result.md" in seen]
        drain = (max(got) - run.t_spawn) if got else float("nan")
    finally:
        ctx.check_exit(who, run.stop(), "a backlog run")
    return {
        "drain": drain,
        "rate": len(got) / drain if got else float("nan"),
        "count": count,
        "rss_peak": peak,
        "missing": count - len(got),
        "complete": complete,
        "overflowed": run.watcher.overflowed,
    }


def peer_count(ctx: Context, who: str, count: int) -> int:
    return min(count, ctx.settings.peer_max) if who == "peer" and ctx.settings.peer_max else count


def rounds(
    ctx: Context, workload: str, who_list: tuple[str, ...], one: Callable[[str, int], dict[str, Any]]
) -> None:
    results = ctx.results.setdefault(workload, [])
    for round_no in range(1, ctx.settings.runs + 1):
        row: dict[str, Any] = {}
        turn = (round_no - 1) % len(who_list) if ctx.variants else 0  # with variants, none always first
        for who in who_list[turn:] + who_list[:turn]:
            print(f"  [{workload}] round {round_no}: {who} …", flush=True, file=sys.stderr)
            row[who] = one(who, round_no)
        results.append(row)


# -- prefill for g ---------------------------------------------------------------------------


def link_many(directory: Path, count: int, prefix: str) -> None:
    """`count` archive entries as hard links (ext4 caps an inode at 65,000 links)."""
    directory.mkdir(parents=True, exist_ok=True)
    _, sample = envelope(0, nonce="prefill")
    source = None
    for index in range(count):
        if index % 60_000 == 0:
            source = directory.parent / f".source-{prefix}-{index}"
            source.write_bytes(sample)
        assert source is not None
        os.link(source, directory / f"20260101t000000z-{prefix}-{index:07d}.md")


def prefill_slopd(lab: Lab, count: int) -> None:
    from slopd.core import replies  # noqa: PLC0415
    from slopd.core.lifecycle import Status  # noqa: PLC0415
    from slopd.shell.ledger import Ledger  # noqa: PLC0415

    lab.state.mkdir(parents=True, exist_ok=True)
    day = datetime.now(UTC).strftime("%Y-%m-%d")
    ledger = Ledger(lab.state / "ledger.sqlite3")
    now = replies.timestamp(datetime.now(UTC))
    for start in range(0, count, 20_000):  # one unit of writes per 20,000 rows, the daemon's own statements
        with ledger.writing() as writes:
            for index in range(start, min(start + 20_000, count)):
                key = f"20260101t000000z-prefill-{index:07d}"
                name = f"{key}.md"
                writes.insert(
                    key=key,
                    id=key,
                    lane="inbox",
                    file=name,
                    sha256="0" * 64,
                    type="handoff",
                    sender="bench",
                    mode="discuss",
                    decision="discuss",
                    now=now,
                )
                writes.add_reply(
                    key,
                    reply_id=f"{key}.result",
                    in_reply_to=key,
                    type="result",
                    reply_class="ping",
                    path=f"outbox/{key}.result.md",
                    now=now,
                )
                writes.advance(key, Status.DONE, now=now, archive=f"archive/{day}/{name}")
    ledger.close()
    link_many(lab.lane("archive") / day, count, "prefill")


def prefill_floor(lab: Lab, count: int) -> None:
    import sqlite3  # noqa: PLC0415

    db = sqlite3.connect(lab.base / "floor-ledger.sqlite3")
    db.execute("PRAGMA journal_mode=WAL")
    db.execute(
        "CREATE TABLE IF NOT EXISTS ledger (id TEXT PRIMARY KEY, lane TEXT, file TEXT,"
        " received_at REAL) WITHOUT ROWID"
    )
    now = time.time()
    db.executemany(
        "INSERT INTO ledger VALUES (?, 'inbox', ?, ?)",
        (
            (f"20260101t000000z-prefill-{i:07d}", f"20260101t000000z-prefill-{i:07d}.md", now)
            for i in range(count)
        ),
    )
    db.commit()
    db.close()
    link_many(lab.lane("archive"), count, "prefill")


def scale_lab(ctx: Context, who: str, level: int) -> Lab | None:
    """The prefilled lab of `who` at `level` (made once, reused by every round); None at 0."""
    if level == 0:
        return None
    if (who, level) not in ctx.scale_labs:
        lab = ctx.contenders[who].lab()
        began = time.monotonic()
        if who == "slopd":
            prefill_slopd(lab, level)
        elif who == "floor":
            prefill_floor(lab, level)
        else:
            link_many(lab.lane("archive"), level, "prefill")
        os.sync()
        took = time.monotonic() - began
        ctx.notes.append(
            f"g: prefilling {who} with {level:,} ledger rows and archive entries took {took:.0f} s"
        )
        print(f"  [g] prefilled {who} at {level:,} in {took:.0f} s", file=sys.stderr, flush=True)
        ctx.scale_labs[(who, level)] = lab
    return ctx.scale_labs[(who, level)]


# -- running and reporting each workload -----------------------------------------------------


def latency_table(ctx: Context, workload: str, title: str, target: tuple[float, bool] | None) -> list[str]:
    results = ctx.results[workload]
    rows = []
    for who in ctx.order:
        runs = [r[who] for r in results if who in r]
        if not runs:
            continue
        pooled = percentiles([s for r in runs for s in r["samples"]])
        missing = sum(r["missing"] for r in runs)
        rows.append(
            [
                who,
                ms(pooled["median"]),
                ms(pooled["p90"]),
                ms(pooled["p99"]),
                f"{ms(pooled['min'])}-{ms(pooled['max'])}",
                spread([r["median"] for r in runs], ms),
                spread([r["startup"] * 1000 for r in runs], ms),
                str(missing) if missing else "",
            ]
        )
    headers = ["", "median", "p90", "p99", "min-max", "per-run medians", "startup", "missing"]
    lines = [title, render_table(headers, rows)]
    floor_ratio = per_round_ratios(results, "median", "slopd", "floor")
    peer_ratio = per_round_ratios(results, "median", "slopd", "peer")
    lines.append(
        ratio_line(
            f"{workload} slopd/floor",
            floor_ratio,
            "median latency",
            verdict(floor_ratio, *target) if target else "no target",
        )
    )
    lines.append(
        ratio_line(f"{workload} slopd/peer", peer_ratio, "median latency")
        if "peer" in ctx.order
        else f"ratio {workload} slopd/peer: {NOT_RUN}"
    )
    lines += variant_lines(ctx, workload, "median", "median latency")
    return lines


def variant_lines(ctx: Context, workload: str, key: str, what: str) -> list[str]:
    """Each slopd variant over slopd itself, round by round (they ran in the same minutes)."""
    results = ctx.results[workload]
    label = workload.split(maxsplit=1)[0]
    return [
        ratio_line(f"{label} {who}/slopd", per_round_ratios(results, key, who, "slopd"), what)
        for who in ctx.variants
    ]


def throughput_rows(ctx: Context, runs_by_who: dict[str, list[dict[str, Any]]]) -> list[list[str]]:
    rows = []
    for who, runs in runs_by_who.items():
        if not runs:
            continue
        pooled = percentiles([s for r in runs for s in r["samples"]])
        missing = sum(r["missing"] for r in runs)
        rows.append(
            [
                who,
                str(runs[0]["count"]),
                spread([r["throughput"] for r in runs], rate),
                ms(pooled["median"]),
                ms(pooled["p90"]),
                ms(pooled["p99"]),
                f"{ms(pooled['min'])}-{ms(pooled['max'])}",
                spread([r["cpu_per_msg_ms"] for r in runs], lambda v: f"{v:.2f} ms"),
                str(missing) if missing else "",
            ]
        )
    return rows


THROUGHPUT_HEADERS = ["", "n", "throughput", "lat median", "p90", "p99", "min-max", "CPU/msg", "missing"]


def saturation_table(
    ctx: Context, workload: str, title: str, floor_target: float | None, peer_target: float | None
) -> list[str]:
    results = ctx.results[workload]
    runs_by_who = {who: [r[who] for r in results if who in r] for who in ctx.order}
    lines = [title, render_table(THROUGHPUT_HEADERS, throughput_rows(ctx, runs_by_who))]
    to_floor = per_round_ratios(results, "throughput", "slopd", "floor")
    to_peer = per_round_ratios(results, "throughput", "slopd", "peer")
    label = workload.split(maxsplit=1)[0]
    lines.append(
        ratio_line(
            f"{label} slopd/floor",
            to_floor,
            "throughput",
            verdict(to_floor, floor_target, True) if floor_target else "no target",
        )
    )
    if runs_by_who.get("peer"):
        lines.append(
            ratio_line(
                f"{label} slopd/peer",
                to_peer,
                "throughput",
                verdict(to_peer, peer_target, True) if peer_target else "no target",
            )
        )
    else:
        lines.append(f"ratio {label} slopd/peer: " + ("peer exempt" if "peer" in ctx.order else NOT_RUN))
    lines += variant_lines(ctx, workload, "throughput", "throughput")
    lines += variant_lines(ctx, workload, "cpu_per_msg_ms", "CPU per message")
    lines += variant_lines(ctx, workload, "startup", "startup (spawn -> first probe reply)")
    return lines


def workload_a(ctx: Context) -> list[str]:
    s = ctx.settings
    rounds(ctx, "a", ctx.order, lambda who, n: flow_low_rate(ctx, who, n, in_place=False))
    return latency_table(
        ctx,
        "a",
        f"(a) drop -> reply latency: {s.low_count} handoffs renamed into inbox/ at {s.rate:g}/s, "
        f"{s.runs} rounds",
        (1.5, False),
    )


def workload_b(ctx: Context) -> list[str]:
    s = ctx.settings
    rounds(ctx, "b", ctx.order, lambda who, n: flow_low_rate(ctx, who, n, in_place=True))
    return [
        *latency_table(
            ctx,
            "b",
            f"(b) drop -> reply latency: {s.low_count} handoffs written in place in inbox/ at {s.rate:g}/s "
            f"(latency from the writer's close), {s.runs} rounds",
            None,
        ),
        "note: slopd reads a file written in place once it has been unchanged for `settle` "
        "(0.3 s by default); "
        "the floor acts on IN_CLOSE_WRITE, the peer on watchmedo's created/closed events.",
    ]


def workload_c(ctx: Context) -> list[str]:
    s = ctx.settings

    def one(who: str, n: int) -> dict[str, Any]:
        return flow_saturation(ctx, who, peer_count(ctx, who, s.sat), f"c{n}")

    rounds(ctx, "c", ctx.order, one)
    return saturation_table(
        ctx, "c", f"(c) saturation: {s.sat} handoffs renamed into inbox/ at once, {s.runs} rounds", 0.8, 10.0
    )


def workload_d(ctx: Context) -> list[str]:
    s = ctx.settings

    def one(who: str, n: int) -> dict[str, Any]:
        return flow_backlog(ctx, who, peer_count(ctx, who, s.backlog), f"d{n}")

    rounds(ctx, "d", ctx.order, one)
    results = ctx.results["d"]
    rows = []
    for who in ctx.order:
        runs = [r[who] for r in results if who in r]
        if not runs:
            continue
        for r in runs:
            r["drain_full"] = r["drain"] * s.backlog / r["count"]  # extrapolated for a capped peer
        extrapolated = runs[0]["count"] < s.backlog
        rows.append(
            [
                who,
                str(runs[0]["count"]),
                spread([r["drain"] for r in runs], seconds),
                spread([r["drain_full"] for r in runs], seconds)
                + (" (extrapolated)" if extrapolated else ""),
                spread([r["rate"] for r in runs], rate),
                spread([r["rss_peak"] for r in runs], lambda v: f"{v:.0f} MB"),
                str(sum(r["missing"] for r in runs) or ""),
            ]
        )
    headers = ["", "n", "spawn -> last reply", f"time for {s.backlog:,}", "rate", "peak RSS", "missing"]
    to_floor = per_round_ratios(results, "drain_full", "slopd", "floor")
    to_peer = per_round_ratios(results, "drain_full", "slopd", "peer")
    rss = per_round_ratios(results, "rss_peak", "slopd", "floor")
    return [
        f"(d) backlog: {s.backlog:,} handoffs waiting in inbox/ when the daemon starts, {s.runs} rounds",
        render_table(headers, rows),
        ratio_line("d slopd/floor", to_floor, "drain time", verdict(to_floor, 1.25, False)),
        ratio_line("d slopd/peer", to_peer, "drain time", verdict(to_peer, 0.1, False) + " (10x faster)")
        if "peer" in ctx.order
        else f"ratio d slopd/peer: {NOT_RUN}",
        ratio_line("d slopd/floor", rss, "peak RSS", "no target"),
        *variant_lines(ctx, "d", "drain_full", "drain time"),
        *variant_lines(ctx, "d", "rss_peak", "peak RSS"),
    ]


def workload_e(ctx: Context) -> list[str]:
    s = ctx.settings
    lines = []
    for kind in s.order_kinds:
        key = f"e-{kind}"
        count = s.orders if kind == "verify" else s.action_orders

        def one(who: str, n: int, kind: str = kind, count: int = count) -> dict[str, Any]:
            return flow_saturation(ctx, who, peer_count(ctx, who, count), f"e{kind[0]}{n}", orders=kind)

        rounds(ctx, key, ctx.order, one)
        what = (
            "`mode: discuss` orders (verified, answered, nothing runs)"
            if kind == "verify"
            else f"orders that run the configured action ({TRUE}, envelope JSON on stdin)"
        )
        lines += saturation_table(
            ctx,
            key,
            f"({key}) signed orders at saturation: {count} {what}; SSHSIG sidecar renamed into authorized/ "
            f"first, then the order; {s.runs} rounds",
            0.8 if kind == "verify" else None,
            None,
        )
        lines.append("")
    lines.append(
        "note: slopd verifies the SSHSIG against allowed_signers (principal, namespace, validity, "
        "created_at); "
        "the floor and the peer verify the same Ed25519 SSHSIG with `cryptography` against the same key. "
        "For action orders slopd also writes an `ack` before running the action (FULL-synced `executing`)."
    )
    return lines


def workload_f(ctx: Context) -> list[str]:
    s = ctx.settings
    results = ctx.results.setdefault("f", [])
    for round_no in range(1, s.runs + 1):
        print(f"  [f] round {round_no}: all six idle at once …", file=sys.stderr, flush=True)
        running = {}
        for polling in (False, True):
            for who in CONTENDERS:
                contender = ctx.contenders[who]
                running[(who, polling)] = Running(contender, contender.lab(), polling=polling)
        row: dict[str, Any] = {}
        try:
            for run in running.values():
                run.ready()
            time.sleep(1.0)
            before = {key: tree_cpu_seconds(run.pid) for key, run in running.items()}
            began = time.monotonic()
            time.sleep(s.idle)
            elapsed = time.monotonic() - began
            for (who, polling), run in running.items():
                cpu = 100 * (tree_cpu_seconds(run.pid) - before[(who, polling)]) / elapsed
                mode = "polling" if polling else "inotify"
                row[f"{who} {mode}"] = {"cpu": cpu, "rss": tree_rss_mb(run.pid)}
        finally:
            for (who, _), run in running.items():
                ctx.check_exit(who, run.stop(), "an idle run")
        results.append(row)
    rows = []
    lines = [
        f"(f) idle: CPU % of one core and RSS over {s.idle:g} s with an empty hub, all six at once, "
        f"{s.runs} rounds"
    ]
    for mode in ("inotify", "polling"):
        for who in CONTENDERS:
            runs = [r[f"{who} {mode}"] for r in results]
            rows.append(
                [
                    f"{who} {mode}",
                    spread([r["cpu"] for r in runs], lambda v: f"{v:.3f} %"),
                    spread([r["rss"] for r in runs], lambda v: f"{v:.1f} MB"),
                ]
            )
    lines.append(render_table(["", "CPU", "RSS"], rows))
    for mode in ("inotify", "polling"):
        for key, name in (("cpu", "idle CPU"), ("rss", "RSS")):
            # Below 0.001 % (0.3 ms of CPU in 30 s) an idle reading is noise, not a denominator.
            least = 0.001 if key == "cpu" else 0.0
            values = [
                r[f"slopd {mode}"][key] / r[f"floor {mode}"][key]
                for r in results
                if r[f"floor {mode}"][key] > least
            ]
            if values:
                lines.append(ratio_line(f"f slopd/floor {mode}", values, name, verdict(values, 2.0, False)))
            else:
                slopd_cpu = statistics.median(r[f"slopd {mode}"][key] for r in results)
                floor_cpu = statistics.median(r[f"floor {mode}"][key] for r in results)
                met = "MET" if slopd_cpu <= 0.05 else "MISSED"
                lines.append(
                    f"ratio f slopd/floor {mode}: {name} n/a: the floor used {floor_cpu:.4f} % (nothing "
                    f"measurable), slopd {slopd_cpu:.4f} %  (target <= 2x, about 0.05 %: {met})"
                )
            peer = [
                r[f"slopd {mode}"][key] / r[f"peer {mode}"][key] for r in results if r[f"peer {mode}"][key]
            ]
            lines.append(ratio_line(f"f slopd/peer {mode}", peer, name))
    lines.append(
        "note: the peer's polling is watchmedo --debug-force-polling (1 s); "
        "the floor's and slopd's are 1 s too."
    )
    return lines


def workload_g(ctx: Context) -> list[str]:
    s = ctx.settings
    who_list = CONTENDERS if s.peer_in_g else ("slopd", "floor")
    for level in s.scale:
        for who in who_list:
            scale_lab(ctx, who, level)
    for round_no in range(1, s.runs + 1):
        for level in s.scale:
            key = f"g {level:,}"
            results = ctx.results.setdefault(key, [])
            row: dict[str, Any] = {}
            for who in who_list:
                print(f"  [g] round {round_no}: {who} at {level:,} …", file=sys.stderr, flush=True)
                count = peer_count(ctx, who, s.scale_count)
                row[who] = flow_saturation(
                    ctx, who, count, f"g{level}r{round_no}", lab=scale_lab(ctx, who, level)
                )
            results.append(row)
    lines = [
        f"(g) scale: {s.scale_count} handoffs at saturation with N entries already in the ledger "
        "and in archive/, "
        f"{s.runs} rounds (levels interleaved within each round)"
    ]
    for level in s.scale:
        key = f"g {level:,}"
        results = ctx.results[key]
        runs_by_who = {who: [r[who] for r in results if who in r] for who in who_list}
        lines.append(f"  N = {level:,}")
        lines.append(render_table(THROUGHPUT_HEADERS, throughput_rows(ctx, runs_by_who)))
        to_floor = per_round_ratios(results, "throughput", "slopd", "floor")
        lines.append(ratio_line(f"g slopd/floor at {level:,}", to_floor, "throughput", "no target"))
        if s.peer_in_g:
            to_peer = per_round_ratios(results, "throughput", "slopd", "peer")
            lines.append(ratio_line(f"g slopd/peer at {level:,}", to_peer, "throughput"))
    if not s.peer_in_g:
        lines.append("ratio g slopd/peer: peer exempt (no ledger; its per-file cost is a process start)")
    empty, top = s.scale[0], s.scale[-1]
    if top != empty:
        for who in ("slopd", "floor"):
            values = []
            for a, b in zip(ctx.results[f"g {top:,}"], ctx.results[f"g {empty:,}"], strict=True):
                if who in a and who in b and b[who]["throughput"]:
                    values.append(a[who]["throughput"] / b[who]["throughput"])
            target = verdict(values, 0.9, True) + " (within 10%)" if who == "slopd" else "no target"
            lines.append(ratio_line(f"g {who} {top:,}/{empty:,}", values, "throughput", target))
    lines.append(
        "note: archive/ is prefilled with hard links (one inode per 60,000 names): directory size is what "
        "scales, and it spares the machine a million inodes; slopd's go into today's archive/DAY/, "
        "the worst case."
    )
    return lines


WORKLOADS: dict[str, Callable[[Context], list[str]]] = {
    "a": workload_a,
    "b": workload_b,
    "c": workload_c,
    "d": workload_d,
    "e": workload_e,
    "f": workload_f,
    "g": workload_g,
}


def source_state() -> str:
    """The commit slopd runs from, and which of its files differ from it (the figures' provenance)."""

    def git(*args: str) -> str:
        done = subprocess.run(
            ["git", "-C", str(HERE.parent), *args], capture_output=True, text=True, check=False
        )
        return done.stdout

    changed = [line for line in git("status", "--porcelain", "--", "slopd").splitlines() if line.strip()]
    state = git("rev-parse", "--short", "HEAD").strip() or "not a git checkout"
    return state + (f" + uncommitted changes to {', '.join(line[3:] for line in changed)}" if changed else "")


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--workloads", default="a,b,c,d,e,f,g", help="comma-separated subset of a-g")
    parser.add_argument("--runs", type=int, help="rounds per workload (default 3; --quick: 1)")
    parser.add_argument("--quick", action="store_true", help="a smoke pass: tiny counts, one round")
    parser.add_argument("--rate", type=float, default=20.0, help="(a, b) drops per second")
    parser.add_argument("--count", type=int, help="(a, b) drops per run (default 150)")
    parser.add_argument("--sat", type=int, help="(c) envelopes per run (default 2000)")
    parser.add_argument("--backlog", type=int, help="(d) files waiting at start (default 10000)")
    parser.add_argument("--orders", type=int, help="(e-verify) orders per run (default 1000)")
    parser.add_argument("--action-orders", type=int, help="(e-action) orders per run (default 300)")
    parser.add_argument("--order-kinds", default="verify,action", help="(e) verify, action, or both")
    parser.add_argument("--idle", type=float, help="(f) seconds of idle measurement (default 30)")
    parser.add_argument("--scale", help="(g) ledger/archive sizes, e.g. 0,100k,1M (default)")
    parser.add_argument("--scale-count", type=int, help="(g) envelopes per run (default 2000)")
    parser.add_argument(
        "--peer-max", type=int, help="at most this many files for the peer in c, d, e, g (default 150)"
    )
    parser.add_argument("--peer-in-g", action="store_true", help="run the peer in g too")
    parser.add_argument(
        "--contenders",
        default=",".join(CONTENDERS),
        help="who runs in a-e, in this order in each round (default slopd,floor,peer); slopd and floor "
        "are needed. Variants of slopd, each also compared with slopd round by round: slopd+http "
        "(`--http 127.0.0.1:0`: the HTTP transport, /mcp and the console with their extras), slopd@REV "
        "(commit REV's tree, from `git archive`), slopd@REV+http; with variants the order turns by one "
        "each round, so that none always runs first. f and g run slopd, floor and peer",
    )
    parser.add_argument("--json", help="write the raw per-run figures here")
    args = parser.parse_args()
    quick = args.quick

    def pick(value: Any, full: Any, smoke: Any) -> Any:
        return value if value is not None else (smoke if quick else full)

    settings = Settings(
        runs=pick(args.runs, 3, 1),
        rate=args.rate,
        low_count=pick(args.count, 150, 8),
        sat=pick(args.sat, 2000, 60),
        backlog=pick(args.backlog, 10_000, 100),
        orders=pick(args.orders, 1000, 30),
        action_orders=pick(args.action_orders, 300, 15),
        idle=pick(args.idle, 30.0, 1.0),
        scale=parse_scale(pick(args.scale, "0,100k,1M", "0,1k")),
        scale_count=pick(args.scale_count, 2000, 60),
        peer_max=pick(args.peer_max, 150, 8),
        peer_in_g=args.peer_in_g,
        order_kinds=[kind.strip() for kind in args.order_kinds.split(",") if kind.strip()],
        quick=quick,
    )
    chosen = [w.strip() for w in args.workloads.split(",") if w.strip()]
    unknown = [w for w in chosen if w not in WORKLOADS]
    if unknown:
        parser.error(f"unknown workloads: {', '.join(unknown)}")

    order = tuple(dict.fromkeys(who.strip() for who in args.contenders.split(",") if who.strip()))
    if not {"slopd", "floor"} <= set(order):
        parser.error("--contenders must name slopd and floor: every ratio is taken against them")
    precompile()
    signer = Signer()
    contenders: dict[str, Contender] = {c.name: c(signer) for c in (Slopd, Floor, Peer)}
    try:
        contenders.update({who: variant(who, signer) for who in order if who not in contenders})
    except ValueError as error:
        parser.error(str(error))
    ctx = Context(settings, signer, contenders, order=order)
    print(f"# machine: {machine_line()}")
    print(f"# started {time.strftime('%Y-%m-%d %H:%M:%S %Z')}; {settings}")
    print(f"# slopd source: {source_state()}")
    for who in ctx.variants:
        made = contenders[who]
        assert isinstance(made, Slopd)
        http = " --http 127.0.0.1:0" if made.serve_http else ""
        tree = f"from {made.source} (git archive)" if made.source else "from this tree"
        print(f"# {who}: slopd run …{http}, {tree}")
    print(
        f"# slopd: {' '.join(SLOPD)} run …; floor: bench/floor.py; peer: bench/peer/peer.sh (watchmedo)",
        flush=True,
    )
    began = time.monotonic()
    verdicts = []
    for workload in chosen:
        started = time.monotonic()
        lines = WORKLOADS[workload](ctx)
        verdicts += [line for line in lines if "MET" in line or "MISSED" in line]
        print()
        print("\n".join(lines))
        print(f"# ({workload} took {time.monotonic() - started:.0f} s)", flush=True)
    print()
    print("== targets (issue 7): median of the per-round ratios [min-max over rounds]")
    print("\n".join(verdicts) if verdicts else "(none measured)")
    if ctx.notes:
        print()
        print("\n".join(f"# {note}" for note in ctx.notes))
    if ctx.failures:
        print()
        print("\n".join(f"# FAILURE: {failure}" for failure in ctx.failures))
    print(f"# total {time.monotonic() - began:.0f} s", flush=True)
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {"settings": settings.__dict__, "machine": machine_line(), "results": ctx.results}, indent=1
            ),
            encoding="utf-8",
        )
    return 1 if ctx.failures else 0


if __name__ == "__main__":
    sys.exit(main())
