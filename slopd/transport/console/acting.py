"""What every act of the console (a POST) shares: its JSON body, its JSON answer, the ceremonies
and the signed-in human.

Rules (SPEC §15):
1. Every act passes `guard` rule 3 (Origin, and CSRF once signed in) before it does anything.
   Bodies are JSON (`{…}` of at most `MAX_BODY` bytes) for the WebAuthn steps, forms for the rest.
2. No ceremony begins while the console cannot run one (not served yet, or its site has no RP
   ID): 503, with the site's problem when it has one.
3. An act that needs a human answers 401 without a session (`guard` rule 1).
"""

from __future__ import annotations

import json
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from slopd.transport.console.ceremonies import Ceremonies
from slopd.transport.console.guard import Desk, RefusedError, secure
from slopd.transport.console.sessions import Session

MAX_BODY = 64 * 1024


def answer(status: int = 200, **body: Any) -> Response:
    """An act's JSON answer, with the console's headers (`guard` rule 4)."""
    return secure(JSONResponse(body, status))


async def read_body(request: Request) -> dict[str, Any]:
    """Rule 1: the request's JSON object, or a refusal saying why it is not one."""
    data = await request.body()
    if len(data) > MAX_BODY:
        raise RefusedError(413, f"the request is over {MAX_BODY} bytes")
    try:
        found = json.loads(data)
    except ValueError:
        raise RefusedError(400, "the request is not JSON") from None
    if not isinstance(found, dict):
        raise RefusedError(400, "the request is not a JSON object")
    return found


def ceremonies(desk: Desk) -> Ceremonies:
    """Rule 2."""
    if desk.ceremonies is None:
        site = desk.site
        raise RefusedError(
            503, site.problem if site is not None and site.problem else "the console is starting"
        )
    return desk.ceremonies


def signed_in(desk: Desk, request: Request) -> Session:
    """Rule 3: the request's session."""
    session = desk.session(request)
    if session is None:
        raise RefusedError(401, "sign in first (your session ended)")
    return session
