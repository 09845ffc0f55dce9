"""The MCP server's resources (SPEC §13): HUB.md, one reply whole, this seat's feed, a standup.

Rules:
1. A resource that cannot be read (a `Problem`, or no standup yet) is the SDK's resource-not-found
   error, saying why.
2. Each is read as the request's seat, from the same `SeatSource` as the tools; `slop://replies`
   is that seat's feed, and subscribing to it is `mcp.news`'s.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ResourceNotFoundError

from slopd.transport.mcp import news as news_module
from slopd.transport.mcp import protocols
from slopd.transport.mcp.calling import SeatSource
from slopd.transport.problems import Problem


def install(server: MCPServer, seats: SeatSource, guide: Callable[[], str]) -> None:
    """The resources on `server`, each read as the seat `seats` gives for the request."""

    @server.resource("slop://hub/HUB.md", mime_type="text/markdown")
    def hub_md() -> str:
        """The hub's HUB.md: its rules for agents."""
        return guide()

    @server.resource("slop://reply/{id}", mime_type="text/markdown")
    def reply(id: str, ctx: Context) -> str:
        """A reply to this seat, whole."""
        seat = seats(ctx)
        try:
            return str(seat.read(id, 0, 1 << 30)["text"])
        except Problem as problem:
            raise ResourceNotFoundError(problem.detail) from None

    @server.resource(news_module.RESOURCE + "{?limit}", mime_type="application/json")
    def feed(ctx: Context, limit: int = 20) -> str:
        """This seat's newest replies (at most `limit`, oldest first), its cursor and what it has not
        acked. Subscribe to it to hear of each new reply."""
        return json.dumps(seats(ctx).recent(limit))

    @server.resource("slop://standup/{project}", mime_type="text/markdown")
    def standup(project: str, ctx: Context) -> str:
        """A project's Standing Standup file."""
        try:
            found = protocols.standup_text(seats(ctx), project)
        except Problem as problem:
            raise ResourceNotFoundError(problem.detail) from None
        if found is None:
            raise ResourceNotFoundError(f"no standup for {project} yet")
        return found
