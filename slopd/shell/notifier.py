"""Notifications for the human: every one is logged (`event=notify`); the notifier command
gets at most `burst` of them per `window` seconds, and the rest are coalesced into one
"N more" notification when the window ends, so a burst of errors never floods a phone.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from slopd.core.ratelimit import RateLimit
from slopd.shell.log import Logger

NOTIFY_TIMEOUT = 10.0


class Notifier:
    def __init__(
        self, argv: Sequence[str] | None, runner: Callable[..., Any], env: dict[str, str], log: Logger
    ) -> None:
        self.argv, self.runner, self.env, self.log = argv, runner, env, log
        self.limit = RateLimit()
        self._threads: list[threading.Thread] = []

    def notify(self, text: str, now: float, bound: Logger) -> None:
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
