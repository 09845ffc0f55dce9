"""`slop://replies` subscriptions over the real transports (issue 27 point 2): a real `slopd mcp`
process on stdio, and `/mcp` inside a real `slopd run --http` (uvicorn on 127.0.0.1), each with the
SDK's client — a handshake-era session (`resources/subscribe`, notifications on the connection's
standalone stream) and a 2026-07-28 one (`subscriptions/listen`); and `slop_wait` on each."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Literal

import anyio
import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from tests.conftest import HubDir
from tests.transport.http_rig import bearer, served, with_tokens
from tests.wake.rig import Heard, call, subscribe

pytestmark = [pytest.mark.anyio, pytest.mark.slow]  # real processes and sockets: the slow set
Mode = Literal["legacy", "auto"]


@pytest.fixture(name="anyio_backend")
def fixture_anyio_backend() -> str:
    return "asyncio"


@asynccontextmanager
async def over_stdio(hub: HubDir, seat: str, mode: Mode, errlog: Path) -> AsyncIterator[tuple[Client, Heard]]:
    args = ["-m", "slopd", "mcp", "--hub", str(hub.root), "--seat", seat, "--state", str(hub.state)]
    heard = Heard()
    with errlog.open("w", encoding="utf-8") as log:
        parameters = StdioServerParameters(command=sys.executable, args=args, env=hub.env)
        async with Client(stdio_client(parameters, errlog=log), message_handler=heard, mode=mode) as client:
            yield client, heard


@asynccontextmanager
async def over_http(url: str, token: str, mode: Mode) -> AsyncIterator[tuple[Client, Heard]]:
    heard = Heard()
    async with (
        httpx2.AsyncClient(headers=bearer(token), timeout=60) as http,
        Client(
            streamable_http_client(url + "/mcp", http_client=http), message_handler=heard, mode=mode
        ) as client,
    ):
        yield client, heard


async def check_legacy(client: Client, heard: Heard, other: Client, other_heard: Heard) -> None:
    """Subscribed, a reply for the seat notifies it; the other seat's session hears nothing."""
    assert client.protocol_version != "2026-07-28"
    await subscribe(client)
    await subscribe(other)
    sent = await call(client, "slop_send", type="query", to="watcher", body="Are you there?\n")
    assert await heard.count(1) == ["slop://replies"]
    await call(other, "slop_hub_info")
    assert other_heard.updated == []
    waited = await call(client, "slop_wait", ids=[sent["id"]], timeout_s=50)  # slop_wait on this transport
    assert (waited["reply"]["type"], waited["reply"]["in_reply_to"]) == ("result", sent["id"])


async def check_listen(client: Client) -> None:
    assert client.protocol_version == "2026-07-28"
    async with client.listen(resource_subscriptions=["slop://replies"]) as stream:
        await call(client, "slop_send", type="query", to="watcher", body="Listening?\n")
        with anyio.fail_after(20):
            event = await anext(aiter(stream))
    assert event.uri == "slop://replies"  # type: ignore[union-attr]


async def test_stdio_sessions_are_notified_of_their_seats_replies(hub: HubDir, tmp_path: Path) -> None:
    """`slopd mcp --hub` (its own process, beside the daemon's): woken by the filesystem."""
    with hub.running():
        async with (
            over_stdio(hub, "alice", "legacy", tmp_path / "a.log") as (alice, alice_heard),
            over_stdio(hub, "bob", "legacy", tmp_path / "b.log") as (bob, bob_heard),
        ):
            await check_legacy(alice, alice_heard, bob, bob_heard)
        async with over_stdio(hub, "alice", "auto", tmp_path / "c.log") as (modern, _heard):
            await check_listen(modern)


async def test_mcp_over_http_sessions_are_notified_of_their_tokens_seats_replies(hub: HubDir) -> None:
    """`/mcp` in `slopd run --http`: woken by the daemon's bell, each session as its token's seat."""
    tokens = with_tokens(hub, ("alice", "bob"))
    with served(hub) as (_daemon, url):
        async with (
            over_http(url, tokens["alice"], "legacy") as (alice, alice_heard),
            over_http(url, tokens["bob"], "legacy") as (bob, bob_heard),
        ):
            await check_legacy(alice, alice_heard, bob, bob_heard)
        async with over_http(url, tokens["alice"], "auto") as (modern, _heard):
            await check_listen(modern)
