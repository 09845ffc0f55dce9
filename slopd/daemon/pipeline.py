"""One input's way in: read → parse → verify → decide, ending in exactly one plan.

Rules:
1. The file is read once (`shell.lanes`); the bytes read are the bytes hashed, parsed,
   verified and — for an action — executed. A file that cannot be read is refused with the
   reason; one that vanished since it was listed is nothing.
2. The bytes are admitted as on every surface (`core.admission`, SPEC §14): an invalid
   envelope, `action:` outside `authorized/`, or an id already used with other bytes is refused
   — an `error` reply to its sender — under the key `invalid:DIGEST` of its lane, name and bytes
   (or, unreadable, of its stat), so a crash mid-answer resumes the same answer; a refusal
   never claims the id.
3. An admitted envelope's ledger row, if any, picks the step (`core.lifecycle.step`): the same
   file resumes, the same bytes under another name are a duplicate.
4. A new or resumed envelope addressed to another watcher is left quiet without being verified;
   in `authorized/` the order is then held for its signatures or verified, and any envelope
   listing assets is held for them or refused for one (`daemon.gate`); `core.routing.decide`
   runs once, with the verdict.
5. A signature alone in `authorized/` waits for its order for the grace, is finished after a
   cut-short move, follows an order already archived, or is refused once the grace is over.
6. On a watcher that is not the hub's home (`core.home`) nothing unroutable is refused: an
   invalid or unreadable file, or a lone signature, is left for the home watcher to answer.
   `action:` outside `authorized/` on an envelope addressed to another watcher is left to it.
7. On a hub other watchers watch too, a new id whose reply another watcher has already written
   in `outbox/` is left alone (a hub watched by this one only does not look).
8. Before a recipient is refused as unknown, and before a watcher that is not home runs one of
   its seats, the presence files are read again: a seat another watcher answers is left to it.
"""

from __future__ import annotations

import hashlib

from slopd.core import admission
from slopd.core.admission import Examined, Refusal, Refused
from slopd.core.envelope import Envelope, EnvelopeError, parse
from slopd.core.ids import reply_id
from slopd.core.lifecycle import Seen, Status, Step, step
from slopd.core.names import Kind, order_of
from slopd.core.outcome import INTERRUPTED
from slopd.core.routing import Decision, Execute, Lane, Leave, Reject, decide, elsewhere, unknown_recipient
from slopd.core.targets import TargetKind
from slopd.core.verdicts import Invalid, Valid
from slopd.daemon import plans
from slopd.daemon.approvals import Approvals
from slopd.daemon.gate import Gate, Hold
from slopd.daemon.homing import Homing
from slopd.daemon.parts import Parts
from slopd.daemon.plans import Input
from slopd.daemon.recovery import Recoveries
from slopd.shell.fs import Contents, Unreadable
from slopd.shell.lanes import Entry
from slopd.shell.ledger import Row

_REPLY_BYTES = 1 << 20
_BAD_NAME = "has a name that is not valid UTF-8, is over 255 bytes, or has control characters"


class Pipeline:
    def __init__(
        self, parts: Parts, gate: Gate, homing: Homing, recoveries: Recoveries, approvals: Approvals
    ) -> None:
        self.parts, self.gate, self.homing = parts, gate, homing
        self.recoveries, self.approvals = recoveries, approvals

    def reconfigure(self, parts: Parts) -> None:
        self.parts = parts

    def plan(self, lane: str, entry: Entry, kind: Kind, now: float) -> plans.Plan:
        """The one plan for the lane entry `entry` (classified as `kind`) at monotonic `now`."""
        input = Input(lane, entry.name, entry.stat.st_ino, self.parts.log.bind(lane=lane, file=entry.name))
        if kind is Kind.SIDECAR:
            return self._signature(input, entry, now)
        if kind is Kind.BAD_NAME:
            return self._refuse(self._unreadable(input, entry, _BAD_NAME), entry)
        return self._envelope(input, entry, now)

    def _refuse(self, refusal: plans.Refuse, entry: Entry) -> plans.Plan:
        """Rule 6: only the home watcher answers what cannot be routed; the others leave it. An
        envelope that parsed and is this watcher's (not `elsewhere`) is answered by it."""
        if self.homing.policy.home or refusal.envelope is not None:
            return refusal
        return plans.Quiet(entry.signature)

    def _envelope(self, input: Input, entry: Entry, now: float) -> plans.Plan:
        """Rules 1 and 2: read it once, then parse it."""
        lane, name, hub = input.lane, input.name, self.parts.hub
        target = self.recoveries.interrupted_archive(lane, name) if entry.stat.st_nlink > 1 else None
        if target is not None:
            return plans.FinishMove(input, target, sidecar=False)
        limit = self.parts.config.max_envelope_bytes
        contents = hub.read(lane, name, limit)
        if isinstance(contents, Unreadable):
            if contents.stat is None and not hub.exists(lane, name):
                input.log.debug("envelope.vanished")  # renamed away or deleted since the scan
                return plans.Nothing()
            return self._refuse(self._unreadable(input, entry, contents.reason), entry)
        examined = admission.examine(contents.data, name=name, lane=lane, max_bytes=limit)
        if isinstance(examined, Refused):
            read = Input(lane, name, contents.stat.st_ino, input.log)
            return self._refuse(self._refusal(read, examined), entry)
        envelope = examined.envelope
        read = Input(lane, name, contents.stat.st_ino, input.log.bind(id=envelope.id, type=envelope.type))
        return self._judged(read, entry, examined, contents.data, now)

    @staticmethod
    def _refusal(input: Input, refused: Refused, envelope: Envelope | None = None) -> plans.Refuse:
        """Rule 2: refused at admission, answered under a key of its lane, name and bytes."""
        identity = f"{input.lane}\0{input.name}\0{refused.sha256}".encode(errors="surrogateescape")
        key = "invalid:" + hashlib.sha256(identity).hexdigest()
        return plans.Refuse(
            input, key, refused.sha256, refused.reasons, refused.id, refused.sender, refused.refusal, envelope
        )

    def _judged(self, input: Input, entry: Entry, examined: Examined, data: bytes, now: float) -> plans.Plan:
        """Rules 2 and 3: admission's judgement against the ledger's row for this id."""
        envelope = examined.envelope
        row = self.parts.ledger.get(envelope.key)
        judged = admission.judge(examined, row.sha256 if row is not None else None)
        if not isinstance(judged, Refused):
            return self._known(input, entry, examined, row, data, now)
        self.gate.forget(input.name)
        if judged.refusal is Refusal.ACTION and elsewhere(envelope, self.homing.policy) is not None:
            return plans.Quiet(entry.signature)  # the watcher it is for refuses it the same way
        return self._refuse(self._refusal(input, judged, envelope), entry)

    def _known(
        self, input: Input, entry: Entry, examined: Examined, row: Row | None, data: bytes, now: float
    ) -> plans.Plan:
        """Rule 3: what the ledger's row for this id (the same bytes, if any) says to do."""
        envelope, sha = examined.envelope, examined.sha256
        chosen = step(self._seen(row, input))
        if row is not None and chosen not in (Step.DUPLICATE, Step.FINISH_MOVE):
            input.log.info("envelope.resumed", status=row.status)
        match chosen:
            case Step.NEW | Step.REDECIDE:
                return self._decide(input, entry, envelope, data, sha, row, now)
            case Step.RUN:
                assert row is not None
                assert row.target is not None
                return plans.Run(input, envelope, row.target)
            case Step.ANSWER:
                assert row is not None
                outcome, recorded = row.outcome or INTERRUPTED, row.status is Status.FINISHED
                return plans.Answer(
                    input, row.key, envelope.id, envelope.sender, outcome, recorded, row.replies, envelope
                )
            case Step.ARCHIVE:
                assert row is not None
                return plans.Archive(input, row.key, envelope)
            case Step.FINISH_MOVE:
                assert row is not None
                return plans.FinishMove(input, row.archive, sidecar=False, envelope=envelope)
            case Step.DUPLICATE:
                self.gate.forget(input.name)
                return plans.Duplicate(input, envelope, sha)

    def _seen(self, row: Row | None, input: Input) -> Seen | None:
        """The row of an id met again with the same bytes (admission refused other bytes)."""
        if row is None:
            return None
        same = (row.lane, row.file) == (input.lane, input.name)
        present = row.archive is None or not same or self.parts.hub.path_exists(row.archive)
        return Seen(
            status=row.status,
            same_input=same,
            archived=row.archive is not None,
            queued_execution=row.target is not None,
            archive_present=present,
        )

    def _decide(
        self,
        input: Input,
        entry: Entry,
        envelope: Envelope,
        data: bytes,
        sha: str,
        row: Row | None,
        now: float,
    ) -> plans.Plan:
        """Rule 4."""
        policy = self.homing.policy
        shared = row is None and policy.shared
        leave = elsewhere(envelope, policy) or (self._answered_elsewhere(envelope) if shared else None)
        if leave is not None:
            if row is None:
                input.log.info("envelope.left", reason=leave.reason)
            return plans.Quiet(entry.signature)
        verdict = None
        if input.lane == "authorized":
            examined = self.gate.examine(input.name, envelope, data, now)
            if isinstance(examined, Hold):
                if examined.first:
                    input.log.info("envelope.held", reason=f"waiting for its signatures {examined.missing}")
                self.approvals.order_waits(input.name, sha, signed=examined.signed, missing=examined.missing)
                return plans.Wait(entry.signature, examined.until)
            verdict = examined
        refused: Invalid | None = None
        if envelope.assets and not isinstance(verdict, Invalid):
            attached = self.gate.attachments(input.lane, input.name, envelope, now)
            if isinstance(attached, Hold):
                if attached.first:
                    input.log.info("envelope.held", reason=f"waiting for its assets {attached.missing}")
                return plans.Wait(entry.signature, attached.until)
            refused = attached
        if verdict is not None:
            self._log_verdict(input, verdict)
        sent = row.replies if row is not None else ()
        if refused is not None:
            input.log.warning("assets.rejected", reason=refused.reason)
            return plans.Perform(input, envelope, Reject(refused.reason), sent, new=row is None, sha256=sha)
        decision = decide(envelope, Lane(input.lane), policy, verdict)
        if self._ask_again(envelope, decision):
            self.homing.refresh()
            decision = elsewhere(envelope, self.homing.policy) or decision
        if isinstance(decision, Leave):
            input.log.info("envelope.left", reason=decision.reason)
            return plans.Quiet(entry.signature)
        return plans.Perform(input, envelope, decision, sent, new=row is None, sha256=sha)

    def _ask_again(self, envelope: Envelope, decision: Decision) -> bool:
        """Rule 8: a decision that another watcher's seats could change."""
        policy = self.homing.policy
        if isinstance(decision, Reject):
            return unknown_recipient(envelope, policy)
        seat = isinstance(decision, Execute) and decision.target.kind is TargetKind.SEAT
        return seat and not policy.home

    @staticmethod
    def _log_verdict(input: Input, verdict: Valid | Invalid) -> None:
        if isinstance(verdict, Invalid):
            input.log.warning("order.rejected", reason=verdict.reason)
            return
        cosigners = list(verdict.cosigners)
        input.log.info(
            "order.verified",
            principal=verdict.principal,
            key=verdict.fingerprint,
            line=verdict.line,
            cosigners=cosigners,
            **({} if verdict.flags is None else {"flags": verdict.flags}),
            **({} if verdict.origin is None else {"origin": verdict.origin}),
        )

    def _answered_elsewhere(self, envelope: Envelope) -> Leave | None:
        """Rule 7: a new id that another watcher has already answered (the home moved while it
        was being handled) is left to that watcher."""
        for kind in ("ack", "result", "error"):
            found = self.parts.hub.read("outbox", f"{reply_id(envelope.key, kind)}.md", _REPLY_BYTES)
            if not isinstance(found, Contents):
                continue
            try:
                sender = parse(found.data, name="reply.md").sender
            except EnvelopeError:
                continue
            if sender not in self.homing.policy.names:
                return Leave(f"already answered by {sender} (outbox/{reply_id(envelope.key, kind)}.md)")
        return None

    def _signature(self, input: Input, entry: Entry, now: float) -> plans.Plan:
        """Rule 5: a `NAME.md.sig` alone in the lane."""
        parts, name = self.parts, input.name
        order = order_of(name)
        assert order is not None  # classified as a sidecar
        if parts.hub.exists(input.lane, order):
            return plans.Quiet(entry.signature)
        if entry.stat.st_nlink > 1:
            target = self.recoveries.interrupted_sidecar(input.lane, name, order)
            if target is not None:
                self.gate.forget(name)
                return plans.FinishMove(input, target, sidecar=True)
        if self.recoveries.belongs_to_archived_order(input.lane, name, order):
            self.gate.forget(name)
            return plans.FinishMove(input, None, sidecar=True)
        until = self.gate.orphan_until(name, now)
        if now < until:
            return plans.Wait(entry.signature, until)
        self.gate.forget(name)
        grace = parts.config.auth.sig_grace
        reason = f"is a signature without its order: {order} did not arrive within {grace:g} s"
        return self._refuse(self._unreadable(input, entry, reason), entry)

    @staticmethod
    def _unreadable(input: Input, entry: Entry, reason: str) -> plans.Refuse:
        """Rule 2 for a file whose bytes are not read: keyed by what its stat says."""
        status = entry.stat
        identity = (
            f"{input.lane}\0{input.name}\0{reason}\0{status.st_ino}\0{status.st_size}\0{status.st_mtime_ns}"
        ).encode(errors="surrogateescape")
        key = "invalid:" + hashlib.sha256(identity).hexdigest()
        return plans.Refuse(input, key, "", (f"the file {reason}",), None, None, Refusal.INVALID)
