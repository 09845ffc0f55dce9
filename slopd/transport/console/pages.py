"""The console's pages (GET): Approvals, one approval, Activity, one envelope, Standups, Batons,
Hub, and the sign-in and enrolment pages. Each a small handler over a view (`console.views`).

Rules:
1. Every page but sign-in, enrolment and the static files needs a session (`guard` rule 1).
2. Blocking reads (files, the ledger, doctor's checks) run in a worker thread.
3. An approval's page pins the exact bytes it shows: for a draft, the order it becomes for this
   human now (`approvals` rule 2); they are kept in the session's ceremony state and are the
   bytes signed if the human approves from this page.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from importlib import resources
from typing import Any

import anyio.to_thread
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from slopd.transport.console import approvals, views
from slopd.transport.console.guard import Desk, RefusedError, secure, to_sign_in
from slopd.transport.console.sessions import PIN_TTL, Session
from slopd.transport.console.site import local_path

Page = Callable[[Request], Awaitable[Response]]
STATIC = {"console.css": "text/css; charset=utf-8", "console.js": "text/javascript; charset=utf-8"}


class Pages:
    def __init__(self, desk: Desk) -> None:
        self.desk = desk
        folder = resources.files(__package__).joinpath("static")
        self.static = {name: folder.joinpath(name).read_bytes() for name in STATIC}

    def guarded(self, handler: Callable[[Request, Session], Awaitable[Response]]) -> Page:
        """Rule 1, and refusals rendered as pages."""

        async def page(request: Request) -> Response:
            session = self.desk.session(request)
            if session is None:
                return to_sign_in(request)
            try:
                return await handler(request, session)
            except RefusedError as refused:
                return self.desk.refusal(request, refused)

        return page

    async def home(self, request: Request) -> Response:
        return secure(RedirectResponse("/approvals", 303))

    async def asset(self, request: Request) -> Response:
        name = request.path_params["name"]
        if name not in STATIC:
            return secure(Response("not found", 404, media_type="text/plain"))
        response = Response(self.static[name], media_type=STATIC[name])
        return secure(response)

    async def sign_in_page(self, request: Request) -> Response:
        return self.desk.render(request, "signin.html", {"title": "Sign in", "next": _next(request)})

    async def enrol_page(self, request: Request) -> Response:
        return self.desk.render(request, "enroll.html", {"title": "Enrol a passkey"})

    async def approvals(self, request: Request, session: Session) -> Response:
        desk = self.desk
        context = await anyio.to_thread.run_sync(
            lambda: views.approvals_page(desk.app.hub, desk.app.config, desk.shelf)
        )
        done = request.query_params.get("done")
        return desk.render(request, "approvals.html", {"title": "Approvals", "done": done, **context})

    async def approval(self, request: Request, session: Session) -> Response:
        """Rule 3."""
        desk, where, name = self.desk, request.path_params["where"], request.path_params["name"]
        item = await anyio.to_thread.run_sync(lambda: approvals.read(desk.app.hub, where, name))
        if item is None:
            raise RefusedError(404, f"nothing waits as {where}/{name} (approved, declined or gone)")
        order, sidecar = pinned(desk, item, session)
        context = views.approval_page(item, desk.app.config, order, sidecar)
        context["title"] = f"Approve {name}"
        context["pin"] = (
            desk.sessions.begin(
                "pin",
                order,
                time.time(),
                PIN_TTL,
                session=session.id,
                where=where,
                name=name,
                sidecar=sidecar,
            )
            if order
            else ""
        )
        return desk.render(request, "approval.html", context)

    async def activity(self, request: Request, session: Session) -> Response:
        desk = self.desk
        context = await anyio.to_thread.run_sync(lambda: views.activity_page(desk.app.hub, desk.history))
        return desk.render(request, "activity.html", {"title": "Activity", **context})

    async def envelope(self, request: Request, session: Session) -> Response:
        desk, key = self.desk, request.path_params["id"]
        context = await anyio.to_thread.run_sync(lambda: views.envelope_page(desk.app.hub, desk.history, key))
        if context is None:
            raise RefusedError(404, f"the ledger has no envelope {key!r}")
        return desk.render(request, "envelope.html", {"title": f"Envelope {key}", **context})

    async def standups(self, request: Request, session: Session) -> Response:
        context = await anyio.to_thread.run_sync(lambda: views.standups_page(self.desk.app.hub))
        return self.desk.render(request, "standups.html", {"title": "Standups", **context})

    async def batons(self, request: Request, session: Session) -> Response:
        desk = self.desk
        context = await anyio.to_thread.run_sync(lambda: views.batons_page(desk.app.hub, desk.store))
        return desk.render(request, "batons.html", {"title": "Batons", **context})

    async def hub(self, request: Request, session: Session) -> Response:
        app = self.desk.app
        context: dict[str, Any] = await anyio.to_thread.run_sync(
            lambda: views.hub_page(app.root, app.state, app.config_path, datetime.now(UTC))
        )
        return self.desk.render(request, "hub.html", {"title": "Hub", **context})


def pinned(desk: Desk, item: approvals.Waiting, session: Session) -> tuple[bytes | None, str | None]:
    """Rule 3: the exact bytes this human would sign here, and the sidecar the signature goes to."""
    if item.envelope is None or item.data is None:
        return None, None
    if item.where == "authorized":
        sidecar = approvals.sidecar_for(item, session.principal)
        return (item.data, sidecar) if sidecar is not None else (None, None)
    config = desk.app.config
    action = config.actions.get(item.envelope.action or "")
    quorum = action.quorum if action is not None else 1
    try:
        order = approvals.order_from_draft(
            item.envelope, item.name, session.principal, config.watcher, quorum, datetime.now(UTC)
        )
    except ValueError:  # EnvelopeError: a principal that cannot be a `from`, say
        return None, None
    return order, f"{item.name}.sig"


def _next(request: Request) -> str:
    return local_path(request.query_params.get("next"))
