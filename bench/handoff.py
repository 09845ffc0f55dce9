"""In-process cost of the MEP handoff tools on long logs: lint and the three-way merge, by size.

    .venv/bin/python bench/handoff.py                     # 100, 1,000 and 10,000 entries, best of 3 (~1 min)
    .venv/bin/python bench/handoff.py --sizes 100,1000,10000,30000 --repeat 5
    .venv/bin/python bench/handoff.py --quick             # smoke pass: 100 and 1,000 entries, one run

The logs are generated in-process, deterministically (a fixed seed): the file header, then
entries newest first, about half v1 (`## DATE — machine (branch)`, one a day) and half v2
(`## DATE — agent | platform | type` with a Tag line, two or three sessions on one date, their
Tag-outs in UTC, ET, CEST or `[active]`, in order), each with What happened (1-3 bullets),
What's pending (1-3 tasks, open or done, some with an owner tag) and, every other entry, Watch
out for; `---` between entries. Every generated log lints clean (checked once, not timed).

Figures, for each size N (entries in the base log):
  lint       `slopd.handoff.lint.lint(data)` over the file's bytes: decoding, parsing, every rule
  merge      `slopd.handoff.merge.merge(base, ours, theirs)` where ours and theirs each add 10 new
             entries on top of the base (newer dates, interleaved with each other), and each
             changes one old entry (ours adds a done task to entry N/3, theirs a bullet to entry
             2N/3): the git merge driver's work on a busy branch
Time is `time.perf_counter` around one call, the best of --repeat calls (the garbage collector
left on, as in the CLI). Peak memory is tracemalloc's peak over one further call, run apart from
the timed ones (tracing slows Python down). "µs/entry" is the best time divided by N: flat
across sizes means linear growth. Target: lint of the 10,000-entry log under 1 s, printed MET
or MISSED (never asserted). Raw figures: --json FILE.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import random
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

from common import machine_line, render_table
from compare import source_state

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from slopd.handoff.lint import lint  # noqa: E402
from slopd.handoff.merge import merge  # noqa: E402

HEAD = "# Handoff Log\nSession handoffs between machines and agents, newest entry first.\n\n---\n\n"
SEPARATOR = "\n---\n\n"
MACHINES = ("Hot Rod (main)", "Mac (Nagatha/worktree)", "ci-runner (release)", "Mac (feature/merge)")
AGENTS = (
    "Skippy | Claude (Hot Rod) | code",
    "Grok | Grok (X) | brainstorm",
    "ChatGPT | ChatGPT | research",
    "Pierre | Human | review",
)
DONE = (
    "Built the `/iterate` skill: 7-stage loop, Run Sheet template",
    "Resolved the merge conflict in handoff.md (PR #{n})",
    "Rebased the worktree onto main; tests green",
    "Locked decision: stay with Plaud over Circleback",
)
TASKS = ("Post the Reddit drafts", "Wire the Piper PR monitor", "Fix the Pip-Boy frame", "Fork gbrain")
OWNERS = ("Pierre", "Skippy", "Grok")
TRAPS = ("`~/.leo/` still exists as backup", "The MCP auth token expires on Friday")
TARGET_SIZE, TARGET_SECONDS = 10_000, 1.0
NEW_PER_SIDE = 10


def session(rng: random.Random, day: dt.date, number: int, context: str, tags: str | None) -> str:
    lines = [f"## {day.isoformat()} — {context}", *([tags] if tags else []), "", "### What happened"]
    lines += [f"- {rng.choice(DONE).format(n=number)}" for _ in range(rng.randint(1, 3))]
    lines += ["", "### What's pending"]
    for _ in range(rng.randint(1, 3)):
        owner = f"**[{rng.choice(OWNERS)}]** " if rng.random() < 0.6 else ""
        lines.append(f"- [{'x' if rng.random() < 0.3 else ' '}] {owner}{rng.choice(TASKS)} (#{number})")
    if number % 2:
        lines += ["", "### Watch out for", f"- {rng.choice(TRAPS)}"]
    return "\n".join(lines) + "\n"


def clock(minutes: int) -> str:
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def tag_line(day: dt.date, utc_minutes: int, zone: str) -> str:
    """A Tag line whose Tag-out is `utc_minutes` after midnight UTC of `day`, written in `zone`."""
    if zone == "[active]":
        return "**Tag-in:** 09:00 UTC | **Tag-out:** [active]"
    offset = {"UTC": 0, "CEST": 120, "ET": -240}[zone]  # ET: UTC-4 all year, as MEP's checker reads it
    local = utc_minutes + offset
    return f"**Tag-in:** {clock(local - 90)} {zone} | **Tag-out:** {clock(local)} {zone}"


def entries(count: int, newest: dt.date, seed: int, first_number: int = 0) -> list[str]:
    """`count` entries newest first, the first dated `newest`."""
    rng = random.Random(seed)
    made: list[str] = []
    day = newest
    while len(made) < count:
        if rng.random() < 0.5:
            made.append(session(rng, day, first_number + len(made), rng.choice(MACHINES), None))
        else:
            sessions = min(rng.randint(2, 3), count - len(made))
            moments = sorted(rng.sample(range(600, 1200, 5), sessions), reverse=True)
            agents = rng.sample(AGENTS, sessions)
            for index, (minutes, agent) in enumerate(zip(moments, agents, strict=True)):
                zone = "[active]" if index == 0 and rng.random() < 0.2 else rng.choice(["UTC", "ET", "CEST"])
                made.append(session(rng, day, first_number + len(made), agent, tag_line(day, minutes, zone)))
        day -= dt.timedelta(days=1)
    return made


def workload(size: int) -> tuple[str, str, str]:
    """(base, ours, theirs) for a base of `size` entries."""
    base_entries = entries(size, dt.date(2026, 11, 30), seed=size)
    new = entries(2 * NEW_PER_SIDE, dt.date(2026, 12, 20), seed=size + 1, first_number=size)
    ours_entries = new[0::2] + base_entries
    theirs_entries = new[1::2] + base_entries
    ticked, noted = NEW_PER_SIDE + size // 3, NEW_PER_SIDE + 2 * size // 3
    ours_entries[ticked] = ours_entries[ticked].replace(
        "### What's pending\n", "### What's pending\n- [x] Ticked\n"
    )
    theirs_entries[noted] = theirs_entries[noted].replace(
        "### What happened\n", "### What happened\n- Theirs re-checked the deploy\n"
    )
    return tuple(HEAD + SEPARATOR.join(items) for items in (base_entries, ours_entries, theirs_entries))


def best_of(call: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        began = time.perf_counter()
        call()
        times.append(time.perf_counter() - began)
    return min(times)


def peak_mib(call: Callable[[], object]) -> float:
    tracemalloc.start()
    try:
        call()
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def measure(size: int, repeat: int) -> dict[str, Any]:
    base, ours, theirs = workload(size)
    data = base.encode()
    report = lint(data)
    if report.findings:
        raise SystemExit(f"bench/handoff.py: the {size}-entry log is not clean: {report.findings[:3]}")
    merged = merge(base, ours, theirs)
    if merged.conflicts or lint(merged.text.encode()).findings:
        raise SystemExit(f"bench/handoff.py: the {size}-entry merge is not clean")
    return {
        "entries": size,
        "bytes": len(data),
        "lint_s": best_of(lambda: lint(data), repeat),
        "merge_s": best_of(lambda: merge(base, ours, theirs), repeat),
        "lint_peak_mib": peak_mib(lambda: lint(data)),
        "merge_peak_mib": peak_mib(lambda: merge(base, ours, theirs)),
    }


def seconds(value: float) -> str:
    return f"{value * 1000:.1f} ms" if value < 1 else f"{value:.2f} s"


def report(figures: list[dict[str, Any]]) -> list[str]:
    headers = [
        "entries",
        "file",
        "lint",
        "lint µs/entry",
        "lint peak",
        "merge",
        "merge µs/entry",
        "merge peak",
    ]
    rows = [
        [
            f"{row['entries']:,}",
            f"{row['bytes'] / 2**20:.2f} MiB" if row["bytes"] >= 2**20 else f"{row['bytes'] / 1024:.0f} KiB",
            seconds(row["lint_s"]),
            f"{row['lint_s'] / row['entries'] * 1e6:.1f}",
            f"{row['lint_peak_mib']:.1f} MiB",
            seconds(row["merge_s"]),
            f"{row['merge_s'] / row['entries'] * 1e6:.1f}",
            f"{row['merge_peak_mib']:.1f} MiB",
        ]
        for row in figures
    ]
    lines = [render_table(headers, rows), ""]
    if len(figures) > 1:
        first, last = figures[0], figures[-1]
        growth = last["entries"] / first["entries"]
        lines.append(
            f"growth {first['entries']:,} -> {last['entries']:,} entries ({growth:.0f}x): "
            f"lint {last['lint_s'] / first['lint_s']:.1f}x, merge {last['merge_s'] / first['merge_s']:.1f}x"
        )
    target = next((row for row in figures if row["entries"] == TARGET_SIZE), None)
    if target is not None:
        verdict = "MET" if target["lint_s"] < TARGET_SECONDS else "MISSED"
        lines.append(
            f"target: lint of {TARGET_SIZE:,} entries under {TARGET_SECONDS:.0f} s: "
            f"{seconds(target['lint_s'])} {verdict}"
        )
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--sizes", help="comma-separated entry counts (default 100,1000,10000; --quick: 100,1000)"
    )
    parser.add_argument(
        "--repeat", type=int, help="timed calls per figure, the best kept (default 3; --quick: 1)"
    )
    parser.add_argument("--quick", action="store_true", help="a smoke pass: small logs, one call each")
    parser.add_argument("--json", help="write the raw figures here")
    args = parser.parse_args()
    sizes = [
        int(size) for size in (args.sizes or ("100,1000" if args.quick else "100,1000,10000")).split(",")
    ]
    repeat = args.repeat if args.repeat is not None else (1 if args.quick else 3)
    if repeat < 1 or any(size < 3 for size in sizes):
        parser.error("--repeat must be at least 1 and every size at least 3")

    print(f"# machine: {machine_line()}")
    print(
        f"# started {time.strftime('%Y-%m-%d %H:%M:%S %Z')}; "
        f"sizes={','.join(map(str, sizes))} repeat={repeat}; in-process"
    )
    print(f"# slopd source: {source_state()}", flush=True)
    began = time.monotonic()
    figures = [measure(size, repeat) for size in sizes]
    print()
    print("\n".join(report(figures)))
    print(f"# total {time.monotonic() - began:.1f} s", flush=True)
    if args.json:
        raw = {"settings": {"sizes": sizes, "repeat": repeat}, "machine": machine_line(), "figures": figures}
        Path(args.json).write_text(json.dumps(raw, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
