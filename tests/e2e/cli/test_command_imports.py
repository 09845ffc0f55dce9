"""The per-message commands import only what they use (issue 11): an agent pays every import
on every call, so `send`, `validate` and `status` must not load the daemon's machinery.

Each command runs as a real process under `python -X importtime`, which lists every module
the interpreter imported; the test reads that list.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import re
import subprocess
import sys
from pathlib import Path

from slopd import cli
from slopd.cli import parser as parser_module
from tests.conftest import HubDir, envelope_text

SERVERS = {"starlette", "uvicorn", "mcp", "anyio", "socket", "asyncio"}
DAEMON = {"watchdog", "subprocess", "threading", "shutil", "cryptography", "structlog"}


def imported(hub: HubDir, *argv: str, stdin: str | None = None) -> set[str]:
    """Every top-level package the command `slopd ARGV` imported (its exit status checked)."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "slopd", *argv],
        input=stdin,
        capture_output=True,
        text=True,
        env=hub.env,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    names = re.findall(r"^import time:\s+\d+ \|\s+\d+ \|\s+(\S+)$", done.stderr, flags=re.MULTILINE)
    assert "slopd.cli" in names, "the importtime listing was not read"
    return {name.split(".")[0] for name in names} | set(names)


def test_send_loads_no_database_server_watcher_or_hashing(hub: HubDir) -> None:
    modules = imported(
        hub,
        "send",
        "--hub",
        str(hub.root),
        "--type",
        "note",
        "--from",
        "a",
        "--to",
        "watcher",
        "-",
        stdin="Hi.\n",
    )
    assert "yaml" in modules, "it checks its envelope with the strict parser"
    assert not modules & (SERVERS | DAEMON | {"sqlite3", "hashlib", "_hashlib"})


def test_validate_loads_no_database_server_or_watcher(hub: HubDir) -> None:
    path = hub.root.parent / "one.md"
    path.write_text(envelope_text(), encoding="utf-8")
    modules = imported(hub, "validate", str(path))
    assert not modules & (SERVERS | DAEMON | {"sqlite3"})


def test_status_loads_no_yaml_server_or_watcher(hub: HubDir) -> None:
    hub.drop("one.md", envelope_text())
    hub.run_once()
    modules = imported(hub, "status", "--hub", str(hub.root), "--state", str(hub.state))
    assert "sqlite3" in modules, "it reads the ledger"
    assert not modules & (SERVERS | (DAEMON - {"threading"}) | {"yaml"})


def handlers() -> set[str]:
    """Every `module:function` the parser names, walking its whole tree."""
    found: set[str] = set()
    stack = [parser_module.build()]
    while stack:
        parser = stack.pop()
        if "handler" in parser._defaults:
            found.add(parser._defaults["handler"])
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                stack += list(action.choices.values())
    return found


def test_every_command_module_is_imported_where_import_linter_sees_it() -> None:
    """The handlers are named as strings (imported when run, to keep these commands lean); the
    modules they name are exactly those `slopd/cli/__init__.py` imports under `TYPE_CHECKING`, so
    import-linter's layers contract sees the edges, and each names a function that exists."""
    tree = ast.parse((Path(cli.__file__)).read_text(encoding="utf-8"))
    listed = {
        f"slopd.cli.{alias.name}"
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"
        for inner in node.body
        if isinstance(inner, ast.ImportFrom) and inner.module == "slopd.cli"
        for alias in inner.names
    }
    named = handlers()
    assert {spec.partition(":")[0] for spec in named} == listed
    for spec in named:
        module, _, function = spec.partition(":")
        assert callable(getattr(importlib.import_module(module), function)), spec
