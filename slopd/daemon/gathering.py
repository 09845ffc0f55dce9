"""Gathering the facts of one input, for `core.handling.handle`: the only reads the decisions need.

Rules (what is read, and when; `core.facts` says what each fact means):
1. A lane entry is read once, without following links (`shell.lanes`); the bytes read are the
   bytes admitted, hashed and — once decided — executed. Admission's work is not done twice:
   when the HTTP or MCP intake admitted these very bytes (same sha256) in this process, its
   `Examined` envelope is taken (`Arrivals.admitted`) instead of parsing them again.
2. Only what a rule can use is read: the signatures and the allowed signers in `authorized/`;
   asset digests for an envelope that lists assets; another watcher's replies in `outbox/` for
   a new id on a shared hub; the run folder for an execution to answer; the archived copies
   and links only for a file or signature with more than one link, or a lone signature.
3. What the handler asks for afterwards (`core.plans.Ask`) is read then: a ledger row by key,
   or the presence files again (through `daemon.homing`).
"""

from __future__ import annotations

import hashlib
from dataclasses import replace

from slopd.core import admission, sshsig
from slopd.core.admission import Examined
from slopd.core.envelope import Envelope, EnvelopeError
from slopd.core.facts import (
    Arrival,
    Attached,
    Bytes,
    Companion,
    Executed,
    Input,
    Recovered,
    Sidecar,
    Stat,
    Summarized,
    Unread,
)
from slopd.core.ids import reply_id
from slopd.core.lifecycle import Row, Status
from slopd.core.names import Kind, order_of
from slopd.core.outcome import Outcome, summary_of
from slopd.core.plans import Ask
from slopd.core.routing import Policy
from slopd.core.validation import parse
from slopd.daemon import recovery
from slopd.daemon.gate import Gate
from slopd.daemon.homing import Homing
from slopd.daemon.jobs import Finished
from slopd.daemon.parts import Parts
from slopd.daemon.runs import run_folder
from slopd.shell.lanes import Entry, signature
from slopd.shell.reads import MISSING, Contents

_REPLY_BYTES = 1 << 20
_ASSETS = "assets"


class Gatherer:
    def __init__(self, parts: Parts, gate: Gate) -> None:
        self.parts, self.gate = parts, gate

    def reconfigure(self, parts: Parts) -> None:
        self.parts = parts

    # -- a lane entry (rules 1 and 2) ----------------------------------------------------------

    def arrival(
        self, lane: str, entry: Entry, kind: Kind, policy: Policy, admitted: Examined | None = None
    ) -> Arrival:
        name, status = entry.name, entry.stat
        stat = Stat(signature(status), status.st_nlink)
        if kind is Kind.SIDECAR:
            return self._lone_signature(lane, name, stat)
        if kind is Kind.BAD_NAME:
            return Arrival(lane, name, kind, stat, companions=self._companions(lane, name, None))
        return self._envelope(lane, name, kind, stat, policy, admitted)

    def _envelope(
        self, lane: str, name: str, kind: Kind, stat: Stat, policy: Policy, admitted: Examined | None
    ) -> Arrival:
        """Rules 1 and 2 for a file that looks like an input (built at once: this is the hot path)."""
        parts = self.parts
        linked = recovery.linked(parts.ledger, parts.archive, lane, name) if stat.links > 1 else None
        limit = parts.config.max_envelope_bytes
        contents = parts.hub.read(lane, name, limit)
        if not isinstance(contents, Contents):
            gone = contents.stat is None and not parts.hub.exists(lane, name)
            read = Unread(contents.reason, gone)
            return Arrival(
                lane, name, kind, stat, read, linked=linked, companions=self._companions(lane, name, None)
            )
        examined = self._admitted(contents.data, lane, name, limit, admitted)
        read_bytes = Bytes(contents.data, contents.stat.st_ino)
        if not isinstance(examined, Examined):
            companions = self._companions(lane, name, None)
            return Arrival(lane, name, kind, stat, read_bytes, examined, linked=linked, companions=companions)
        envelope = examined.envelope
        row = parts.ledger.get(envelope.key)
        archive_present, outputs = True, False
        answered: tuple[tuple[str, str], ...] = ()
        if row is not None:
            if row.archive is not None and (row.lane, row.file) == (lane, name):
                archive_present = parts.hub.path_exists(row.archive)
            if row.status in (Status.EXECUTING, Status.FINISHED):
                outputs = self._outputs(envelope.id)
        elif policy.shared:
            answered = self._answered(envelope)
        authorized = lane == "authorized"
        return Arrival(
            lane,
            name,
            kind,
            stat,
            read_bytes,
            examined,
            row=row,
            archive_present=archive_present,
            linked=linked,
            outputs=outputs,
            answered=answered,
            signatures=self._signatures(envelope) if authorized else (),
            trust=self.gate.check() if authorized else None,
            held_since=self.gate.since(name) if authorized else None,
            assets=self._assets(envelope) if envelope.assets else (),
            assets_since=self.gate.since((lane, name)) if envelope.assets else None,
            companions=self._companions(lane, name, envelope),
        )

    @staticmethod
    def _admitted(
        data: bytes, lane: str, name: str, limit: int, admitted: Examined | None
    ) -> admission.Examined | admission.Refused:
        """Rule 1: the intake's admission of the same bytes, or admission now."""
        if (
            admitted is not None
            and admitted.lane == lane
            and hashlib.sha256(data).hexdigest() == admitted.sha256
        ):
            return admitted
        return admission.examine(data, name=name, lane=lane, max_bytes=limit)

    def _lone_signature(self, lane: str, name: str, stat: Stat) -> Arrival:
        """Rule 2 for a `NAME.md.sig` without its order."""
        parts, order = self.parts, order_of(name)
        assert order is not None  # classified as a sidecar
        facts = Arrival(lane, name, Kind.SIDECAR, stat, held_since=self.gate.since(name))
        if parts.hub.exists(lane, order):
            return replace(facts, order_present=True)
        if stat.links > 1:
            facts = replace(
                facts, linked=recovery.sidecar_linked(parts.ledger, parts.archive, lane, name, order)
            )
        data = recovery.signature_of(parts.hub, lane, name)
        if data is None:
            return facts
        limit = parts.config.max_envelope_bytes
        archived = recovery.archived_orders(parts.ledger, parts.hub, lane, order, limit)
        return replace(facts, sidecar=data, archived_orders=archived)

    def _signatures(self, envelope: Envelope) -> tuple[Sidecar, ...]:
        found = []
        for name in envelope.sidecars:
            read = self.parts.hub.read("authorized", name, sshsig.MAX_SIGNATURE_BYTES)
            if isinstance(read, Contents):
                found.append(Sidecar(name, data=read.data))
            elif read.stat is not None:
                found.append(Sidecar(name, problem=read.reason))
            else:
                found.append(Sidecar(name))
        return tuple(found)

    def _assets(self, envelope: Envelope) -> tuple[Attached, ...]:
        found = []
        for asset in envelope.assets:
            try:
                digest = self.parts.hub.digest(_ASSETS, asset.name)
            except OSError:  # assets/ itself is missing (made again at the next scan)
                found.append(Attached(asset.name))
                continue
            if isinstance(digest, str):
                found.append(Attached(asset.name, digest=digest))
            elif digest.reason == MISSING:
                found.append(Attached(asset.name))
            else:
                found.append(Attached(asset.name, problem=digest.reason))
        return tuple(found)

    def _answered(self, envelope: Envelope) -> tuple[tuple[str, str], ...]:
        """Another watcher's replies to this id in `outbox/`, with their senders."""
        found = []
        for kind in ("ack", "result", "error"):
            file = f"{reply_id(envelope.key, kind)}.md"
            read = self.parts.hub.read("outbox", file, _REPLY_BYTES)
            if not isinstance(read, Contents):
                continue
            try:
                found.append((file, parse(read.data, name="reply.md").sender))
            except EnvelopeError:
                continue
        return tuple(found)

    def _companions(self, lane: str, name: str, envelope: Envelope | None) -> tuple[Companion, ...]:
        """The signatures that would go to `archive/` with `lane/name`: the ones it names, and
        `NAME.sig` (for when it is answered without its envelope)."""
        if lane != "authorized":
            return ()
        parts = self.parts
        names = dict.fromkeys((*(envelope.sidecars if envelope is not None else ()), f"{name}.sig"))
        found = []
        for sidecar in names:
            status = parts.hub.lstat(lane, sidecar)
            if status is None:
                found.append(Companion(sidecar, present=False))
                continue
            order = order_of(sidecar)
            order_present = order not in (None, name) and parts.hub.exists(lane, order or "")
            linked = None
            if status.st_nlink > 1:
                linked = recovery.sidecar_linked(parts.ledger, parts.archive, lane, sidecar, name)
            found.append(Companion(sidecar, True, order_present, linked))
        return tuple(found)

    def _outputs(self, envelope_id: str) -> bool:
        return (run_folder(self.parts.state_dir, envelope_id) / "out").is_dir()

    # -- what the handler asks for (rule 3) ----------------------------------------------------------

    def answer(self, facts: Arrival, ask: Ask, homing: Homing) -> Arrival:
        if ask.presences:
            homing.refresh()
            facts = replace(facts, rechecked=homing.policy)
        if ask.row is not None:
            facts = replace(facts, looked_up=(ask.row, self.parts.ledger.get(ask.row)))
        return facts

    # -- start-up rows and finished jobs ---------------------------------------------------------------

    def recovered(self, row: Row) -> Recovered:
        hub = self.parts.hub
        present = hub.exists(row.lane, row.file)
        outputs = row.id is not None and self._outputs(row.id)
        return Recovered(row, present, outputs, self._companions(row.lane, row.file, None))

    def finished(self, done: Finished, outcome: Outcome | None) -> Executed | Summarized:
        """A finished job (`outcome`: an execution's, already recorded by `Runs.settle`)."""
        job = done.job
        input: Input = job.input
        row = self.parts.ledger.get(job.key)
        sent = row.replies if row is not None else ()
        companions = self._companions(input.lane, input.name, job.envelope)
        if outcome is None:
            text = summary_of(done.ran.result)
            return Summarized(input, job.envelope, text, done.ran.result, sent, companions)
        outputs = self._outputs(job.envelope.id)
        return Executed(input, job.envelope, outcome, sent, outputs, companions)
