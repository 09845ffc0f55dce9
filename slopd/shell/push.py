"""Pushes to the human: an ntfy topic and a signed webhook (SPEC §16), posted off the pipeline.

Rules:
1. `Pusher.push` only queues (at most `QUEUE` notices; past that a notice is dropped and logged
   `notify.dropped`): the daemon's loop never waits for the network.
2. One worker thread per destination posts in order. A failure — no connection, a timeout, any
   answer but 2xx (a redirect too: a POST is never re-sent elsewhere) — is retried after 2, 4 and
   8 s (`delays`), then logged `notify.failed` with every attempt's reason; a success is logged
   `notify.delivered`.
3. `close(timeout)` lets the queue drain until `timeout` (the daemon's shutdown), then stops
   waiting: whatever is left is logged `notify.abandoned`.
4. A log line names the destination by kind and host only: an ntfy topic URL is a secret of
   sorts (anyone who knows it can read the topic), as are the token and the webhook's secret.
"""

from __future__ import annotations

import http.client
import queue
import ssl
import threading
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from slopd.core import notices
from slopd.core.errors import SetupError
from slopd.core.notices import Notice, Post
from slopd.shell.log import Logger

DELAYS = (2.0, 4.0, 8.0)
QUEUE = 100
TIMEOUT = 10.0  # seconds one POST may take
MAX_SECRET_BYTES = 4096
Build = Callable[[Notice, str | None], Post]


@dataclass(frozen=True, slots=True)
class Target:
    """Where a pusher posts: its URL, and a name for the log (rule 4)."""

    kind: str
    url: str

    @property
    def label(self) -> str:
        parts = urllib.parse.urlsplit(self.url)
        return f"{self.kind} {parts.scheme}://{parts.hostname or '?'}"


def read_secret(path: Path, what: str) -> str:
    """A token or secret file: its first line, stripped; a `SetupError` naming the file if unusable."""
    try:
        data = path.read_bytes()[: MAX_SECRET_BYTES + 1]
    except OSError as error:
        raise SetupError(f"{path}: cannot read the {what}: {error.strerror or error}") from None
    text = data.decode("utf-8", "replace").strip().splitlines()
    if not text or not text[0].strip() or len(data) > MAX_SECRET_BYTES:
        raise SetupError(f"{path}: the {what} file must hold one line (the {what}), at most 4 KiB")
    return text[0].strip()


def post(url: str, sent: Post, timeout: float = TIMEOUT) -> int:
    """One POST on a fresh connection; its status. OSError and http.client errors propagate."""
    parts = urllib.parse.urlsplit(url)
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    connection: http.client.HTTPConnection
    if parts.scheme == "https":
        connection = http.client.HTTPSConnection(
            parts.hostname or "", parts.port, timeout=timeout, context=ssl.create_default_context()
        )
    else:
        connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=timeout)
    try:
        connection.request("POST", path, body=sent.body, headers=dict(sent.headers))
        response = connection.getresponse()
        response.read()
        return response.status
    finally:
        connection.close()


class Pusher:
    """One destination: a queue and the worker thread that empties it (rules 1-3)."""

    def __init__(
        self,
        target: Target,
        build: Build,
        log: Logger,
        *,
        base: Callable[[], str | None] = lambda: None,
        delays: tuple[float, ...] = DELAYS,
        send: Callable[[str, Post], int] = post,
    ) -> None:
        self.target, self.build, self.log, self.base = target, build, log, base
        self.delays, self.send = delays, send
        self._queue: queue.Queue[Notice | None] = queue.Queue(QUEUE)
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._work, name=f"slopd-{target.kind}", daemon=True)
        self._thread.start()

    def push(self, notice: Notice) -> None:
        """Rule 1: any thread; never blocks."""
        try:
            self._queue.put_nowait(notice)
        except queue.Full:
            self.log.error("notify.dropped", to=self.target.label, notice=notice.event, reason="queue full")

    def _work(self) -> None:
        while True:
            notice = self._queue.get()
            if notice is None:
                return
            self._deliver(notice)

    def _deliver(self, notice: Notice) -> None:
        """Rule 2."""
        sent = self.build(notice, self.base())
        reasons: list[str] = []
        for attempt, delay in enumerate((0.0, *self.delays), start=1):
            if delay and self._stopping.wait(delay):
                break  # shutting down: no more retries
            try:
                status = self.send(self.target.url, sent)
            except Exception as error:  # any failure is this attempt's, never the worker's end
                reasons.append(f"{type(error).__name__}: {error}")
                continue
            if 200 <= status < 300:
                self.log.info(
                    "notify.delivered",
                    to=self.target.label,
                    notice=notice.event,
                    status=status,
                    attempt=attempt,
                )
                return
            reasons.append(f"HTTP {status}")
        self.log.error(
            "notify.failed",
            to=self.target.label,
            notice=notice.event,
            attempts=len(reasons),
            reasons=reasons,
        )

    def close(self, timeout: float) -> None:
        """Rule 3: half the time to deliver with retries, the rest without."""
        deadline = time.monotonic() + timeout
        try:
            self._queue.put_nowait(None)
        except queue.Full:
            self._stopping.set()
        self._thread.join(timeout=timeout / 2)
        if self._thread.is_alive():
            self._stopping.set()  # a retry's wait ends at once; an attempt under way finishes
            self._thread.join(timeout=max(deadline - time.monotonic(), 0.0))
        if self._thread.is_alive():
            self.log.warning("notify.abandoned", to=self.target.label, left=self._queue.qsize())


def ntfy(
    url: str,
    token: str | None,
    log: Logger,
    *,
    base: Callable[[], str | None],
    delays: tuple[float, ...] = DELAYS,
) -> Pusher:
    """An ntfy topic (rule 3 of `core.notices`)."""

    def build(notice: Notice, link_base: str | None) -> Post:
        return notices.ntfy(notice, base=link_base, token=token)

    return Pusher(Target("ntfy", url), build, log, base=base, delays=delays)


def webhook(
    url: str, secret: str, log: Logger, *, base: Callable[[], str | None], delays: tuple[float, ...] = DELAYS
) -> Pusher:
    """A webhook whose posts are signed with `secret` (rule 4 of `core.notices`)."""
    key = secret.encode()

    def build(notice: Notice, link_base: str | None) -> Post:
        return notices.webhook(notice, base=link_base, secret=key)

    return Pusher(Target("webhook", url), build, log, base=base, delays=delays)
