"""`slopd mcp --hub` started by an MCP host with another environment (SPEC §14, issue 24 point 5):
a real stdio server through the SDK's client finds the daemon run with `--state X` through the
hub — `slop_hub_info` says it runs, `slop_status` reaches `done` with its reply — and, with no
daemon, every answer, a refusal too, says `daemon: not found — replies will not be tracked`."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.conftest import HubDir, hub_env
from tests.transport.mcp.rig import text_of

pytestmark = [pytest.mark.anyio, pytest.mark.slow]  # real processes: the slow set

NOTE = "daemon: not found — replies will not be tracked"


@pytest.fixture(name="anyio_backend")
def fixture_anyio_backend() -> str:
    return "asyncio"


@contextlib.asynccontextmanager
async def host_session(hub: HubDir, elsewhere: Path) -> AsyncIterator[Client]:
    """`slopd mcp --hub HUB --seat claude-code`, no --state, in an environment of its own."""
    parameters = StdioServerParameters(
        command=sys.executable,
        args=["-m", "slopd", "mcp", "--hub", str(hub.root), "--seat", "claude-code"],
        env=hub_env(elsewhere),
    )
    with (elsewhere / "mcp.stderr").open("a", encoding="utf-8") as errlog:
        async with Client(stdio_client(parameters, errlog=errlog)) as client:
            yield client


async def call(client: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, text_of(result)
    assert isinstance(result.structured_content, dict), result
    return result.structured_content


async def test_a_host_with_another_environment_tracks_the_daemon_run_with_state(
    hub: HubDir, tmp_path: Path
) -> None:
    """The daemon runs with --state X; the MCP server, with another XDG_STATE_HOME, uses X."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    with hub.running() as daemon:
        async with host_session(hub, elsewhere) as client:
            info = await call(client, "slop_hub_info")
            assert info["daemon"] == {"running": True, "pid": daemon.pid, "state": str(hub.state)}
            assert info["daemon_note"] is None
            receipt = await call(client, "slop_send", type="query", to="watcher", body="Found you?\n")
            status = await call(client, "slop_status", id=receipt["id"], wait_s=30)
            assert (status["state"], status["terminal"]) == ("done", True), status
            assert [reply["type"] for reply in status["replies"]] == ["result"]
            assert status["daemon_note"] is None
    assert not (elsewhere / "xdg-state").exists()  # no second ledger in the host's environment


async def test_without_a_daemon_every_answer_says_replies_will_not_be_tracked(
    hub: HubDir, tmp_path: Path
) -> None:
    """No daemon (its presence says it stopped): each tool's result, and a refusal, carry the note."""
    with hub.running():
        pass  # a presence that names hub.state, marked stopped
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    async with host_session(hub, elsewhere) as client:
        info = await call(client, "slop_hub_info")
        assert info["daemon"]["running"] is False
        receipt = await call(client, "slop_send", type="query", to="watcher", body="Anyone?\n")
        answers = [
            info,
            receipt,
            await call(client, "slop_status", id=receipt["id"]),
            await call(client, "slop_replies"),
            await call(client, "slop_notes"),
            await call(client, "handoff_lint", text="not a log\n"),
        ]
        assert [answer["daemon_note"] for answer in answers] == [NOTE] * len(answers)
        refused = await client.call_tool("slop_read", {"id": "no-such-id"})
        assert refused.is_error
        assert NOTE in text_of(refused)
