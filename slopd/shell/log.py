"""Logging: one JSON object a line, to stderr (journald) and to `slopd.log`.

Rules:
1. Every line is one JSON object; newlines, ANSI escapes and undecodable bytes in values are
   escaped by the JSON encoder, so hostile names cannot forge or split lines.
2. The log file is reopened when logrotate moves it (its inode changes), like WatchedFileHandler.
3. Event names are namespaced nouns with past-tense verbs: `envelope.received`, `reply.written`.
4. A `Logger` binds values once (`bind`) and logs events by name, structlog's way: a line holds
   the bound values, then the call's, then `event`, `level`, `timestamp` and, for
   `exception`, the traceback. Below the configured level a call does nothing.
5. This is slopd's own: structlog, which this module replaced, cost the daemon 80 ms of start-up
   for the few lines of it slopd used (BENCHMARKS.md, start-up).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import sys
import threading
import time
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol, TextIO

from slopd.core.vocabulary import LOG_LEVELS
from slopd.shell.fs import write_all


class _Output(Protocol):
    def emit(self, event: dict[str, Any]) -> None: ...


class _Sink:
    """Writes whole lines to a stream and to a file that may be rotated underneath.

    A line is one `write` per destination, straight to the fd (no buffer to flush), so lines
    from the watcher's and the main thread never interleave and a crash loses none written.
    """

    def __init__(self, stream: TextIO | None, path: Path | None) -> None:
        self.stream, self.path = stream, path
        self.lock = threading.Lock()
        self.stream_fd: int | None = None
        if stream is not None:
            try:
                stream.flush()
                self.stream_fd = stream.fileno()
            except (OSError, ValueError, AttributeError):  # a StringIO, a closed stream: write to it
                self.stream_fd = None
        self.fd: int | None = None
        self.inode: int | None = None

    def _reopen_if_rotated(self) -> int:
        assert self.path is not None
        try:
            inode: int | None = os.stat(self.path).st_ino
        except FileNotFoundError:
            inode = None
        if self.fd is None or inode != self.inode:
            if self.fd is not None:
                os.close(self.fd)
                self.fd = None
            self.fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o666)
            self.inode = os.fstat(self.fd).st_ino
        return self.fd

    def close(self) -> None:
        with self.lock:
            if self.fd is not None:
                os.close(self.fd)
                self.fd = None

    def emit(self, event: dict[str, Any]) -> None:
        """One event as one JSON line (rule 1)."""
        self.write(_ENCODE(event))

    def write(self, line: str) -> None:
        line += "\n"
        data = line.encode("utf-8", "backslashreplace")
        with self.lock:
            if self.stream_fd is not None:
                with contextlib.suppress(OSError):
                    write_all(self.stream_fd, data)
            elif self.stream is not None:
                try:
                    self.stream.write(line)
                    self.stream.flush()
                except (OSError, ValueError):
                    pass
            if self.path is not None:
                with contextlib.suppress(OSError):
                    write_all(self._reopen_if_rotated(), data)


_ENCODE = json.JSONEncoder(default=repr).encode
_RANK = {level: rank for rank, level in enumerate(LOG_LEVELS)}
_last_second: tuple[int, str] = (-1, "")  # one tuple, swapped whole: safe across threads


def timestamp(now: float) -> str:
    """ISO 8601 in UTC with microseconds, as datetime.isoformat writes it, with `Z`."""
    global _last_second  # noqa: PLW0603  # a one-entry cache of the formatted second
    fraction, whole = math.modf(now)
    seconds, micros = int(whole), round(fraction * 1e6)  # rounded as datetime.fromtimestamp does
    if micros >= 1_000_000:
        seconds, micros = seconds + 1, micros - 1_000_000
    cached = _last_second
    if cached[0] != seconds:
        cached = _last_second = (seconds, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)))
    return f"{cached[1]}.{micros:06d}Z"


class _Settings:
    """Where lines go and from which level on; swapped whole by `configure` and `capture`."""

    def __init__(self, output: _Output, level: str) -> None:
        self.output, self.rank = output, _RANK[level]


_settings = _Settings(_Sink(sys.stderr, None), "info")


class Logger:
    """Bound values plus the methods slopd logs with (rule 4). Immutable: `bind` makes a new one."""

    __slots__ = ("_values",)

    def __init__(self, values: dict[str, Any] | None = None) -> None:
        self._values = values or {}

    def bind(self, **values: Any) -> Logger:
        return Logger({**self._values, **values})

    def _log(self, level: str, event: str, values: dict[str, Any], failure: bool = False) -> None:
        settings = _settings
        if _RANK[level] < settings.rank:
            return
        line = {**self._values, **values, "event": event, "level": level, "timestamp": timestamp(time.time())}
        if failure:
            line["exception"] = "".join(traceback.format_exception(*sys.exc_info())).rstrip("\n")
        settings.output.emit(line)

    def debug(self, event: str, **values: Any) -> None:
        self._log("debug", event, values)

    def info(self, event: str, **values: Any) -> None:
        self._log("info", event, values)

    def warning(self, event: str, **values: Any) -> None:
        self._log("warning", event, values)

    def error(self, event: str, **values: Any) -> None:
        self._log("error", event, values)

    def exception(self, event: str, **values: Any) -> None:
        """`error`, with the traceback of the exception being handled."""
        self._log("error", event, values, failure=True)


_sinks: list[_Sink] = []


def close() -> None:
    """Close the log file (an in-process daemon's test, or a clean exit); a later line reopens it."""
    for sink in _sinks:
        sink.close()


def configure(*, log_file: Path | None, level: str = "info", stream: TextIO | None = sys.stderr) -> None:
    global _settings  # noqa: PLW0603  # the one configuration every Logger reads at each call
    close()
    sink = _Sink(stream, log_file)
    _sinks[:] = [sink]
    _settings = _Settings(sink, level)


def reset() -> None:
    """Back to the defaults (info and above, JSON lines to stderr), the log file closed."""
    global _settings  # noqa: PLW0603  # see `configure`
    close()
    _sinks.clear()
    _settings = _Settings(_Sink(sys.stderr, None), "info")


class _Captured:
    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []

    def emit(self, event: dict[str, Any]) -> None:
        self.events.append(event)


@contextlib.contextmanager
def capture(level: str = "debug") -> Iterator[list[dict[str, Any]]]:
    """For tests: every event logged inside the block, as dicts, instead of lines."""
    global _settings  # noqa: PLW0603  # swapped back on leaving the block
    before, captured = _settings, _Captured()
    _settings = _Settings(captured, level)
    try:
        yield captured.events
    finally:
        _settings = before


def get() -> Logger:
    return Logger()
