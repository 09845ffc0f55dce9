"""What wakes an agent (SPEC §16): the first new reply for its seat, or the terminal reply to one
of the envelopes it sent — shared by `slop_wait`, `slopd wait` and the agent hooks.

Rules:
1. "New" is relative to the seat's wake cursor (`shell.ledger.cursors`, in the daemon's state dir): a
   reply to the seat with a greater seq. The cursor is made at the seat's tail the first time any
   wake-up asks ("after now"), and delivering a new reply moves it past that reply, compare-and-set
   — so a reply is new once, whichever of `slop_wait`, `slopd wait` or a hook delivered it, even
   when two of them wait at once.
2. Waiting for ids: the earliest (by seq) terminal reply to one of them — its envelope type's
   terminal kinds (`submit.terminal_kinds`), or an `error`; the cursor is left alone. Each id
   must be one this seat sent (`views.envelope_state`), else it is refused as not found.
3. Outstanding: the envelopes this seat sent since a moment (by receipt or by the ledger's
   `from`) whose terminal reply has not been written.
4. Waits are woken by the `Waker` (the daemon's bell, or the filesystem) and end at their
   deadline with nothing.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from datetime import datetime
from functools import partial

from slopd import submit
from slopd.core.ids import timestamp
from slopd.core.receipts import is_terminal
from slopd.shell.ledger.cursors import Cursors
from slopd.shell.ledger.receipts import FeedReply, Receipts
from slopd.shell.waker import Waker
from slopd.transport.problems import Problem
from slopd.transport.server import views


class Wakeups:
    def __init__(
        self, receipts: Receipts, cursors: Cursors, waker: Waker, seat: str, clock: Callable[[], datetime]
    ) -> None:
        self.receipts, self.cursors, self.waker, self.seat, self.clock = receipts, cursors, waker, seat, clock

    def _now(self) -> str:
        return timestamp(self.clock())

    def cursor(self) -> int:
        """Rule 1: where "new" starts for this seat (made now if it never asked before)."""
        return self.cursors.cursor(self.seat, self._now())

    def next_new(self, timeout: float) -> FeedReply | None:
        """Rule 1: the first new reply (waiting up to `timeout`), delivered: the cursor moves past it
        — only if no other waiter of the seat delivered it meanwhile (then the next one is looked for)."""
        deadline = time.monotonic() + timeout
        while True:
            after = self.cursor()
            remaining = max(deadline - time.monotonic(), 0.0)
            found = self.waker.wait_for(partial(self.receipts.feed, self.seat, after, 1), bool, remaining)
            if not found:
                return None
            if self.cursors.claim(self.seat, after, found[0].seq, self._now()):
                return found[0]

    def all_new(self, limit: int) -> list[FeedReply]:
        """Rule 1, without waiting: up to `limit` new replies, oldest first, all delivered (none a
        second time: another waiter that took them first leaves this one what remains)."""
        while True:
            after = self.cursor()
            found = self.receipts.feed(self.seat, after, limit)
            if not found or self.cursors.claim(self.seat, after, found[-1].seq, self._now()):
                return found

    def terminal(self, ids: Sequence[str], timeout: float, *, patient: bool = False) -> FeedReply | None:
        """Rule 2; `patient`: an id the ledger does not know yet is waited for (a file still settling)."""
        kinds: dict[str, tuple[str, ...] | None] = {id: self._kinds(id, patient) for id in ids}

        def look() -> FeedReply | None:
            found = []
            for id, known in list(kinds.items()):
                wanted = known if known is not None else self._kinds(id, patient)
                kinds[id] = wanted
                if wanted is not None:
                    replies = self.receipts.replies_to(id.lower(), self.seat)
                    found += [reply for reply in replies if is_terminal((reply.type,), wanted)]
            return min(found, key=lambda reply: reply.seq) if found else None

        return self.waker.wait_for(look, lambda found: found is not None, timeout)

    def _kinds(self, id: str, patient: bool) -> tuple[str, ...] | None:
        """The terminal kinds of `id`'s replies; None while the ledger does not know it (`patient`)."""
        try:
            type = views.envelope_state(self.receipts, self.seat, id)[1]
        except Problem:
            key = id.lower()
            if patient and self.receipts.get(key) is None and self.receipts.input(key) is None:
                return None
            raise
        return submit.terminal_kinds(type or "")

    def outstanding(self, since: str) -> list[str]:
        """Rule 3: ids, oldest first. `since` in whole seconds (`…:05Z`) counts from that second's
        start: a receipt's stamp has milliseconds (`…:05.300Z`), which sorts before `…:05Z`."""
        if since.endswith("Z") and "." not in since:
            since = since[:-1] + ".000Z"
        waiting = []
        for id, type in self.receipts.sent_by(self.seat, since):
            kinds = submit.terminal_kinds(type)
            replies = self.receipts.replies_to(id.lower(), self.seat)
            if kinds and not is_terminal((reply.type for reply in replies), kinds):
                waiting.append(id)
        return waiting
