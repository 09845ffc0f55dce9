"""Filesystem events as hints: the fast path in front of the periodic scan, which is the truth.

Rules:
1. A lost event costs latency, never an input: the loop rescans every `rescan_interval`, and
   at once when the kernel reports an inotify queue overflow or the observer thread dies.
2. The watchdog handler does nothing but hand `(lane, name, hint)` to the loop, inside a
   try/except (an exception in a handler kills watchdog's dispatcher thread).
3. Hints: `arrived` — renamed into the lane, so complete; `delivered` — renamed in from a sync
   client's temporary name, so a remote file that may be half-written; `created` / `written` —
   being written in place; `closed` — a writer closed it (inotify only).
4. Only the folders named are watched, non-recursively — the daemon's `inbox/` and
   `authorized/` (and `outbox/drafts/`), never `archive/`; a name is relative to the root, or
   absolute (a wait's watch of the state dir, `shell.waker`), and names the notices' lane.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from collections.abc import Callable
from pathlib import Path

from watchdog.events import (
    FileClosedEvent,
    FileCreatedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers.api import BaseObserver
from watchdog.observers.polling import PollingObserver

from slopd.core.intake import Hint
from slopd.core.names import is_sync_temp

POLL_INTERVAL = 1.0
_WATCHDOG_LOGGERS = ("watchdog.observers.inotify_c", "watchdog.observers.inotify")

Notice = tuple[str, str, Hint]
_HINTS: dict[type[FileSystemEvent], Hint] = {
    FileMovedEvent: Hint.ARRIVED,
    FileCreatedEvent: Hint.CREATED,
    FileModifiedEvent: Hint.WRITTEN,
    FileClosedEvent: Hint.CLOSED,
}


def _text(path: str | bytes) -> str:
    return os.fsdecode(path)


class _Handler(FileSystemEventHandler):
    def __init__(self, lanes: dict[str, str], put: Callable[[Notice], None]) -> None:
        self._lanes, self._put = lanes, put

    def dispatch(self, event: FileSystemEvent) -> None:
        try:
            hint = _HINTS.get(type(event))
            if hint is None:
                return
            path = _text(event.dest_path if hint is Hint.ARRIVED else event.src_path)
            lane = self._lanes.get(os.path.dirname(path))
            if lane is None:
                return
            if hint is Hint.ARRIVED and is_sync_temp(os.path.basename(_text(event.src_path))):
                hint = Hint.DELIVERED  # a sync client renaming in what it received (rule 3)
            self._put((lane, os.path.basename(path), hint))
        except Exception:  # noqa: S110  # never let a hint kill the observer thread
            pass


class _OverflowAlarm(logging.Handler):
    """watchdog only logs an inotify overflow; turn that log record into a rescan."""

    def __init__(self, put: Callable[[Notice], None]) -> None:
        super().__init__(logging.WARNING)
        self._put = put

    def emit(self, record: logging.LogRecord) -> None:
        try:
            if "overflow" in record.getMessage().lower():
                self._put(("", "", Hint.RESCAN))
        except Exception:  # noqa: S110  # logging must never raise into watchdog
            pass


def _native_observer() -> BaseObserver:
    if sys.platform.startswith("linux"):
        from watchdog.observers.inotify import InotifyObserver  # noqa: PLC0415  # Linux only

        # Full events: a file renamed in from outside the lane is a move, not a create.
        return InotifyObserver(generate_full_events=True)
    from watchdog.observers import Observer  # noqa: PLC0415  # FSEvents, kqueue, Windows

    return Observer()


class Watcher:
    """The observer over the input lanes, restartable when its thread dies."""

    def __init__(
        self, root: Path, lanes: tuple[str, ...], *, polling: bool, put: Callable[[Notice], None]
    ) -> None:
        self._root, self._lanes_names, self._polling, self._put = root, lanes, polling, put
        self._lanes = {os.path.abspath(root / lane): lane for lane in lanes}
        self._observer: BaseObserver | None = None
        self._alarm = _OverflowAlarm(put)
        self.errors: list[str] = []

    @property
    def reports_close(self) -> bool:
        """Whether `closed` hints arrive (inotify), so an open writer can be waited for."""
        return not self._polling and sys.platform.startswith("linux")

    def start(self) -> None:
        observer = PollingObserver(timeout=POLL_INTERVAL) if self._polling else _native_observer()
        handler = _Handler(self._lanes, self._put)
        self.errors = []
        for path, lane in self._lanes.items():
            if not os.path.isdir(path):  # watching it would fail the whole observer at start
                self.errors.append(f"{lane}/: not a directory")
                continue
            try:
                observer.schedule(handler, path, recursive=False, event_filter=list(_HINTS))
            except OSError as error:
                self.errors.append(f"{lane}/: {error.strerror or error}")
        observer.daemon = True
        try:
            observer.start()
        except OSError as error:  # a lane removed this very moment: no observer; rescans go on
            self.errors.append(f"{self._root}: {error.strerror or error}")
            with contextlib.suppress(Exception):
                observer.stop()
            return
        self._observer = observer
        for name in _WATCHDOG_LOGGERS:
            logging.getLogger(name).addHandler(self._alarm)

    def healthy(self) -> bool:
        observer = self._observer
        if observer is None or not observer.is_alive():
            return False
        return all(emitter.is_alive() for emitter in observer.emitters)

    def stop(self) -> None:
        observer, self._observer = self._observer, None
        for name in _WATCHDOG_LOGGERS:
            logging.getLogger(name).removeHandler(self._alarm)
        if observer is not None:
            observer.stop()
            observer.join(timeout=5)

    def restart(self) -> None:
        self.stop()
        self.start()
