"""What indexing one note costs, by how many notes the hub already has: the paged index against
the full re-render slopd did before (issue 25, item 5).

    .venv/bin/python bench/notes.py                        # 10, 1,000 and 10,000 notes (~1 min)
    .venv/bin/python bench/notes.py --sizes 10,1000,10000,50000 --rounds 40
    .venv/bin/python bench/notes.py --quick                # smoke pass: 10 and 1,000 notes, 5 rounds

For each size N, a real ledger (SQLite, WAL, in a scratch dir) is seeded with N notes of about
200 bytes (the seed's #learning example with a number in it, `created_at` shuffled), and the
index files are written once, untimed. Then --rounds notes are indexed one at a time, as the
daemon indexes one: the ledger row committed in its own transaction, then the files of
`notes/` written atomically and durably (temp file, fsync, rename, fsync of the folder) with
slopd's own `shell.fs.atomic_write`.

  paged     what slopd does now (`daemon.notebook.files`): INDEX.md from the 50 newest (an index
            of the ledger gives them) and the note's page of 100 — two bounded files
  re-render what it did before: every note read back newest first and rendered into one
            INDEX.md, rewritten whole for each new note

The hubs are indexed round-robin (a note in each, then the next round), so a noisy moment of a
shared machine falls on every size alike. Figures per size and way: the median and the 90th
percentile of the time to index one note (`time.perf_counter` around the ledger commit, the
queries, the rendering and the writes: fsync waits included, so they are noisy), the median CPU
time of the same (`time.thread_time`: the work, without the waits), and the bytes written per
note. The paged figures should be flat across sizes; the re-render's grow with N. Printed side
by side, never asserted. Raw figures: --json FILE.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from common import machine_line, render_table, scratch
from compare import source_state

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from slopd.core import notes  # noqa: E402
from slopd.core.notes import Note  # noqa: E402
from slopd.daemon import notebook  # noqa: E402
from slopd.shell import fs  # noqa: E402
from slopd.shell.ledger import Ledger  # noqa: E402

BODY = (
    "#learning\n- worked: HTTP POST with a signed bearer token (run {n})\n"
    "- pitfall: connection dropped mid-session on the retry\n"
    "- next_time: back off 2s/4s/8s instead of retrying immediately\n"
)


def a_note(number: int, rng: random.Random) -> Note:
    minute = rng.randrange(60 * 24 * 28)
    created = f"2026-07-{minute // 1440 + 1:02d}T{minute // 60 % 24:02d}:{minute % 60:02d}:00Z"
    return Note(f"bench-note-{number:07d}", "grok-mobile", created, "#learning", BODY.format(n=number))


def old_index(ledger: Ledger) -> list[tuple[str, bytes]]:
    """The index as slopd wrote it before the paged one: every note, rendered on each new one."""
    every = ledger.notes()
    head = (
        "# Notes\n\nEvery `type: note` this hub has received, newest first. "
        "Written by slopd; edits here are overwritten.\n"
    )
    parts = [head] + [
        f"## {note.created_at} — {note.sender} — `{note.id}`\n\n{note.body.strip() or '(empty)'}\n"
        for note in every
    ]
    return [(notes.INDEX, "\n".join(parts).encode())]


def paged_index(folder: Path) -> Callable[[Ledger, str], list[tuple[str, bytes]]]:
    return lambda ledger, ident: notebook.files(ledger, ident, lambda name: (folder / name).exists())


class Hub:
    """One size and one way: a seeded ledger and its `notes/` folder, indexed once, untimed."""

    def __init__(self, size: int, way: str) -> None:
        self.size, self.way, self.next = size, way, size
        base = scratch(f"notes-{way}-{size}-")
        self.folder = base / "notes"
        self.folder.mkdir()
        self.ledger = Ledger(base / "ledger.sqlite3")
        self.rng = random.Random(size)
        with self.ledger.writing() as unit:
            for number in range(size):
                unit.add_note(a_note(number, self.rng), now="2026-07-01T00:00:00Z")
        self.fd = os.open(self.folder, os.O_RDONLY | os.O_DIRECTORY)
        if way == "paged":  # every page once: the hub as it stands
            for name, data in notebook.files(self.ledger, "bench-note-0000000", lambda _name: False):
                fs.atomic_write(self.fd, name, data)
        self.wall: list[float] = []
        self.cpu: list[float] = []
        self.written: list[int] = []

    def files(self, ident: str) -> list[tuple[str, bytes]]:
        if self.way == "paged":
            return notebook.files(self.ledger, ident, lambda name: (self.folder / name).exists())
        return old_index(self.ledger)

    def index_one(self) -> None:
        """One note indexed as the daemon does it: the ledger row committed, then its files."""
        note = a_note(self.next, self.rng)
        self.next += 1
        began, cpu = time.perf_counter(), time.thread_time()
        with self.ledger.writing() as unit:
            unit.add_note(note, now="2026-07-01T00:00:00Z")
        out = self.files(note.id)
        for name, data in out:
            fs.atomic_write(self.fd, name, data)
        self.cpu.append(time.thread_time() - cpu)
        self.wall.append(time.perf_counter() - began)
        self.written.append(sum(len(data) for _name, data in out))

    def figures(self) -> dict[str, Any]:
        os.close(self.fd)
        self.ledger.close()
        wall = sorted(self.wall)
        return {
            "notes": self.size,
            "way": self.way,
            "median_s": statistics.median(wall),
            "p90_s": wall[min(len(wall) - 1, int(len(wall) * 0.9))],
            "cpu_median_s": statistics.median(self.cpu),
            "bytes_per_note": statistics.median(self.written),
        }


def measure(sizes: list[int], rounds: int) -> list[dict[str, Any]]:
    """Round-robin: each round indexes one note in every hub, so a noisy moment hits them all."""
    hubs = [Hub(size, way) for size in sizes for way in ("paged", "re-render")]
    for _ in range(rounds):
        for hub in hubs:
            hub.index_one()
    return [hub.figures() for hub in hubs]


def ms(value: float) -> str:
    return f"{value * 1000:.2f} ms"


def size_of(value: float) -> str:
    return f"{value / 2**20:.1f} MiB" if value >= 2**20 else f"{value / 1024:.1f} KiB"


def report(figures: list[dict[str, Any]], sizes: list[int]) -> list[str]:
    by = {(row["notes"], row["way"]): row for row in figures}
    headers = ["notes"]
    for way in ("paged", "re-render"):
        headers += [f"{way} median", "p90", "CPU", "written"]
    rows = []
    for size in sizes:
        row = [f"{size:,}"]
        for way in ("paged", "re-render"):
            found = by[size, way]
            row += [ms(found["median_s"]), ms(found["p90_s"]), ms(found["cpu_median_s"])]
            row.append(size_of(found["bytes_per_note"]))
        rows.append(row)
    lines = [render_table(headers, rows), ""]
    first, last = sizes[0], sizes[-1]
    for way in ("paged", "re-render"):
        wall = by[last, way]["median_s"] / by[first, way]["median_s"]
        cpu = by[last, way]["cpu_median_s"] / by[first, way]["cpu_median_s"]
        lines.append(f"growth {first:,} -> {last:,} notes, {way}: {wall:.1f}x time, {cpu:.1f}x CPU per note")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--sizes", help="comma-separated note counts (default 10,1000,10000; --quick: 10,1000)"
    )
    parser.add_argument(
        "--rounds", type=int, help="notes indexed and timed per size (default 30; --quick: 5)"
    )
    parser.add_argument("--quick", action="store_true", help="a smoke pass: small sizes, few rounds")
    parser.add_argument("--json", help="write the raw figures here")
    args = parser.parse_args()
    sizes = [int(size) for size in (args.sizes or ("10,1000" if args.quick else "10,1000,10000")).split(",")]
    rounds = args.rounds if args.rounds is not None else (5 if args.quick else 30)
    if rounds < 1 or any(size < 1 for size in sizes):
        parser.error("--rounds and every size must be at least 1")

    print(f"# machine: {machine_line(('PyYAML',))}")
    started = time.strftime("%Y-%m-%d %H:%M:%S %Z")
    print(f"# started {started}; sizes={','.join(map(str, sizes))} rounds={rounds}; in-process")
    print(f"# slopd source: {source_state()}", flush=True)
    began = time.monotonic()
    figures = measure(sizes, rounds)
    print()
    print("\n".join(report(figures, sizes)))
    print(f"# total {time.monotonic() - began:.1f} s", flush=True)
    if args.json:
        raw = {"settings": {"sizes": sizes, "rounds": rounds}, "machine": machine_line(), "figures": figures}
        Path(args.json).write_text(json.dumps(raw, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
