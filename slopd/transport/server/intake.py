"""`POST /v1/envelopes`: an envelope over HTTP, accepted exactly once (SPEC §12).

Rules:
1. The body is admitted as a file in `inbox/` would be (`core.admission`, SPEC §14): the same
   strict parser and limit, the same refusals with the same reasons — an invalid envelope, a
   conflict or `action:` (outside `authorized/`, which no request reaches) is 422, a `from`
   other than the token's seat 403 — and nothing is written. Markdown goes to `inbox/ID.md`,
   the JSON form to `inbox/ID.json`, through `submit.drop`'s atomic, never-clobbering write:
   the bytes the daemon reads are the bytes that were posted. Nothing is written elsewhere.
   The bytes are parsed once: `drop` takes the admitted envelope, and the daemon is handed it
   (`admit`) before the file is written (admission rule 7).
2. An `Idempotency-Key`, when sent, must be the id (400).
3. Order of effects: receipt `writing` (durable) → file → receipt `written` → 202. A resend
   finds the receipt: the same bytes are a replay (200, `replayed`), other bytes a conflict
   (422, admission's rule 4); 409 while the first is still being written.
4. An id the ledger already knows from the file lane is judged against that row the same way
   (200 replayed, or 422); so is an `inbox/` file of that name.
5. `recover`, before the server answers anything: a receipt left `writing` by a crash is
   `written` when its file (or the ledger's row of the same bytes) exists, else forgotten, so
   the client's resend is accepted.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime

from slopd import submit
from slopd.core import admission
from slopd.core.admission import Examined, Refused
from slopd.core.receipts import WRITTEN, Receipt
from slopd.shell import faults
from slopd.shell.lanes import Hub
from slopd.shell.ledger.receipts import Receipts
from slopd.shell.reads import Contents
from slopd.transport.problems import Problem


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
        received: Callable[[str], None] = lambda _key: None,
        admit: admission.Admit = admission.unheard,
    ) -> None:
        self.hub, self.receipts, self.limit, self.clock = hub, receipts, limit, clock
        self.arrived, self.received, self.admit = arrived, received, admit

    def accept(self, seat: str, data: bytes, *, json_form: bool, idempotency_key: str | None) -> Accepted:
        """Rules 1-4; a refusal is a `Problem`."""
        suffix = ".json" if json_form else ".md"
        examined = admission.examine(
            data, name=f"envelope{suffix}", lane="inbox", max_bytes=self.limit, seat=seat
        )
        if isinstance(examined, Refused):
            raise refusal(examined)
        envelope, sha = examined.envelope, examined.sha256
        if idempotency_key is not None and idempotency_key.strip('"').lower() != envelope.key:
            raise Problem("bad-request", f"the Idempotency-Key must be the envelope's id, {envelope.id!r}")
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
            if receipt.sha256 == sha and receipt.state != WRITTEN:
                raise Problem("in-flight", f"{receipt.id} is still being written; ask again in a moment")
            return self._judged(receipt, examined, receipt.sha256, forget=False)
        known = self.receipts.input(envelope.key)
        if known is not None:
            return self._judged(receipt, examined, known.sha256)
        new = admission.judge(examined, None)
        if isinstance(new, Refused):
            self.receipts.forget(envelope.key)
            raise refusal(new)
        self.admit("inbox", file, examined)  # before the watcher can see the file
        # Before the file exists too: renamed in, it is complete at once, and the daemon may
        # answer it and commit the reply before this thread goes on (the metric would miss it).
        self.received(envelope.key)
        try:
            submit.drop(self.hub, data, name=file, admitted=envelope)
        except FileExistsError:
            there = self.hub.read("inbox", file, self.limit)
            there_sha = hashlib.sha256(there.data).hexdigest() if isinstance(there, Contents) else ""
            return self._judged(receipt, examined, there_sha)
        except BaseException:
            self.receipts.forget(envelope.key)
            raise
        faults.passed("http.dropped")  # the crash tests' seam: a kill between the file and the 202
        self.receipts.written(envelope.key)
        self.arrived("inbox", file)  # complete: the daemon need not wait for it to settle
        return Accepted(_as_written(receipt), replayed=False)

    def _judged(self, receipt: Receipt, examined: Examined, known: str, *, forget: bool = True) -> Accepted:
        """Rules 3 and 4: the id is known (`known`: the sha256 it was first seen with)."""
        judged = admission.judge(examined, known)
        if isinstance(judged, Refused):
            if forget:
                self.receipts.forget(receipt.key)  # our claim, made for bytes that are not written
            raise refusal(judged)
        if forget:
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


_PROBLEMS = {
    admission.Refusal.INVALID: "invalid-envelope",
    admission.Refusal.ACTION: "invalid-envelope",
    admission.Refusal.WRONG_SEAT: "wrong-seat",
    admission.Refusal.CONFLICT: "id-conflict",
}


def refusal(refused: Refused) -> Problem:
    """An admission refusal as the HTTP (and MCP) answer: the same reasons, every one."""
    return Problem(_PROBLEMS[refused.refusal], "; ".join(refused.reasons), refused.reasons)


def _as_written(receipt: Receipt) -> Receipt:
    return replace(receipt, state=WRITTEN)
