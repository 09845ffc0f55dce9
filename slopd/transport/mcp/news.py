"""Subscriptions to `slop://replies` (SPEC §13, §16): a reply committed for a seat tells every
session subscribed to that seat's feed, so an agent need not poll.

Rules:
1. Both of the protocol's ways, one resource. `resources/subscribe` (the handshake-era protocol
   that Claude Code, Cursor, Codex CLI and Gemini CLI speak) keeps the session; each new reply
   sends it `notifications/resources/updated` for `slop://replies`. `subscriptions/listen`
   (2026-07-28) with `slop://replies` among its resource subscriptions gets the same event on its
   stream. Only `slop://replies` can be subscribed: any other URI is refused, naming it.
2. A session hears only of its own seat's replies: the seat is the session's (`--seat` on
   stdio, the token's on `/mcp`), as for every tool.
3. `rung()` may be called from any thread (the daemon's bell, a filesystem watch); it hands over
   to the server's event loop, which reads each subscribed seat's last reply seq and tells that
   seat's sessions when it grew. A ring carries no news of its own — a missed or raced ring
   only delays the next one, never a wrong answer — and rings coalesce while a check runs.
4. A subscriber is a client's connection (each of its requests gets a session of its own); one
   whose notification fails (it is gone) is dropped; `resources/unsubscribe` drops it.
5. The first subscription starts the wake source (`start`): the filesystem watch of an `slopd
   mcp` process; inside the daemon the bell always rings.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from mcp.server import MCPServer
from mcp.server.context import ServerRequestContext
from mcp.server.mcpserver import Context
from mcp.server.session import ServerSession
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ResourceUpdated
from mcp.shared.exceptions import MCPError
from mcp.types import (
    INVALID_PARAMS,
    EmptyResult,
    SubscribeRequestParams,
    SubscriptionsListenRequestParams,
    SubscriptionsListenResult,
    UnsubscribeRequestParams,
)

from slopd.transport.mcp.seat import Seat

RESOURCE = "slop://replies"
SeatOf = Callable[[Context[Any, Any] | None], Seat]


@dataclass(eq=False)
class _Feed:
    """One seat's subscribers and the last reply seq they were told of."""

    desk: Seat
    seen: int
    sessions: dict[object, ServerSession] = field(default_factory=dict)  # by connection (rule 4)
    bus: InMemorySubscriptionBus = field(default_factory=InMemorySubscriptionBus)
    listen: ListenHandler = field(init=False)

    def __post_init__(self) -> None:
        self.listen = ListenHandler(self.bus)


class News:
    def __init__(self, start: Callable[[], None] = lambda: None) -> None:
        self.start = start
        self.seat_of: SeatOf | None = None  # set by `install`
        self._feeds: dict[str, _Feed] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._started = False
        self._rung = self._checking = False

    def install(self, server: MCPServer, seats: SeatOf) -> None:
        """`resources/subscribe`, `resources/unsubscribe` and `subscriptions/listen` on `server`,
        for the seats `seats` gives. The lowlevel server is where the SDK says a spec method is
        (re)provided (the note on `MethodBinding`)."""
        self.seat_of = seats
        lowlevel = server._lowlevel_server

        def adapt(handler: Callable[[Context[Any, Any], Any], Awaitable[Any]]) -> Any:
            async def handle(request: ServerRequestContext[Any, Any], params: Any) -> Any:
                return await handler(Context(request_context=request, mcp_server=server), params)

            return handle

        lowlevel.add_request_handler("resources/subscribe", SubscribeRequestParams, adapt(self.subscribe))
        lowlevel.add_request_handler(
            "resources/unsubscribe", UnsubscribeRequestParams, adapt(self.unsubscribe)
        )
        lowlevel.add_request_handler(
            "subscriptions/listen", SubscriptionsListenRequestParams, adapt(self.listen)
        )

    # -- the handlers (on the server's loop) -----------------------------------------------

    def _feed(self, context: Context[Any, Any]) -> _Feed:
        assert self.seat_of is not None, "News is installed by server.build"
        desk = self.seat_of(context)
        found = self._feeds.get(desk.seat)
        if found is None:
            found = _Feed(desk, desk.receipts.last_seq(desk.seat))
            self._feeds[desk.seat] = found
        if self._loop is None:
            self._loop = asyncio.get_running_loop()
        if not self._started:
            self._started = True
            self.start()  # rule 5
        return found

    async def subscribe(self, context: Context[Any, Any], params: SubscribeRequestParams) -> EmptyResult:
        """Rule 1: `resources/subscribe`."""
        _check(str(params.uri))
        session = context.request_context.session
        self._feed(context).sessions[_connection(session)] = session
        return EmptyResult()

    async def unsubscribe(self, context: Context[Any, Any], params: UnsubscribeRequestParams) -> EmptyResult:
        """Rule 4."""
        _check(str(params.uri))
        self._feed(context).sessions.pop(_connection(context.request_context.session), None)
        return EmptyResult()

    async def listen(
        self, context: Context[Any, Any], params: SubscriptionsListenRequestParams
    ) -> SubscriptionsListenResult:
        """Rule 1: `subscriptions/listen`, the seat's own stream of events."""
        return await self._feed(context).listen(context.request_context, params)

    # -- news ------------------------------------------------------------------------------

    def rung(self) -> None:
        """Rule 3: any thread."""
        loop = self._loop
        if loop is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: nobody to tell
                loop.call_soon_threadsafe(self._ring)

    def _ring(self) -> None:
        self._rung = True
        if not self._checking:
            self._checking = True
            asyncio.ensure_future(self._check())  # noqa: RUF006  # it ends itself; `_checking` tracks it

    async def _check(self) -> None:
        try:
            while self._rung:
                self._rung = False
                for feed in list(self._feeds.values()):
                    await self._tell(feed)
        finally:
            self._checking = False

    async def _tell(self, feed: _Feed) -> None:
        """Rules 3 and 4."""
        seq = feed.desk.receipts.last_seq(feed.desk.seat)
        if seq <= feed.seen:
            return
        feed.seen = seq
        for key, session in list(feed.sessions.items()):
            try:
                await session.send_resource_updated(RESOURCE)  # on the connection's own channel
            except Exception:  # a session that is gone: it hears nothing more
                feed.sessions.pop(key, None)
        await feed.bus.publish(ResourceUpdated(uri=RESOURCE))


def watching(desk: Seat) -> News:
    """News for an `slopd mcp` process: rung by `desk`'s filesystem watch (`shell.waker`), which
    the first subscription starts."""
    news = News(start=desk.waker.watch)
    desk.waker.listen(news.rung)
    return news


def _connection(session: ServerSession) -> object:
    """Rule 4: who subscribed. The SDK makes a `ServerSession` per request, over one connection
    object per client; that connection is the subscriber (the SDK names it nowhere public)."""
    return getattr(session, "_connection", session)


def _check(uri: str) -> None:
    if uri != RESOURCE:
        raise MCPError(INVALID_PARAMS, f"{uri}: only {RESOURCE} (this seat's reply feed) can be subscribed")
