"""Blocking waits for a reply: woken by the daemon's bell (in its process) or by the filesystem.

Used by `slopd send --wait` (`submit.await_reply`), `slopd wait`, and the MCP tools that wait
and subscriptions that notify (`slop_wait`, `slop://replies`).

Rules:
1. `Waker.poke` (any thread) wakes every wait and calls every listener (`listen`); a wait looks
   again at each wake-up and once a second besides (a lost filesystem event must not stall it),
   until `done` or the deadline.
2. A wait registers before it first looks, so a reply written between the look and the wait
   still wakes it.
3. Given a hub's root, the wakes come from a watch on its `outbox/` — and, given the ledger's
   path, on its state dir: the daemon's bell file (`shell.bell`, written once a commit is
   visible) and the ledger's write-ahead log. A reply is in `outbox/` before its row commits,
   and the WAL is written a moment before the commit can be read, so the bell file's event is
   the one that finds it (the others are kept for a daemon without one). The watch starts with
   the first wait that may block (or `watch`) and stops at `close`; without a root, only `poke`
   wakes (the daemon's bell).
4. After `stop` (the server stops), every wait returns what it found at once, like a long-poll.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from slopd.core.layout import BELL_FILE

if TYPE_CHECKING:
    from slopd.shell.watcher import Watcher

T = TypeVar("T")
RECHECK = 1.0


class Waker:
    def __init__(self, watch_root: Path | None = None, ledger: Path | None = None) -> None:
        self._condition = threading.Condition()
        self._rung = 0
        self._root, self._ledger = watch_root, ledger
        self._watcher: Watcher | None = None
        self._listeners: dict[int, Callable[[], None]] = {}
        self._stopped = False
        self._watching = threading.Lock()  # one observer, whichever thread starts it
        self._closed = False

    def stop(self) -> None:
        """Rule 4 (any thread)."""
        self._stopped = True
        self.poke()

    def poke(self) -> None:
        with self._condition:
            self._rung += 1
            self._condition.notify_all()
            listeners = list(self._listeners.values())
        for listener in listeners:
            listener()

    def listen(self, listener: Callable[[], None]) -> Callable[[], None]:
        """Rule 1: call `listener` (in the poking thread) at every poke; the function returned stops it."""
        with self._condition:
            number = max(self._listeners, default=0) + 1
            self._listeners[number] = listener

        def stop() -> None:
            with self._condition:
                self._listeners.pop(number, None)

        return stop

    def watch(self) -> None:
        """Rule 3: one observer (one inotify instance) for `outbox/` and the state dir — started once,
        whichever thread asks first (tools run on worker threads), and never again after `close`."""
        with self._watching:
            if self._root is None or self._watcher is not None or self._closed:
                return
            from slopd.shell.watcher import Notice, Watcher  # noqa: PLC0415  # only a wait needs watchdog

            ledger = self._ledger.name if self._ledger is not None else None

            def put(notice: Notice) -> None:
                lane, name, _hint = notice
                if lane == "outbox" or name == BELL_FILE or (ledger is not None and name.startswith(ledger)):
                    self.poke()  # in the state dir, the bell file and the ledger's, not the log beside them

            folders = ("outbox",) if self._ledger is None else ("outbox", str(self._ledger.parent.absolute()))
            watcher = Watcher(self._root, folders, polling=False, put=put)
            watcher.start()
            self._watcher = watcher

    def close(self) -> None:
        with self._watching:
            self._closed = True
            watcher, self._watcher = self._watcher, None
        if watcher is not None:
            watcher.stop()

    def wait_for(self, look: Callable[[], T], done: Callable[[T], bool], timeout: float) -> T:
        """Rules 1 and 2."""
        if timeout > 0:
            self.watch()
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
