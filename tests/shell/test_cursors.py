"""The seats' wake cursors (`shell.cursors`, `transport.wakeups`): a new reply is delivered once, even
to two waiters of one seat waiting at the same time."""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest

from slopd.core.layout import LEDGER_FILE
from slopd.shell.ledger import Ledger
from slopd.shell.ledger.cursors import Cursors
from slopd.shell.ledger.receipts import FeedReply, Receipts
from slopd.shell.waker import Waker
from slopd.transport.wakeups import Wakeups
from tests.conftest import HubDir, envelope_text

NOW = "2026-12-02T00:00:00Z"


def test_a_claim_moves_the_cursor_only_from_what_it_was(tmp_path: Path) -> None:
    """Compare and set: from the value read, once; a second claim from the same value fails."""
    path = tmp_path / LEDGER_FILE
    Ledger(path).close()
    cursors = Cursors(path)
    try:
        start = cursors.cursor("alice", NOW)
        assert cursors.claim("alice", start, start + 3, NOW) is True
        assert cursors.claim("alice", start, start + 5, NOW) is False
        assert cursors.cursor("alice", NOW) == start + 3
    finally:
        cursors.close()


@pytest.mark.slow  # a real daemon; the waiter that gets nothing waits out its timeout
def test_two_waiters_of_one_seat_deliver_a_new_reply_once(hub: HubDir) -> None:
    """Both wait when the reply commits; exactly one returns it, the other finds nothing new."""
    path = hub.state / LEDGER_FILE
    hub.state.mkdir(parents=True, exist_ok=True)
    Ledger(path).close()
    got: list[FeedReply | None] = []
    made: list[tuple[Wakeups, Cursors, Receipts, Waker]] = []
    for _ in range(2):
        receipts, cursors, waker = Receipts(path), Cursors(path), Waker(hub.root, path)
        wakeups = Wakeups(receipts, cursors, waker, "claude-code", lambda: datetime.now(UTC))
        wakeups.cursor()  # both have asked before the reply: it is new to both
        made.append((wakeups, cursors, receipts, waker))
    threads = [
        threading.Thread(target=lambda wakeups=wakeups: got.append(wakeups.next_new(8.0)))
        for wakeups, *_ in made
    ]
    try:
        with hub.running() as daemon:
            for thread in threads:
                thread.start()
            hub.drop("q.md", envelope_text("Who gets it?\n", id="q-once", type="query"))
            for thread in threads:
                thread.join(timeout=30)
            daemon.until(lambda: "q-once.result.md" in hub.outbox())
    finally:
        for _wakeups, cursors, receipts, waker in made:
            waker.close()
            cursors.close()
            receipts.close()
    delivered = [reply for reply in got if reply is not None]
    assert len(got) == 2
    assert [reply.in_reply_to for reply in delivered] == ["q-once"]


def test_an_envelope_sent_in_the_second_a_session_started_is_outstanding(tmp_path: Path) -> None:
    """A session starts at `…:05Z` (whole seconds); a receipt of that very second is `…:05.300Z`, which
    sorts before it as text: it still counts as sent since then, and awaits its reply."""
    path = tmp_path / LEDGER_FILE
    Ledger(path).close()
    receipts, cursors = Receipts(path), Cursors(path)
    try:
        receipts.claim(
            key="q1", id="Q1", seat="alice", type="query", file="Q1.md", sha256="0" * 64,
            now="2026-12-02T00:00:05.300Z",
        )  # fmt: skip
        wakeups = Wakeups(receipts, cursors, Waker(None), "alice", lambda: datetime.now(UTC))
        assert wakeups.outstanding("2026-12-02T00:00:05Z") == ["Q1"]
        assert wakeups.outstanding("2026-12-02T00:00:06Z") == []
    finally:
        cursors.close()
        receipts.close()
