"""A unit of ledger writes: one SQLite transaction, held back until it must begin.

Rules:
1. A unit's statements are held until its commit and run there, so SQLite's write lock (and the
   file's `shell.ledger.writelock`) is taken for the commit alone, not across everything a batch does
   before it — its replies' fsyncs above all.
2. Unless a read of the ledger's connection would see them first: `begin_for(key)` from a read
   of `key` the unit wrote, or `begin_for(None)` from any other read while statements are held,
   begins the transaction then and runs them; from then on each statement runs as it is made.
   So a unit's reads see its own writes, as inside one open transaction — the second file of
   one id in a batch finds the first's row.
3. The daemon's thread is the only writer of `inputs`, `replies`, `duplicates` and `notes`, and
   every statement upserts or updates by key, so a statement held until the commit has the
   effect it would have had when it was made.
4. `commit` ends it; `rollback` drops what is held and undoes what ran. Either lets go of the
   write lock, and tells the ledger the unit is closed. A held statement that fails when it
   runs fails the whole unit: its commit raises `BatchLost` (the batch is undone and retried),
   never commits the statements around it. (A statement made once the unit has begun runs at
   once, and its error reaches the one who made it.)
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from slopd.core import outcome as outcomes
from slopd.core.lifecycle import Status
from slopd.core.notes import Note
from slopd.core.outcome import Outcome
from slopd.core.targets import Target
from slopd.shell.ledger import sql


def storable(text: str | None) -> str | None:
    """A file name SQLite can store: undecodable bytes (surrogate escapes) become `\\xNN`."""
    if text is None:
        return None
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


class BatchLost(sql.OperationalError):
    """SQLite rolled a unit's transaction back on its own (disk full, I/O error)."""


class Writes:
    """One transaction of ledger writes (rules 1-4)."""

    def __init__(self, db: sql.Connection, held: threading.RLock, closed: Callable[[], None]) -> None:
        self._db, self._write_lock, self._closed = db, held, closed
        self._begun = False
        self._held: list[tuple[str, tuple[Any, ...]]] = []
        self._keys: set[str] = set()
        self._failed: BaseException | None = None

    def _execute(self, statement: str, parameters: tuple[Any, ...], *, key: str | None = None) -> None:
        """Run or hold one statement; `key`: the input whose row it changes (rule 2's `get`)."""
        if self._begun:
            self._db.execute(statement, parameters)
        else:
            self._held.append((statement, parameters))
            if key is not None:
                self._keys.add(key)

    def begin_for(self, key: str | None) -> None:
        """Begin now, running what is held, if a read of `key` (None: of anything) would see it."""
        if self._held and (key is None or key in self._keys):
            self._begin()

    def _begin(self) -> None:
        self._write_lock.acquire()
        try:
            self._db.execute(sql.BEGIN)
        except BaseException:
            self._write_lock.release()
            raise
        self._begun = True
        held, self._held = self._held, []
        self._keys.clear()
        try:
            for statement, parameters in held:
                self._db.execute(statement, parameters)
        except BaseException as error:
            self._failed = error
            raise

    def commit(self) -> None:
        """Commit what was written; BatchLost when SQLite already rolled it back."""
        if not self._begun and self._held:
            self._begin()
        if self._failed is not None:
            raise BatchLost(f"a ledger write of this batch failed: {self._failed}")
        begun, self._begun = self._begun, False
        self._closed()
        try:
            if self._db.in_transaction:
                self._db.execute(sql.COMMIT)
            elif begun:
                raise BatchLost("the ledger transaction was rolled back by SQLite")
        finally:
            if begun:
                self._write_lock.release()

    def rollback(self) -> None:
        begun, self._begun = self._begun, False
        self._failed = None
        self._held.clear()
        self._keys.clear()
        self._closed()
        try:
            if self._db.in_transaction:
                self._db.execute(sql.ROLLBACK)
        finally:
            if begun:
                self._write_lock.release()

    def insert(
        self,
        *,
        key: str,
        id: str | None,
        lane: str,
        file: str,
        sha256: str,
        type: str | None,
        sender: str | None,
        mode: str | None,
        decision: str,
        target: Target | None = None,
        now: str,
    ) -> None:
        """Record a first sighting (a key already known is left as it is: rule 1)."""
        self._execute(
            sql.RECORD,
            (
                key,
                id,
                lane,
                storable(file),
                sha256,
                type,
                sender,
                mode,
                decision,
                target.kind if target else None,
                target.name if target else None,
                Status.RECEIVED,
                now,
                now,
            ),
            key=key,
        )

    def advance(
        self,
        key: str,
        status: Status,
        *,
        now: str,
        outcome: Outcome | None = None,
        archive: str | None = None,
    ) -> None:
        if status is Status.EXECUTING:
            raise RuntimeError("`executing` must be committed on its own, outside a batch")
        self._execute(
            sql.ADVANCE,
            (status, now, outcomes.encode(outcome) if outcome else None, storable(archive), key),
            key=key,
        )

    def add_reply(
        self,
        key: str,
        *,
        reply_id: str,
        in_reply_to: str | None,
        type: str,
        reply_class: str,
        path: str,
        now: str,
        recipient: str | None = None,
    ) -> None:
        self._execute(sql.NOTE_REPLY, (reply_id, now, key, reply_id), key=key)
        self._execute(sql.ADD_REPLY, (reply_id, in_reply_to, type, reply_class, path, now, recipient))

    def add_duplicate(
        self, *, id: str, lane: str, file: str, sha256: str, archive: str | None, now: str
    ) -> None:
        self._execute(sql.ADD_DUPLICATE, (id, lane, storable(file), sha256, storable(archive), now))

    def add_note(self, note: Note, *, now: str) -> None:
        self._execute(sql.ADD_NOTE, (note.id, note.sender, note.created_at, note.title, note.body, now))
