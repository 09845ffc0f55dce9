"""What each seat's wake-ups have delivered, and its agent-hook sessions (SPEC §16): two small
tables of the ledger, over a connection of their own.

Rules:
1. A seat's wake cursor is the seq of the last reply its wake-ups (`slop_wait`, `slopd wait`,
   the agent hooks) delivered as new. It is made at the seat's tail (its last reply's seq) the
   first time it is asked for — "after now" — and moves forward only by a compare-and-set
   (`claim`): of two waiters that found the same reply, one delivers it. The reply feed's own
   cursor (`after`) is the client's business, not this.
2. A hook session (a host's `session_id`) is recorded when first seen, with when it started and
   how many times its Stop hook asked the agent to go on; the count only grows.
3. Writes take the file's write lock (`shell.ledger.writelock`), as every writer of the ledger does;
   the schema and statements are the ledger's (`sql`), made before this opens. One connection, guarded
   by a lock: MCP tools call in from worker threads.
"""

from __future__ import annotations

import threading
from pathlib import Path

from slopd.shell.ledger import sql
from slopd.shell.ledger.writelock import write_lock


class Cursors:
    def __init__(self, path: Path) -> None:
        self._db = sql.connect(path, timeout=30.0, full=True)
        self._lock = threading.Lock()
        self._write_lock = write_lock(path)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def cursor(self, seat: str, now: str) -> int:
        """Rule 1 (a read when the cursor exists: no write lock to wait for)."""
        with self._lock:
            found = self._db.execute(sql.CURSOR, (seat,)).fetchone()
        if found is not None:
            return int(found[0])
        with self._lock, self._write_lock:
            self._db.execute(sql.MAKE_CURSOR, (seat, now, seat))
            found = self._db.execute(sql.CURSOR, (seat,)).fetchone()
        return int(found[0])

    def claim(self, seat: str, was: int, seq: int, now: str) -> bool:
        """Move the cursor from `was` to `seq` only if it is still `was` (compare and set): of two
        waiters that found the same new reply, exactly one delivers it."""
        with self._lock, self._write_lock:
            moved = self._db.execute(sql.CLAIM_CURSOR, (seq, now, seat, was))
        return moved.rowcount == 1

    def session(self, seat: str, session: str, now: str) -> tuple[str, int]:
        """Rule 2: when `session` started (first seen) and its Stop blocks so far."""
        with self._lock, self._write_lock:
            self._db.execute(sql.OPEN_SESSION, (seat, session, now))
            found = self._db.execute(sql.SESSION, (seat, session)).fetchone()
        return str(found[0]), int(found[1])

    def blocked(self, seat: str, session: str) -> None:
        """Rule 2: one more Stop block."""
        with self._lock, self._write_lock:
            self._db.execute(sql.BLOCKED, (seat, session))
