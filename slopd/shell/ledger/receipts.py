"""The HTTP transport's side of the ledger: receipts, the reply feed and acks (SPEC §12).

Rules:
1. Connections of its own to the ledger's file, one per thread that uses it (WAL: they read
   while the daemon writes). Its writes take the file's write lock (`shell.ledger.writelock`), as the
   ledger's do, so writers queue on a lock that hands over at once, not in SQLite's sleeping
   busy handler; reads take nothing.
2. `claim` inserts a receipt `writing` or finds the one there, in one `BEGIN IMMEDIATE`
   transaction: of twenty identical POSTs at once exactly one claims the id. It need not be
   durable (`synchronous=NORMAL`): a claim lost to a power cut leaves at most a file without a
   receipt, which a resend finds (`Intake`'s rule 4).
3. `written` marks it once its file is in `inbox/`, durably (`synchronous=FULL`: it is on disk
   before the 202, and makes the claim durable with it); `forget` removes a receipt still
   `writing` whose file was never written, so a resend is accepted again.
4. Reading the feed never changes it; an ack is its own row (`acks`), per seat.
5. The schema and every statement are the ledger's (`sql`), which `Ledger` creates before this opens.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from slopd.core.receipts import WRITING, WRITTEN, Receipt
from slopd.shell.ledger import sql
from slopd.shell.ledger.writelock import write_lock


@dataclass(frozen=True, slots=True)
class Input:
    """What the ledger says of an input, for its state."""

    status: str
    sha256: str
    sender: str | None
    type: str | None
    received_at: str


@dataclass(frozen=True, slots=True)
class FeedReply:
    seq: int
    id: str
    in_reply_to: str | None
    type: str
    reply_class: str
    path: str
    written_at: str
    acked_at: str | None


class Receipts:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._local = threading.local()
        self._opened: list[sql.Connection] = []
        self._lock = threading.Lock()  # guards `_opened` only
        self._write_lock = write_lock(path)

    @property
    def _db(self) -> sql.Connection:
        """Rule 1: this thread's connection."""
        db: sql.Connection | None = getattr(self._local, "db", None)
        if db is None:
            db = sql.connect(self.path, timeout=30.0)
            self._local.db = db
            with self._lock:
                self._opened.append(db)
        return db

    def close(self) -> None:
        with self._lock:
            opened, self._opened = self._opened, []
        for db in opened:
            db.close()
        self._local = threading.local()

    def _one(self, statement: str, parameters: tuple[Any, ...]) -> sql.Row | None:
        found: sql.Row | None = self._db.execute(statement, parameters).fetchone()
        return found

    def _all(self, statement: str, parameters: tuple[Any, ...]) -> list[sql.Row]:
        return list(self._db.execute(statement, parameters))

    # -- receipts --------------------------------------------------------------------------

    def claim(
        self,
        *,
        key: str,
        id: str,
        seat: str,
        type: str,
        file: str,
        sha256: str,
        now: str,
        state: str = WRITING,
    ) -> tuple[Receipt, bool]:
        """Rule 2: the receipt of `key`, and whether this call made it."""
        db = self._db
        with self._write_lock:
            db.execute(sql.BEGIN)
            try:
                cursor = db.execute(sql.CLAIM, (key, id, seat, type, file, sha256, now, state))
                found = db.execute(sql.RECEIPT, (key,)).fetchone()
                db.execute(sql.COMMIT)
            except BaseException:
                if db.in_transaction:
                    db.execute(sql.ROLLBACK)
                raise
        return Receipt(**dict(found)), cursor.rowcount == 1

    def written(self, key: str) -> None:
        """Rule 3: durable before it returns."""
        db = self._db
        with self._write_lock, sql.durable(db):
            db.execute(sql.RECEIPT_STATE, (WRITTEN, key))

    def forget(self, key: str) -> None:
        with self._write_lock:
            self._db.execute(sql.FORGET_RECEIPT, (key, WRITING))

    def get(self, key: str) -> Receipt | None:
        found = self._one(sql.RECEIPT, (key,))
        return Receipt(**dict(found)) if found else None

    def unfinished(self) -> list[Receipt]:
        return [Receipt(**dict(row)) for row in self._all(sql.RECEIPTS_IN, (WRITING,))]

    # -- the ledger's rows -----------------------------------------------------------------

    def input(self, key: str) -> Input | None:
        found = self._one(sql.INPUT_STATE, (key,))
        return Input(**dict(found)) if found else None

    def archive_of(self, key: str) -> str | None:
        """Where the ledger archived the input `key` (None: not yet, or never seen)."""
        found = self._one(sql.ARCHIVE_OF, (key,))
        return found[0] if found is not None else None

    def seen_as_duplicate(self, id: str, sha256: str) -> bool:
        found = self._one(sql.SEEN_AS_DUPLICATE, (id.lower(), sha256))
        return found is not None

    # -- the reply feed --------------------------------------------------------------------

    def replies_to(self, key: str, seat: str) -> list[FeedReply]:
        rows = self._all(sql.FEED_ANSWERING, (seat, key))
        return [_reply(row) for row in rows]

    def feed(self, seat: str, after: int, limit: int) -> list[FeedReply]:
        rows = self._all(sql.FEED_AFTER, (seat, after, limit))
        return [_reply(row) for row in rows]

    def recent(self, seat: str, limit: int) -> list[FeedReply]:
        """The newest `limit` replies to `seat`, oldest first."""
        rows = self._all(sql.FEED_NEWEST, (seat, limit))
        return [_reply(row) for row in reversed(rows)]

    def reply(self, id: str, seat: str) -> FeedReply | None:
        found = self._one(sql.FEED_REPLY, (id.lower(), seat))
        return _reply(found) if found else None

    def bounds(self) -> tuple[int, int]:
        """The first and last seq kept (0, 0 when there are no replies)."""
        found = self._one(sql.FEED_BOUNDS, ())
        assert found is not None
        return int(found[0]), int(found[1])

    def last_seq(self, seat: str) -> int:
        """The seq of the last reply to `seat` (0: none yet)."""
        found = self._one(sql.LAST_SEQ, (seat,))
        assert found is not None
        return int(found[0])

    def pending(self, seat: str) -> int:
        """Replies to `seat` it has not acked."""
        found = self._one(sql.PENDING, (seat, seat))
        assert found is not None
        return int(found[0])

    def ack(self, seat: str, id: str, now: str) -> bool:
        """Rule 4: False when `id` is no reply to `seat` (reply ids are lower-case, and ids
        compare case-insensitively)."""
        found = self.reply(id, seat)
        if found is None:
            return False
        with self._write_lock:
            self._db.execute(sql.ACK, (seat, found.id, now))
        return True

    def sent_by(self, seat: str, since: str) -> list[tuple[str, str]]:
        """(id, type) of the envelopes `seat` sent from `since` on — by receipt (HTTP, MCP) or by
        the ledger's `from` (a file) — oldest first, each once."""
        rows = self._all(sql.SENT_BY, (seat, since, seat, since))
        found: dict[str, tuple[str, str]] = {}
        for row in rows:
            found.setdefault(str(row[0]).lower(), (str(row[0]), str(row[1])))
        return list(found.values())

    # -- for /metrics ----------------------------------------------------------------------

    def replies_since(self, seq: int) -> list[tuple[str, int]]:
        """(lower-case in_reply_to, seq) of every reply after `seq`."""
        rows = self._all(sql.REPLIES_SINCE, (seq,))
        return [(row[0] or "", int(row[1])) for row in rows]

    def input_counts(self) -> list[tuple[str, str, str, int]]:
        rows = self._all(sql.INPUT_COUNTS, ())
        return [(row[0], row[1], row[2], int(row[3])) for row in rows]

    def reply_counts(self) -> list[tuple[str, int]]:
        return [(row[0], int(row[1])) for row in self._all(sql.REPLY_COUNTS, ())]

    def execution_counts(self) -> list[tuple[str, int]]:
        rows = self._all(sql.EXECUTION_COUNTS, ())
        return [(row[0], int(row[1])) for row in rows]

    def unfinished_inputs(self) -> int:
        found = self._one(sql.UNFINISHED_COUNT, ())
        assert found is not None
        return int(found[0])


def _reply(row: sql.Row) -> FeedReply:
    return FeedReply(
        seq=int(row["seq"]),
        id=row["id"],
        in_reply_to=row["in_reply_to"],
        type=row["type"],
        reply_class=row["class"],
        path=row["path"],
        written_at=row["written_at"],
        acked_at=row["acked_at"],
    )
