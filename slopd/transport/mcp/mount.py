"""The MCP server inside `slopd run --http`, at `/mcp` (SPEC §13), behind the same bearer tokens.

Rules:
1. `/mcp` and `/mcp/` both reach the SDK's Streamable HTTP app, with no redirect (clients break
   on a 307).
2. Every request passes `/v1`'s rules first (`server/guard.py`): 503 while stopping, the
   token's 401, the seat's rate limit and its headers; the seat rides in the request's scope
   and the tools act as that seat — a session opened with one token cannot act for another.
3. A Host the server does not answer for is 421 and an Origin that is neither the server's own
   nor in `[http] allowed_origins` is 403 (core/origins.py): a web page cannot reach a local
   server through DNS rebinding, and a browser client of the server's own origin can.
4. Tools wait on the daemon's bell (the reply's commit), not on a filesystem watch; the bell
   also tells the sessions subscribed to `slop://replies` (`mcp.news`).
5. When the server drains, streams end and waiting tools return what they have.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import AsyncIterator, Callable
from typing import Any

from mcp.server.mcpserver import Context
from mcp.server.transport_security import TransportSecuritySettings
from starlette.routing import Route

from slopd.app import App
from slopd.core.orders import Trust
from slopd.core.origins import Gate
from slopd.shell.bell import Bell
from slopd.shell.waker import Waker
from slopd.transport.mcp import server as mcp_server
from slopd.transport.mcp.news import News
from slopd.transport.mcp.seat import Seat, guide
from slopd.transport.server.app import Service
from slopd.transport.server.guard import SEAT_KEY, Guard


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
                    self.app.hub,
                    self.app.state,
                    name,
                    self.app.config,
                    trust=self.trust,
                    waker=self.waker,
                    arrived=lambda lane, file: self.app.arrived(lane, file),  # noqa: PLW0108  # late: set when the daemon is built
                    admit=lambda lane, file, examined: self.app.admit(lane, file, examined),  # noqa: PLW0108  # late, too
                )
                self._seats[name] = found
            return found

    def guide(self) -> str:
        return guide(self.app.hub)

    def close(self) -> None:
        for stop in self._stops:
            stop()
        with self._lock:
            seats, self._seats = list(self._seats.values()), {}
        for seat in seats:
            seat.close()


def routes(
    app: App, service: Service, host: str
) -> tuple[list[Route], Callable[[], contextlib.AbstractAsyncContextManager[None]], Desks]:
    """Rules 1-5: the two routes, the lifespan they need, and the seats behind them."""
    desks = Desks(app, app.trust, app.bell)
    service.draining.append(desks.waker.stop)
    server = mcp_server.build(desks, desks.guide, desks.news)
    # Host and Origin are checked by the guard (problem+json, the configured origins); the SDK's
    # own check would refuse every Origin it was not given as a fixed list.
    security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
    inner = server.streamable_http_app(streamable_http_path="/mcp", transport_security=security, host=host)
    asgi = inner.routes[0].app  # type: ignore[attr-defined]  # the session manager's ASGI app
    guarded = Guard(service, "/mcp", asgi, Gate.of(host, app.config.http.allowed_origins))

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
