"""A bell rung after each commit of the ledger, for whoever waits on it in another thread.

Rules:
1. `ring` calls every listener, in the ringing thread, outside the bell's lock; a listener only
   hands the news on (sets an event, schedules a wake-up on its own loop) and never blocks.
2. A ring carries no news of its own: a woken waiter reads the ledger again, so a missed or
   raced ring is never a wrong answer, only a later one.
3. Other processes hear it through a file: `Mark` writes one byte into `STATE/ledger.bell` at
   each ring (a filesystem event after the commit is visible, where the ledger's WAL is written
   just before; `shell.waker` watches it). Failing to write it is never an error: waiters also
   look again every second.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable
from pathlib import Path

Listener = Callable[[], None]


class Bell:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._listeners: dict[int, Listener] = {}
        self._next = 0

    def listen(self, listener: Listener) -> Callable[[], None]:
        """Call `listener` at every ring; the function returned stops it."""
        with self._lock:
            self._next += 1
            number = self._next
            self._listeners[number] = listener

        def stop() -> None:
            with self._lock:
                self._listeners.pop(number, None)

        return stop

    def ring(self) -> None:
        with self._lock:
            listeners = list(self._listeners.values())
        for listener in listeners:
            listener()


class Mark:
    """Rule 3: a listener for the daemon's bell; `close` when the daemon stops."""

    def __init__(self, path: Path) -> None:
        self._fd: int | None = None
        with contextlib.suppress(OSError):
            self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)

    def __call__(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.pwrite(self._fd, b"\n", 0)

    def close(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)
