"""The console's acts of access (POST): sign in, sign out, enrol a passkey.

Rules (SPEC §15):
1. Each passes `acting` rule 1; beginning a sign-in or an enrolment is rate limited (`guard`
   rule 5). A ceremony is finished only by the step it was begun for, once, before it expires.
2. A sign-in is made with one of the console's passkeys (`keyring` rule 1), and the session
   opened is its principal's.
3. Enrolment: a valid one-time code opens one registration for its principal; the new passkey's
   allowed_signers line is recorded against the code and shown — never written to
   allowed_signers (`enrolments` rule 3).
"""

from __future__ import annotations

import hashlib
import time
from functools import partial

import anyio.to_thread
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from slopd.core import passkeys
from slopd.transport.console import enrolments, keyring
from slopd.transport.console.acting import answer, ceremonies, read_body
from slopd.transport.console.ceremonies import CeremonyError
from slopd.transport.console.guard import Desk, RefusedError, secure
from slopd.transport.console.site import local_path


class Access:
    def __init__(self, desk: Desk) -> None:
        self.desk = desk

    # -- sign in and out ----------------------------------------------------------------------

    async def sign_in_options(self, request: Request) -> Response:
        desk = self.desk
        desk.check_post(request, None, None)
        desk.attempt(request)
        keys = [key for key, _ in await anyio.to_thread.run_sync(partial(keyring.passkeys, desk))]
        options, state = ceremonies(desk).authentication(keyring.credentials(desk, keys))
        return answer(options=options, ceremony=desk.sessions.begin("signin", state, time.time()))

    async def sign_in(self, request: Request) -> Response:
        desk = self.desk
        desk.check_post(request, None, None)
        body = await read_body(request)
        ceremony = desk.sessions.take(body.get("ceremony"), "signin", time.time())
        if ceremony is None:
            raise RefusedError(400, "the sign-in expired; try again")
        candidates = dict(await anyio.to_thread.run_sync(partial(keyring.passkeys, desk)))
        try:
            key = ceremonies(desk).signed_in(ceremony.state, body.get("credential") or {}, list(candidates))
        except CeremonyError as error:
            desk.log.warning("console.sign_in_refused", reason=str(error))
            raise RefusedError(403, str(error)) from None
        session = desk.sessions.open(candidates[key], key.fingerprint, time.time())
        desk.log.info("console.signed_in", principal=session.principal, key=key.fingerprint)
        response = answer(redirect=local_path(body.get("next")))
        desk.sign_in(response, session)
        return response

    async def sign_out(self, request: Request) -> Response:
        desk = self.desk
        session = desk.session(request)
        form = await request.form()
        desk.check_post(request, session, str(form.get("csrf", "")))
        if session is not None:
            desk.sessions.close(session.id)
        response = secure(RedirectResponse("/signin", 303))
        response.delete_cookie(desk.cookie, path="/")
        return response

    # -- enrolment -----------------------------------------------------------------------------

    async def enrol_options(self, request: Request) -> Response:
        desk = self.desk
        desk.check_post(request, None, None)
        desk.attempt(request)
        code = str((await read_body(request)).get("code", ""))
        found = enrolments.usable(desk.app.state, code)
        if found is None:
            raise RefusedError(
                403, "no such code, or it expired or was used: run `slopd console enroll` again"
            )
        user = hashlib.sha256(found.principal.encode()).digest()[:16]
        options, state = ceremonies(desk).registration(found.principal, user)
        ceremony = desk.sessions.begin("enrol", state, time.time(), code=code, principal=found.principal)
        return answer(options=options, ceremony=ceremony, principal=found.principal)

    async def enrol(self, request: Request) -> Response:
        desk = self.desk
        desk.check_post(request, None, None)
        body = await read_body(request)
        ceremony = desk.sessions.take(body.get("ceremony"), "enrol", time.time())
        if ceremony is None or enrolments.usable(desk.app.state, ceremony.data["code"]) is None:
            raise RefusedError(
                400, "the enrolment expired or its code was used; run `slopd console enroll` again"
            )
        try:
            credential, point = ceremonies(desk).registered(ceremony.state, body.get("credential") or {})
        except CeremonyError as error:
            raise RefusedError(400, str(error)) from None
        principal, site = ceremony.data["principal"], desk.site
        assert site is not None
        assert site.rp_id is not None
        line = passkeys.key_line(principal, point, site.rp_id, desk.app.config.auth.namespace)
        enrolments.complete(desk.app.state, ceremony.data["code"], line, credential)
        desk.log.info(
            "console.enrolled", principal=principal, key=passkeys.public_key(point, site.rp_id).fingerprint
        )
        return answer(line=line)
