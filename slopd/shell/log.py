"""Logging: structlog, one JSON object a line, to stderr (journald) and to `slopd.log`.

Rules:
1. Every line is one JSON object; newlines, ANSI escapes and undecodable bytes in values are
   escaped by the JSON encoder, so hostile names cannot forge or split lines.
2. The log file is reopened when logrotate moves it (its inode changes), like WatchedFileHandler.
3. Event names are namespaced nouns with past-tense verbs: `envelope.received`, `reply.written`.
4. Code that logs is typed against `Logger`, the few methods it uses, not against structlog.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import os
import sys
import threading
import time
from collections.abc import MutableMapping
from pathlib import Path
from typing import Any, Protocol, TextIO, cast

import structlog

from slopd.shell.fs import write_all


class Logger(Protocol):
    """A structlog bound logger, as slopd uses it: bind values once, log events by name."""

    def bind(self, **values: Any) -> Logger: ...
    def debug(self, event: str, **values: Any) -> Any: ...
    def info(self, event: str, **values: Any) -> Any: ...
    def warning(self, event: str, **values: Any) -> Any: ...
    def error(self, event: str, **values: Any) -> Any: ...
    def exception(self, event: str, **values: Any) -> Any: ...


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


class _LineLogger:
    def __init__(self, sink: _Sink) -> None:
        self._sink = sink

    def msg(self, message: str) -> None:
        self._sink.write(message)

    debug = info = warning = warn = error = critical = exception = fatal = log = msg


_format_exc_info = structlog.processors.ExceptionRenderer()
_ENCODE = json.JSONEncoder(default=repr).encode


_last_second: tuple[int, str] = (-1, "")  # one tuple, swapped whole: safe across threads


def timestamp(now: float) -> str:
    """ISO 8601 in UTC with microseconds, as structlog's TimeStamper(fmt="iso", utc=True) writes."""
    global _last_second  # noqa: PLW0603  # a one-entry cache of the formatted second
    fraction, whole = math.modf(now)
    seconds, micros = int(whole), round(fraction * 1e6)  # rounded as datetime.fromtimestamp does
    if micros >= 1_000_000:
        seconds, micros = seconds + 1, micros - 1_000_000
    cached = _last_second
    if cached[0] != seconds:
        cached = _last_second = (seconds, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)))
    return f"{cached[1]}.{micros:06d}Z"


def render(_logger: Any, method: str, event: MutableMapping[str, Any]) -> str:
    """The one processor: level, timestamp and any exception added, then one JSON line.

    One function instead of structlog's four stock processors: a busy daemon logs several
    lines per input, and this is a measurable share of its time (BENCHMARKS.md).
    """
    event["level"] = "warning" if method == "warn" else "error" if method == "exception" else method
    event["timestamp"] = timestamp(time.time())
    if "exc_info" in event:
        event = _format_exc_info(_logger, method, event)
    return _ENCODE(event)


_sinks: list[_Sink] = []


def close() -> None:
    """Close the log file (an in-process daemon's test, or a clean exit); a later line reopens it."""
    for sink in _sinks:
        sink.close()


def configure(*, log_file: Path | None, level: str = "info", stream: TextIO | None = sys.stderr) -> None:
    close()
    sink = _Sink(stream, log_file)
    _sinks[:] = [sink]
    line_logger = _LineLogger(sink)
    structlog.configure(
        processors=[render],
        wrapper_class=structlog.make_filtering_bound_logger(getattr(logging, level.upper())),
        logger_factory=lambda *_args: line_logger,
        cache_logger_on_first_use=True,
    )


def get() -> Logger:
    return cast("Logger", structlog.get_logger())
