"""Whatever logs in a serving process is one JSON line (SPEC §9, §14; issue 24 point 3): records
of the stdlib `logging` tree, `warnings`, a thread's crash — in a Python process of their own,
since routing changes process-wide hooks. (`tests/transport/test_json_log.py`, slow, runs the
real `slopd run --http` and `slopd mcp`.)"""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import textwrap
from typing import Any

import pytest

from slopd.shell.stdlog import level_of

LIBRARIES = textwrap.dedent(
    """
    import logging, threading, warnings
    from slopd.shell import log, stdlog
    from slopd.transport.mcp import server

    log.configure(log_file=None, level=LEVEL)
    with stdlog.routed(LEVEL):
        server.build(lambda _context: None, lambda: "")  # the SDK's basicConfig with a Rich console
        logging.getLogger("mcp.server.streamable_http_manager").info("Created new transport %s", "abc")
        logging.getLogger("uvicorn.error").warning("Invalid HTTP request received.")
        logging.getLogger("watchdog.observers").debug("a debug line")
        logging.getLogger("custom").log(25, "between info and warning")
        logging.getLogger("bad.format").error("%d widgets", "many")
        try:
            {}["missing"]
        except KeyError:
            logging.getLogger("asyncio").exception("Task exception was never retrieved")
        warnings.warn("an old way", DeprecationWarning, stacklevel=1)
        thread = threading.Thread(target=lambda: 1 / 0, name="worker")
        thread.start()
        thread.join()
    root = logging.getLogger()
    print(root.level, [type(handler).__name__ for handler in root.handlers])
    """
)


def run_routed(level: str) -> tuple[list[dict[str, Any]], str]:
    """The script above in a fresh Python, routed at `level`: its stderr lines, parsed, and stdout."""
    script = LIBRARIES.replace("LEVEL", repr(level))
    done = subprocess.run(
        [sys.executable, "-W", "always::DeprecationWarning", "-c", script],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    parsed = []
    for line in lines:
        record = json.loads(line)  # a plain-text line fails here
        assert isinstance(record, dict), line
        assert {"timestamp", "level", "event"} <= set(record), record
        parsed.append(record)
    assert done.stderr.endswith("\n")
    return parsed, done.stdout


def test_every_record_warning_and_thread_crash_is_one_json_line_with_its_logger_and_level() -> None:
    """Library records keep their logger's name, message and level (a traceback when they carry
    one); a malformed record, a warning and a thread's crash are JSON lines too; the MCP SDK's
    `basicConfig` installs no console of its own; leaving the block restores the root logger."""
    records, stdout = run_routed("debug")
    logged = {record["logger"]: record for record in records if record["event"] == "library.logged"}
    assert logged["mcp.server.streamable_http_manager"]["message"] == "Created new transport abc"
    assert logged["mcp.server.streamable_http_manager"]["level"] == "info"
    assert logged["uvicorn.error"]["level"] == "warning"
    assert logged["watchdog.observers"]["level"] == "debug"
    assert logged["custom"]["level"] == "info"
    assert logged["bad.format"]["level"] == "error"
    assert logged["bad.format"]["message"] == "'%d widgets' % ('many',)"
    assert logged["asyncio"]["message"] == "Task exception was never retrieved"
    assert logged["asyncio"]["exception"].endswith("KeyError: 'missing'")
    (warned,) = [record for record in records if record["event"] == "warning.issued"]
    assert (warned["category"], warned["message"], warned["level"]) == (
        "DeprecationWarning",
        "an old way",
        "warning",
    )
    assert warned["file"] == "<string>"
    (crashed,) = [record for record in records if record["event"] == "thread.crashed"]
    assert (crashed["thread"], crashed["level"]) == ("worker", "error")
    assert crashed["exception"].endswith("ZeroDivisionError: division by zero")
    assert stdout == f"{logging.WARNING} []\n"  # the root as Python starts it: nothing left behind


def test_records_below_slopds_level_are_not_written() -> None:
    """Routed at `warning`, the library's info and debug records make no line; its warnings do."""
    records, _stdout = run_routed("warning")
    loggers = {record.get("logger") for record in records if record["event"] == "library.logged"}
    assert loggers == {"uvicorn.error", "bad.format", "asyncio"}


@pytest.mark.parametrize(
    ("number", "level"),
    [
        (logging.NOTSET, "debug"),
        (5, "debug"),
        (logging.DEBUG, "debug"),
        (logging.INFO, "info"),
        (25, "info"),
        (logging.WARNING, "warning"),
        (logging.ERROR, "error"),
        (logging.CRITICAL, "critical"),
        (60, "critical"),
    ],
)
def test_a_stdlib_level_maps_to_slopds_level_at_or_below_it(number: int, level: str) -> None:
    """A stdlib level number maps to slopd's level at or below it (custom levels included)."""
    assert level_of(number) == level
