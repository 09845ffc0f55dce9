"""The reply feed's side of the ledger: seqs in commit order, recipients, and an old ledger migrated."""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

from slopd.shell.ledger import Ledger
from slopd.shell.ledger.receipts import Receipts

OLD_REPLIES = """
CREATE TABLE inputs (
    key TEXT PRIMARY KEY, id TEXT, lane TEXT NOT NULL, file TEXT NOT NULL, sha256 TEXT NOT NULL,
    type TEXT, sender TEXT, mode TEXT, decision TEXT, status TEXT NOT NULL, outcome TEXT,
    replies TEXT NOT NULL DEFAULT '', archive TEXT, received_at TEXT NOT NULL, updated_at TEXT NOT NULL,
    target_kind TEXT, target_name TEXT
) WITHOUT ROWID;
CREATE TABLE replies (
    id TEXT PRIMARY KEY, in_reply_to TEXT, type TEXT NOT NULL, class TEXT NOT NULL,
    path TEXT NOT NULL, written_at TEXT NOT NULL
);
INSERT INTO inputs (key, id, lane, file, sha256, sender, status, received_at, updated_at)
    VALUES ('20261201t000000z-old', '20261201T000000Z-old', 'inbox', 'x.md', 'aa', 'alice', 'done', 't', 't');
INSERT INTO replies VALUES
    ('20261201t000000z-old.result', '20261201T000000Z-old', 'result', 'ping', 'outbox/x.md', 't'),
    ('orphan.error', NULL, 'error', 'invalid', 'outbox/y.md', 't');
"""


def test_an_old_ledger_gets_recipients_from_its_inputs_and_keeps_its_seqs(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite3"
    with contextlib.closing(sqlite3.connect(path)) as db:
        db.executescript(OLD_REPLIES)
    Ledger(path).close()
    receipts = Receipts(path)
    try:
        feed = receipts.feed("alice", 0, 10)
        assert [(reply.seq, reply.id) for reply in feed] == [(1, "20261201t000000z-old.result")]
        assert receipts.feed("bob", 0, 10) == []
        assert receipts.bounds() == (1, 2)
    finally:
        receipts.close()


def test_seqs_grow_in_commit_order_and_a_rewritten_reply_keeps_its_seq(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite3"
    ledger = Ledger(path)
    receipts = Receipts(path)
    try:
        for number, seat in enumerate(["alice", "bob", "alice"]):
            with ledger.writing() as writes:
                writes.add_reply(
                    "k",
                    reply_id=f"r{number}",
                    in_reply_to=f"e{number}",
                    type="ack",
                    reply_class="ack",
                    path=f"outbox/r{number}.md",
                    now="t",
                    recipient=seat,
                )
        with ledger.writing() as writes:  # the reply rewritten after a crash
            writes.add_reply(
                "k",
                reply_id="r0",
                in_reply_to="e0",
                type="ack",
                reply_class="ack",
                path="outbox/r0.md",
                now="later",
                recipient="alice",
            )
        assert [(reply.seq, reply.id) for reply in receipts.feed("alice", 0, 10)] == [(1, "r0"), (3, "r2")]
        assert [reply.id for reply in receipts.feed("alice", 1, 10)] == ["r2"]
        assert [reply.id for reply in receipts.feed("bob", 0, 10)] == ["r1"]
        assert receipts.pending("alice") == 2
        assert receipts.ack("alice", "r0", now="t")
        assert not receipts.ack("alice", "r1", now="t")  # bob's
        assert receipts.pending("alice") == 1
        assert [reply.acked_at for reply in receipts.feed("alice", 0, 10)] == ["t", None]
    finally:
        receipts.close()
        ledger.close()
