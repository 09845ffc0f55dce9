"""Whatever else logs in the process, as slopd's JSON lines (SPEC §9, §14): no plain text on stderr.

Rules:
1. `routed(level)` makes slopd's renderer the only handler of the stdlib `logging` root: the
   handlers it had (the MCP SDK's Rich console, any `basicConfig`) are set aside, and a record of
   any logger that propagates (uvicorn, the MCP SDK, watchdog, asyncio, httpx) becomes one line
   `library.logged` with the record's `logger` name, its `level` (slopd's level at or below the
   record's), its `message` and, when it carries one, its `exception` traceback.
2. The root's level is slopd's, so a record below it is not even made; a logger a library set
   to its own level (uvicorn's, at warning) keeps it.
3. A `warnings` warning is a line `warning.issued` (category, message, file, line); a thread's
   uncaught exception is `thread.crashed`, an exception Python can only report
   (`sys.unraisablehook`) `exception.unraisable`, each with its traceback. An exception that
   leaves the block is the command's to answer (exit 2 and a message naming it, SPEC §8).
4. A record that cannot be rendered (a message whose arguments do not fit its format) is still
   a line, with the raw format and arguments: never logging's own plain-text "Logging error".
5. Only processes whose stderr is a log route (`slopd run`, `slopd mcp`), for the life of the
   command; leaving the block puts back the handlers, level and hooks it found.
"""

from __future__ import annotations

import contextlib
import logging
import sys
import threading
import traceback
import warnings
from collections.abc import Iterator
from types import TracebackType
from typing import Any, TextIO

from slopd.shell import log

_LEVELS = ((logging.CRITICAL, "critical"), (logging.ERROR, "error"), (logging.WARNING, "warning"))
_NUMBERS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING}
_NUMBERS |= {"error": logging.ERROR, "critical": logging.CRITICAL}


def level_of(number: int) -> str:
    """Rule 1: slopd's level at or below a stdlib level number (a custom 25 is `info`)."""
    for floor, name in _LEVELS:
        if number >= floor:
            return name
    return "info" if number >= logging.INFO else "debug"


def _trace(kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None) -> str:
    return "".join(traceback.format_exception(kind, value, tb)).rstrip("\n")


class JsonHandler(logging.Handler):
    """Rules 1 and 4: one `library.logged` line per record, through slopd's current sink."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            message = record.getMessage()
        except Exception:  # rule 4: a bad format is the library's bug; the line still says what it was
            message = f"{record.msg!r} % {record.args!r}"
        values: dict[str, Any] = {"logger": record.name, "message": message}
        if record.exc_info and record.exc_info[0] is not None:
            values["exception"] = _trace(*record.exc_info)
        if record.stack_info:
            values["stack"] = record.stack_info
        logger = log.get()
        getattr(logger, level_of(record.levelno))("library.logged", **values)


def _show_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: TextIO | None = None,
    line: str | None = None,
) -> None:
    """Rule 3, as `warnings.showwarning`."""
    log.get().warning(
        "warning.issued", category=category.__name__, message=str(message), file=filename, line=lineno
    )


def _thread_crashed(args: threading.ExceptHookArgs) -> None:
    if args.exc_type is SystemExit:  # as the default hook: a thread may end itself so
        return
    name = args.thread.name if args.thread is not None else None
    log.get().error(
        "thread.crashed", thread=name, exception=_trace(args.exc_type, args.exc_value, args.exc_traceback)
    )


def _unraisable(args: Any) -> None:  # sys.UnraisableHookArgs, which typeshed does not export
    log.get().error(
        "exception.unraisable",
        message=args.err_msg or "Exception ignored in",
        object=repr(args.object),
        exception=_trace(args.exc_type, args.exc_value, args.exc_traceback),
    )


@contextlib.contextmanager
def routed(level: str = "info") -> Iterator[JsonHandler]:
    """Rules 1-3 and 5, for the block: the root's handler, its level, and the process's hooks."""
    root = logging.getLogger()
    kept_handlers, kept_level = root.handlers[:], root.level
    kept = (warnings.showwarning, threading.excepthook, sys.unraisablehook)
    handler = JsonHandler()
    for old in kept_handlers:
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(_NUMBERS[level])
    warnings.showwarning = _show_warning
    threading.excepthook = _thread_crashed
    sys.unraisablehook = _unraisable
    try:
        yield handler
    finally:
        warnings.showwarning, threading.excepthook, sys.unraisablehook = kept
        root.removeHandler(handler)
        for old in kept_handlers:
            root.addHandler(old)
        root.setLevel(kept_level)
