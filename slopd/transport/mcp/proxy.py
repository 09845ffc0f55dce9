"""`slopd mcp --url URL`: the daemon's `/mcp` tools, served on stdio (SPEC §13).

An agent whose host speaks only stdio (or drops configured HTTP headers — a known bug of some
clients) runs `slopd mcp --url` locally with `SLOPD_TOKEN` in its environment; this process
forwards every tool call and resource read to the daemon's `/mcp`, with the token in the
`Authorization` header. The tools are the daemon's, so they are exactly those of `--hub`.

Rules:
1. Tools, resources and their templates are listed, called and read at `URL/mcp`, unchanged.
2. The token travels only in the header, never in a tool argument or a log line.
3. A call the daemon cannot answer (it stopped, the network failed) is a tool error naming the
   failure; the stdio session stays up, and the next call connects afresh.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.types import (
    CallToolRequestParams,
    CallToolResult,
    ListResourcesResult,
    ListResourceTemplatesResult,
    ListToolsResult,
    PaginatedRequestParams,
    ReadResourceRequestParams,
    ReadResourceResult,
    TextContent,
)

_TIMEOUT = httpx2.Timeout(30.0, read=90.0)  # a waiting tool holds its request up to 50 s


class Remote:
    """Rules 1 and 3: one short session to the daemon per request, opened and closed in the
    request's own task (the SDK's sessions live in task-bound scopes), so a failed call
    leaves nothing to repair and the next one reconnects."""

    def __init__(self, url: str, token: str) -> None:
        self.endpoint = url.rstrip("/") + "/mcp"
        self.token = token

    @contextlib.asynccontextmanager
    async def session(self) -> AsyncIterator[Client]:
        headers = {"Authorization": f"Bearer {self.token}"}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=_TIMEOUT) as http,
            Client(streamable_http_client(self.endpoint, http_client=http)) as client,
        ):
            yield client


def build(remote: Remote) -> Server[Any]:
    async def list_tools(_ctx: Any, _params: PaginatedRequestParams | None) -> ListToolsResult:
        async with remote.session() as client:
            return await client.list_tools()

    async def call_tool(_ctx: Any, params: CallToolRequestParams) -> CallToolResult:
        try:
            async with remote.session() as client:
                return await client.call_tool(params.name, params.arguments or {})
        except Exception as error:  # rule 3: the model reads it, the session lives
            text = f"the daemon at {remote.endpoint} did not answer: {type(error).__name__}: {error}"
            return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)

    async def list_resources(_ctx: Any, _params: PaginatedRequestParams | None) -> ListResourcesResult:
        async with remote.session() as client:
            return await client.list_resources()

    async def list_templates(
        _ctx: Any, _params: PaginatedRequestParams | None
    ) -> ListResourceTemplatesResult:
        async with remote.session() as client:
            return await client.list_resource_templates()

    async def read_resource(_ctx: Any, params: ReadResourceRequestParams) -> ReadResourceResult:
        async with remote.session() as client:
            return await client.read_resource(str(params.uri))

    return Server(
        "slopd",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_list_resource_templates=list_templates,
        on_read_resource=read_resource,
    )


async def serve(url: str, token: str) -> None:
    server = build(Remote(url, token))
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())
