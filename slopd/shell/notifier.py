"""Notifications for the human: every one is logged (`event=notify`); the notifier command and
the pushes (ntfy, webhook: `shell.push`) get at most `burst` of them per `window` seconds, and
the rest are coalesced into one "N more" notification when the window ends, so a burst of
errors never floods a phone.

Rules:
1. A notice goes to every destination or none: the rate limit is one for them all.
2. The command gets the text on stdin, in a thread of its own; a push destination (a `Sink`)
   only queues it: nothing here waits for a command or the network.
3. `link_base` is the console's URL, for the pushes' links (`core.notices`); None: no links.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from slopd.core import notices
from slopd.core.notices import Notice
from slopd.core.ratelimit import RateLimit
from slopd.shell.log import Logger

NOTIFY_TIMEOUT = 10.0


class Sink(Protocol):
    """A push destination (`shell.push.Pusher`)."""

    def push(self, notice: Notice) -> None: ...

    def close(self, timeout: float) -> None: ...


class Notifier:
    def __init__(
        self,
        argv: Sequence[str] | None,
        runner: Callable[..., Any],
        env: dict[str, str],
        log: Logger,
        sinks: Sequence[Sink] = (),
    ) -> None:
        self.argv, self.runner, self.env, self.log = argv, runner, env, log
        self.sinks: list[Sink] = list(sinks)
        self.link_base: str | None = None
        self.limit = RateLimit()
        self._threads: list[threading.Thread] = []

    def link(self, base: str | None) -> None:
        """Rule 3: where the console is reached (the pushes' links)."""
        self.link_base = base

    def configure(self, argv: Sequence[str] | None, sinks: Sequence[Sink]) -> None:
        """A reload: the new command and destinations; the old ones deliver what they hold."""
        old, self.sinks = self.sinks, list(sinks)
        self.argv = argv
        for sink in old:
            threading.Thread(target=sink.close, args=(NOTIFY_TIMEOUT,), daemon=True).start()

    def notify(self, notice: Notice, now: float, bound: Logger) -> None:
        bound.info("notify", text=notice.text, notice=notice.event)
        if self.argv is None and not self.sinks:
            return
        if self.limit.offer(notice.text, now) is not None:
            self._send(notice)

    def tick(self, now: float) -> float:
        """Send what the rate limit owes; returns when to call again."""
        summary = self.limit.due(now)
        if summary is not None:
            self.log.info("notify.coalesced", text=summary)
            self._send(notices.coalesced(summary))
        return self.limit.deadline()

    def flush(self) -> None:
        summary = self.limit.flush()
        if summary is not None:
            self.log.info("notify.coalesced", text=summary)
            self._send(notices.coalesced(summary))

    def _send(self, notice: Notice) -> None:
        """Rules 1 and 2."""
        for sink in self.sinks:
            sink.push(notice)
        if self.argv is None:
            return
        thread = threading.Thread(
            target=self.runner,
            args=(self.argv,),
            daemon=True,
            kwargs={"stdin": notice.text.encode(), "env": self.env, "timeout": NOTIFY_TIMEOUT},
        )
        thread.start()
        self._threads = [alive for alive in self._threads if alive.is_alive()] + [thread]

    def wait(self, timeout: float = NOTIFY_TIMEOUT + 1) -> None:
        """Before exiting: let the commands already started and the queued pushes deliver (bounded)."""
        deadline = time.monotonic() + timeout
        closing = [threading.Thread(target=sink.close, args=(timeout,), daemon=True) for sink in self.sinks]
        for thread in closing:
            thread.start()
        for thread in [*closing, *self._threads]:
            thread.join(timeout=max(deadline - time.monotonic(), 0.0))
