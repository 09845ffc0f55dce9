"""Trusted files re-read when they change, without a signal (SPEC §14): allowed_signers, tokens.

Rules:
1. A file's version is its (device, inode, size, mtime, ctime): an atomic replace (a new
   inode), an edit in place and a `touch` are all changes; the version is taken before the
   file is read, so an edit made during the read is seen at the next look.
2. `poll(now)` looks at most once every `every` seconds (the daemon's loop calls it each
   turn: a stat a second, whatever the traffic); `check()` looks now (before a signed order is
   verified, on each HTTP request, at SIGHUP). A look is one `stat`.
3. A new version is loaded with `load`; success replaces the value and logs `WHAT.reloaded`. A
   version that cannot be read or loaded logs `WHAT.reload_failed` (an error naming the file and
   the reason), once per version — the next save is looked at again — and fails closed: the
   value becomes `closed(reason)` (for the trust root, nobody is trusted: deleting the file, or a
   revocation with a typo, must never leave the old keys trusted). Without `closed`, the last
   good value is kept.
4. Thread-safe: the HTTP threads and the daemon's loop may look at the same file.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Generic, TypeVar

from slopd.shell.log import Logger

T = TypeVar("T")
Version = tuple[int, int, int, int, int]  # device, inode, size, mtime_ns, ctime_ns
EVERY = 1.0  # seconds between two looks of `poll`
_GONE: Version = (-1, -1, -1, -1, -1)  # the version of a file that cannot be looked at
_CLOSED: Version = (-2, -2, -2, -2, -2)  # what a failed-closed value was loaded from: nothing


def version(path: Path) -> Version | None:
    """Rule 1: the file's version, or None when it cannot be looked at (missing, no access)."""
    try:
        status = os.stat(path)
    except OSError:
        return None
    return (status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns, status.st_ctime_ns)


class Reloading(Generic[T]):
    """The value loaded from `path`, kept current (rules 1-4).

    `seen` is the version the first `value` was loaded from (take it before loading), or, with
    `bad`, the version that could not be loaded at start (`value` is then the fallback, and that
    version is not reported again); `facts` gives the fields logged with `WHAT.reloaded`.
    """

    def __init__(
        self,
        path: Path,
        load: Callable[[], T],
        value: T,
        seen: Version | None,
        log: Logger,
        what: str,
        *,
        facts: Callable[[T], Mapping[str, Any]] = lambda _value: {},
        every: float = EVERY,
        bad: bool = False,
        closed: Callable[[str], T] | None = None,
    ) -> None:
        self.path, self.what, self.every = path, what, every
        self._load, self._facts, self._log, self._closed = load, facts, log, closed
        self._value = value
        self._seen: Version | None = None if bad else seen
        self._failed: Version | None = seen if bad else None
        self._next = 0.0
        self._lock = threading.Lock()

    @property
    def value(self) -> T:
        return self._value

    def poll(self, now: float) -> float:
        """Rule 2: look if `every` seconds have passed since the last poll; when to poll next."""
        if now >= self._next:
            self._next = now + self.every
            self.check()
        return self._next

    def check(self) -> T:
        """Rule 2: look now; reload on a new version (rule 3). The value to use."""
        with self._lock:
            seen = version(self.path)
            if seen == self._seen or (seen is not None and seen == self._failed):
                return self._value
            if seen is None:
                if self._failed != _GONE:
                    self._fail("it cannot be read (missing, or no access)")
                    self._failed = _GONE
                return self._value
            try:
                value = self._load()
            except Exception as error:  # rule 3: closed, or the last good value
                self._failed = seen
                self._fail(str(error))
                return self._value
            self._value, self._seen, self._failed = value, seen, None
            self._log.info(f"{self.what}.reloaded", path=str(self.path), **self._facts(value))
            return value

    def _fail(self, reason: str) -> None:
        if self._closed is not None:
            # The last good version is no longer what the value holds: never equal to a look again.
            self._value, self._seen = self._closed(f"{self.path}: {reason}"), _CLOSED
            kept = "nothing: it fails closed until the file is mended"
        else:
            kept = "the last good version"
        self._log.error(f"{self.what}.reload_failed", path=str(self.path), reason=reason, kept=kept)
