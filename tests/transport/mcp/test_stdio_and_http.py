"""The MCP server over its real transports (issue 17 points 1 and 4): one `slopd mcp` session on
stdio through the SDK's stdio client, and `/mcp` inside a real `slopd run --http` on 127.0.0.1
through the SDK's Streamable HTTP client — the token's seat, both paths without a redirect, 401
without a valid token, 421 for a foreign Host, and a wait that ends when the daemon answers."""

from __future__ import annotations

import contextlib
import functools
import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from tests.conftest import HubDir, front_matter
from tests.polling import until_async
from tests.transport.http_rig import bearer, served, with_tokens
from tests.transport.mcp.rig import TOOLS, authorized, inbox, text_of

pytestmark = [pytest.mark.anyio, pytest.mark.slow]  # real processes and sockets: the slow set

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"},
    },
}
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@pytest.fixture(name="anyio_backend")
def fixture_anyio_backend() -> str:
    return "asyncio"


async def call(client: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, text_of(result)
    assert isinstance(result.structured_content, dict), result
    assert type(result.structured_content["pending"]) is int
    return result.structured_content


@contextlib.asynccontextmanager
async def over_http(url: str, token: str) -> AsyncIterator[Client]:
    async with (
        httpx2.AsyncClient(headers=bearer(token)) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        yield client


def sent_file(hub: HubDir, ident: str) -> bytes | None:
    """The envelope `ident` as dropped: still in inbox/, or archived by the daemon."""
    for path in [hub.root / "inbox" / f"{ident}.md", *hub.root.glob(f"archive/*/{ident}.md")]:
        if path.is_file():
            return path.read_bytes()
    return None


async def test_a_real_stdio_session_lists_the_tools_and_sends_as_its_seat(
    hub: HubDir, tmp_path: Path
) -> None:
    command = [
        "-m",
        "slopd",
        "mcp",
        "--hub",
        str(hub.root),
        "--seat",
        "claude-code",
        "--state",
        str(hub.state),
    ]
    parameters = StdioServerParameters(command=sys.executable, args=command, env=hub.env)
    with (tmp_path / "mcp.stderr").open("w", encoding="utf-8") as errlog:
        async with Client(stdio_client(parameters, errlog=errlog)) as client:
            assert {tool.name for tool in (await client.list_tools()).tools} == TOOLS
            info = await call(client, "slop_hub_info")
            assert (info["seat"], info["daemon"]["running"]) == ("claude-code", False)
            receipt = await call(client, "slop_send", type="query", to="watcher", body="Over stdio.\n")
            assert receipt["seat"] == "claude-code"
            status = await call(client, "slop_status", id=receipt["id"])
            assert (status["state"], status["terminal"]) == ("received", False)
            refused = await client.call_tool("slop_send", {"type": "query", "to": "bad to!", "body": "x"})
            assert refused.is_error
            assert "to:" in text_of(refused)
    assert list(inbox(hub)) == [f"{receipt['id']}.md"]
    data = inbox(hub)[f"{receipt['id']}.md"]
    headers = front_matter(data.decode())
    assert (headers["id"], headers["from"], headers["type"], headers["to"]) == (
        receipt["id"],
        "claude-code",
        "query",
        "watcher",
    )
    assert data.endswith(b"\n---\nOver stdio.\n")
    assert authorized(hub) == []


def test_slopd_mcp_refuses_a_seat_that_is_not_a_from(hub: HubDir) -> None:
    done = hub.slopd("mcp", "--hub", str(hub.root), "--seat", "not a seat!", stdin="")
    assert done.returncode == 2
    assert "--seat" in done.stderr


async def test_a_real_mcp_session_over_http_acts_as_the_tokens_seat_on_both_paths(hub: HubDir) -> None:
    tokens = with_tokens(hub, ("claude-code", "bob"))
    with served(hub) as (daemon, url):
        sent: dict[str, str] = {}
        for path in ("/mcp", "/mcp/"):
            async with over_http(url + path, tokens["claude-code"]) as client:
                info = await call(client, "slop_hub_info")
                assert info["seat"] == "claude-code"
                assert info["daemon"] == {"running": True, "pid": daemon.pid, "state": str(hub.state)}
                assert info["daemon_note"] is None
                receipt = await call(client, "slop_send", type="query", to="watcher", body=f"Via {path}.\n")
                assert receipt["seat"] == "claude-code"
                status = await call(client, "slop_status", id=receipt["id"], wait_s=40)
                assert status["terminal"] is True, status
                assert [reply["type"] for reply in status["replies"]] == ["result"]
                sent[path] = receipt["id"]
        for path, ident in sent.items():
            data = await until_async(functools.partial(sent_file, hub, ident))
            assert front_matter(data.decode())["from"] == "claude-code", path

        async with over_http(url + "/mcp", tokens["bob"]) as bob:
            assert (await call(bob, "slop_hub_info"))["seat"] == "bob"
            theirs = await call(bob, "slop_send", type="note", to="watcher", body="# Bob was here\n")
            assert theirs["seat"] == "bob"
            feed = await call(bob, "slop_replies", wait_s=20)
            assert [reply["in_reply_to"] for reply in feed["replies"]] == [theirs["id"]]  # only bob's own
            refused = await bob.call_tool("slop_status", {"id": sent["/mcp"]})
            assert refused.is_error  # claude-code's envelope is not bob's to see
        data = await until_async(functools.partial(sent_file, hub, theirs["id"]))
        assert front_matter(data.decode())["from"] == "bob"
    assert authorized(hub) == []


async def test_slopd_mcp_url_serves_the_daemons_tools_on_stdio_as_the_tokens_seat(
    hub: HubDir, tmp_path: Path
) -> None:
    """`slopd mcp --url URL` (issue 17 point 1): the token only in SLOPD_TOKEN, the seat the token's."""
    tokens = with_tokens(hub, ("claude-code", "bob"))
    with served(hub) as (_daemon, url):
        refused = hub.slopd("mcp", "--url", url, "--seat", "claude-code", stdin="")
        assert refused.returncode == 2
        assert "--seat" in refused.stderr
        env = {**hub.env, "SLOPD_TOKEN": tokens["bob"]}
        parameters = StdioServerParameters(
            command=sys.executable, args=["-m", "slopd", "mcp", "--url", url], env=env
        )
        with (tmp_path / "mcp.stderr").open("w", encoding="utf-8") as errlog:
            async with Client(stdio_client(parameters, errlog=errlog)) as client:
                listed = (await client.list_tools()).tools
                assert {tool.name for tool in listed} == TOOLS
                for tool in listed:
                    assert tokens["bob"] not in json.dumps(tool.input_schema)
                assert (await call(client, "slop_hub_info"))["seat"] == "bob"
                receipt = await call(client, "slop_send", type="query", to="watcher", body="Via the proxy.\n")
                status = await call(client, "slop_status", id=receipt["id"], wait_s=40)
                assert status["terminal"] is True
        data = await until_async(functools.partial(sent_file, hub, receipt["id"]))
        assert front_matter(data.decode())["from"] == "bob"
    assert tokens["bob"] not in (tmp_path / "mcp.stderr").read_text(encoding="utf-8")


async def test_mcp_over_http_answers_without_redirect_and_refuses_bad_tokens_and_foreign_hosts(
    hub: HubDir,
) -> None:
    tokens = with_tokens(hub, ("claude-code",))
    good = {**MCP_HEADERS, **bearer(tokens["claude-code"])}
    with served(hub) as (_daemon, url):
        async with httpx2.AsyncClient(follow_redirects=False, timeout=30) as raw:
            for path in ("/mcp", "/mcp/"):
                answered = await raw.post(url + path, json=INITIALIZE, headers=good)
                assert answered.status_code not in (301, 302, 303, 307, 308), (path, answered.headers)
                assert answered.status_code == 200, (path, answered.status_code, answered.text)
                assert '"result"' in answered.text

                for headers in (MCP_HEADERS, {**MCP_HEADERS, **bearer("not-a-token")}):
                    refused = await raw.post(url + path, json=INITIALIZE, headers=headers)
                    assert refused.status_code == 401, (path, refused.status_code, refused.text)
                    assert refused.headers["www-authenticate"] == 'Bearer realm="slopd"'
                    assert tokens["claude-code"] not in refused.text

            foreign = await raw.post(
                url + "/mcp", json=INITIALIZE, headers={**good, "Host": "evil.example:80"}
            )
            assert foreign.status_code == 421, (foreign.status_code, foreign.text)
            wrong_seat = await raw.post(
                url + "/mcp",
                json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
                headers={**MCP_HEADERS, **bearer("not-a-token"), "Host": "evil.example:80"},
            )
            assert wrong_seat.status_code == 401  # the token is checked first
    assert inbox(hub) == {}
