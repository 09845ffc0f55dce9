"""What the MCP tests share: a seat's server in-process, and a session on it that checks every answer.

- `session(hub, seat)` builds the SPEC §13 server for one seat of `hub` (the same `Seat` that
  `slopd mcp` builds) and yields a `Session`: an SDK `Client` connected in-process.
- `Session.call(tool, **arguments)` asserts the call succeeded, that its structured result has an
  int `pending`, and that `authorized/` is still empty; `Session.refused(...)` asserts a tool
  error (and still nothing in `authorized/`) and returns its text.
- `inbox(hub)` and `authorized(hub)` are what those lanes hold, by relative path.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from mcp import Client
from mcp.types import CallToolResult, TextContent, TextResourceContents

from slopd.shell.config import Config
from slopd.shell.lanes import Hub
from slopd.transport.mcp.seat import Seat
from slopd.transport.mcp.server import build
from tests.conftest import HubDir

TOOLS = {
    "slop_hub_info",
    "slop_send",
    "slop_status",
    "slop_replies",
    "slop_read",
    "slop_wait",
    "slop_ack",
    "slop_notes",
    "slop_request_approval",
    "handoff_lint",
    "standup_read",
    "standup_append",
    "baton_boot",
    "baton_lease",
    "baton_pack",
    "baton_score",
}


def lane(hub: HubDir, name: str) -> dict[str, bytes]:
    """Every file under `hub.root/name`, recursively, dot files too, by relative path."""
    root = hub.root / name
    return {str(path.relative_to(root)): path.read_bytes() for path in root.rglob("*") if path.is_file()}


def inbox(hub: HubDir) -> dict[str, bytes]:
    return lane(hub, "inbox")


def authorized(hub: HubDir) -> list[str]:
    """Everything under `authorized/`: files, links and folders alike."""
    return sorted(str(path.relative_to(hub.root)) for path in (hub.root / "authorized").rglob("*"))


def text_of(result: CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, TextContent))


@dataclass
class Session:
    client: Client
    seat: Seat
    hub: HubDir

    async def result(self, tool: str, **arguments: Any) -> CallToolResult:
        result = await self.client.call_tool(tool, arguments)
        assert authorized(self.hub) == [], f"{tool} left something in authorized/"
        return result

    async def call(self, tool: str, **arguments: Any) -> dict[str, Any]:
        result = await self.result(tool, **arguments)
        assert not result.is_error, f"{tool}({arguments}) failed: {text_of(result)}"
        found = result.structured_content
        assert isinstance(found, dict), result
        assert type(found.get("pending")) is int, found
        return found

    async def refused(self, tool: str, **arguments: Any) -> str:
        result = await self.result(tool, **arguments)
        assert result.is_error, f"{tool}({arguments}) was not refused: {result.structured_content}"
        return text_of(result)

    async def resource(self, uri: str) -> str:
        read = await self.client.read_resource(uri)
        assert authorized(self.hub) == []
        (only,) = read.contents
        assert isinstance(only, TextResourceContents), only
        return only.text


@contextlib.asynccontextmanager
async def session(
    hub: HubDir, seat: str = "claude-code", config: Config | None = None
) -> AsyncIterator[Session]:
    """The MCP server of one seat of `hub`, on its state dir, with an SDK client in-process."""
    opened = Hub(hub.root)
    desk = Seat(opened, hub.state, seat, config or Config(names=("watcher",)))
    try:
        async with Client(build(lambda _context: desk, desk.guide), raise_exceptions=True) as client:
            yield Session(client, desk, hub)
    finally:
        desk.close()
        opened.close()
