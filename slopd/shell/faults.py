"""Fault injection for the crash tests, behind one seam: a no-op unless one variable says otherwise.

Rules:
1. `SLOPD_FAULTS` is read once, when this module is first imported (at the command's start). Its
   value is a comma-separated list of `POINT` or `POINT=N`: the process SIGKILLs itself the N-th
   time (the first, without `=N`) it passes `POINT` — like a power cut at that very step.
2. Without the variable (every real run), `passed` returns at once and counts nothing.
3. The points, each named after what has just happened:
   - `http.dropped`: the HTTP and MCP intake wrote the envelope's file into `inbox/`, and has not
     yet marked its receipt `written` nor answered (tests/transport/test_http_served.py);
   - `baton.written`: `slopd baton pack` wrote one more file of the generation
     (tests/e2e/baton/test_baton_crash.py, tests/e2e/baton/test_baton_pack.py).
4. A value that names an unknown point, or a count that is not a positive integer, is refused
   when it is read (`ValueError` naming every bad item): a typo never silently disarms a test.
"""

from __future__ import annotations

import os
import signal
import threading
from collections import Counter

VARIABLE = "SLOPD_FAULTS"
POINTS = frozenset({"http.dropped", "baton.written"})


def parse(value: str) -> dict[str, int]:
    """Rule 1's value as {point: N}; rule 4's `ValueError` with every bad item."""
    armed: dict[str, int] = {}
    problems = []
    for item in (part.strip() for part in value.split(",")):
        if not item:
            continue
        point, _, count = item.partition("=")
        if point not in POINTS:
            problems.append(f"{point!r} is not a fault point (known: {', '.join(sorted(POINTS))})")
            continue
        if not count:
            armed[point] = 1
        elif count.isdigit() and int(count) > 0:
            armed[point] = int(count)
        else:
            problems.append(f"{item!r}: the count must be a positive integer")
    if problems:
        raise ValueError(f"{VARIABLE}: " + "; ".join(problems))
    return armed


_armed = parse(os.environ.get(VARIABLE, ""))
_passes: Counter[str] = Counter()
_lock = threading.Lock()


def passed(point: str) -> None:
    """Rules 1-2: the process has just passed `point`."""
    if not _armed:
        return
    assert point in POINTS, point
    with _lock:
        _passes[point] += 1
        count = _passes[point]
    if count == _armed.get(point):
        os.kill(os.getpid(), signal.SIGKILL)
