"""One writer at a time per SQLite file within this process, queued on a Python lock.

Rules:
1. SQLite lets one connection write a database file at a time. A connection that finds the
   write lock taken waits in SQLite's busy handler, which sleeps 1, 2, 5, 10, 15, 20, 25 … 100 ms
   between its tries: a receipt that found the daemon's transaction open for a millisecond could
   sleep ten, and under load those sleeps were most of the HTTP path's p99. So every connection
   of this process that writes the ledger's file takes that file's write lock first, and the
   writers queue on a lock that hands over the moment its holder is done. SQLite's busy handler
   is left to writers in other processes (a `slopd mcp --hub` seat recording its receipts).
2. The lock is re-entrant: a thread that holds it may take it again. Two connections of one
   thread still never write at once (SQLite would make the second wait on the first); rule 1
   only orders threads.
3. Keyed by the file's resolved path: every `Ledger` and `Receipts` over one file share one lock.
"""

from __future__ import annotations

import threading
from pathlib import Path

_locks: dict[Path, threading.RLock] = {}
_guard = threading.Lock()


def write_lock(path: Path) -> threading.RLock:
    """The write lock of the SQLite file at `path` (rule 3)."""
    key = path.resolve()
    with _guard:
        found = _locks.get(key)
        if found is None:
            found = _locks[key] = threading.RLock()
        return found
