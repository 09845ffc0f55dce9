"""What the wake-up tests share: MCP sessions that record the notifications they hear, in-process on a
seat's server (wired as `slopd mcp` wires it: the seat's filesystem watch rings `mcp.news`), and the
raw `resources/subscribe` request a handshake-era client (Claude Code, Cursor, Codex) sends."""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Literal

from mcp import Client, types
from mcp.client.session import IncomingMessage

from slopd.shell.config import Config
from slopd.shell.lanes import Hub
from slopd.transport.mcp import news
from slopd.transport.mcp.seat import Seat
from slopd.transport.mcp.server import build
from tests.conftest import HubDir
from tests.polling import until_async
from tests.transport.mcp.rig import text_of


@dataclass
class Heard:
    """The `notifications/resources/updated` a client's `message_handler` received, with when."""

    updated: list[tuple[str, float]] = field(default_factory=list)
    errors: list[Exception] = field(default_factory=list)

    async def __call__(self, message: IncomingMessage) -> None:
        if isinstance(message, Exception):
            self.errors.append(message)
        elif isinstance(message, types.ResourceUpdatedNotification):
            self.updated.append((str(message.params.uri), time.monotonic()))

    async def count(self, expected: int, timeout: float = 20.0) -> list[str]:
        """The URIs once `expected` notifications arrived; fails after `timeout`."""
        await until_async(lambda: len(self.updated) >= expected, timeout, interval=0.01)
        return [uri for uri, _at in self.updated]


async def subscribe(client: Client, uri: str = news.RESOURCE, *, verb: str = "subscribe") -> None:
    """`resources/subscribe` (or `unsubscribe`), sent as a handshake-era client sends it."""
    if verb == "subscribe":
        request: Any = types.SubscribeRequest(params=types.SubscribeRequestParams(uri=uri))
    else:
        request = types.UnsubscribeRequest(params=types.UnsubscribeRequestParams(uri=uri))
    await client.session.send_request(request, types.EmptyResult)


async def call(client: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, text_of(result)
    assert isinstance(result.structured_content, dict), result
    return result.structured_content


@contextlib.asynccontextmanager
async def seat_session(
    hub: HubDir, seat: str, mode: Literal["legacy", "auto"] = "legacy"
) -> AsyncIterator[tuple[Client, Heard, Seat]]:
    """One seat's server in-process, subscriptions wired to the seat's filesystem watch."""
    opened = Hub(hub.root)
    desk = Seat(opened, hub.state, seat, Config(names=("watcher",)))
    heard = Heard()
    try:
        server = build(lambda _context: desk, desk.guide, news.watching(desk))
        async with Client(server, message_handler=heard, mode=mode) as client:
            yield client, heard, desk
    finally:
        desk.close()
        opened.close()
