"""One version, four surfaces: `slopd --version`, the package metadata, MCP's
`serverInfo.version` and the served `/openapi.json`'s `info.version` all report
`pyproject.toml`'s `version` (through `slopd.shell.version`)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
from importlib import metadata

import pytest
from starlette.testclient import TestClient

from tests import ROOT
from tests.conftest import HubDir
from tests.transport.http_rig import with_tokens
from tests.transport.mcp.rig import session
from tests.transport.test_openapi import serving


@pytest.fixture(name="anyio_backend")
def fixture_anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_the_cli_the_metadata_mcp_and_openapi_report_pyprojects_version(hub: HubDir) -> None:
    """Each surface is asked as a client would ask it; all four give the one version."""
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    cli = subprocess.run(
        [sys.executable, "-m", "slopd", "--version"], capture_output=True, text=True, timeout=60, check=True
    )
    async with session(hub) as me:
        server_info = me.client.server_info
    assert server_info is not None
    with_tokens(hub)
    with serving(hub) as (_service, asgi), TestClient(asgi) as client:
        served = json.loads(client.get("/openapi.json").content)
    reported = {
        "slopd --version": cli.stdout.removeprefix("slopd ").strip(),
        "package metadata": metadata.version("slopd"),
        "MCP serverInfo.version": server_info.version,
        "/openapi.json info.version": served["info"]["version"],
    }
    assert reported == dict.fromkeys(reported, declared)


def test_the_changelog_is_keep_a_changelog_and_starts_from_this_version() -> None:
    """Its sections are `## [Unreleased]` or `## [X.Y.Z] - DATE`, each with Keep a Changelog's
    kinds of change only, and its first section names the version pyproject.toml carries."""
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert text.startswith("# Changelog\n")
    assert "keepachangelog.com" in text
    sections = re.split(r"^## ", text, flags=re.MULTILINE)[1:]
    assert sections
    for section in sections:
        heading = section.splitlines()[0]
        assert re.fullmatch(r"\[Unreleased\]|\[\d+\.\d+\.\d+\] - \d{4}-\d{2}-\d{2}", heading), heading
        kinds = re.findall(r"^### (.+)$", section, flags=re.MULTILINE)
        assert kinds, heading
        assert set(kinds) <= {"Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"}, kinds
    assert f"**{declared}**" in sections[0] or sections[0].startswith(f"[{declared}]")
