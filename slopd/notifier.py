"""Notifications for the human: every one is logged (`event=notify`); the notifier command
gets at most `burst` of them per `window` seconds, and the rest are coalesced into one
"N more" notification when the window ends, so a burst of errors never floods a phone.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

NOTIFY_TIMEOUT = 10.0
BURST = 5
WINDOW = 60.0


@dataclass
class RateLimit:
    """Pure bookkeeping: which notifications go out now, and what the window's end owes."""

    burst: int = BURST
    window: float = WINDOW
    started: float | None = None
    sent: int = 0
    held: list[str] = field(default_factory=list)

    def offer(self, text: str, now: float) -> str | None:
        """The text to send now, or None when it is held for the summary."""
        if self.started is None or now - self.started >= self.window:
            self.started, self.sent = now, 0
        if self.sent < self.burst:
            self.sent += 1
            return text
        self.held.append(text)
        return None

    def due(self, now: float) -> str | None:
        """At the window's end: one notification standing for everything held back."""
        if not self.held or (self.started is not None and now - self.started < self.window):
            return None
        count, last = len(self.held), self.held[-1]
        self.held.clear()
        self.started, self.sent = now, 1
        return f"{count} more notifications (see slopd tail); the last: {last}"[:400]

    def flush(self) -> str | None:
        """On shutdown: whatever is held, at once."""
        if not self.held:
            return None
        self.started = None
        summary = self.due(float("inf"))
        self.started = None
        return summary

    def deadline(self) -> float:
        if not self.held or self.started is None:
            return float("inf")
        return self.started + self.window


class Notifier:
    def __init__(
        self, argv: Sequence[str] | None, runner: Callable[..., Any], env: dict[str, str], log: Any
    ) -> None:
        self.argv, self.runner, self.env, self.log = argv, runner, env, log
        self.limit = RateLimit()
        self._threads: list[threading.Thread] = []

    def notify(self, text: str, now: float, bound: Any) -> None:
        bound.info("notify", text=text)
        if self.argv is not None:
            allowed = self.limit.offer(text, now)
            if allowed is not None:
                self._run(allowed)

    def tick(self, now: float) -> float:
        """Send what the rate limit owes; returns when to call again."""
        summary = self.limit.due(now)
        if summary is not None:
            self.log.info("notify.coalesced", text=summary)
            self._run(summary)
        return self.limit.deadline()

    def flush(self) -> None:
        summary = self.limit.flush()
        if summary is not None:
            self.log.info("notify.coalesced", text=summary)
            self._run(summary)

    def _run(self, text: str) -> None:
        assert self.argv is not None
        thread = threading.Thread(
            target=self.runner,
            args=(self.argv,),
            daemon=True,
            kwargs={"stdin": text.encode(), "env": self.env, "timeout": NOTIFY_TIMEOUT},
        )
        thread.start()
        self._threads = [alive for alive in self._threads if alive.is_alive()] + [thread]

    def wait(self, timeout: float = NOTIFY_TIMEOUT + 1) -> None:
        """Before exiting: let the notifier commands already started deliver (bounded)."""
        deadline = time.monotonic() + timeout
        for thread in self._threads:
            thread.join(timeout=max(deadline - time.monotonic(), 0))
