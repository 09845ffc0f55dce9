"""Blocking waits for a reply: woken by the daemon's bell (in its process) or by `outbox/` events.

Used by `slopd send --wait` (`submit.await_reply`) and the MCP tools that wait.

Rules:
1. `Waker.poke` (any thread) wakes every wait; a wait looks again at each wake-up and once a
   second besides (a lost filesystem event must not stall it), until `done` or the deadline.
2. A wait registers before it first looks, so a reply written between the look and the wait
   still wakes it.
3. Given a hub's root, the wakes come from a watch on its `outbox/`, started by the first wait
   that may block and stopped by `close`; without one, only `poke` wakes (the daemon's bell).
   Given the ledger's folder too, its writes wake as well: a reply's file lands in `outbox/`
   just before the ledger records it, so a wait that reads the ledger (the MCP tools, in a
   process of their own) is woken again by that commit instead of by the next second's look.
4. After `stop` (the server stops), every wait returns what it found at once, like a long-poll.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from slopd.shell.watcher import Watcher

T = TypeVar("T")
RECHECK = 1.0


class Waker:
    def __init__(self, watch_root: Path | None = None, ledger_dir: Path | None = None) -> None:
        self._condition = threading.Condition()
        self._rung = 0
        self._root, self._ledger_dir = watch_root, ledger_dir
        self._watchers: list[Watcher] = []
        self._stopped = False

    def stop(self) -> None:
        """Rule 4 (any thread)."""
        self._stopped = True
        self.poke()

    def poke(self) -> None:
        with self._condition:
            self._rung += 1
            self._condition.notify_all()

    def _watch(self) -> None:
        """Rule 3."""
        if self._root is None or self._watchers:
            return
        from slopd.shell.watcher import Notice, Watcher  # noqa: PLC0415  # only a wait needs watchdog

        def put(_notice: Notice) -> None:
            self.poke()

        places = [(self._root, "outbox")]
        if self._ledger_dir is not None:
            places.append((self._ledger_dir.parent, self._ledger_dir.name))
        for root, folder in places:
            watcher = Watcher(root, (folder,), polling=False, put=put)
            watcher.start()
            self._watchers.append(watcher)

    def close(self) -> None:
        watchers, self._watchers = self._watchers, []
        for watcher in watchers:
            watcher.stop()

    def wait_for(self, look: Callable[[], T], done: Callable[[T], bool], timeout: float) -> T:
        """Rules 1 and 2."""
        if timeout > 0:
            self._watch()
        deadline = time.monotonic() + timeout
        while True:
            with self._condition:
                seen = self._rung
            found = look()
            remaining = deadline - time.monotonic()
            if done(found) or remaining <= 0 or self._stopped:
                return found
            with self._condition:
                if self._rung == seen:
                    self._condition.wait(timeout=min(remaining, RECHECK))
