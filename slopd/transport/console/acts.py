"""The console's acts (POST): sign in, enrol, approve, decline, sign out.

Rules (SPEC §15):
1. Every act passes `guard` rule 3 (Origin, and CSRF once signed in); sign-in and enrolment are
   rate limited (`guard` rule 5). Bodies are JSON (`{…}` of at most `MAX_BODY` bytes) for the
   WebAuthn steps, forms for the rest.
2. Sign-in keys are exactly the `sk-ecdsa-sha2-nistp256@openssh.com` keys of allowed_signers
   (re-read at each sign-in) whose application is the console's RP ID; the principal is the
   first literal principal of the first entry allowing that key in the namespace now.
3. Enrolment: a valid one-time code opens one registration for its principal; the new passkey's
   allowed_signers line is recorded against the code and shown — never written to
   allowed_signers (`enrolments` rule 3).
4. Approving: the challenge is the SSHSIG signed data of the pinned bytes (`pages` rule 3); the
   assertion is wrapped into SSHSIG (`core.passkeys`) and must verify, by a key allowed_signers
   lets this principal sign with now, before anything is written; then the `.sig` and (for a
   draft) the order go into `authorized/` (`approvals` rule 4) and the daemon is told. For a
   draft, the requesting agent gets an `ack` naming who approved (`daemon.notices`), and the
   draft is archived. The daemon's verifier decides whether the order runs.
5. Declining a draft needs a reason: the requesting agent gets the `error` reply
   `declined by PRINCIPAL: REASON`, and the draft is archived.
6. Every approval and decline is logged (`console.approved`, `console.declined`) with the
   principal, the key's fingerprint and the sha256 of what was signed or declined.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import anyio.to_thread
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response

from slopd.core import allowed_signers, passkeys, replies, sshsig
from slopd.core.envelope import Envelope
from slopd.core.ids import reply_id
from slopd.core.orders import Trust
from slopd.core.sshkeys import SK_ECDSA, PublicKey
from slopd.core.wire import SignatureError
from slopd.transport.console import approvals, enrolments
from slopd.transport.console.ceremonies import Ceremonies, CeremonyError, parse_assertion
from slopd.transport.console.guard import Desk, RefusedError, secure
from slopd.transport.console.sessions import PIN_TTL, Session
from slopd.transport.console.site import local_path

MAX_BODY = 64 * 1024
NOTICE_TIMEOUT = 30.0


def _json(status: int = 200, **body: Any) -> Response:
    return secure(JSONResponse(body, status))


async def _body(request: Request) -> dict[str, Any]:
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


class Acts:
    def __init__(self, desk: Desk) -> None:
        self.desk = desk

    def _ceremonies(self) -> Ceremonies:
        if self.desk.ceremonies is None:
            site = self.desk.site
            raise RefusedError(
                503, site.problem if site is not None and site.problem else "the console is starting"
            )
        return self.desk.ceremonies

    def _passkeys(self, principal: str | None = None) -> list[tuple[PublicKey, str]]:
        """Rule 2: (key, principal) for every passkey of this console in allowed_signers now."""
        app, site = self.desk.app, self.desk.site
        trust = app.trusted.check() if app.trusted is not None else None  # the daemon's, as it is now
        if trust is not None and trust.unusable is not None:
            raise RefusedError(503, f"allowed_signers cannot be used: {trust.unusable}")
        if trust is None or site is None:
            return []
        now, found, seen = datetime.now(UTC), [], set()
        for entry in trust.signers:
            key = entry.public_key
            if key.type != SK_ECDSA or key.application != site.rp_id or key in seen:
                continue
            seen.add(key)
            who = _literal(trust.signers, key, trust.namespace, now)
            if who is not None and (
                principal is None or who == principal or _allows(trust, key, principal, now)
            ):
                found.append((key, who if principal is None else principal))
        return found

    def _allow(self, keys: list[PublicKey]) -> list[bytes]:
        hints = enrolments.credentials(self.desk.app.state)
        lines = {line.split()[-1]: bytes.fromhex(credential) for credential, line in hints.items()}
        return [lines[key.line().split()[1]] for key in keys if key.line().split()[1] in lines]

    # -- sign in and out ----------------------------------------------------------------------

    async def sign_in_options(self, request: Request) -> Response:
        desk = self.desk
        desk.check_post(request, None, None)
        desk.attempt(request)
        keys = [key for key, _ in await anyio.to_thread.run_sync(self._passkeys)]
        options, state = self._ceremonies().authentication(self._allow(keys))
        return _json(options=options, ceremony=desk.sessions.begin("signin", state, time.time()))

    async def sign_in(self, request: Request) -> Response:
        desk = self.desk
        desk.check_post(request, None, None)
        body = await _body(request)
        ceremony = desk.sessions.take(body.get("ceremony"), "signin", time.time())
        if ceremony is None:
            raise RefusedError(400, "the sign-in expired; try again")
        candidates = dict(await anyio.to_thread.run_sync(self._passkeys))
        try:
            key = self._ceremonies().signed_in(ceremony.state, body.get("credential") or {}, list(candidates))
        except CeremonyError as error:
            desk.log.warning("console.sign_in_refused", reason=str(error))
            raise RefusedError(403, str(error)) from None
        session = desk.sessions.open(candidates[key], key.fingerprint, time.time())
        desk.log.info("console.signed_in", principal=session.principal, key=key.fingerprint)
        response = _json(redirect=local_path(body.get("next")))
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
        code = str((await _body(request)).get("code", ""))
        found = enrolments.usable(desk.app.state, code)
        if found is None:
            raise RefusedError(
                403, "no such code, or it expired or was used: run `slopd console enroll` again"
            )
        user = hashlib.sha256(found.principal.encode()).digest()[:16]
        options, state = self._ceremonies().registration(found.principal, user)
        ceremony = desk.sessions.begin("enrol", state, time.time(), code=code, principal=found.principal)
        return _json(options=options, ceremony=ceremony, principal=found.principal)

    async def enrol(self, request: Request) -> Response:
        desk = self.desk
        desk.check_post(request, None, None)
        body = await _body(request)
        ceremony = desk.sessions.take(body.get("ceremony"), "enrol", time.time())
        if ceremony is None or enrolments.usable(desk.app.state, ceremony.data["code"]) is None:
            raise RefusedError(
                400, "the enrolment expired or its code was used; run `slopd console enroll` again"
            )
        try:
            credential, point = self._ceremonies().registered(ceremony.state, body.get("credential") or {})
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
        return _json(line=line)

    # -- approve and decline -------------------------------------------------------------------

    async def approve_options(self, request: Request) -> Response:
        desk, session = self.desk, self._session(request)
        body = await _body(request)
        desk.check_post(request, session, request.headers.get("x-csrf-token"))
        pin = desk.sessions.take(body.get("pin"), "pin", time.time())
        where, name = request.path_params["where"], request.path_params["name"]
        if (
            pin is None
            or pin.data["session"] != session.id
            or (pin.data["where"], pin.data["name"]) != (where, name)
        ):
            raise RefusedError(400, "this page is out of date: reload it to see what you would sign")
        order: bytes = pin.state
        item = await anyio.to_thread.run_sync(lambda: approvals.read(desk.app.hub, where, name))
        action = desk.app.config.actions.get(item.envelope.action or "") if item and item.envelope else None
        keys = [key for key, _ in await anyio.to_thread.run_sync(lambda: self._passkeys(session.principal))]
        challenge = passkeys.challenge(order, desk.app.config.auth.namespace)
        verified = action is not None and action.require == "verified"
        options, state = self._ceremonies().authentication(
            self._allow(keys), challenge=challenge, verified=verified
        )
        ceremony = desk.sessions.begin("approve", state, time.time(), **pin.data, order=order)
        again = desk.sessions.begin("pin", order, time.time(), PIN_TTL, **pin.data)
        return _json(options=options, ceremony=ceremony, pin=again)

    async def approve(self, request: Request) -> Response:
        desk, session = self.desk, self._session(request)
        body = await _body(request)
        desk.check_post(request, session, request.headers.get("x-csrf-token"))
        ceremony = desk.sessions.take(body.get("ceremony"), "approve", time.time())
        where, name = request.path_params["where"], request.path_params["name"]
        if ceremony is None or (ceremony.data["session"], ceremony.data["where"], ceremony.data["name"]) != (
            session.id,
            where,
            name,
        ):  # the very item it was begun for: a draft's ceremony never signs an order of that name
            raise RefusedError(400, "the approval expired; press the button again")
        order: bytes = ceremony.data["order"]
        try:
            assertion = parse_assertion(body.get("credential") or {})
        except CeremonyError as error:
            raise RefusedError(400, str(error)) from None
        namespace = desk.app.config.auth.namespace
        keys = await anyio.to_thread.run_sync(lambda: self._passkeys(session.principal))
        signature, key = _wrap(keys, order, assertion, namespace)
        item = await anyio.to_thread.run_sync(lambda: approvals.read(desk.app.hub, where, name))
        if item is None:
            raise RefusedError(409, f"{where}/{name} is no longer waiting (another human acted first?)")
        sidecar = ceremony.data["sidecar"]
        written = order if where == "drafts" else None
        try:
            await anyio.to_thread.run_sync(
                lambda: approvals.write_signed(desk.app.hub, name, written, sidecar, signature)
            )
        except FileExistsError:
            raise RefusedError(
                409, f"authorized/ already holds {name} or {sidecar}: nothing was written"
            ) from None
        desk.app.arrived("authorized", sidecar)
        if written is not None:
            desk.app.arrived("authorized", name)
        digest = hashlib.sha256(order).hexdigest()
        desk.log.info(
            "console.approved", principal=session.principal, key=key.fingerprint, sha256=digest,
            order=f"authorized/{name}", sidecar=f"authorized/{sidecar}",
        )  # fmt: skip
        if where == "drafts" and item.envelope is not None:
            await self._notify_agent(item, "approved", session, key.fingerprint, digest)
        return _json(redirect=f"/approvals?done=approved+{name}")

    async def decline(self, request: Request) -> Response:
        desk, session = self.desk, self._session(request)
        form = await request.form()
        desk.check_post(request, session, str(form.get("csrf", "")))
        name, reason = request.path_params["name"], " ".join(str(form.get("reason", "")).split())
        if not reason:
            raise RefusedError(400, "say why you decline: the agent gets the reason")
        item = await anyio.to_thread.run_sync(lambda: approvals.read(desk.app.hub, "drafts", name))
        if item is None or item.envelope is None:
            raise RefusedError(404, f"no draft {name} waits (declined, approved or gone)")
        desk.log.info(
            "console.declined", principal=session.principal, key=session.fingerprint, sha256=item.sha256,
            draft=f"outbox/drafts/{name}", reason=reason,
        )  # fmt: skip
        await self._notify_agent(item, reason, session, session.fingerprint, item.sha256, declined=True)
        return secure(RedirectResponse(f"/approvals?done=declined+{name}", 303))

    async def _notify_agent(
        self,
        item: approvals.Waiting,
        said: str,
        session: Session,
        fingerprint: str,
        digest: str,
        *,
        declined: bool = False,
    ) -> None:
        """Rules 4 and 5: the requesting agent's reply, by the daemon (`daemon.notices`)."""
        desk, envelope = self.desk, item.envelope
        assert envelope is not None
        to, now, watcher = item.requested_by, datetime.now(UTC), desk.app.config.watcher
        reply: Envelope | None = None
        if to is None:
            desk.log.warning("console.no_requester", draft=item.name, reason="no requested_by: no reply sent")
        elif declined:
            refused = replies.error(
                answering=envelope.id, to=to, reasons=[f"declined by {session.principal}: {said}"],
                file=f"outbox/drafts/{item.name}", mode="execute", watcher=watcher, now=now,
                headline="Declined",
            )  # fmt: skip
            # An id of its own: the draft's id is the agent's to choose, and may be another
            # envelope's, whose own `ID.error` this must never replace or pre-empt.
            reply = replace(refused, id=reply_id(envelope.id, "declined"))
        else:
            text = (
                f"Approved by {session.principal} ({fingerprint}) with a passkey: the order"
                f" authorized/{item.name} (sha256 {digest}) and its signature are in authorized/;"
                " the watcher's verifier decides."
            )
            acked = replies.ack(
                answering=envelope.id, to=to, text=text, mode="execute", watcher=watcher, now=now
            )
            reply = replace(acked, id=reply_id(envelope.id, "approved"))
        future = desk.app.notices.send(reply, item.name)
        try:
            await anyio.to_thread.run_sync(lambda: future.result(NOTICE_TIMEOUT))
        except Exception as error:
            desk.log.error("console.notice_failed", draft=item.name, reason=str(error))
            raise RefusedError(500, f"the reply to {to} could not be written: {error}") from None

    def _session(self, request: Request) -> Session:
        session = self.desk.session(request)
        if session is None:
            raise RefusedError(401, "sign in first (your session ended)")
        return session


def _literal(
    entries: tuple[allowed_signers.Entry, ...], key: PublicKey, namespace: str, now: datetime
) -> str | None:
    """Rule 2: the first literal principal of the first entry allowing `key` now."""
    for principals, _line in allowed_signers.find_principals(
        entries, public_key=key, namespace=namespace, now=now
    ):
        for principal in principals.split(","):
            literal = (
                principal and not principal.startswith("!") and not any(mark in principal for mark in "*?")
            )
            if literal and allowed_signers.match_pattern_list(principal, principals):
                return principal
    return None


def _allows(trust: Trust, key: PublicKey, principal: str, now: datetime) -> bool:
    verdict = allowed_signers.authorize(
        trust.signers, public_key=key, principal=principal, namespace=trust.namespace, now=now
    )
    return isinstance(verdict, allowed_signers.Authorized)


def _wrap(
    keys: list[tuple[PublicKey, str]], order: bytes, assertion: Any, namespace: str
) -> tuple[bytes, PublicKey]:
    """Rule 4: the SSHSIG file of the first of the principal's passkeys whose signature it is."""
    reasons = []
    for key, _principal in keys:
        try:
            signature = passkeys.wrap(
                key, assertion.authenticator_data, assertion.client_data, assertion.signature, namespace
            )
        except SignatureError as error:
            reasons.append(error.reason)
            continue
        verdict = sshsig.verify(order, signature, namespace=namespace)
        if isinstance(verdict, sshsig.Verified):
            return signature, key
        reasons.append(verdict.reason)
    why = "; ".join(dict.fromkeys(reasons)) or "you have no passkey for this console in allowed_signers"
    raise RefusedError(403, f"the passkey's signature does not verify, nothing was written: {why}")
