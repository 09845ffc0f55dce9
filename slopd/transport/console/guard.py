"""What every console request passes through: humans only, same origin, CSRF, strict headers.

Rules (SPEC §15):
1. A console page or act needs a session cookie from a passkey sign-in; `Authorization` is never
   read here, so an agent's bearer token opens nothing. Pages without a session redirect to the
   sign-in page; acts answer 401.
2. The cookie is `HttpOnly`, `SameSite=Strict`, `Path=/`, and `Secure` (as `__Host-slopd`) off
   loopback; it lives as long as the session.
3. Every state change (every POST) must carry `Origin` equal to the console's origin, and, once
   signed in, the session's CSRF token (form field `csrf` or header `X-CSRF-Token`); anything
   else is 403 naming the reason, and nothing happens.
4. Every answer carries a Content-Security-Policy allowing only slopd's own scripts, styles and
   images (no inline script, no eval, no framing), `nosniff`, no referrer to other sites, and no caching.
5. Sign-in and enrolment ceremonies are rate limited per client address (`ATTEMPTS` begun a
   minute): past that, 429 with `Retry-After`.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from slopd.app import App
from slopd.baton.store import Store
from slopd.core.layout import LEDGER_FILE
from slopd.shell.ledger.history import History
from slopd.shell.log import Logger
from slopd.transport.console.ceremonies import Ceremonies
from slopd.transport.console.sessions import Session, Sessions
from slopd.transport.console.shelf import Shelf
from slopd.transport.console.site import Site, resolve
from slopd.transport.ratelimit import Limiter

ATTEMPTS = 30  # ceremonies begun per client a minute: a human retries a few times, a guesser thousands
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",  # "no-referrer" would make a form post's Origin "null"
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}


class RefusedError(Exception):
    """A request the console will not serve: its status and the reason shown."""

    def __init__(self, status: int, reason: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(reason)
        self.status, self.reason, self.headers = status, reason, headers or {}


@dataclass(eq=False)
class Desk:
    """The console's state: the hub's app, sessions, ceremonies and where it is served."""

    app: App
    log: Logger
    sessions: Sessions
    store: Store
    history: History
    templates: Environment
    limiter: Limiter = field(default_factory=lambda: Limiter(ATTEMPTS))
    shelf: Shelf = field(default_factory=Shelf)  # the Approvals list's parsed files
    site: Site | None = None
    ceremonies: Ceremonies | None = None

    @classmethod
    def open(cls, app: App) -> Desk:
        templates = Environment(
            loader=PackageLoader("slopd.transport.console", "templates"),
            autoescape=select_autoescape(default=True),
            trim_blocks=True,
            lstrip_blocks=True,
        )
        return cls(
            app,
            app.log.bind(transport="console"),
            Sessions(app.config.console.session_ttl),
            Store(app.state),
            History(app.state / LEDGER_FILE),
            templates,
        )

    def serve_at(self, listening: str) -> None:
        """Where the server listens, once it does (the port may have been chosen by the kernel)."""
        console = self.app.config.console
        self.site = resolve(listening, console.rp_id, console.public_url)
        if self.site.rp_id is not None:
            self.ceremonies = Ceremonies(self.site.rp_id, self.site.origin)
        self.log.info(
            "console.serving", url=self.site.public_url, rp_id=self.site.rp_id, problem=self.site.problem
        )

    @property
    def cookie(self) -> str:
        return "__Host-slopd" if self.site is not None and self.site.secure else "slopd-session"

    def session(self, request: Request) -> Session | None:
        """Rule 1: the session of the request's cookie, if any."""
        return self.sessions.get(request.cookies.get(self.cookie), time.time())

    def check_post(self, request: Request, session: Session | None, csrf: str | None) -> None:
        """Rule 3."""
        origin = request.headers.get("origin")
        expected = self.site.origin if self.site is not None else None
        if origin is None or origin != expected:
            raise RefusedError(
                403, f"refused: the request's Origin {origin!r} is not this console's ({expected})"
            )
        if session is not None and not Sessions.csrf_ok(session, csrf):
            raise RefusedError(403, "refused: the form's CSRF token is missing or wrong (reload the page)")

    def attempt(self, request: Request) -> None:
        """Rule 5."""
        client = request.client.host if request.client else "-"
        allowance = self.limiter.take(client, time.monotonic())
        if not allowance.allowed:
            raise RefusedError(429, f"too many sign-in attempts: over {ATTEMPTS} a minute", allowance.headers)

    def sign_in(self, response: Response, session: Session) -> None:
        """Rule 2."""
        response.set_cookie(
            self.cookie,
            session.id,
            max_age=int(session.expires - time.time()),
            path="/",
            httponly=True,
            samesite="strict",
            secure=self.site is not None and self.site.secure,
        )

    def render(self, request: Request, template: str, context: dict[str, Any], status: int = 200) -> Response:
        """A page, or its context as JSON with `?format=json` (views rule 2); rule 4's headers."""
        session = self.session(request)
        if request.query_params.get("format") == "json":
            return secure(JSONResponse(json.loads(json.dumps(context, default=str)), status))
        page = self.templates.get_template(template).render(
            **context,
            signed_in=session,
            csrf=session.csrf if session else "",
            site=self.site,
            path=request.url.path,
        )
        return secure(HTMLResponse(page, status))

    def refusal(self, request: Request, refused: RefusedError) -> Response:
        if request.method == "POST" and "application/json" in request.headers.get("content-type", ""):
            response: Response = JSONResponse({"error": refused.reason}, refused.status, refused.headers)
            return secure(response)
        response = self.render(
            request, "message.html", {"title": "RefusedError", "message": refused.reason}, refused.status
        )
        response.headers.update(refused.headers)
        return response


def secure(response: Response) -> Response:
    """Rule 4."""
    response.headers.update(HEADERS)
    return response


def to_sign_in(request: Request) -> Response:
    """Rule 1: a page asked for without a session."""
    return secure(RedirectResponse(f"/signin?next={request.url.path}", 303))
