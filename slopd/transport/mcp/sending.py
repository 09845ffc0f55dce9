"""`slop_send` for one seat: its envelope composed as `slopd send` does, admitted as HTTP does.

Rules:
1. `send` composes the envelope as `slopd send` does (`submit.compose`) and admits it as the
   HTTP transport does (`Intake`: `core.admission`, the atomic drop into `inbox/`, the receipt
   in the ledger). A resend of an `id` already used is composed with the first envelope's
   `created_at`, so the same arguments are the same bytes — a replay that writes nothing and
   returns the first receipt — and other arguments a conflict (SPEC §14). A generated id that is
   already taken (64 random bits: never, in practice) is replaced by a fresh one.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from slopd import submit
from slopd.core.envelope import Envelope, EnvelopeError, render
from slopd.core.validation import ID_PATTERN, parse
from slopd.shell.reads import Contents
from slopd.transport.mcp.parts import SeatParts
from slopd.transport.problems import Problem


class Sending(SeatParts):
    """`Seat`'s sending (`mcp.seat`), over the seat's parts (`mcp.parts`)."""

    def send(
        self,
        *,
        type: str,
        to: str,
        body: str,
        in_reply_to: str | None = None,
        mode: str | None = None,
        project: str | None = None,
        id: str | None = None,
    ) -> dict[str, Any]:
        """Rule 1."""
        fields: dict[str, Any] = {
            "type": type, "sender": self.seat, "to": to, "body": body,
            "in_reply_to": in_reply_to, "mode": mode, "project": project,
        }  # fmt: skip
        if id is None:
            return self._send_new(fields)
        envelope = dataclasses.replace(submit.compose(**fields, now=self.clock()), id=id)
        first = self._first(id)
        if first is not None:  # a resend: the same content is the same envelope, created_at and all
            envelope = dataclasses.replace(envelope, created_at=first.created_at)
        return self._accept(envelope)

    def _send_new(self, fields: dict[str, Any]) -> dict[str, Any]:
        """A generated id that is somehow taken already is replaced by another (rule 1)."""
        for attempt in range(1, submit.GENERATED_ID_TRIES + 1):
            envelope = submit.compose(**fields, now=self.clock(), token=self.token)
            try:
                return self._accept(envelope)
            except Problem as problem:
                if problem.kind != "id-conflict" or attempt == submit.GENERATED_ID_TRIES:
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    def _accept(self, envelope: Envelope) -> dict[str, Any]:
        accepted = self.intake.accept(self.seat, render(envelope), json_form=False, idempotency_key=None)
        receipt = accepted.receipt.public(replayed=True) if accepted.replayed else accepted.receipt.public()
        return {**receipt, "pending": self.pending()}

    def _first(self, id: str) -> Envelope | None:
        """The envelope first sent under `id` (any seat's, any surface's), if it can be read."""
        if ID_PATTERN.fullmatch(id) is None:
            return None  # admission refuses the id itself
        for relative in self._places(id):
            found = self.hub.read_path(relative, self.config.max_envelope_bytes)
            if isinstance(found, Contents):
                try:
                    return parse(found.data, name=relative)
                except EnvelopeError:
                    return None
        return None
