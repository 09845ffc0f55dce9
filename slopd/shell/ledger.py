"""The ledger: SQLite (WAL) in the state dir, the memory that makes slopd idempotent.

Rules:
1. One row per input, keyed by the envelope `id` (or `invalid:DIGEST` for an input that is
   not a valid envelope), created with `INSERT … ON CONFLICT DO NOTHING`: the first sighting
   wins, every later one is a duplicate.
2. Status moves forward only (`core.lifecycle.Status`): received → queued → executing →
   finished → done.
3. Writes happen in a `Writes` unit (`shell.writes`: one transaction, its statements held until
   the commit or until a read of this connection would see them), committed by its owner (a
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
   `hook_sessions`) are declared here, with the rest of the schema, and written by
   `shell.receipts` and `shell.cursors` over connections of their own.
8. Every write takes the file's write lock (`shell.writelock`) while its transaction is open,
   so the process's writers queue on a lock instead of in SQLite's sleeping busy handler.
9. `announced` remembers the approval requests the human was told of (`daemon.approvals`), by
   place, name and content, so a restart does not tell them again.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from slopd.core import outcome as outcomes
from slopd.core.lifecycle import Status
from slopd.core.notes import Note
from slopd.core.outcome import Outcome
from slopd.core.targets import Target
from slopd.shell.writelock import write_lock
from slopd.shell.writes import Writes, storable

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
    updated_at TEXT NOT NULL,
    target_kind TEXT,
    target_name TEXT
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS inputs_by_file ON inputs (lane, file);
CREATE INDEX IF NOT EXISTS inputs_unfinished ON inputs (status) WHERE status != 'done';
CREATE TABLE IF NOT EXISTS duplicates (
    id TEXT NOT NULL, lane TEXT NOT NULL, file TEXT NOT NULL, sha256 TEXT NOT NULL,
    archive TEXT, seen_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS replies (
    id TEXT PRIMARY KEY, in_reply_to TEXT, type TEXT NOT NULL, class TEXT NOT NULL,
    path TEXT NOT NULL, written_at TEXT NOT NULL, recipient TEXT
);
CREATE TABLE IF NOT EXISTS receipts (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, key TEXT NOT NULL UNIQUE, id TEXT NOT NULL,
    seat TEXT NOT NULL, type TEXT NOT NULL, file TEXT NOT NULL, sha256 TEXT NOT NULL,
    received_at TEXT NOT NULL, state TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS acks (
    seat TEXT NOT NULL, reply TEXT NOT NULL, acked_at TEXT NOT NULL, PRIMARY KEY (seat, reply)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS cursors (
    seat TEXT PRIMARY KEY, seq INTEGER NOT NULL, updated_at TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS hook_sessions (
    seat TEXT NOT NULL, session TEXT NOT NULL, started_at TEXT NOT NULL, blocks INTEGER NOT NULL,
    PRIMARY KEY (seat, session)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS announced (
    place TEXT NOT NULL, name TEXT NOT NULL, sha256 TEXT NOT NULL, announced_at TEXT NOT NULL,
    PRIMARY KEY (place, name, sha256)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS notes (
    id TEXT PRIMARY KEY, sender TEXT NOT NULL, created_at TEXT NOT NULL, title TEXT NOT NULL,
    body TEXT NOT NULL, indexed_at TEXT NOT NULL
);
"""

# Ledgers written before targets had columns kept them only in the decision label.
_MIGRATE_TARGETS = """
ALTER TABLE inputs ADD COLUMN target_kind TEXT;
ALTER TABLE inputs ADD COLUMN target_name TEXT;
UPDATE inputs SET target_kind = 'action', target_name = substr(decision, 16)
    WHERE decision LIKE 'execute:action:%';
UPDATE inputs SET target_kind = 'executor', target_name = '' WHERE decision = 'execute:executor';
UPDATE inputs SET target_kind = 'seat', target_name = substr(decision, 9)
    WHERE decision LIKE 'execute:%' AND target_kind IS NULL;
"""

# Ledgers written before the reply feed: a reply's recipient is its input's sender.
_MIGRATE_RECIPIENTS = """
ALTER TABLE replies ADD COLUMN recipient TEXT;
UPDATE replies SET recipient = (SELECT sender FROM inputs WHERE inputs.key = lower(replies.in_reply_to));
"""
# Notes newest first (`core.notes` rule 1) through an index, so no read sorts every note.
_INDEXES = """
CREATE INDEX IF NOT EXISTS replies_by_recipient ON replies (recipient);
CREATE INDEX IF NOT EXISTS notes_by_time ON notes (julianday(replace(created_at, 'Z', '')));
"""
_NOTE = "SELECT id, sender, created_at, title, body FROM notes "
_MATCHING = "WHERE instr(lower(id || ' ' || sender || ' ' || title || ' ' || body), lower(?)) > 0 "
_NEWEST = "ORDER BY julianday(replace(created_at, 'Z', '')) DESC, rowid DESC "  # the index, read backwards
_NOTES = {
    False: _NOTE + _NEWEST + "LIMIT ? OFFSET ?",
    True: _NOTE + _MATCHING + _NEWEST + "LIMIT ? OFFSET ?",
}
_COUNTED = "SELECT count(*) FROM notes "
_COUNT = {False: _COUNTED, True: _COUNTED + _MATCHING}
_PAGE = _NOTE + "WHERE rowid BETWEEN ? AND ? " + _NEWEST


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
    status: Status
    outcome: Outcome | None
    replies: tuple[str, ...]
    archive: str | None
    received_at: str
    updated_at: str
    target: Target | None


def _row(values: sqlite3.Row) -> Row:
    data = dict(values)
    kind, name = data.pop("target_kind"), data.pop("target_name")
    data["target"] = Target.stored(kind, name) if kind else None
    data["status"] = Status(data["status"])
    data["outcome"] = outcomes.decode(data["outcome"]) if data["outcome"] else None
    data["replies"] = tuple(data["replies"].split())
    return Row(**data)


class Ledger:
    def __init__(self, path: Path) -> None:
        self._db = sqlite3.connect(path, timeout=10.0, isolation_level=None, check_same_thread=False)
        self._db.row_factory = sqlite3.Row
        self._write_lock = write_lock(path)
        with self._write_lock:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            # 8 MiB of pages instead of SQLite's 2 MiB: with a million inputs recorded, each batch's
            # lookups and inserts otherwise keep rereading the same index pages (BENCHMARKS.md, g).
            self._db.execute("PRAGMA cache_size=-8192")
            self._db.executescript(DDL)
            columns = {found[1] for found in self._db.execute("PRAGMA table_info(inputs)")}
            if "target_kind" not in columns:
                self._db.executescript(f"BEGIN IMMEDIATE;{_MIGRATE_TARGETS}COMMIT;")
            if "recipient" not in {found[1] for found in self._db.execute("PRAGMA table_info(replies)")}:
                self._db.executescript(f"BEGIN IMMEDIATE;{_MIGRATE_RECIPIENTS}COMMIT;")
            self._db.executescript(_INDEXES)
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
        with self._write_lock:
            self._db.execute("PRAGMA synchronous=FULL")
            try:  # one statement: its own transaction
                self._db.execute(
                    "UPDATE inputs SET status = ?, updated_at = ?, outcome = COALESCE(?, outcome)"
                    " WHERE key = ?",
                    (status, now, outcomes.encode(outcome) if outcome else None, key),
                )
            finally:
                self._db.execute("PRAGMA synchronous=NORMAL")

    def announced(self, place: str) -> set[tuple[str, str]]:
        """Rule 9: (name, sha256) of everything announced in `place`."""
        self._reading()
        rows = self._db.execute("SELECT name, sha256 FROM announced WHERE place = ?", (place,))
        return {(found[0], found[1]) for found in rows}

    def announce(self, place: str, name: str, sha256: str, *, now: str) -> None:
        """Rule 9, outside a unit (its own statement)."""
        if self._open is not None or self._db.in_transaction:
            raise RuntimeError("an announcement is recorded on its own, outside a batch")
        with self._write_lock:
            self._db.execute(
                "INSERT INTO announced (place, name, sha256, announced_at) VALUES (?, ?, ?, ?)"
                " ON CONFLICT DO NOTHING",
                (place, storable(name), sha256, now),
            )

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
        found = self._db.execute("SELECT * FROM inputs WHERE key = ?", (key,)).fetchone()
        return _row(found) if found else None

    def archive_paths(self, lane: str, file: str) -> list[str]:
        """Where inputs once named `lane/file` were archived (inputs and duplicates alike)."""
        self._reading()
        rows = self._db.execute(
            "SELECT archive FROM inputs WHERE lane = ? AND file = ? AND archive IS NOT NULL"
            " UNION SELECT archive FROM duplicates WHERE lane = ? AND file = ? AND archive IS NOT NULL",
            (lane, storable(file), lane, storable(file)),
        )
        return [found[0] for found in rows]

    def unfinished(self) -> list[Row]:
        self._reading()
        rows = self._db.execute("SELECT * FROM inputs WHERE status != 'done' ORDER BY received_at")
        return [_row(found) for found in rows]

    def notes(self, search: str | None = None, *, limit: int = -1, offset: int = 0) -> list[Note]:
        """Indexed notes, newest first (`core.notes` rule 1), `limit` of them (-1: all) from
        `offset`; `search` matches id, sender, title or text, any case."""
        self._reading()
        found = self._db.execute(_NOTES[bool(search)], (*((search,) if search else ()), limit, offset))
        return [Note(*row) for row in found]

    def count_notes(self, search: str | None = None) -> int:
        self._reading()
        return int(self._db.execute(_COUNT[bool(search)], (search,) if search else ()).fetchone()[0])

    def note_seq(self, id: str) -> int | None:
        """The order in which a note was indexed (1 for the first), or None when it was not."""
        self._reading()
        found = self._db.execute("SELECT rowid FROM notes WHERE id = ?", (id,)).fetchone()
        return int(found[0]) if found else None

    def last_note_seq(self) -> int:
        """How many notes were indexed (notes are never deleted: the last `note_seq`)."""
        self._reading()
        return int(self._db.execute("SELECT coalesce(max(rowid), 0) FROM notes").fetchone()[0])

    def notes_indexed(self, first: int, last: int) -> list[Note]:
        """The notes indexed `first`-th to `last`-th, newest first: a page (`core.notes` rule 2)."""
        self._reading()
        return [Note(*row) for row in self._db.execute(_PAGE, (first, last))]

    def last_replies(self, limit: int = 10) -> list[dict[str, Any]]:
        self._reading()
        rows = self._db.execute("SELECT * FROM replies ORDER BY written_at DESC, id DESC LIMIT ?", (limit,))
        return [dict(found) for found in rows]

    def counts(self) -> dict[str, int]:
        self._reading()
        rows = self._db.execute("SELECT status, count(*) FROM inputs GROUP BY status")
        counts = dict.fromkeys([str(status) for status in Status], 0)
        counts.update(dict(rows))
        counts["duplicates"] = self._db.execute("SELECT count(*) FROM duplicates").fetchone()[0]
        return counts
