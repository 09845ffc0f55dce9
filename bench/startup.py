"""Start-up cost: the one-shot commands agents call per message, and the daemon's spawn → first reply.

    .venv/bin/python bench/startup.py                 # 40 spawns per command, 5 daemon rounds (~30 s)
    .venv/bin/python bench/startup.py --runs 100 --rounds 9
    .venv/bin/python bench/startup.py --quick         # smoke pass (tests/e2e/tools/test_bench_smoke.py)

slopd is driven only from the outside, as a user would: the `slopd` console script next to this
interpreter (`.venv/bin/slopd`), or `python -m slopd` when there is none. Nothing of slopd is
imported, so the script measures whatever slopd/ holds at the moment, before or after a refactor.
slopd/ and bench/ are byte-compiled first, as an installed package is (under PYTHONDONTWRITEBYTECODE
every spawn would otherwise recompile slopd); if slopd/ changes during the run it is compiled again
before the next round, and the run says so.

Part 1, per-call cost. Each command is spawned --runs times, the commands interleaved round-robin
(the order rotated every round) so that the machine's noise hits all of them alike, after one
untimed warm-up call each. A sample is the wall time from `subprocess.run` to the child's exit.
  python -c pass            the interpreter's own start (the floor of any Python CLI)
  python -c "import yaml"   plus the one library every envelope needs
  slopd send                `send --hub H --type note --from bench --to watcher -`, body on stdin,
                            into a fresh hub made by `slopd init`
  slopd validate FILE       one valid handoff envelope
  slopd status              `status --hub H --state S` after one `slopd run --once` (a ledger, a reply)
"median - python start" is what the command costs above the interpreter's start. Target:
each slopd command's median <= 60 ms, printed MET or MISSED (never asserted).

Part 2, daemon start-up against the floor (bench/floor.py), on the hub and config compare.py uses
(its Lab, Slopd and Floor contenders, Running and ReplyWatcher: a reply is stamped by a bare
inotify watch on outbox/). Each figure runs --rounds rounds, slopd and the floor interleaved (which
goes first alternates), one fresh hub per run:
  (a) waiting at spawn  one handoff is renamed into inbox/ just before the spawn; the figure is
                        spawn → its reply. The daemon can only find that file by its start-up scan,
                        and its last write is a few ms old. slopd deliberately waits `settle`
                        (0.3 s) before reading a file found by scanning whose last write is younger
                        than that: it cannot know the writer has finished. The wait counts from the
                        scan (slopd's intake at the time of writing), so (a) is slopd's start-up
                        plus 0.3 s when its first scan comes less than 0.3 s after the write, and
                        just its start-up when the scan comes later (the file is old enough by
                        then): a start-up made faster than 0.3 s can make (a) slower. The floor
                        never waits. "(a) - (b)" shows the wait.
  (b) serving           from the spawn on, a fresh probe is renamed into inbox/ every 20 ms until
                        one is answered; the figure is spawn → the first reply to any probe. Probes
                        renamed in once the daemon's watch is up arrive as rename events, and a
                        renamed-in file is complete, so slopd reads it at once: (b) is the time until
                        the daemon answers new work, its start-up with no settle in it. The early
                        probes, found by the scan, wait out their settle as in (a). Its resolution
                        is the probe interval: a daemon whose watch comes up between two probes is
                        answered on the next one, up to 20 ms later (the floor usually answers the
                        very first probe, from its scan, so this costs slopd alone).
Target: start-up to first reply <= 2x the floor's, for each figure (the median of the
per-round ratios; printed, never asserted).

Scratch hubs go under $BENCH_TMP (default /var/tmp/slopd-bench) and are deleted at exit
(BENCH_KEEP=1 keeps them). Raw figures: --json FILE.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from common import SCRATCH, envelope, machine_line, percentiles, precompile, render_table, scratch, spread
from compare import Contender, Floor, Lab, Running, Slopd, drop_renamed, ms, ratio, source_state

HERE = Path(__file__).resolve().parent
SOURCES = HERE.parent / "slopd"
PER_CALL_TARGET_MS = 60.0
STARTUP_TARGET = 2.0
PROBE_EVERY = 0.020
CONTENDERS = ("slopd", "floor")
TO_WATCHER = ("--to", "watcher", "-")  # the body on stdin
ENV = dict(os.environ, XDG_CONFIG_HOME="/nonexistent", XDG_STATE_HOME="/nonexistent")


def slopd_command() -> tuple[list[str], str]:
    """The `slopd` console script beside this interpreter, else `python -m slopd`; and a note.

    A console script that no longer starts (its entry point moved, the package not reinstalled)
    while `python -m slopd` does is passed over, and the note says so."""
    module = [sys.executable, "-m", "slopd"]
    script = Path(sys.executable).parent / "slopd"
    if not (script.is_file() and os.access(script, os.X_OK)):
        return module, f"no console script at {script}: python -m slopd"

    def starts(argv: list[str]) -> bool:
        done = subprocess.run([*argv, "--version"], capture_output=True, env=ENV, check=False)
        return done.returncode == 0

    if not starts([str(script)]) and starts(module):
        return module, f"{script} does not start (stale entry point?): python -m slopd"
    return [str(script)], "the console script"


SLOPD_CLI: list[str] = []  # set by main()


class SourceWatch:
    """Recompiles slopd/ when its sources change under the run (someone editing it meanwhile)."""

    def __init__(self) -> None:
        self.changes: list[str] = []
        self.seen = self.fingerprint()

    @staticmethod
    def fingerprint() -> frozenset[tuple[str, int, int]]:
        found = set()
        for path in SOURCES.rglob("*.py"):
            try:
                info = path.stat()
            except OSError:
                continue
            found.add((str(path), info.st_mtime_ns, info.st_size))
        return frozenset(found)

    def refresh(self, where: str) -> None:
        now = self.fingerprint()
        if now != self.seen:
            self.seen = now
            try:
                precompile()
                self.changes.append(where)
            except subprocess.CalledProcessError:  # a file saved half-way: the spawns will say more
                self.changes.append(f"{where} (compileall failed)")


# -- part 1: per-call cost ---------------------------------------------------------------------


@dataclass
class Command:
    label: str
    argv: list[str]
    stdin: bytes | None = None
    samples: list[float] = field(default_factory=list)

    def call(self) -> float:
        """One spawn; its wall time in ms. A failing command ends the benchmark."""
        began = time.perf_counter()
        done = subprocess.run(
            self.argv,
            input=self.stdin,
            stdin=None if self.stdin is not None else subprocess.DEVNULL,
            capture_output=True,
            env=ENV,
            check=False,
        )
        took = (time.perf_counter() - began) * 1000
        if done.returncode != 0:
            raise RuntimeError(
                f"{self.label} exited with {done.returncode}: {' '.join(self.argv)}\n"
                + done.stdout.decode(errors="replace")
                + done.stderr.decode(errors="replace")
            )
        return took


def slopd_ok(*args: str) -> None:
    done = subprocess.run([*SLOPD_CLI, *args], capture_output=True, env=ENV, check=False)
    if done.returncode != 0:
        output = done.stdout.decode(errors="replace") + done.stderr.decode(errors="replace")
        raise RuntimeError(f"slopd {' '.join(args)} exited with {done.returncode}:\n{output}")


def part1_commands(slopd: Contender) -> list[Command]:
    send_hub = scratch("send-") / "hub"
    slopd_ok("init", str(send_hub))
    envelope_id, data = envelope(0, nonce="validate")
    to_validate = scratch("validate-") / f"{envelope_id}.md"
    to_validate.write_bytes(data)
    lab = slopd.lab()  # compare.py's hub and config
    drop_renamed(lab, "inbox", f"{envelope_id}.md", data)
    slopd_ok("run", "--once", "--hub", str(lab.hub), "--state", str(lab.state), "--config", str(lab.config))
    body = b"A note for the watcher: the parser refactor is half done; docs are next.\n"
    return [
        Command("python -c pass", [sys.executable, "-c", "pass"]),
        Command('python -c "import yaml"', [sys.executable, "-c", "import yaml"]),
        Command(
            "slopd send",
            [*SLOPD_CLI, "send", "--hub", str(send_hub), "--type", "note", "--from", "bench", *TO_WATCHER],
            stdin=body,
        ),
        Command("slopd validate", [*SLOPD_CLI, "validate", str(to_validate)]),
        Command("slopd status", [*SLOPD_CLI, "status", "--hub", str(lab.hub), "--state", str(lab.state)]),
    ]


def part1(commands: list[Command], runs: int, sources: SourceWatch) -> list[str]:
    for command in commands:
        command.call()  # warm-up: page cache, dentries
    for round_no in range(runs):
        sources.refresh(f"part 1, spawn round {round_no + 1}")
        shift = round_no % len(commands)
        for command in commands[shift:] + commands[:shift]:
            command.samples.append(command.call())
    python_start = statistics.median(commands[0].samples)
    rows = []
    for command in commands:
        figures = percentiles(command.samples)
        above = figures["median"] - python_start
        rows.append(
            [
                command.label,
                ms(figures["median"]),
                ms(figures["p90"]),
                ms(figures["min"]),
                "-" if command is commands[0] else ms(above),
            ]
        )
    lines = [
        f"== part 1: per-call wall time, {runs} spawns per command, interleaved round-robin",
        render_table(["", "median", "p90", "min", "median - python start"], rows),
    ]
    for command in commands:
        if command.label.startswith("slopd "):
            middle = statistics.median(command.samples)
            met = "MET" if middle <= PER_CALL_TARGET_MS else "MISSED"
            lines.append(f"target {command.label} median <= {PER_CALL_TARGET_MS:g} ms: {met} ({ms(middle)})")
    return lines


# -- part 2: daemon start-up against the floor ---------------------------------------------


class KeyFile:
    """Stands in for compare.py's Signer: the contenders only need its allowed_signers file.

    The key is made here with `cryptography` (no slopd module is imported)."""

    def __init__(self) -> None:
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey  # noqa: PLC0415

        raw = Ed25519PrivateKey.generate().public_key().public_bytes_raw()

        def pack(value: bytes) -> bytes:
            return len(value).to_bytes(4, "big") + value

        blob = base64.b64encode(pack(b"ssh-ed25519") + pack(raw)).decode()
        self.allowed_signers = scratch("keys-") / "allowed_signers"
        self.allowed_signers.write_text(f"operator@example.com ssh-ed25519 {blob}\n", encoding="utf-8")


class SlopdCLI(Slopd):
    """compare.py's slopd contender (same hub, state dir and config), run by the console script."""

    def argv(self, lab: Lab, polling: bool) -> list[str]:
        words = super().argv(lab, polling)
        return [*SLOPD_CLI, *words[words.index("run") :]]


def waiting_at_spawn(contender: Contender, tag: str) -> dict[str, Any]:
    """(a) One handoff renamed into inbox/ just before the spawn: spawn → its reply, in ms."""
    lab = contender.lab()
    envelope_id, data = envelope(0, nonce=tag)
    drop_renamed(lab, "inbox", f"{envelope_id}.md", data)
    run = Running(contender, lab)
    reply = f"{envelope_id}.result.md"
    try:
        deadline = time.monotonic() + 60
        while not run.watcher.wait_for([reply], timeout=0.5):
            if run.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{contender.name} did not answer the waiting handoff: {lab.base}")
        took = (run.watcher.seen[reply] - run.t_spawn) * 1000
    finally:
        code = run.stop()
    return {"ms": took, "exit": code}


def serving(contender: Contender, tag: str) -> dict[str, Any]:
    """(b) A fresh probe renamed in every 20 ms from the spawn on: spawn → first reply, in ms."""
    lab = contender.lab()
    run = Running(contender, lab)
    dropped: dict[str, float] = {}  # reply name -> when its probe was renamed in
    try:
        next_at = run.t_spawn
        deadline = run.t_spawn + 60
        answered: list[str] = []
        while not answered:
            if run.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{contender.name} answered no probe: {lab.base}")
            if time.monotonic() >= next_at:
                envelope_id, data = envelope(len(dropped), nonce=tag)
                dropped[f"{envelope_id}.result.md"] = drop_renamed(lab, "inbox", f"{envelope_id}.md", data)
                next_at += PROBE_EVERY
            time.sleep(max(next_at - time.monotonic(), 0))
            seen = run.watcher.seen
            answered = [name for name in dropped if name in seen]
        seen = run.watcher.seen
        first = min(answered, key=lambda name: seen[name])
        result = {
            "ms": (seen[first] - run.t_spawn) * 1000,
            "probe_dropped_ms": (dropped[first] - run.t_spawn) * 1000,
            "probe_index": list(dropped).index(first),
            "probes": len(dropped),
        }
    finally:
        code = run.stop()
    return {**result, "exit": code}


FIGURES = {
    "a": ("(a) waiting at spawn: one handoff renamed into inbox/ just before the spawn", waiting_at_spawn),
    "b": (f"(b) serving: a probe renamed in every {PROBE_EVERY * 1000:.0f} ms from the spawn on", serving),
}


def part2(
    contenders: dict[str, Contender], rounds: int, sources: SourceWatch, failures: list[str]
) -> tuple[list[str], dict[str, Any]]:
    results: dict[str, list[dict[str, Any]]] = {key: [] for key in FIGURES}
    for round_no in range(1, rounds + 1):
        sources.refresh(f"part 2, round {round_no}")
        order = CONTENDERS if round_no % 2 else CONTENDERS[::-1]
        for key, (_, measure) in FIGURES.items():
            row = {}
            for who in order:
                print(f"  [{key}] round {round_no}: {who} …", file=sys.stderr, flush=True)
                row[who] = measure(contenders[who], f"{key}{who}{round_no}")
                if row[who]["exit"] != 0:
                    failures.append(f"{who} exited with {row[who]['exit']} after a ({key}) run")
            results[key].append(row)
    lines = [
        f"== part 2: daemon start-up against the floor, {rounds} round{'s' if rounds != 1 else ''} "
        "(slopd and floor interleaved)"
    ]
    targets = []
    for key, (title, _) in FIGURES.items():
        lines.append(title)
        headers = ["", "spawn -> first reply"]
        if key == "b":
            headers += ["answered probe renamed in at", "probes dropped"]
        rows = []
        for who in CONTENDERS:
            runs = [one[who] for one in results[key]]
            row = [who, spread([r["ms"] for r in runs], ms)]
            if key == "b":
                row += [
                    spread([r["probe_dropped_ms"] for r in runs], ms),
                    spread([float(r["probes"]) for r in runs], lambda v: f"{v:.0f}"),
                ]
            rows.append(row)
        lines.append(render_table(headers, rows))
        ratios = [one["slopd"]["ms"] / one["floor"]["ms"] for one in results[key]]
        met = "MET" if statistics.median(ratios) <= STARTUP_TARGET else "MISSED"
        lines.append(f"ratio {key} slopd/floor: spawn -> first reply {spread(ratios, ratio)}")
        targets.append(
            f"target ({key}) {'waiting at spawn' if key == 'a' else 'serving'}: start-up to first reply "
            f"<= {STARTUP_TARGET:g}x the floor's: {met} ({ratio(statistics.median(ratios))})"
        )
        lines.append(targets[-1])
        lines.append("")
    waits = []
    for who in CONTENDERS:
        gaps = [a[who]["ms"] - b[who]["ms"] for a, b in zip(results["a"], results["b"], strict=True)]
        waits.append(f"{who} {spread(gaps, ms)}")
    lines.append(f"(a) - (b), round by round: {'; '.join(waits)}")
    lines.append(
        "note: (a) includes slopd's deliberate `settle` (0.3 s) when its start-up scan finds the file "
        "younger than that; the floor never waits. (b) is answered through a rename event, read at once."
    )
    return lines, results


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, help="part 1: spawns per command (default 40; --quick: 5)")
    parser.add_argument("--rounds", type=int, help="part 2: rounds per figure (default 5; --quick: 1)")
    parser.add_argument("--quick", action="store_true", help="a smoke pass: few spawns, one round")
    parser.add_argument("--json", help="write the raw figures here")
    args = parser.parse_args()
    runs = args.runs if args.runs is not None else (5 if args.quick else 40)
    rounds = args.rounds if args.rounds is not None else (1 if args.quick else 5)
    if runs < 1 or rounds < 1:
        parser.error("--runs and --rounds must be at least 1")

    precompile()
    sources = SourceWatch()
    command, how = slopd_command()
    SLOPD_CLI[:] = command
    print(f"# machine: {machine_line()}")
    print(
        f"# started {time.strftime('%Y-%m-%d %H:%M:%S %Z')}; runs={runs} rounds={rounds}; scratch {SCRATCH}"
    )
    at_start = source_state()
    print(f"# slopd source: {at_start}")
    print(f"# slopd command: {' '.join(SLOPD_CLI)} ({how})", flush=True)
    began = time.monotonic()
    failures: list[str] = []
    keys = KeyFile()
    contenders: dict[str, Contender] = {"slopd": SlopdCLI(keys), "floor": Floor(keys)}
    commands = part1_commands(contenders["slopd"])
    lines1 = part1(commands, runs, sources)
    print()
    print("\n".join(lines1), flush=True)
    lines2, results2 = part2(contenders, rounds, sources, failures)
    print()
    print("\n".join(lines2))
    print()
    print("== targets: printed, never asserted")
    print("\n".join(line for line in lines1 + lines2 if line.startswith("target ")))
    if sources.changes:
        print()
        print(
            f"# NOTE: slopd/ changed during the run (recompiled before {', '.join(sources.changes)}); "
            "the figures mix versions of slopd"
        )
    at_end = source_state()
    if at_end != at_start:
        print(f"# slopd source at the end: {at_end}")
    for failure in failures:
        print(f"# FAILURE: {failure}")
    print(f"# total {time.monotonic() - began:.0f} s", flush=True)
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {
                    "settings": {"runs": runs, "rounds": rounds, "slopd": SLOPD_CLI, "slopd_how": how},
                    "machine": machine_line(),
                    "part1": {command.label: command.samples for command in commands},
                    "part2": results2,
                    "source_changes": sources.changes,
                },
                indent=1,
            ),
            encoding="utf-8",
        )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
