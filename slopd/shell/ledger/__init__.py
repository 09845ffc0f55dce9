"""The ledger: SQLite (WAL) in the state dir, the memory that makes slopd idempotent.

This package is the ledger's one owner: its schema, migrations and every statement are in
`sql`; `Ledger` (here) is the daemon's connection, `writes` its units of writes, `receipts` and
`cursors` the HTTP, MCP and wake-up sides, `history` the console's read-only view. Nothing
outside it opens the file or holds SQL for it (`tests/shell/test_ledger_owner.py`).

Rules:
1. One row per input, keyed by the envelope `id` (or `invalid:DIGEST` for an input that is
   not a valid envelope), created with `INSERT … ON CONFLICT DO NOTHING`: the first sighting
   wins, every later one is a duplicate.
2. Status moves forward only (`core.lifecycle.Status`): received → queued → executing →
   finished → done.
3. Writes happen in a `Writes` unit (`writes`: one transaction, its statements held until the
   commit or until a read of this connection would see them), committed by its owner (a
   batch of inputs commits once). The ledger itself has no modes. Every read asks the open
   unit first (`Writes.begin_for`), so a unit's reads see its own writes.
4. `executing` and `finished` are committed on their own with `synchronous=FULL`, never inside
   a `Writes`: an id found `executing` at start-up was interrupted and is never run again, and
   an outcome is on disk before its reply is written, so a lost reply is rewritten, never re-run.
5. A decision's target and a run's outcome are stored as columns and JSON and read back as
   values (`Row.target`, `Row.outcome`); nothing else parses them.
6. A reply's `rowid` is its `seq` in the reply feed (SPEC §12): SQLite gives each new row
   max(rowid) + 1 and replies are never deleted, so seqs grow in commit order (one writer). A
   reply rewritten after a crash keeps its row, so its seq. `recipient` is its `to`.
7. The HTTP transport's tables (`receipts`, `acks`) and the wake-ups' (`cursors`,
   `hook_sessions`) are declared with the rest of the schema (`sql.DDL`), and written by
   `receipts` and `cursors` over connections of their own.
8. Every write takes the file's write lock (`writelock`) while its transaction is open, so
   the process's writers queue on a lock instead of in SQLite's sleeping busy handler.
9. `announced` remembers the approval requests the human was told of (`daemon.approvals`), by
   place, name and content, so a restart does not tell them again.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from slopd.core import outcome as outcomes
from slopd.core.lifecycle import Row, Status
from slopd.core.notes import Note
from slopd.core.outcome import Outcome
from slopd.core.targets import Target
from slopd.shell.ledger import sql
from slopd.shell.ledger.writelock import write_lock
from slopd.shell.ledger.writes import Writes, storable

LedgerError = sql.Error  # what a failed statement raises


def _row(values: sql.Row) -> Row:
    data = dict(values)
    kind, name = data.pop("target_kind"), data.pop("target_name")
    data["target"] = Target.stored(kind, name) if kind else None
    data["status"] = Status(data["status"])
    data["outcome"] = outcomes.decode(data["outcome"]) if data["outcome"] else None
    data["replies"] = tuple(data["replies"].split())
    return Row(**data)


class Ledger:
    def __init__(self, path: Path) -> None:
        self._write_lock = write_lock(path)
        with self._write_lock:
            self._db = sql.connect(path, timeout=10.0)
            sql.create(self._db)
        self._open: Writes | None = None

    def close(self) -> None:
        self._db.close()

    def writes(self) -> Writes:
        """A unit of writes (rule 3); only one is open at a time."""
        if self._open is not None:
            raise RuntimeError("a unit of ledger writes is already open")
        self._open = Writes(self._db, self._write_lock, self._closed)
        return self._open

    def _closed(self) -> None:
        self._open = None

    @contextmanager
    def writing(self) -> Iterator[Writes]:
        """`writes()` committed on leaving the block, rolled back on an exception."""
        unit = self.writes()
        try:
            yield unit
        except BaseException:
            unit.rollback()
            raise
        unit.commit()

    def _durable(self, key: str, status: Status, now: str, outcome: Outcome | None = None) -> None:
        if self._open is not None or self._db.in_transaction:
            raise RuntimeError(f"`{status}` must be committed on its own, outside a batch")
        with self._write_lock, sql.durable(self._db) as db:  # one statement: its own transaction
            db.execute(sql.MARK, (status, now, outcomes.encode(outcome) if outcome else None, key))

    def announced(self, place: str) -> set[tuple[str, str]]:
        """Rule 9: (name, sha256) of everything announced in `place`."""
        self._reading()
        rows = self._db.execute(sql.ANNOUNCED, (place,))
        return {(found[0], found[1]) for found in rows}

    def announce(self, place: str, name: str, sha256: str, *, now: str) -> None:
        """Rule 9, outside a unit (its own statement)."""
        if self._open is not None or self._db.in_transaction:
            raise RuntimeError("an announcement is recorded on its own, outside a batch")
        with self._write_lock:
            self._db.execute(sql.ANNOUNCE, (place, storable(name), sha256, now))

    def mark_executing(self, key: str, *, now: str) -> None:
        """Rule 4: on disk before the process starts."""
        self._durable(key, Status.EXECUTING, now)

    def mark_finished(self, key: str, outcome: Outcome, *, now: str) -> None:
        """Rule 4: the outcome on disk before its reply is written."""
        self._durable(key, Status.FINISHED, now, outcome)

    def _reading(self, key: str | None = None) -> None:
        """Rule 3: what the open unit holds is run first when this read would see it."""
        if self._open is not None:
            self._open.begin_for(key)

    def get(self, key: str) -> Row | None:
        self._reading(key)
        found = self._db.execute(sql.INPUT, (key,)).fetchone()
        return _row(found) if found else None

    def archive_paths(self, lane: str, file: str) -> list[str]:
        """Where inputs once named `lane/file` were archived (inputs and duplicates alike)."""
        self._reading()
        rows = self._db.execute(sql.ARCHIVE_PATHS, (lane, storable(file), lane, storable(file)))
        return [found[0] for found in rows]

    def unfinished(self) -> list[Row]:
        self._reading()
        rows = self._db.execute(sql.UNFINISHED)
        return [_row(found) for found in rows]

    def notes(self, search: str | None = None, *, limit: int = -1, offset: int = 0) -> list[Note]:
        """Indexed notes, newest first (`core.notes` rule 1), `limit` of them (-1: all) from
        `offset`; `search` matches id, sender, title or text, any case."""
        self._reading()
        found = self._db.execute(sql.NOTES[bool(search)], (*((search,) if search else ()), limit, offset))
        return [Note(*row) for row in found]

    def count_notes(self, search: str | None = None) -> int:
        self._reading()
        return int(self._db.execute(sql.COUNT_NOTES[bool(search)], (search,) if search else ()).fetchone()[0])

    def note_seq(self, id: str) -> int | None:
        """The order in which a note was indexed (1 for the first), or None when it was not."""
        self._reading()
        found = self._db.execute(sql.NOTE_SEQ, (id,)).fetchone()
        return int(found[0]) if found else None

    def last_note_seq(self) -> int:
        """How many notes were indexed (notes are never deleted: the last `note_seq`)."""
        self._reading()
        return int(self._db.execute(sql.LAST_NOTE_SEQ).fetchone()[0])

    def notes_indexed(self, first: int, last: int) -> list[Note]:
        """The notes indexed `first`-th to `last`-th, newest first: a page (`core.notes` rule 2)."""
        self._reading()
        return [Note(*row) for row in self._db.execute(sql.NOTES_PAGE, (first, last))]

    def last_replies(self, limit: int = 10) -> list[dict[str, Any]]:
        self._reading()
        rows = self._db.execute(sql.LAST_REPLIES, (limit,))
        return [dict(found) for found in rows]

    def counts(self) -> dict[str, int]:
        self._reading()
        rows = self._db.execute(sql.COUNT_BY_STATUS)
        counts = dict.fromkeys([str(status) for status in Status], 0)
        counts.update(dict(rows))
        counts["duplicates"] = self._db.execute(sql.COUNT_DUPLICATES).fetchone()[0]
        return counts
