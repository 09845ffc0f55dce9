"""The rules every request shares, for an ASGI app mounted beside the routes (`/mcp`, SPEC §14).

Rules:
1. As for `/v1` (app.py rules 1 and 2): while the server stops, 503 + `Retry-After`; no or an
   unknown token is the 401, before the mounted app sees anything; the seat's rate limit, with
   `RateLimit-Policy` and `RateLimit` on every answer (the mounted app's too) and 429 +
   `Retry-After` over quota; every answer counted in /metrics by route and status.
2. Then the browser checks (core/origins.py): a `Host` the server does not answer for is 421,
   an `Origin` that is neither the server's own nor configured is 403. Every refusal is
   problem+json.
3. A request is in flight (the drain waits for it) until the mounted app returns. When the
   server starts to stop, a `GET` — a stream that only waits for the server to speak — ends
   like a long-poll; a `POST` in progress finishes.
4. The seat rides in the request's scope (`state[SEAT_KEY]`): the app acts as that seat.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import TYPE_CHECKING

import anyio
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from slopd.core.origins import Gate
from slopd.transport.problems import MEDIA_TYPE, Problem

if TYPE_CHECKING:
    from slopd.transport.server.app import Service

SEAT_KEY = "slopd_seat"


class Guard:
    def __init__(self, service: Service, route: str, inner: ASGIApp, gate: Gate) -> None:
        self.service, self.route, self.inner, self.gate = service, route, inner, gate
        self._streams: set[anyio.CancelScope] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        service.draining.append(self.close)

    def _check(self, scope: Scope, headers: dict[str, str]) -> tuple[str, dict[str, str]]:
        """Rules 1 and 2: the seat and its rate-limit headers, or the `Problem` (with its headers)."""
        service, client = self.service, scope.get("client")
        partition = f"ip:{client[0] if client else '-'}"
        limits: dict[str, str] = {}
        try:
            if service.stopping:
                raise _stopping()
            seat = service.seats.seat(headers.get("authorization"))
            partition = seat
            allowance = service.limiter.take(partition, time.monotonic())
            limits = allowance.headers
            if not allowance.allowed:
                raise Problem("rate-limited", f"over {service.limiter.quota} requests a minute")
            reached, port = scope.get("server") or ("", 0)
            if not self.gate.host_allowed(headers.get("host"), reached):
                raise Problem("misdirected", f"this server does not answer for Host {headers.get('host')!r}")
            origin = headers.get("origin")
            if origin is not None and not self.gate.origin_allowed(origin, scope["scheme"], reached, port):
                raise Problem(
                    "forbidden-origin",
                    f"Origin {origin!r} is not this server's, nor one of [http] allowed_origins",
                )
        except Problem as problem:
            limits = limits or service.limiter.take(partition, time.monotonic()).headers
            raise _Refused(problem, limits) from None
        return seat, limits

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        service = self.service
        self._loop = asyncio.get_running_loop()
        headers = {key.decode("latin-1").lower(): value.decode("latin-1") for key, value in scope["headers"]}
        service.in_flight += 1
        try:
            try:
                seat, limits = self._check(scope, headers)
            except _Refused as refused:
                await self._refuse(send, refused.problem, refused.headers)
                return
            scope.setdefault("state", {})[SEAT_KEY] = seat
            extra = [(key.lower().encode(), value.encode()) for key, value in limits.items()]
            sent = {"start": False, "end": False}

            async def sending(message: Message) -> None:
                if message["type"] == "http.response.start":
                    message = {**message, "headers": [*message.get("headers", []), *extra]}
                    service.metrics.requests.labels(self.route, str(message["status"])).inc()
                    sent["start"] = True
                elif message["type"] == "http.response.body" and not message.get("more_body"):
                    sent["end"] = True
                await send(message)

            if scope["method"] != "GET":
                await self.inner(scope, receive, sending)
                return
            with anyio.CancelScope() as stream:  # rule 3: ended by `close`
                self._streams.add(stream)
                try:
                    if not service.stopping:
                        await self.inner(scope, receive, sending)
                finally:
                    self._streams.discard(stream)
            if not sent["start"]:  # stopped before the app answered
                await self._refuse(send, _stopping(), limits)
            elif not sent["end"]:  # ended mid-stream: the last chunk, so the client sees a clean end
                await send({"type": "http.response.body", "body": b""})
        finally:
            service.in_flight -= 1

    async def _refuse(self, send: Send, problem: Problem, headers: dict[str, str]) -> None:
        body = json.dumps(problem.body(), ensure_ascii=False).encode()
        sent = [(b"content-type", MEDIA_TYPE.encode())]
        merged = {**headers, **problem.headers}
        sent += [(key.lower().encode(), value.encode()) for key, value in merged.items()]
        await send({"type": "http.response.start", "status": problem.status, "headers": sent})
        await send({"type": "http.response.body", "body": body})
        self.service.metrics.requests.labels(self.route, str(problem.status)).inc()

    def close(self) -> None:
        """Rule 3 (any thread): every `GET` stream ends now."""
        loop = self._loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self._cancel_streams)

    def _cancel_streams(self) -> None:
        for stream in list(self._streams):
            stream.cancel()


def _stopping() -> Problem:
    return Problem("stopping", "the daemon is stopping; retry shortly", (), {"Retry-After": "5"})


class _Refused(Exception):  # noqa: N818  # internal: a refusal and the headers to send with it
    def __init__(self, problem: Problem, headers: dict[str, str]) -> None:
        self.problem, self.headers = problem, headers
