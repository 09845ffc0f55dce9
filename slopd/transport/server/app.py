"""The HTTP transport's Starlette app: the routes of SPEC §12 over `Service`.

Rules:
1. Every answer — success, problem, 404 of an unknown route — carries the rate-limit headers
   of its partition (the seat once the token is known, else the client's address) and is
   counted in /metrics by route template and status.
2. While the server stops, every new request is 503 with `Retry-After`, and long-polls in
   progress return what they have.
3. Handlers never route or execute: `POST /v1/envelopes` writes into `inbox/` (`Intake`), the
   rest read the ledger; blocking work runs in worker threads, waits on the event loop.
4. `wait` is clamped to 30 s; `limit` to 1..100; a number that is not one is 400.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import resources
from typing import Any

import anyio.to_thread
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from slopd import submit
from slopd.baton.keeper import Summarizer
from slopd.baton.store import Store
from slopd.core.ids import timestamp
from slopd.core.receipts import is_terminal
from slopd.shell.lanes import Hub
from slopd.shell.ledger.receipts import Receipts
from slopd.shell.log import Logger
from slopd.shell.version import version
from slopd.transport.problems import Problem
from slopd.transport.ratelimit import Limiter
from slopd.transport.server import views, wire
from slopd.transport.server.auth import Seats
from slopd.transport.server.intake import Intake
from slopd.transport.server.keeper import Keeper
from slopd.transport.server.metrics import MEDIA_TYPE as METRICS
from slopd.transport.server.metrics import Metrics
from slopd.transport.server.waiting import Doorbell

MAX_WAIT = 30.0
Handler = Callable[[Request, str], Awaitable[Response]]


def openapi_document() -> bytes:
    """`openapi.json` as served: the file, with this installation's version (`shell.version`, the
    one source `slopd --version` and MCP's `serverInfo` report too) as its `info.version`."""
    document = json.loads(resources.files(__package__).joinpath("openapi.json").read_bytes())
    document["info"]["version"] = version()
    return (json.dumps(document, indent=2, ensure_ascii=False) + "\n").encode()


@dataclass(eq=False)
class Service:
    hub: Hub
    receipts: Receipts
    intake: Intake
    seats: Seats
    limiter: Limiter
    doorbell: Doorbell
    metrics: Metrics
    log: Logger
    batons: Store
    summarize: Summarizer | None = None  # [baton.summarizer], for commits over the keeper API
    watcher: str = "watcher"  # whom a commit's projection is addressed to (the config's watcher)
    mounted: list[BaseRoute] = field(
        default_factory=list
    )  # /mcp and the console, when their extras are installed
    console: Any = None  # the console's `Desk`, told where the server listens once it does
    lifespans: list[Callable[[], AbstractAsyncContextManager[None]]] = field(default_factory=list)
    draining: list[Callable[[], None]] = field(default_factory=list)  # called (any thread) as it stops
    stopping: bool = False
    in_flight: int = 0
    openapi: bytes = field(default_factory=openapi_document)


class _Api:
    """The handlers; `endpoint` wraps each in rules 1 and 2."""

    def __init__(self, service: Service) -> None:
        self.service = service

    def endpoint(
        self, route: str, handler: Handler, *, seated: bool = True
    ) -> Callable[[Request], Awaitable[Response]]:
        service = self.service

        async def answer(request: Request) -> Response:
            partition = f"ip:{request.client.host if request.client else '-'}"
            headers: dict[str, str] = {}
            service.in_flight += 1
            try:
                if service.stopping and route != "/v1/health":
                    raise Problem(
                        "stopping", "the daemon is stopping; retry shortly", (), {"Retry-After": "5"}
                    )
                seat = service.seats.seat(request.headers.get("authorization")) if seated else ""
                partition = seat or partition
                allowance = service.limiter.take(partition, time.monotonic())
                headers = allowance.headers
                if not allowance.allowed:
                    raise Problem("rate-limited", f"over {service.limiter.quota} requests a minute")
                response = await handler(request, seat)
            except Problem as problem:
                headers = headers or service.limiter.take(partition, time.monotonic()).headers
                response = wire.as_problem(problem, headers)
            except Exception as error:  # a handler's bug is a 500 naming it, never a crash
                service.log.exception("http.failed", route=route, reason=str(error))
                response = wire.as_problem(Problem("internal", "the server failed; see its log"), headers)
            finally:
                service.in_flight -= 1
            response.headers.update(headers)
            service.metrics.requests.labels(route, str(response.status_code)).inc()
            return response

        return answer

    async def post_envelope(self, request: Request, seat: str) -> Response:
        service = self.service
        kind = request.headers.get("content-type", "")
        media, parameters = wire.media_type(kind)
        charset = parameters.get("charset", "").lower()
        if media not in ("text/markdown", "application/json") or charset not in ("", "utf-8"):
            raise Problem("unsupported-media-type", f"got {kind or 'no Content-Type'!r}")
        data = await wire.read_body(request, service.intake.limit)
        idempotency = request.headers.get("idempotency-key")
        json_form = media == "application/json"
        accepted = await anyio.to_thread.run_sync(
            lambda: service.intake.accept(seat, data, json_form=json_form, idempotency_key=idempotency)
        )
        receipt = accepted.receipt
        if not accepted.replayed:
            service.log.info(
                "http.received", id=receipt.id, seat=seat, file=f"inbox/{receipt.file}", seq=receipt.seq
            )
        body = receipt.public(replayed=True) if accepted.replayed else receipt.public()
        return wire.as_json(
            body, 200 if accepted.replayed else 202, {"Location": views.receipt_location(receipt)}
        )

    async def get_envelope(self, request: Request, seat: str) -> Response:
        body, _type = views.envelope_state(self.service.receipts, seat, request.path_params["id"])
        return wire.as_json(body)  # for HEAD too: the server sends its headers, Content-Length included

    async def envelope_replies(self, request: Request, seat: str) -> Response:
        service, id = self.service, request.path_params["id"]
        wait = wire.number(request, "wait", 0.0, 0.0, MAX_WAIT)
        type = views.envelope_state(service.receipts, seat, id)[1]
        kinds = submit.terminal_kinds(type or "")
        found = await service.doorbell.wait_for(
            lambda: service.receipts.replies_to(id.lower(), seat),
            lambda replies: is_terminal((reply.type for reply in replies), kinds),
            wait,
        )
        terminal = is_terminal((reply.type for reply in found), kinds)
        return wire.as_json(
            {"replies": [views.reply(service.hub, reply) for reply in found], "terminal": terminal}
        )

    async def feed(self, request: Request, seat: str) -> Response:
        service = self.service
        after = wire.integer(request, "after", 0, 0, None)
        limit = wire.integer(request, "limit", 50, 1, 100)
        wait = wire.number(request, "wait", 0.0, 0.0, MAX_WAIT)
        views.check_after(service.receipts, after)
        found = await service.doorbell.wait_for(
            lambda: service.receipts.feed(seat, after, limit + 1), bool, wait
        )
        return wire.as_json(
            views.feed_page(service.hub, service.receipts, seat, found, after=after, limit=limit)
        )

    async def ack(self, request: Request, seat: str) -> Response:
        id = request.path_params["id"]
        now = timestamp(datetime.now(UTC))
        if not await anyio.to_thread.run_sync(lambda: self.service.receipts.ack(seat, id, now)):
            raise views.not_found(f"reply {id}")
        return Response(b"", 204)

    async def health(self, request: Request, seat: str) -> Response:
        if self.service.stopping:
            return wire.as_json({"status": "stopping"}, 503, {"Retry-After": "5"})
        return wire.as_json({"status": "ok"})

    async def metrics(self, request: Request, seat: str) -> Response:
        return Response(await anyio.to_thread.run_sync(self.service.metrics.render), media_type=METRICS)

    async def openapi(self, request: Request, seat: str) -> Response:
        return Response(self.service.openapi, media_type="application/json")

    async def unknown(self, request: Request, error: Exception) -> Response:
        """404 and 405 of the router, as problems with the headers of rule 1 (and the 405's
        `Allow`); while stopping, 503 like every other request (rule 2)."""
        status = error.status_code if isinstance(error, HTTPException) else 404
        kind = "method-not-allowed" if status == 405 else "not-found"
        partition = f"ip:{request.client.host if request.client else '-'}"
        headers = self.service.limiter.take(partition, time.monotonic()).headers
        if isinstance(error, HTTPException) and error.headers:
            headers = {**headers, **error.headers}
        problem = Problem(kind, f"{request.method} {request.url.path}")
        if self.service.stopping:
            problem = Problem("stopping", "the daemon is stopping; retry shortly", (), {"Retry-After": "5"})
        response = wire.as_problem(problem, headers)
        self.service.metrics.requests.labels("unknown", str(response.status_code)).inc()
        return response


def build(service: Service) -> Starlette:
    api = _Api(service)
    table: list[tuple[str, Handler, list[str], bool]] = [
        ("/v1/envelopes", api.post_envelope, ["POST"], True),
        ("/v1/envelopes/{id}", api.get_envelope, ["GET", "HEAD"], True),
        ("/v1/envelopes/{id}/replies", api.envelope_replies, ["GET"], True),
        ("/v1/replies", api.feed, ["GET"], True),
        ("/v1/replies/{id}/ack", api.ack, ["POST"], True),
        ("/v1/health", api.health, ["GET"], False),
        ("/metrics", api.metrics, ["GET"], False),
        ("/openapi.json", api.openapi, ["GET"], False),
    ]
    batons = Keeper(
        service.hub, service.batons, wire.as_json, wire.read_body, service.summarize, service.watcher
    )
    table += [
        ("/baton/registry", batons.registry, ["GET"], True),
        ("/baton/{vessel}", batons.vessel, ["GET"], True),
        ("/baton/{vessel}/lease", batons.lease, ["POST"], True),
        ("/baton/{vessel}/commit", batons.commit, ["POST"], True),
        ("/baton/{vessel}/autobiography", batons.autobiography, ["GET"], True),
        ("/baton/{vessel}/score", batons.score, ["POST"], True),
    ]
    routes: list[BaseRoute] = [
        Route(path, api.endpoint(path, handler, seated=seated), methods=methods)
        for path, handler, methods, seated in table
    ]

    routes += service.mounted

    @asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        service.doorbell.open()
        async with AsyncExitStack() as stack:
            for entered in service.lifespans:
                await stack.enter_async_context(entered())
            yield

    handlers: dict[Any, Any] = {HTTPException: api.unknown}
    app = Starlette(routes=routes, exception_handlers=handlers, lifespan=lifespan)
    app.router.redirect_slashes = False  # `/v1/replies/` is a 404 problem, not a 307 past rule 1
    return app
