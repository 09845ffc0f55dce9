"""A bell rung after each commit of the ledger, for whoever waits on it in another thread.

Rules:
1. `ring` calls every listener, in the ringing thread, outside the bell's lock; a listener only
   hands the news on (sets an event, schedules a wake-up on its own loop) and never blocks.
2. A ring carries no news of its own: a woken waiter reads the ledger again, so a missed or
   raced ring is never a wrong answer, only a later one.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

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
