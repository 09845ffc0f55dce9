"""The MCP server of SPEC §13: the tools and resources, on the official SDK's `MCPServer`.

Rules:
1. Each tool states its rule in its description, takes typed arguments (validated before it
   runs) and returns a typed result with `pending`; the work is `Seat`'s and `protocols`'.
2. The seat comes from the `SeatSource`: fixed on stdio (`--seat`), the request's token on
   `/mcp`. No tool has a `from` or seat argument.
3. A refusal (`Problem`) is a tool error naming every reason, for the model to act on; nothing
   was written. No tool writes `authorized/`.
4. No tool ignores an argument it does not know: every input schema says
   `additionalProperties: false`, and a call with an unknown argument is a tool error naming it
   (with what the tool takes, and why, for the mistakes agents make: `action`, `from`…); nothing
   runs.
5. Annotations are true to what each tool does: read-only only when it writes nothing at all,
   idempotent only when a repeat with the same arguments changes nothing more, destructive when
   it replaces what was there; none reaches beyond the hub (`openWorldHint: false`).
6. `serverInfo.version` is slopd's version.
7. Every answer, a tool error too, says when the seat found no running daemon (`daemon_note`,
   SPEC §14): the seat a tool takes from the `SeatSource` leaves its note for `_as` to add.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from contextvars import ContextVar
from typing import Annotated, Any, Literal, TypeVar

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ResourceNotFoundError, ToolError
from mcp.types import Tool as MCPTool
from mcp.types import ToolAnnotations
from pydantic import BaseModel, Field

from slopd.core import notes
from slopd.core.admission import ACTION_OUTSIDE
from slopd.core.vocabulary import MAX_WAIT
from slopd.shell.version import version
from slopd.transport.mcp import models, protocols
from slopd.transport.mcp import news as news_module
from slopd.transport.mcp.news import News
from slopd.transport.mcp.seat import MAX_CHARS, Seat
from slopd.transport.problems import Problem

SeatSource = Callable[[Context[Any, Any] | None], Seat]
M = TypeVar("M", bound=BaseModel)
Type = Literal["instigate", "handoff", "query", "note", "handshake", "ack", "result", "error"]
Wait = Annotated[float, Field(ge=0, le=MAX_WAIT, description=f"seconds to wait for a reply (≤ {MAX_WAIT:g})")]
MAX_NOTES = 100


def _does(*, read_only: bool = False, idempotent: bool = False, destructive: bool = False) -> ToolAnnotations:
    """Rule 5."""
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
# What an agent most often passes that no tool takes, and where it belongs instead (rule 4).
_HINTS = {
    "action": f"{ACTION_OUTSIDE}: ask a human with slop_request_approval",
    "from": "the seat is fixed by --seat or the token: no tool takes `from`",
    "seat": "the seat is fixed by --seat or the token: no tool takes it",
    "wait_s": "only slop_status and slop_replies wait; slop_wait takes timeout_s",
}

INSTRUCTIONS = (
    "A SLOP hub: send envelopes as this seat, read the replies addressed to it. Reading never "
    "consumes; re-use an id to retry a send safely; irreversible actions need a human's signature "
    "(slop_request_approval drafts the order, a human signs it)."
)


_NOTE: ContextVar[str | None] = ContextVar("slopd_daemon_note", default=None)  # rule 4, per call


def _noting(seats: SeatSource) -> SeatSource:
    """Rule 4: the seat, its daemon note left for this call's `_as`."""

    def seat_of(context: Context[Any, Any] | None) -> Seat:
        seat = seats(context)
        _NOTE.set(seat.daemon_note())
        return seat

    return seat_of


def _as(model: type[M], work: Callable[[], dict[str, Any]]) -> M:
    try:
        found = work()
    except Problem as problem:
        reasons = "".join(f"\n- {reason}" for reason in problem.errors if reason != problem.detail)
        note = _NOTE.get()
        said = f"\n({note})" if note is not None else ""
        raise ToolError(f"{problem.body()['title']}: {problem.detail}{reasons}{said}") from None
    return model.model_validate({**found, "daemon_note": _NOTE.get()})


class _Strict(MCPServer):
    """Rule 4, over the SDK's `MCPServer`: its argument models ignore unknown keys."""

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


def build(  # noqa: PLR0915  # one per tool
    seats: SeatSource, guide: Callable[[], str], news: News | None = None
) -> MCPServer:
    """The server; with `news`, `slop://replies` can be subscribed to (`mcp.news`)."""
    server = _Strict("slopd", instructions=INSTRUCTIONS, version=version())
    seats = _noting(seats)
    if news is not None:
        news.install(server, seats)

    @server.tool(annotations=READ)
    def slop_hub_info(ctx: Context) -> models.HubInfo:
        """This seat, the hub, whether its daemon runs, the lanes, reply classes, limits, HUB.md in short."""
        return _as(models.HubInfo, seats(ctx).info)

    @server.tool(annotations=ADD)
    def slop_send(
        type: Type,
        to: str,
        body: str,
        ctx: Context,
        in_reply_to: str | None = None,
        mode: Literal["execute", "discuss"] | None = None,
        project: str | None = None,
        id: str | None = None,
    ) -> models.Receipt:
        """Send an envelope from this seat (you cannot send as anyone else). Re-use the id to retry:
        a resend with the same arguments writes nothing and returns the first receipt; other
        arguments under a used id are refused (a conflict). It goes to inbox/, never authorized/:
        irreversible actions need a human signature (slop_request_approval)."""
        seat = seats(ctx)
        fields = {"in_reply_to": in_reply_to, "mode": mode, "project": project, "id": id}
        return _as(models.Receipt, lambda: seat.send(type=type, to=to, body=body, **fields))

    @server.tool(annotations=READ)
    def slop_status(id: str, ctx: Context, wait_s: Wait = 0.0) -> models.Status:
        """The state and replies of an envelope this seat sent; waits up to wait_s for a terminal reply.
        Reading never consumes."""
        seat = seats(ctx)
        return _as(models.Status, lambda: seat.status(id, wait_s))

    @server.tool(annotations=READ)
    def slop_replies(
        ctx: Context,
        after: Annotated[int, Field(ge=0, description="the cursor: next_cursor of the last call")] = 0,
        limit: Annotated[int, Field(ge=1, le=50)] = 20,
        wait_s: Wait = 0.0,
    ) -> models.Feed:
        """This seat's replies after the cursor, oldest first; waits up to wait_s for one. Reading
        never consumes: keep next_cursor, and slop_ack what you have handled."""
        seat = seats(ctx)
        return _as(models.Feed, lambda: seat.replies(after, limit, wait_s))

    @server.tool(annotations=ADVANCE)
    def slop_wait(
        ctx: Context,
        ids: Annotated[list[str], Field(max_length=50, description="envelope ids this seat sent")]
        | None = None,
        timeout_s: Wait = MAX_WAIT,
    ) -> models.Waited:
        """Block until a reply comes, instead of polling: with `ids`, the first terminal reply (result or
        error) to one of those envelopes; without, the first reply to this seat that is new — not yet
        delivered by slop_wait, `slopd wait` or a hook. Returns it whole, or timed_out after timeout_s
        (at most 50 s; call again to keep waiting)."""
        seat = seats(ctx)
        return _as(models.Waited, lambda: seat.wait(ids, timeout_s))

    @server.tool(annotations=READ)
    def slop_read(
        id: str,
        ctx: Context,
        offset: Annotated[int, Field(ge=0)] = 0,
        max_chars: Annotated[int, Field(ge=1, le=MAX_CHARS)] = MAX_CHARS,
    ) -> models.Page:
        """One reply to this seat or envelope it sent, a page at a time; a deliverable's file list.
        Reading never consumes."""
        seat = seats(ctx)
        return _as(models.Page, lambda: seat.read(id, offset, max_chars))

    @server.tool(annotations=MARK)
    def slop_ack(id: str, ctx: Context) -> models.Acked:
        """Mark a reply to this seat as seen (it leaves `pending`); nothing is moved or deleted."""
        seat = seats(ctx)
        return _as(models.Acked, lambda: seat.ack(id))

    @server.tool(annotations=READ)
    def slop_notes(
        ctx: Context,
        search: Annotated[
            str | None, Field(description="find notes whose text, id, sender or title holds this, any case")
        ] = None,
        limit: Annotated[int, Field(ge=1, le=MAX_NOTES, description="notes per page")] = notes.READ_LIMIT,
        offset: Annotated[int, Field(ge=0, description="next_offset of the previous page")] = 0,
        max_chars: Annotated[
            int, Field(ge=1, le=MAX_CHARS, description="characters of each note's text at most")
        ] = notes.READ_CHARS,
    ) -> models.Notes:
        """What earlier agents left for you (what worked, what didn't, what to do next time): the
        hub's notes, newest first, each with its text; `search` matches the text. One page at a
        time: pass next_offset as offset for the next."""
        seat = seats(ctx)
        return _as(models.Notes, lambda: seat.notes(search, limit, offset, max_chars))

    @server.tool(annotations=ADD)
    def slop_request_approval(action: str, body: str, reason: str, ctx: Context) -> models.Approval:
        """Draft the order a human would sign to run an irreversible action (in outbox/drafts/, never
        authorized/), and the exact signing command for the human. Agents cannot approve."""
        seat = seats(ctx)
        return _as(models.Approval, lambda: seat.request_approval(action, body, reason))

    @server.tool(annotations=READ)
    def handoff_lint(text: str, ctx: Context) -> models.Lint:
        """Lint an MEP handoff log or entry: FILE:LINE findings with rule, message and fix."""
        seat = seats(ctx)
        return _as(models.Lint, lambda: {**protocols.handoff_lint(text), "pending": seat.pending()})

    @server.tool(annotations=READ)
    def standup_read(project: str, ctx: Context) -> models.Standup:
        """A project's Standing Standup: the party line, the latest entry, open tasks by owner."""
        seat = seats(ctx)
        return _as(
            models.Standup, lambda: {**protocols.standup_read(seat, project), "pending": seat.pending()}
        )

    @server.tool(annotations=ADD)
    def standup_append(project: str, entry: str, ctx: Context) -> models.Receipt:
        """File one MEP entry in a project's standup (sent as a handoff from this seat). An entry that
        does not lint is refused with every finding, and nothing is sent."""
        seat = seats(ctx)
        return _as(models.Receipt, lambda: protocols.standup_append(seat, project, entry))

    def baton(vessel: str, seat: Seat, work: Callable[[], dict[str, Any]]) -> models.Baton:
        return _as(models.Baton, lambda: {"vessel": vessel, "data": work(), "pending": seat.pending()})

    @server.tool(annotations=ADD)  # records the boot in the registry (the seed's BATON_RECEIVED)
    def baton_boot(
        vessel: str, ctx: Context, budget: Annotated[int, Field(ge=0)] | None = None
    ) -> models.Baton:
        """What a vessel's next generation reads (GENERATION's state and letter, then what the budget
        allows), and what is wrong with its tree. Trust only what this returns."""
        seat = seats(ctx)
        return baton(vessel, seat, lambda: protocols.baton_boot(seat, vessel, budget))

    @server.tool(annotations=ADD)
    def baton_lease(vessel: str, ctx: Context) -> models.Baton:
        """Lease the vessel's next generation (this seat must be the vessel); one live lease at a time."""
        seat = seats(ctx)
        return baton(vessel, seat, lambda: protocols.baton_lease(seat, vessel))

    @server.tool(annotations=REPLACE)  # CURRENT/ and AUTOBIOGRAPHY.md are replaced; no undo
    def baton_pack(
        vessel: str,
        lease_id: str,
        letter: str,
        state: dict[str, Any],
        ctx: Context,
        accept_low_quality: bool = False,
    ) -> models.Baton:
        """Commit the next generation with the live lease: scored by the seed's gate; a letter that
        fails it is refused and nothing is written, unless accept_low_quality (then it is committed
        marked LOW_QUALITY)."""
        seat = seats(ctx)
        return baton(
            vessel,
            seat,
            lambda: protocols.baton_pack(seat, vessel, lease_id, letter, state, accept_low_quality),
        )

    @server.tool(annotations=READ)
    def baton_score(letter: str, ctx: Context) -> models.Baton:
        """Score a handoff letter with the seed's rubric (the same function as the gate)."""
        seat = seats(ctx)
        return baton("", seat, lambda: protocols.baton_score(letter))

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

    return server
