"""The console's acts on what waits for approval (POST): approve with a passkey, or decline.

Rules (SPEC §15):
1. Each passes `acting` rule 1 and needs a signed-in human (`acting` rule 3); an approval's
   ceremony signs only the item, and the pinned bytes, its page was rendered for.
2. Approving: the challenge is the SSHSIG signed data of the pinned bytes (`pages` rule 3); the
   assertion is wrapped into SSHSIG (`core.passkeys`) and must verify, by a key allowed_signers
   lets this principal sign with now (`keyring` rule 2), before anything is written; then the
   `.sig` and (for a draft) the order go into `authorized/` (`approvals` rule 4) and the daemon
   is told. For a draft, the requesting agent gets an `ack` naming who approved
   (`daemon.notices`), and the draft is archived. The daemon's verifier decides whether the
   order runs.
3. Declining a draft needs a reason: the requesting agent gets the `error` reply
   `declined by PRINCIPAL: REASON`, and the draft is archived.
4. Every approval and decline is logged (`console.approved`, `console.declined`) with the
   principal, the key's fingerprint and the sha256 of what was signed or declined.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import anyio.to_thread
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from slopd.core import passkeys, replies, sshsig
from slopd.core.envelope import Envelope
from slopd.core.ids import reply_id
from slopd.core.sshkeys import PublicKey
from slopd.core.wire import SignatureError
from slopd.transport.console import approvals, keyring
from slopd.transport.console.acting import answer, ceremonies, read_body, signed_in
from slopd.transport.console.ceremonies import CeremonyError, parse_assertion
from slopd.transport.console.guard import Desk, RefusedError, secure
from slopd.transport.console.sessions import PIN_TTL, Ceremony, Session

NOTICE_TIMEOUT = 30.0
OUT_OF_DATE = {  # what a stale or foreign one-time token is told, by kind
    "pin": "this page is out of date: reload it to see what you would sign",
    "approve": "the approval expired; press the button again",
}


class Approving:
    def __init__(self, desk: Desk) -> None:
        self.desk = desk

    async def approve_options(self, request: Request) -> Response:
        desk, session = self.desk, signed_in(self.desk, request)
        where, name = request.path_params["where"], request.path_params["name"]
        pin, _ = await self._taken(request, session, "pin", "pin")
        order: bytes = pin.state
        item = await anyio.to_thread.run_sync(lambda: approvals.read(desk.app.hub, where, name))
        action = desk.app.config.actions.get(item.envelope.action or "") if item and item.envelope else None
        keys = [
            key
            for key, _ in await anyio.to_thread.run_sync(lambda: keyring.passkeys(desk, session.principal))
        ]
        challenge = passkeys.challenge(order, desk.app.config.auth.namespace)
        verified = action is not None and action.require == "verified"
        options, state = ceremonies(desk).authentication(
            keyring.credentials(desk, keys), challenge=challenge, verified=verified
        )
        ceremony = desk.sessions.begin("approve", state, time.time(), **pin.data, order=order)
        again = desk.sessions.begin("pin", order, time.time(), PIN_TTL, **pin.data)
        return answer(options=options, ceremony=ceremony, pin=again)

    async def approve(self, request: Request) -> Response:
        desk, session = self.desk, signed_in(self.desk, request)
        where, name = request.path_params["where"], request.path_params["name"]
        ceremony, body = await self._taken(request, session, "approve", "ceremony")
        order: bytes = ceremony.data["order"]
        try:
            assertion = parse_assertion(body.get("credential") or {})
        except CeremonyError as error:
            raise RefusedError(400, str(error)) from None
        namespace = desk.app.config.auth.namespace
        keys = await anyio.to_thread.run_sync(lambda: keyring.passkeys(desk, session.principal))
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
        return answer(redirect=f"/approvals?done=approved+{name}")

    async def _taken(
        self, request: Request, session: Session, kind: str, field: str
    ) -> tuple[Ceremony, dict[str, Any]]:
        """A state change's checks (CSRF, Origin), then the one-time `kind` named by the body's
        `field`, if it was begun in this session for this very item — a draft's ceremony never
        signs an order of that name; and the body."""
        desk = self.desk
        body = await read_body(request)
        desk.check_post(request, session, request.headers.get("x-csrf-token"))
        taken = desk.sessions.take(body.get(field), kind, time.time())
        item = (session.id, request.path_params["where"], request.path_params["name"])
        if taken is None or (taken.data["session"], taken.data["where"], taken.data["name"]) != item:
            raise RefusedError(400, OUT_OF_DATE[kind])
        return taken, body

    async def decline(self, request: Request) -> Response:
        desk, session = self.desk, signed_in(self.desk, request)
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
        """Rules 2 and 3: the requesting agent's reply, by the daemon (`daemon.notices`)."""
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


def _wrap(
    keys: list[tuple[PublicKey, str]], order: bytes, assertion: Any, namespace: str
) -> tuple[bytes, PublicKey]:
    """Rule 2: the SSHSIG file of the first of the principal's passkeys whose signature it is."""
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
