"""The MCP server inside `slopd run --http`, at `/mcp` (SPEC §13), behind the same bearer tokens.

Rules:
1. `/mcp` and `/mcp/` both reach the SDK's Streamable HTTP app, with no redirect (clients break
   on a 307).
2. Every request is authenticated first (`auth.Seats`): no or an unknown token is the
   transport's 401, before the SDK sees it; the seat rides in the request's scope and the
   tools act as that seat — a session opened with one token cannot act for another.
3. A Host header outside loopback and the address served is refused by the SDK (421): a web
   page cannot reach a local server through DNS rebinding.
4. Tools wait on the daemon's bell (the reply's commit), not on a filesystem watch; the bell
   also tells the sessions subscribed to `slop://replies` (`mcp.news`).
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import AsyncIterator, Callable
from typing import Any

from mcp.server.mcpserver import Context
from mcp.server.transport_security import TransportSecuritySettings
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from slopd.app import App
from slopd.core.orders import Trust
from slopd.shell.bell import Bell
from slopd.shell.waker import Waker
from slopd.transport.mcp import server as mcp_server
from slopd.transport.mcp.news import News
from slopd.transport.mcp.seat import Seat
from slopd.transport.problems import MEDIA_TYPE, Problem
from slopd.transport.server.auth import Seats

SEAT_KEY = "slopd_seat"


class Desks:
    """One `Seat` per seat name, made on first use, all woken by the daemon's bell."""

    def __init__(self, app: App, trust: Trust | None, bell: Bell) -> None:
        self.app, self.trust = app, trust
        self.waker = Waker(None)
        self.news = News()
        self._stops = [bell.listen(self.waker.poke), bell.listen(self.news.rung)]
        self._seats: dict[str, Seat] = {}
        self._lock = threading.Lock()  # tools run on worker threads

    def __call__(self, context: Context[Any, Any] | None) -> Seat:
        request = context.request_context.request if context is not None else None
        state = getattr(request, "state", None)
        name = getattr(state, SEAT_KEY, None)
        if not isinstance(name, str):
            raise RuntimeError("no seat on this MCP request")  # the mount always sets one
        with self._lock:
            found = self._seats.get(name)
            if found is None:
                found = Seat(
                    self.app.hub, self.app.state, name, self.app.config, trust=self.trust, waker=self.waker
                )
                self._seats[name] = found
            return found

    def guide(self) -> str:
        found = self.app.hub.read_path("HUB.md", 256 << 10)
        return getattr(found, "data", b"").decode("utf-8", "replace")

    def close(self) -> None:
        for stop in self._stops:
            stop()
        with self._lock:
            seats, self._seats = list(self._seats.values()), {}
        for seat in seats:
            seat.close()


def routes(
    app: App, seats: Seats, host: str
) -> tuple[list[Route], Callable[[], contextlib.AbstractAsyncContextManager[None]], Desks]:
    """Rules 1-4: the two routes, the lifespan they need, and the seats behind them."""
    desks = Desks(app, app.trust, app.bell)
    server = mcp_server.build(desks, desks.guide, desks.news)
    hosts = ["127.0.0.1:*", "localhost:*", "[::1]:*", f"{host}:*"]
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=[]
    )
    inner = server.streamable_http_app(streamable_http_path="/mcp", transport_security=security, host=host)
    asgi = inner.routes[0].app  # type: ignore[attr-defined]  # the session manager's ASGI app

    guarded = _Guarded(seats, asgi)

    @contextlib.asynccontextmanager
    async def lifespan() -> AsyncIterator[None]:
        try:
            async with server.session_manager.run():
                yield
        finally:
            desks.close()

    found = [
        Route("/mcp", guarded, methods=["GET", "POST", "DELETE"]),
        Route("/mcp/", guarded, methods=["GET", "POST", "DELETE"]),
    ]
    return found, lifespan, desks


class _Guarded:
    """Rule 2, as an ASGI app (a class, so Starlette's Route passes it the raw scope)."""

    def __init__(self, seats: Seats, inner: Any) -> None:
        self.seats, self.inner = seats, inner

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = {key.decode("latin-1").lower(): value.decode("latin-1") for key, value in scope["headers"]}
        try:
            seat = self.seats.seat(headers.get("authorization"))
        except Problem as problem:
            body = json.dumps(problem.body()).encode()
            sent = [(b"content-type", MEDIA_TYPE.encode())]
            sent += [(key.lower().encode(), value.encode()) for key, value in problem.headers.items()]
            await send({"type": "http.response.start", "status": problem.status, "headers": sent})
            await send({"type": "http.response.body", "body": body})
            return
        scope.setdefault("state", {})[SEAT_KEY] = seat
        await self.inner(scope, receive, send)
