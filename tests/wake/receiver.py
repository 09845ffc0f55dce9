"""A tiny threaded HTTP receiver on 127.0.0.1 for the push tests: it records every POST and answers
each with the next status of its script (then `default`), optionally holding every answer until
`release()` — a phone's ntfy server or a webhook endpoint, failing, slow or fine, in the test's
own process."""

from __future__ import annotations

import http.server
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass


@dataclass(frozen=True)
class Received:
    path: str
    headers: dict[str, str]  # lower-case names
    body: bytes
    at: float  # time.monotonic() when it was read


class Receiver:
    def __init__(self, statuses: Iterable[int] = (), default: int = 200, *, hold: bool = False) -> None:
        self.script, self.default = list(statuses), default
        self.posts: list[Received] = []
        self._lock = threading.Condition()
        self._open = threading.Event()
        if not hold:
            self._open.set()
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # http.server's name
                length = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(length)
                headers = {key.lower(): value for key, value in self.headers.items()}
                receiver._open.wait(timeout=60)
                with receiver._lock:
                    receiver.posts.append(Received(self.path, headers, body, time.monotonic()))
                    status = receiver.script.pop(0) if receiver.script else receiver.default
                    receiver._lock.notify_all()
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *_args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def release(self) -> None:
        """Answer the requests held (and every later one at once)."""
        self._open.set()

    def wait(self, count: int, timeout: float = 20.0, path: str | None = None) -> list[Received]:
        """The posts (to `path`, if given) once there are at least `count`; fails after `timeout`."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while True:
                found = [post for post in self.posts if path is None or post.path == path]
                if len(found) >= count:
                    return found
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise AssertionError(f"{len(found)} posts to {path or 'any path'}, not {count}: {found}")
                self._lock.wait(timeout=remaining)


@contextmanager
def receiving(statuses: Iterable[int] = (), default: int = 200, *, hold: bool = False) -> Iterator[Receiver]:
    receiver = Receiver(statuses, default, hold=hold)
    receiver._thread.start()
    try:
        yield receiver
    finally:
        receiver.release()
        receiver.server.shutdown()
        receiver.server.server_close()
