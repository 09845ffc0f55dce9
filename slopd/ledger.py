"""The ledger: SQLite (WAL) in the state dir, the memory that makes slopd idempotent.

Rules:
1. One row per input, keyed by the envelope `id` (or `invalid:DIGEST` for an input that is
   not a valid envelope), created with `INSERT … ON CONFLICT DO NOTHING`: the first sighting
   wins, every later one is a duplicate.
2. Status moves forward only: received → queued → executing → finished → done.
3. `executing` is committed with `synchronous=FULL` before the process starts, so an id
   found `executing` at start-up was interrupted and is never run again.
4. `finished` stores the outcome, so a reply lost to a crash is rewritten, never re-run.
5. Inside `batch()` every write joins one transaction, committed when the batch ends (group
   commit); `executing` is never batched — the caller ends the batch before it.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from slopd.core.notes import Note

DDL = """
CREATE TABLE IF NOT EXISTS inputs (
    key TEXT PRIMARY KEY,
    id TEXT,
    lane TEXT NOT NULL,
    file TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    type TEXT,
    sender TEXT,
    mode TEXT,
    decision TEXT,
    status TEXT NOT NULL,
    outcome TEXT,
    replies TEXT NOT NULL DEFAULT '',
    archive TEXT,
    received_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS inputs_by_file ON inputs (lane, file);
CREATE INDEX IF NOT EXISTS inputs_unfinished ON inputs (status) WHERE status != 'done';
CREATE TABLE IF NOT EXISTS duplicates (
    id TEXT NOT NULL, lane TEXT NOT NULL, file TEXT NOT NULL, sha256 TEXT NOT NULL,
    archive TEXT, seen_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS replies (
    id TEXT PRIMARY KEY, in_reply_to TEXT, type TEXT NOT NULL, class TEXT NOT NULL,
    path TEXT NOT NULL, written_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS notes (
    id TEXT PRIMARY KEY, sender TEXT NOT NULL, created_at TEXT NOT NULL, title TEXT NOT NULL,
    body TEXT NOT NULL, indexed_at TEXT NOT NULL
);
"""

STATUSES = ("received", "queued", "executing", "finished", "done")


@dataclass(frozen=True, slots=True)
class Row:
    key: str
    id: str | None
    lane: str
    file: str
    sha256: str
    type: str | None
    sender: str | None
    mode: str | None
    decision: str | None
    status: str
    outcome: dict[str, Any] | None
    replies: tuple[str, ...]
    archive: str | None
    received_at: str
    updated_at: str


def storable(text: str | None) -> str | None:
    """A file name SQLite can store: undecodable bytes (surrogate escapes) become `\\xNN`."""
    if text is None:
        return None
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _row(values: sqlite3.Row) -> Row:
    data = dict(values)
    data["outcome"] = json.loads(data["outcome"]) if data["outcome"] else None
    data["replies"] = tuple(data["replies"].split())
    return Row(**data)


class BatchLost(sqlite3.OperationalError):
    """SQLite rolled the batch's transaction back on its own (disk full, I/O error)."""


class Ledger:
    def __init__(self, path: Path) -> None:
        self._db = sqlite3.connect(path, timeout=10.0, isolation_level=None, check_same_thread=False)
        self._db.row_factory = sqlite3.Row
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        # 8 MiB of pages instead of SQLite's 2 MiB: with a million inputs recorded, each batch's
        # lookups and inserts otherwise keep rereading the same index pages (BENCHMARKS.md, g).
        self._db.execute("PRAGMA cache_size=-8192")
        self._db.executescript(DDL)
        self._batched = False
        self._batch_open = False  # a transaction was begun for the batch and must still be open

    def close(self) -> None:
        self._db.close()

    def begin_batch(self) -> None:
        """From now on writes join one transaction, begun at the first write."""
        self._batched = True

    def commit_batch(self) -> None:
        """Commit what the batch wrote; BatchLost when SQLite already rolled it back."""
        self._batched = False
        opened, self._batch_open = self._batch_open, False
        if self._db.in_transaction:
            self._db.execute("COMMIT")
        elif opened:
            raise BatchLost("the ledger transaction was rolled back by SQLite")

    def rollback_batch(self) -> None:
        self._batched = self._batch_open = False
        if self._db.in_transaction:
            self._db.execute("ROLLBACK")

    def _join_batch(self) -> bool:
        """In a batch: make sure its transaction is open. False outside a batch."""
        if not self._batched:
            return False
        if not self._batch_open:
            self._db.execute("BEGIN IMMEDIATE")
            self._batch_open = True
        return True

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        if self._join_batch():
            yield self._db
            return
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield self._db
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def get(self, key: str) -> Row | None:
        found = self._db.execute("SELECT * FROM inputs WHERE key = ?", (key,)).fetchone()
        return _row(found) if found else None

    def by_file(self, lane: str, file: str) -> list[Row]:
        rows = self._db.execute("SELECT * FROM inputs WHERE lane = ? AND file = ?", (lane, storable(file)))
        return [_row(found) for found in rows]

    def archive_paths(self, lane: str, file: str) -> list[str]:
        """Where inputs once named `lane/file` were archived (inputs and duplicates alike)."""
        rows = self._db.execute(
            "SELECT archive FROM inputs WHERE lane = ? AND file = ? AND archive IS NOT NULL"
            " UNION SELECT archive FROM duplicates WHERE lane = ? AND file = ? AND archive IS NOT NULL",
            (lane, storable(file), lane, storable(file)),
        )
        return [found[0] for found in rows]

    def unfinished(self) -> list[Row]:
        rows = self._db.execute("SELECT * FROM inputs WHERE status != 'done' ORDER BY received_at")
        return [_row(found) for found in rows]

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
        now: str,
    ) -> bool:
        """Record a first sighting; False if the key was already known."""
        self._join_batch()
        cursor = self._db.execute(
            "INSERT INTO inputs (key, id, lane, file, sha256, type, sender, mode, decision,"
            " status, received_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'received', ?, ?)"
            " ON CONFLICT (key) DO NOTHING",
            (key, id, lane, storable(file), sha256, type, sender, mode, decision, now, now),
        )
        return cursor.rowcount == 1

    def advance(
        self,
        key: str,
        status: str,
        *,
        now: str,
        outcome: dict[str, Any] | None = None,
        archive: str | None = None,
    ) -> None:
        durable = status == "executing"
        if durable:
            if self._batched or self._db.in_transaction:
                raise RuntimeError("`executing` must be committed on its own, outside a batch")
            self._db.execute("PRAGMA synchronous=FULL")
        else:
            self._join_batch()
        try:  # one statement: its own transaction (autocommit) unless batched
            self._db.execute(
                "UPDATE inputs SET status = ?, updated_at = ?,"
                " outcome = COALESCE(?, outcome), archive = COALESCE(?, archive) WHERE key = ?",
                (status, now, json.dumps(outcome) if outcome else None, storable(archive), key),
            )
        finally:
            if durable:
                self._db.execute("PRAGMA synchronous=NORMAL")

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
    ) -> None:
        with self._transaction() as db:
            db.execute(
                "UPDATE inputs SET replies = trim(replies || ' ' || ?), updated_at = ?"
                " WHERE key = ? AND (' ' || replies || ' ') NOT LIKE ('% ' || ? || ' %')",
                (reply_id, now, key, reply_id),
            )
            db.execute(
                "INSERT INTO replies (id, in_reply_to, type, class, path, written_at)"
                " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET written_at = excluded.written_at",
                (reply_id, in_reply_to, type, reply_class, path, now),
            )

    def add_duplicate(
        self,
        *,
        id: str,
        lane: str,
        file: str,
        sha256: str,
        archive: str | None,
        now: str,
    ) -> None:
        with self._transaction() as db:
            db.execute(
                "INSERT INTO duplicates (id, lane, file, sha256, archive, seen_at) VALUES (?, ?, ?, ?, ?, ?)",
                (id, lane, storable(file), sha256, storable(archive), now),
            )

    def add_note(self, note: Note, *, now: str) -> None:
        with self._transaction() as db:
            db.execute(
                "INSERT INTO notes (id, sender, created_at, title, body, indexed_at)"
                " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING",
                (note.id, note.sender, note.created_at, note.title, note.body, now),
            )

    def notes(self, search: str | None = None) -> list[Note]:
        """Indexed notes, newest first; `search` matches id, sender, title or body, any case."""
        query = "SELECT id, sender, created_at, title, body FROM notes"
        parameters: tuple[str, ...] = ()
        if search:
            query += " WHERE instr(lower(id || ' ' || sender || ' ' || title || ' ' || body), lower(?)) > 0"
            parameters = (search,)
        query += " ORDER BY julianday(replace(created_at, 'Z', '')) DESC, indexed_at DESC, id DESC"
        return [Note(*found) for found in self._db.execute(query, parameters)]

    def last_replies(self, limit: int = 10) -> list[dict[str, Any]]:
        rows = self._db.execute("SELECT * FROM replies ORDER BY written_at DESC, id DESC LIMIT ?", (limit,))
        return [dict(found) for found in rows]

    def counts(self) -> dict[str, int]:
        rows = self._db.execute("SELECT status, count(*) FROM inputs GROUP BY status")
        counts = dict.fromkeys(STATUSES, 0)
        counts.update(dict(rows))
        counts["duplicates"] = self._db.execute("SELECT count(*) FROM duplicates").fetchone()[0]
        return counts
