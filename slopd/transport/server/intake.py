"""`POST /v1/envelopes`: an envelope over HTTP, accepted exactly once (SPEC §12).

Rules:
1. The body is read as the file lane reads a file: the same strict parser and limit, every
   reason listed when it is refused (422), nothing written. Markdown goes to `inbox/ID.md`,
   the JSON form to `inbox/ID.json`, through `submit.drop`'s atomic, never-clobbering write —
   the bytes the daemon reads are the bytes that were posted. Nothing is written anywhere else.
2. The token's seat must be the envelope's `from` (403); an `Idempotency-Key`, when sent, must
   be the id (400).
3. Order of effects: receipt `writing` (durable) → file → receipt `written` → 202. A resend
   finds the receipt (`core.receipts.admit`): 200 with it, `replayed`; 409 while it is still
   being written; 422 for other bytes under the id.
4. An id the ledger already knows from the file lane gets a receipt from that row when the
   bytes are the same (200, replayed), else 422; so does an `inbox/` file of that name.
5. `recover`, before the server answers anything: a receipt left `writing` by a crash is
   `written` when its file (or the ledger's row of the same bytes) exists, else forgotten, so
   the client's resend is accepted.
"""

from __future__ import annotations

import hashlib
import os
import signal
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime

from slopd import submit
from slopd.core.envelope import EnvelopeError, parse
from slopd.core.receipts import WRITTEN, Admission, Receipt, admit
from slopd.shell.fs import Contents
from slopd.shell.lanes import Hub
from slopd.shell.receipts import Receipts
from slopd.transport.problems import Problem

_KILL_SEAM = "SLOPD_TEST_HTTP_KILL_AFTER_DROP"  # tests: SIGKILL between the file and the 202


@dataclass(frozen=True, slots=True)
class Accepted:
    receipt: Receipt
    replayed: bool


def received_at(now: datetime) -> str:
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"


class Intake:
    def __init__(
        self,
        hub: Hub,
        receipts: Receipts,
        limit: int,
        clock: Callable[[], datetime],
        arrived: Callable[[str, str], None] = lambda _lane, _name: None,
    ) -> None:
        self.hub, self.receipts, self.limit, self.clock = hub, receipts, limit, clock
        self.arrived = arrived
        self._kill_after_drop = bool(os.environ.get(_KILL_SEAM))

    def accept(self, seat: str, data: bytes, *, json_form: bool, idempotency_key: str | None) -> Accepted:
        """Rules 1-4; a refusal is a `Problem`."""
        suffix = ".json" if json_form else ".md"
        try:
            envelope = parse(data, name=f"envelope{suffix}", max_bytes=self.limit)
        except EnvelopeError as error:
            raise Problem("invalid-envelope", "; ".join(error.reasons), tuple(error.reasons)) from None
        if envelope.sender != seat:
            raise Problem(
                "wrong-seat", f"the envelope is from {envelope.sender!r}; this token speaks for {seat!r}"
            )
        if idempotency_key is not None and idempotency_key.strip('"').lower() != envelope.key:
            raise Problem("bad-request", f"the Idempotency-Key must be the envelope's id, {envelope.id!r}")
        sha = hashlib.sha256(data).hexdigest()
        file = f"{envelope.id}{suffix}"
        receipt, made = self.receipts.claim(
            key=envelope.key,
            id=envelope.id,
            seat=seat,
            type=envelope.type,
            file=file,
            sha256=sha,
            now=received_at(self.clock()),
        )
        if not made:
            return self._again(receipt, sha)
        known = self.receipts.input(envelope.key)
        if known is not None:
            return self._known(receipt, known.sha256 == sha)
        try:
            submit.drop(self.hub, data, name=file)
        except FileExistsError:
            there = self.hub.read("inbox", file, self.limit)
            return self._known(receipt, isinstance(there, Contents) and there.data == data)
        except BaseException:
            self.receipts.forget(envelope.key)
            raise
        if self._kill_after_drop:
            os.kill(os.getpid(), signal.SIGKILL)
        self.receipts.written(envelope.key)
        self.arrived("inbox", file)  # complete: the daemon need not wait for it to settle
        return Accepted(_as_written(receipt), replayed=False)

    def _again(self, receipt: Receipt, sha: str) -> Accepted:
        match admit(receipt, sha):
            case Admission.REPLAY:
                return Accepted(receipt, replayed=True)
            case Admission.IN_FLIGHT:
                raise Problem("in-flight", f"{receipt.id} is still being written; ask again in a moment")
            case _:
                raise Problem("id-conflict", f"{receipt.id} was received with other bytes")

    def _known(self, receipt: Receipt, same: bool) -> Accepted:
        """Rule 4."""
        if not same:
            self.receipts.forget(receipt.key)
            raise Problem("id-conflict", f"{receipt.id} is already on the hub with other bytes")
        self.receipts.written(receipt.key)
        return Accepted(_as_written(receipt), replayed=True)

    def recover(self) -> list[tuple[Receipt, bool]]:
        """Rule 5: each receipt found `writing`, and whether its file was found."""
        found = []
        for receipt in self.receipts.unfinished():
            there = self.hub.read("inbox", receipt.file, self.limit)
            known = self.receipts.input(receipt.key)
            present = (
                isinstance(there, Contents) and hashlib.sha256(there.data).hexdigest() == receipt.sha256
            ) or (known is not None and known.sha256 == receipt.sha256)
            if present:
                self.receipts.written(receipt.key)
            else:
                self.receipts.forget(receipt.key)
            found.append((receipt, present))
        return found


def _as_written(receipt: Receipt) -> Receipt:
    return replace(receipt, state=WRITTEN)
