"""Every SQL text of the ledger: its schema, its migrations, how a connection is opened, and each
statement, named. The one module of slopd that holds SQL for `STATE/ledger.sqlite3`.

Rules:
1. The other modules of this package (`Ledger`, `writes`, `receipts`, `cursors`, `history`) run
   these statements by name and hold no SQL of their own; no module outside the package touches
   the file (`tests/shell/test_ledger_owner.py` holds both to it, with import-linter's contract
   on `sqlite3`).
2. `create` makes the schema and migrates a ledger written by an older slopd, in place and once:
   targets as columns, replies with their recipient, then the indexes.
3. `connect` opens a connection as every user of the file needs it: autocommit (transactions
   are explicit), rows by name, WAL with `synchronous=NORMAL` (`full`: FULL, for the wake
   cursors); `read_only` for the console.
4. `durable` runs one statement with `synchronous=FULL`: on disk before it returns.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

# -- the schema (rule 2) ------------------------------------------------------------------------

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

# Notes newest first (`core.notes` rule 1) through an index, so no read sorts every note; the
# console's Activity list (newest inputs) and an envelope's replies likewise read an index, so a
# page costs the same with 100 inputs as with a million.
_INDEXES = """
CREATE INDEX IF NOT EXISTS replies_by_recipient ON replies (recipient);
CREATE INDEX IF NOT EXISTS notes_by_time ON notes (julianday(replace(created_at, 'Z', '')));
CREATE INDEX IF NOT EXISTS inputs_by_time ON inputs (received_at, key);
CREATE INDEX IF NOT EXISTS replies_answering ON replies (lower(in_reply_to));
"""


def _columns(db: sqlite3.Connection, table: str) -> set[str]:
    return {found[1] for found in db.execute(f"PRAGMA table_info({table})")}


def create(db: sqlite3.Connection) -> None:
    """Rule 2 (the caller holds the file's write lock)."""
    # 8 MiB of pages instead of SQLite's 2 MiB: with a million inputs recorded, each batch's
    # lookups and inserts otherwise keep rereading the same index pages (BENCHMARKS.md, g).
    db.execute("PRAGMA cache_size=-8192")
    db.executescript(DDL)
    if "target_kind" not in _columns(db, "inputs"):
        db.executescript(f"BEGIN IMMEDIATE;{_MIGRATE_TARGETS}COMMIT;")
    if "recipient" not in _columns(db, "replies"):
        db.executescript(f"BEGIN IMMEDIATE;{_MIGRATE_RECIPIENTS}COMMIT;")
    db.executescript(_INDEXES)


# -- connections (rules 3 and 4) ---------------------------------------------------------------

Error = sqlite3.Error
OperationalError = sqlite3.OperationalError
Connection = sqlite3.Connection
Row = sqlite3.Row


def connect(path: Path, *, timeout: float, read_only: bool = False, full: bool = False) -> sqlite3.Connection:
    """Rule 3 (`full`: every commit of this connection with `synchronous=FULL`)."""
    if read_only:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=timeout)
        db.row_factory = sqlite3.Row
        return db
    db = sqlite3.connect(path, timeout=timeout, isolation_level=None, check_same_thread=False)
    db.row_factory = sqlite3.Row
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL" if full else "PRAGMA synchronous=NORMAL")
    return db


@contextmanager
def durable(db: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """Rule 4: what runs inside is committed with `synchronous=FULL`."""
    db.execute("PRAGMA synchronous=FULL")
    try:
        yield db
    finally:
        db.execute("PRAGMA synchronous=NORMAL")


BEGIN = "BEGIN IMMEDIATE"
BEGIN_READ = "BEGIN"  # a read transaction: one snapshot for several statements
COMMIT = "COMMIT"
ROLLBACK = "ROLLBACK"

# -- inputs, duplicates (`Ledger`, `writes`) -----------------------------------------------------

INPUT = "SELECT * FROM inputs WHERE key = ?"
RECORD = (
    "INSERT INTO inputs (key, id, lane, file, sha256, type, sender, mode, decision, target_kind,"
    " target_name, status, received_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
    " ON CONFLICT (key) DO NOTHING"
)
ADVANCE = (
    "UPDATE inputs SET status = ?, updated_at = ?,"
    " outcome = COALESCE(?, outcome), archive = COALESCE(?, archive) WHERE key = ?"
)
MARK = "UPDATE inputs SET status = ?, updated_at = ?, outcome = COALESCE(?, outcome) WHERE key = ?"
ARCHIVE_PATHS = (
    "SELECT archive FROM inputs WHERE lane = ? AND file = ? AND archive IS NOT NULL"
    " UNION SELECT archive FROM duplicates WHERE lane = ? AND file = ? AND archive IS NOT NULL"
)
UNFINISHED = "SELECT * FROM inputs WHERE status != 'done' ORDER BY received_at"
COUNT_BY_STATUS = "SELECT status, count(*) FROM inputs GROUP BY status"
COUNT_DUPLICATES = "SELECT count(*) FROM duplicates"
ADD_DUPLICATE = "INSERT INTO duplicates (id, lane, file, sha256, archive, seen_at) VALUES (?, ?, ?, ?, ?, ?)"

# -- replies -------------------------------------------------------------------------------------

NOTE_REPLY = (
    "UPDATE inputs SET replies = trim(replies || ' ' || ?), updated_at = ?"
    " WHERE key = ? AND (' ' || replies || ' ') NOT LIKE ('% ' || ? || ' %')"
)
ADD_REPLY = (
    "INSERT INTO replies (id, in_reply_to, type, class, path, written_at, recipient)"
    " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET written_at = excluded.written_at"
)
LAST_REPLIES = "SELECT * FROM replies ORDER BY written_at DESC, id DESC LIMIT ?"

# -- announcements (`daemon.approvals`) ----------------------------------------------------------

ANNOUNCED = "SELECT name, sha256 FROM announced WHERE place = ?"
ANNOUNCE = (
    "INSERT INTO announced (place, name, sha256, announced_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING"
)

# -- notes (`core.notes`) --------------------------------------------------------------------------

_NOTE = "SELECT id, sender, created_at, title, body FROM notes "
_MATCHING = "WHERE instr(lower(id || ' ' || sender || ' ' || title || ' ' || body), lower(?)) > 0 "
_NEWEST = "ORDER BY julianday(replace(created_at, 'Z', '')) DESC, rowid DESC "  # the index, read backwards
NOTES = {
    False: _NOTE + _NEWEST + "LIMIT ? OFFSET ?",
    True: _NOTE + _MATCHING + _NEWEST + "LIMIT ? OFFSET ?",
}
_COUNTED = "SELECT count(*) FROM notes "
COUNT_NOTES = {False: _COUNTED, True: _COUNTED + _MATCHING}
NOTES_PAGE = _NOTE + "WHERE rowid BETWEEN ? AND ? " + _NEWEST
NOTE_SEQ = "SELECT rowid FROM notes WHERE id = ?"
LAST_NOTE_SEQ = "SELECT coalesce(max(rowid), 0) FROM notes"
ADD_NOTE = (
    "INSERT INTO notes (id, sender, created_at, title, body, indexed_at)"
    " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING"
)

# -- receipts, the reply feed, acks (`receipts`) -------------------------------------------------

CLAIM = (
    "INSERT INTO receipts (key, id, seat, type, file, sha256, received_at, state)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (key) DO NOTHING"
)
RECEIPT = "SELECT * FROM receipts WHERE key = ?"
RECEIPT_STATE = "UPDATE receipts SET state = ? WHERE key = ?"
FORGET_RECEIPT = "DELETE FROM receipts WHERE key = ? AND state = ?"
RECEIPTS_IN = "SELECT * FROM receipts WHERE state = ?"
INPUT_STATE = "SELECT status, sha256, sender, type, received_at FROM inputs WHERE key = ?"
ARCHIVE_OF = "SELECT archive FROM inputs WHERE key = ?"
SEEN_AS_DUPLICATE = "SELECT 1 FROM duplicates WHERE lower(id) = ? AND sha256 = ?"
_FEED = (
    "SELECT r.rowid AS seq, r.id, r.in_reply_to, r.type, r.class, r.path, r.written_at,"
    " a.acked_at FROM replies AS r LEFT JOIN acks AS a ON a.seat = r.recipient AND a.reply = r.id"
)
FEED_ANSWERING = f"{_FEED} WHERE r.recipient = ? AND lower(r.in_reply_to) = ? ORDER BY r.rowid"
FEED_AFTER = f"{_FEED} WHERE r.recipient = ? AND r.rowid > ? ORDER BY r.rowid LIMIT ?"
FEED_NEWEST = f"{_FEED} WHERE r.recipient = ? ORDER BY r.rowid DESC LIMIT ?"
FEED_REPLY = f"{_FEED} WHERE r.id = ? AND r.recipient = ?"
FEED_BOUNDS = "SELECT coalesce(min(rowid), 0), coalesce(max(rowid), 0) FROM replies"
LAST_SEQ = "SELECT coalesce(max(rowid), 0) FROM replies WHERE recipient = ?"
PENDING = (
    "SELECT count(*) FROM replies WHERE recipient = ? AND id NOT IN (SELECT reply FROM acks WHERE seat = ?)"
)
ACK = "INSERT INTO acks (seat, reply, acked_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING"
SENT_BY = (
    "SELECT id, type, received_at FROM receipts WHERE seat = ? AND received_at >= ?"
    " UNION SELECT id, type, received_at FROM inputs"
    " WHERE sender = ? AND received_at >= ? AND id IS NOT NULL AND type IS NOT NULL"
    " ORDER BY received_at"
)
REPLIES_SINCE = "SELECT lower(in_reply_to), rowid FROM replies WHERE rowid > ? ORDER BY rowid"
INPUT_COUNTS = "SELECT lane, coalesce(type, ''), status, count(*) FROM inputs GROUP BY 1, 2, 3"
REPLY_COUNTS = "SELECT class, count(*) FROM replies GROUP BY 1"
EXECUTION_COUNTS = "SELECT status, count(*) FROM inputs WHERE target_kind IS NOT NULL GROUP BY 1"
UNFINISHED_COUNT = "SELECT count(*) FROM inputs WHERE status != 'done'"

# -- wake cursors and hook sessions (`cursors`) --------------------------------------------------

CURSOR = "SELECT seq FROM cursors WHERE seat = ?"
MAKE_CURSOR = (
    "INSERT INTO cursors (seat, seq, updated_at)"
    " SELECT ?, coalesce(max(rowid), 0), ? FROM replies WHERE recipient = ? ON CONFLICT DO NOTHING"
)
CLAIM_CURSOR = "UPDATE cursors SET seq = ?, updated_at = ? WHERE seat = ? AND seq = ?"  # compare and set
OPEN_SESSION = (
    "INSERT INTO hook_sessions (seat, session, started_at, blocks) VALUES (?, ?, ?, 0) ON CONFLICT DO NOTHING"
)
SESSION = "SELECT started_at, blocks FROM hook_sessions WHERE seat = ? AND session = ?"
BLOCKED = "UPDATE hook_sessions SET blocks = blocks + 1 WHERE seat = ? AND session = ?"

# -- the console's Activity pages (`history`) ------------------------------------------------------

_INPUTS = (
    "SELECT key, id, lane, file, sha256, type, sender, mode, decision, status, archive, received_at,"
    " updated_at FROM inputs"
)
_REPLIES = "SELECT rowid AS seq, id, in_reply_to, type, class, path, written_at, recipient FROM replies"
HISTORY_INPUTS = f"{_INPUTS} ORDER BY received_at DESC, key DESC LIMIT ?"
HISTORY_REPLIES = f"{_REPLIES} ORDER BY rowid DESC LIMIT ?"
HISTORY_INPUT = f"{_INPUTS} WHERE key = ?"
HISTORY_ANSWERS = f"{_REPLIES} WHERE lower(in_reply_to) = ? ORDER BY rowid"
