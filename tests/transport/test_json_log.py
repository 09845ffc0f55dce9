"""Every log line of a real serving process is one JSON object (SPEC §9, §14; issue 24 point 3):
`slopd run --http` driven over `/mcp` by the official MCP SDK client and over `/v1`, then stopped —
every stderr line and every line of `STATE/slopd.log` parses; and `slopd mcp` on stdio, whose
stdout is the protocol and whose stderr is JSON lines too (slow: real processes and sockets)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.conftest import HubDir
from tests.transport.http_rig import bearer, markdown, served, with_tokens
from tests.transport.mcp.test_stdio_and_http import INITIALIZE, MCP_HEADERS, call, over_http

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


@pytest.fixture(name="anyio_backend")
def fixture_anyio_backend() -> str:
    return "asyncio"


def json_lines(data: str) -> list[dict[str, Any]]:
    """Every line of `data` as one JSON object with timestamp, level and event (else the test fails
    on the first line that is not, quoting it)."""
    assert data.endswith("\n"), data[-300:]
    records = []
    for line in data[:-1].split("\n"):
        try:
            record = json.loads(line)
        except ValueError:
            pytest.fail(f"a log line is not JSON: {line!r}")
        assert isinstance(record, dict), line
        assert {"timestamp", "level", "event"} <= set(record), record
        records.append(record)
    return records


def library(records: list[dict[str, Any]]) -> dict[str, list[str]]:
    """The messages of `library.logged` lines, by logger name."""
    found: dict[str, list[str]] = {}
    for record in records:
        if record["event"] == "library.logged":
            found.setdefault(record["logger"], []).append(record["message"])
    return found


async def test_slopd_run_http_with_mcp_and_v1_traffic_writes_only_json_lines(hub: HubDir) -> None:
    """The SDK client's initialize, tools/list and a tool call; a session of the 2025 protocol
    opened and closed by hand; a foreign Host; /v1 posts, reads, HEADs, a 404 and a 401: the
    daemon's stderr and its log file hold the same lines, each one JSON, the MCP SDK's among them
    with their logger's name."""
    tokens = with_tokens(hub, ("claude-code",))
    seat = bearer(tokens["claude-code"])
    with served(hub) as (daemon, url):
        async with over_http(url + "/mcp", tokens["claude-code"]) as client:
            assert len((await client.list_tools()).tools) > 10
            receipt = await call(client, "slop_send", type="query", to="watcher", body="Logged?\n")
        async with httpx2.AsyncClient(base_url=url, timeout=30) as raw:
            opened = await raw.post("/mcp", json=INITIALIZE, headers={**MCP_HEADERS, **seat})
            assert opened.status_code == 200, opened.text
            session = {
                "Mcp-Session-Id": opened.headers["mcp-session-id"],
                "Mcp-Protocol-Version": "2025-06-18",
            }
            closed = await raw.delete("/mcp", headers={**MCP_HEADERS, **seat, **session})
            assert closed.status_code == 200, closed.text
            foreign = await raw.post(
                "/mcp", json=INITIALIZE, headers={**MCP_HEADERS, **seat, "Host": "evil:1"}
            )
            assert foreign.status_code == 421
            data = markdown("20261202t120000z-logged", sender="claude-code")
            posted = await raw.post(
                "/v1/envelopes", content=data, headers={"Content-Type": "text/markdown", **seat}
            )
            assert posted.status_code == 202, posted.text
            for method in ("GET", "HEAD"):
                assert (
                    await raw.request(method, f"/v1/envelopes/{receipt['id']}", headers=seat)
                ).status_code == 200
            assert (await raw.get("/v1/nowhere", headers=seat)).status_code == 404
            assert (await raw.get("/v1/replies")).status_code == 401
    stderr = json_lines(daemon.stderr)
    logged = json_lines((hub.state / "slopd.log").read_text(encoding="utf-8"))
    assert stderr == logged[-len(stderr) :]
    sdk = library(stderr)
    assert "StreamableHTTP session manager started" in sdk["mcp.server.streamable_http_manager"]
    assert any(
        text.startswith("Created new transport with session ID")
        for text in sdk["mcp.server.streamable_http_manager"]
    )


async def test_slopd_mcp_on_stdio_writes_only_json_lines_to_stderr(hub: HubDir, tmp_path: Path) -> None:
    """A stdio session (initialize, tools/list, a send, a refused call): stdout carried the
    protocol, and every line on stderr is JSON, the SDK's line about the refused call among them."""
    argv = ["-m", "slopd", "mcp", "--hub", str(hub.root), "--seat", "claude-code", "--state", str(hub.state)]
    parameters = StdioServerParameters(command=sys.executable, args=argv, env=hub.env)
    errors = tmp_path / "mcp.stderr"
    with errors.open("w", encoding="utf-8") as errlog:
        async with Client(stdio_client(parameters, errlog=errlog)) as client:
            assert len((await client.list_tools()).tools) > 10
            await call(client, "slop_send", type="query", to="watcher", body="Over stdio.\n")
            assert (await client.call_tool("slop_status", {"id": "20261202t120000z-nobody"})).is_error
    sdk = library(json_lines(errors.read_text(encoding="utf-8")))
    assert any("slop_status" in text for texts in sdk.values() for text in texts), sdk
