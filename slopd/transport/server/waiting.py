"""Long-polls that wake on the ledger's commit, not on a timer (SPEC §12).

Rules:
1. The daemon's `Bell` rings in the loop's thread after each commit; `Doorbell` carries the
   ring onto the server's event loop (`call_soon_threadsafe`) and wakes every waiter there.
2. A waiter registers before it first looks, then looks again after each wake-up, so a reply
   committed between the look and the wait is never missed; a missed ring only delays it.
3. A wait ends at its deadline, or at once when the server starts to stop (`close`), with
   whatever the last look found.
4. `parked` counts the waits that have looked, found nothing yet, and sleep until a ring (the
   `slopd_long_polls_parked` gauge of `/metrics`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import TypeVar

from slopd.shell.bell import Bell

T = TypeVar("T")


class Doorbell:
    def __init__(self, bell: Bell) -> None:
        self.bell = bell
        self.closing = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._waiting: set[asyncio.Event] = set()
        self.parked = 0  # rule 4
        self._unlisten: Callable[[], None] | None = None

    def open(self) -> None:
        """Rule 1: from inside the server's running loop."""
        self._loop = asyncio.get_running_loop()
        self._unlisten = self.bell.listen(self._rung)

    def close(self) -> None:
        """Rule 3: every waiter returns now (thread-safe)."""
        self.closing = True
        if self._unlisten is not None:
            self._unlisten()
        self._rung()

    def _rung(self) -> None:
        loop = self._loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self._wake)

    def _wake(self) -> None:
        for event in self._waiting:
            event.set()

    async def wait_for(self, look: Callable[[], T], done: Callable[[T], bool], timeout: float) -> T:
        """Rule 2: `look()` until `done` says so, the deadline passes, or the server stops."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        event = asyncio.Event()
        self._waiting.add(event)
        try:
            while True:
                event.clear()
                found = look()
                remaining = deadline - loop.time()
                if done(found) or remaining <= 0 or self.closing:
                    return found
                self.parked += 1
                try:
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(event.wait(), remaining)
                finally:
                    self.parked -= 1
        finally:
            self._waiting.discard(event)
