"""The MCP reference: every tool with its arguments and its result, from the server's own schemas.

The server is built as `slopd mcp` builds it (`slopd.transport.mcp.server.build`) and asked for
its tools and resources, as a client would list them; no seat is needed to list.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import anyio
from mcp.server import MCPServer

from docgen.markdown import anchor, cell, code, first_sentence, table
from docgen.schema import kind
from slopd.transport.mcp.server import build


def _server() -> MCPServer:
    def no_seat(_context: object) -> Any:
        raise AssertionError("listing tools needs no seat")

    return build(no_seat, lambda: "")


@cache
def _tools() -> list[Any]:
    """The server's tools as a client lists them: listed once for every part made from them."""
    return list(anyio.run(_server().list_tools))


def _required(tool: Any) -> set[str]:
    return set(tool.input_schema.get("required", []))


def _does(tool: Any) -> str:
    """The first sentence of the tool's description, ending with one full stop."""
    return first_sentence(tool.description or "").rstrip(".") + "."


def _optional(name: str, schema: dict[str, Any], required: set[str]) -> str:
    return "" if name in required else f"? = `{json.dumps(schema.get('default'))}`"


def tools_table() -> str:
    """One row per tool: its arguments (`?` optional, with its default), what it does; each tool
    links to its section of the page the table is on."""
    rows = []
    for tool in _tools():
        required = _required(tool)
        arguments = [
            f"`{name}`{_optional(name, prop, required)}: {kind(prop)}"
            for name, prop in tool.input_schema.get("properties", {}).items()
        ]
        rows.append((f"[`{tool.name}`](#{anchor(tool.name)})", "<br>".join(arguments) or "—", _does(tool)))
    return table(("tool", "arguments", "does"), rows)


def signatures() -> str:
    """One line per tool for the README: the call with every argument (`?`: optional), what it
    does, a link to its section of the reference."""
    lines = []
    for tool in _tools():
        required = _required(tool)
        names = tool.input_schema.get("properties", {})
        arguments = ", ".join(name + ("" if name in required else "?") for name in names)
        link = f"docs/reference/mcp.md#{anchor(tool.name)}"
        lines.append(f"- [`{tool.name}({arguments})`]({link}): {_does(tool)}")
    return "\n".join(lines)


def _fields(schema: dict[str, Any]) -> str:
    required = set(schema.get("required", []))
    rows = [
        (
            code(name),
            kind(prop),
            "required" if name in required else f"default {code(json.dumps(prop.get('default')))}",
            cell(prop.get("description", "")),
        )
        for name, prop in schema.get("properties", {}).items()
    ]
    return table(("name", "type", "required or default", "what it is"), rows) if rows else "None.\n"


def _hints(annotations: Any) -> str:
    if annotations is None:
        return ""
    said = []
    if annotations.read_only_hint:
        said.append("reads only")
    if annotations.idempotent_hint:
        said.append("idempotent")
    if annotations.destructive_hint:
        said.append("replaces files in place")
    if annotations.open_world_hint is False:
        said.append("reaches nothing beyond the hub")
    return ", ".join(said)


def reference() -> str:
    """Each tool: its description, its hints, its arguments, its result and the result's parts."""
    server = _server()
    parts = []
    for tool in _tools():
        parts.append(f"## {tool.name}\n")
        parts.append(" ".join((tool.description or "").split()) + "\n")
        hints = _hints(tool.annotations)
        if hints:
            parts.append(f"*{hints[0].upper()}{hints[1:]}.*\n")
        parts.append("**Arguments**\n")
        parts.append(_fields(tool.input_schema))
        output = tool.output_schema or {}
        parts.append(f"**Result** ({output.get('title', 'object')})\n")
        parts.append(_fields(output))
        for name, definition in output.get("$defs", {}).items():
            parts.append(f"*{name}*\n")
            parts.append(_fields(definition))
    resources = [
        (code(res.uri), res.mime_type or "", cell(res.description or ""))
        for res in anyio.run(server.list_resources)
    ]
    resources += [
        (code(res.uri_template), res.mime_type or "", cell(res.description or ""))
        for res in anyio.run(server.list_resource_templates)
    ]
    parts.append("## Resources\n")
    parts.append(table(("URI", "media type", "what it is"), resources))
    return "\n".join(parts)
