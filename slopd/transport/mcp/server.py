"""The MCP server of SPEC §13: the tools and resources, on the official SDK's `MCPServer`.

What every tool call shares (its closed arguments, its annotations, a refusal as a tool error,
the daemon note) is `mcp.calling`'s; the resources are `mcp.resources`'.

Rules:
1. Each tool states its rule in its description, takes typed arguments (validated before it
   runs) and returns a typed result with `pending`; the work is `Seat`'s and `protocols`'.
2. The seat comes from the `SeatSource`: fixed on stdio (`--seat`), the request's token on
   `/mcp`. No tool has a `from` or seat argument.
3. No tool writes `authorized/`.
4. `serverInfo.version` is slopd's version.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from pydantic import Field

from slopd.core import notes
from slopd.core.vocabulary import MAX_WAIT
from slopd.shell.version import version
from slopd.transport.mcp import models, protocols, resources
from slopd.transport.mcp.calling import (
    ADD,
    ADVANCE,
    MARK,
    READ,
    REPLACE,
    SeatSource,
    StrictServer,
    answer,
    noting,
)
from slopd.transport.mcp.news import News
from slopd.transport.mcp.reading import MAX_CHARS
from slopd.transport.mcp.seat import Seat

Type = Literal["instigate", "handoff", "query", "note", "handshake", "ack", "result", "error"]
Wait = Annotated[float, Field(ge=0, le=MAX_WAIT, description=f"seconds to wait for a reply (≤ {MAX_WAIT:g})")]
MAX_NOTES = 100

INSTRUCTIONS = (
    "A SLOP hub: send envelopes as this seat, read the replies addressed to it. Reading never "
    "consumes; re-use an id to retry a send safely; irreversible actions need a human's signature "
    "(slop_request_approval drafts the order, a human signs it)."
)


def build(  # noqa: PLR0915  # one per tool
    seats: SeatSource, guide: Callable[[], str], news: News | None = None
) -> MCPServer:
    """The server; with `news`, `slop://replies` can be subscribed to (`mcp.news`)."""
    server = StrictServer("slopd", instructions=INSTRUCTIONS, version=version())
    seats = noting(seats)
    if news is not None:
        news.install(server, seats)

    @server.tool(annotations=READ)
    def slop_hub_info(ctx: Context) -> models.HubInfo:
        """This seat, the hub, whether its daemon runs, the lanes, reply classes, limits, HUB.md in short."""
        return answer(models.HubInfo, seats(ctx).info)

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
        return answer(models.Receipt, lambda: seat.send(type=type, to=to, body=body, **fields))

    @server.tool(annotations=READ)
    def slop_status(id: str, ctx: Context, wait_s: Wait = 0.0) -> models.Status:
        """The state and replies of an envelope this seat sent; waits up to wait_s for a terminal reply.
        Reading never consumes."""
        seat = seats(ctx)
        return answer(models.Status, lambda: seat.status(id, wait_s))

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
        return answer(models.Feed, lambda: seat.replies(after, limit, wait_s))

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
        return answer(models.Waited, lambda: seat.wait(ids, timeout_s))

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
        return answer(models.Page, lambda: seat.read(id, offset, max_chars))

    @server.tool(annotations=MARK)
    def slop_ack(id: str, ctx: Context) -> models.Acked:
        """Mark a reply to this seat as seen (it leaves `pending`); nothing is moved or deleted."""
        seat = seats(ctx)
        return answer(models.Acked, lambda: seat.ack(id))

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
        return answer(models.Notes, lambda: seat.notes(search, limit, offset, max_chars))

    @server.tool(annotations=ADD)
    def slop_request_approval(action: str, body: str, reason: str, ctx: Context) -> models.Approval:
        """Draft the order a human would sign to run an irreversible action (in outbox/drafts/, never
        authorized/), and the exact signing command for the human. Agents cannot approve."""
        seat = seats(ctx)
        return answer(models.Approval, lambda: seat.request_approval(action, body, reason))

    @server.tool(annotations=READ)
    def handoff_lint(text: str, ctx: Context) -> models.Lint:
        """Lint an MEP handoff log or entry: FILE:LINE findings with rule, message and fix."""
        seat = seats(ctx)
        return answer(models.Lint, lambda: {**protocols.handoff_lint(text), "pending": seat.pending()})

    @server.tool(annotations=READ)
    def standup_read(project: str, ctx: Context) -> models.Standup:
        """A project's Standing Standup: the party line, the latest entry, open tasks by owner."""
        seat = seats(ctx)
        return answer(
            models.Standup, lambda: {**protocols.standup_read(seat, project), "pending": seat.pending()}
        )

    @server.tool(annotations=ADD)
    def standup_append(project: str, entry: str, ctx: Context) -> models.Receipt:
        """File one MEP entry in a project's standup (sent as a handoff from this seat). An entry that
        does not lint is refused with every finding, and nothing is sent."""
        seat = seats(ctx)
        return answer(models.Receipt, lambda: protocols.standup_append(seat, project, entry))

    def baton(vessel: str, seat: Seat, work: Callable[[], dict[str, Any]]) -> models.Baton:
        return answer(models.Baton, lambda: {"vessel": vessel, "data": work(), "pending": seat.pending()})

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

    resources.install(server, seats, guide)

    return server
