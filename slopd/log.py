"""Logging: structlog, one JSON object a line, to stderr (journald) and to `slopd.log`.

Rules:
1. Every line is one JSON object; newlines, ANSI escapes and undecodable bytes in values are
   escaped by the JSON encoder, so hostile names cannot forge or split lines.
2. The log file is reopened when logrotate moves it (its inode changes), like WatchedFileHandler.
3. Event names are namespaced nouns with past-tense verbs: `envelope.received`, `reply.written`.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import threading
from pathlib import Path
from typing import Any, TextIO

import structlog

LEVELS = ("debug", "info", "warning", "error", "critical")


class _Sink:
    """Writes whole lines to a stream and to a file that may be rotated underneath."""

    def __init__(self, stream: TextIO | None, path: Path | None) -> None:
        self.stream, self.path = stream, path
        self.lock = threading.Lock()
        self.file: TextIO | None = None
        self.inode: int | None = None

    def _reopen_if_rotated(self) -> None:
        assert self.path is not None
        try:
            inode: int | None = os.stat(self.path).st_ino
        except FileNotFoundError:
            inode = None
        if self.file is None or inode != self.inode:
            if self.file is not None:
                self.file.close()
            self.file = open(self.path, "a", encoding="utf-8")  # noqa: SIM115  # kept open
            self.inode = os.fstat(self.file.fileno()).st_ino

    def write(self, line: str) -> None:
        with self.lock:
            if self.stream is not None:
                try:
                    self.stream.write(line + "\n")
                    self.stream.flush()
                except (OSError, ValueError):
                    pass
            if self.path is not None:
                try:
                    self._reopen_if_rotated()
                    assert self.file is not None
                    self.file.write(line + "\n")
                    self.file.flush()
                except OSError:
                    pass


class _LineLogger:
    def __init__(self, sink: _Sink) -> None:
        self._sink = sink

    def msg(self, message: str) -> None:
        self._sink.write(message)

    debug = info = warning = warn = error = critical = exception = fatal = log = msg


def _safe_json(value: Any, **kw: Any) -> str:
    kw["default"] = repr
    return json.dumps(value, **kw)


def configure(*, log_file: Path | None, level: str = "info", stream: TextIO | None = sys.stderr) -> None:
    sink = _Sink(stream, log_file)
    structlog.configure(
        processors=[
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            structlog.processors.JSONRenderer(serializer=_safe_json),
        ],
        wrapper_class=structlog.make_filtering_bound_logger(getattr(logging, level.upper())),
        logger_factory=lambda *_args: _LineLogger(sink),
        cache_logger_on_first_use=False,
    )


def get() -> Any:
    return structlog.get_logger()
