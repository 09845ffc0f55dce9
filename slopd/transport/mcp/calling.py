"""What every MCP tool call shares, whichever the tool: what it may be called with, what it says it
does, and how it answers.

Rules:
1. A refusal (`Problem`) is a tool error naming every reason, for the model to act on; nothing
   was written.
2. No tool ignores an argument it does not know: every input schema says
   `additionalProperties: false`, and a call with an unknown argument is a tool error naming it
   (with what the tool takes, and why, for the mistakes agents make: `action`, `from`…); nothing
   runs.
3. Annotations are true to what each tool does: read-only only when it writes nothing at all,
   idempotent only when a repeat with the same arguments changes nothing more, destructive when
   it replaces what was there; none reaches beyond the hub (`openWorldHint: false`).
4. Every answer, a tool error too, says when the seat found no running daemon (`daemon_note`,
   SPEC §14): the seat a tool takes from the `SeatSource` leaves its note for `answer` to add.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from typing import Any, TypeVar

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import Tool as MCPTool
from mcp.types import ToolAnnotations
from pydantic import BaseModel

from slopd.core.admission import ACTION_OUTSIDE
from slopd.transport.mcp.seat import Seat
from slopd.transport.problems import Problem

SeatSource = Callable[[Context[Any, Any] | None], Seat]
M = TypeVar("M", bound=BaseModel)


def _does(*, read_only: bool = False, idempotent: bool = False, destructive: bool = False) -> ToolAnnotations:
    """Rule 3."""
    return ToolAnnotations(
        read_only_hint=read_only,
        destructive_hint=destructive,
        idempotent_hint=idempotent,
        open_world_hint=False,
    )


READ = _does(read_only=True, idempotent=True)  # writes nothing at all
ADD = _does()  # adds to the hub (an envelope, a draft, a lease, a boot record) each time
MARK = _does(idempotent=True)  # sets a mark; again changes nothing
REPLACE = _does(destructive=True)  # replaces files in place
ADVANCE = _does()  # hands a reply over once: advances this seat's wake cursor
# What an agent most often passes that no tool takes, and where it belongs instead (rule 2).
_HINTS = {
    "action": f"{ACTION_OUTSIDE}: ask a human with slop_request_approval",
    "from": "the seat is fixed by --seat or the token: no tool takes `from`",
    "seat": "the seat is fixed by --seat or the token: no tool takes it",
    "wait_s": "only slop_status and slop_replies wait; slop_wait takes timeout_s",
}

_NOTE: ContextVar[str | None] = ContextVar("slopd_daemon_note", default=None)  # rule 4, per call


def noting(seats: SeatSource) -> SeatSource:
    """Rule 4: the seat, its daemon note left for this call's `answer`."""

    def seat_of(context: Context[Any, Any] | None) -> Seat:
        seat = seats(context)
        _NOTE.set(seat.daemon_note())
        return seat

    return seat_of


def answer(model: type[M], work: Callable[[], dict[str, Any]]) -> M:
    """Rules 1 and 4: the work's result as `model`, with the daemon note; a refusal as a tool error."""
    try:
        found = work()
    except Problem as problem:
        reasons = "".join(f"\n- {reason}" for reason in problem.errors if reason != problem.detail)
        note = _NOTE.get()
        said = f"\n({note})" if note is not None else ""
        raise ToolError(f"{problem.body()['title']}: {problem.detail}{reasons}{said}") from None
    return model.model_validate({**found, "daemon_note": _NOTE.get()})


class StrictServer(MCPServer):
    """Rule 2, over the SDK's `MCPServer`: its argument models ignore unknown keys."""

    async def list_tools(self) -> list[MCPTool]:
        return [
            tool.model_copy(update={"input_schema": {**tool.input_schema, "additionalProperties": False}})
            for tool in await super().list_tools()
        ]

    _takes: dict[str, list[str]] | None = None  # each tool's arguments, once the tools are all added

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> Any:
        if self._takes is None:
            tools = await super().list_tools()
            self._takes = {tool.name: list(tool.input_schema.get("properties", {})) for tool in tools}
        takes = self._takes.get(name)
        unknown = sorted(set(arguments) - set(takes)) if takes is not None else []
        if unknown:
            raise ToolError(_unknown(name, unknown, takes or []))
        return await super().call_tool(name, arguments, context)


def _unknown(tool: str, unknown: list[str], takes: list[str]) -> str:
    named = ", ".join(f"`{argument}`" for argument in unknown)
    lines = [f"{tool} takes no argument {named}; nothing was done. It takes: {', '.join(takes) or 'none'}."]
    lines += [f"- {argument}: {_HINTS[argument]}" for argument in unknown if argument in _HINTS]
    return "\n".join(lines)
