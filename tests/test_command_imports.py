"""The per-message commands import only what they use (issue 11): an agent pays every import
on every call, so `send`, `validate` and `status` must not load the daemon's machinery.

Each command runs as a real process under `python -X importtime`, which lists every module
the interpreter imported; the test reads that list.
"""

from __future__ import annotations

import re
import subprocess
import sys

from .conftest import HubDir, envelope_text

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
