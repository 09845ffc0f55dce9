"""The console's route table, mounted at `/` of the HTTP server beside `/v1`, `/baton`, `/mcp`.

Rules:
1. One table, read top to bottom: the pages (GET) and the acts (POST) of SPEC §15, and the
   item paths notifications link to (`core.links`: `/approvals/drafts/NAME`,
   `/approvals/authorized/NAME`, `/activity/ID`).
2. No route here shadows the HTTP transport's (`/v1/…`, `/baton/…`, `/mcp`, `/metrics`,
   `/openapi.json`): those are matched first, and none of these paths starts like them.
3. The console is served only with the `console` extra (Jinja2, fido2); without it there is
   no route at `/` and the log says how to install it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from slopd.app import App
from slopd.transport.console.access import Access
from slopd.transport.console.approving import Approving
from slopd.transport.console.guard import Desk, RefusedError
from slopd.transport.console.pages import Pages

Endpoint = Callable[[Request], Awaitable[Response]]


def routes(app: App) -> tuple[list[BaseRoute], Desk]:
    """Rule 1: the console's routes over `app`, and its desk (told later where it is served)."""
    desk = Desk.open(app)
    pages, access, approving = Pages(desk), Access(desk), Approving(desk)

    def act(handler: Endpoint) -> Endpoint:
        async def endpoint(request: Request) -> Response:
            try:
                return await handler(request)
            except RefusedError as refused:
                return desk.refusal(request, refused)

        return endpoint

    table: list[BaseRoute] = [
        Route("/", pages.home, methods=["GET"]),
        Route("/static/{name}", pages.asset, methods=["GET"]),
        Route("/signin", pages.sign_in_page, methods=["GET"]),
        Route("/signin/options", act(access.sign_in_options), methods=["POST"]),
        Route("/signin/finish", act(access.sign_in), methods=["POST"]),
        Route("/signout", act(access.sign_out), methods=["POST"]),
        Route("/enroll", pages.enrol_page, methods=["GET"]),
        Route("/enroll/options", act(access.enrol_options), methods=["POST"]),
        Route("/enroll/finish", act(access.enrol), methods=["POST"]),
        Route("/approvals", pages.guarded(pages.approvals), methods=["GET"]),
        Route("/approvals/{where}/{name}", pages.guarded(pages.approval), methods=["GET"]),
        Route("/approvals/{where}/{name}/options", act(approving.approve_options), methods=["POST"]),
        Route("/approvals/{where}/{name}/approve", act(approving.approve), methods=["POST"]),
        Route("/approvals/drafts/{name}/decline", act(approving.decline), methods=["POST"]),
        Route("/activity", pages.guarded(pages.activity), methods=["GET"]),
        Route("/activity/{id}", pages.guarded(pages.envelope), methods=["GET"]),
        Route("/standups", pages.guarded(pages.standups), methods=["GET"]),
        Route("/batons", pages.guarded(pages.batons), methods=["GET"]),
        Route("/hub", pages.guarded(pages.hub), methods=["GET"]),
    ]
    return table, desk
