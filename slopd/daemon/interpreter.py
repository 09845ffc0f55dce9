"""Carrying a plan out: each effect of `core.plans`, in order, inside the input's batch.

The interpreter reads nothing to decide and decides nothing: the handler (`core.handling`) did,
and every effect says what it does, guard included. What it adds is only what an effect needs
at the moment it is made: the time stamps, the archive names reserved in this batch, the bound
log, the standup's paragraph once the change is applied, and the notes index's pages (rule 4).

Rules:
1. Ledger statements join the batch's unit (`daemon.batch`); replies and notes are written
   through the batch (staged when it holds several inputs), and moves are reserved, made at
   the commit; jobs start after it.
2. `Send`: a standup change first (`daemon.standups`: the file re-read first, a human's edit
   never lost), its paragraph joined to the reply (`core.replies.noted`); the deliverable copied
   beside the reply; the reply written, recorded, logged (`reply.written`) and told to the human
   (`core.notices.of_reply`).
3. `Done` checks its guard — the lane's name still holds the inode that was read — as the move
   is reserved (`core.plans` rule 3).
4. `IndexNote` is the one effect that reads the ledger: after recording the note it renders
   `notes/INDEX.md` and the note's page from the ledger's notes (`daemon.notebook`), in the same
   unit, so they include it. That is rendering a derived file, not a decision: no row of an
   input is read, and what is written does not depend on which plan asked.
"""

from __future__ import annotations

import shutil
import time

from slopd.core import notices, replies
from slopd.core.envelope import render
from slopd.core.facts import Input
from slopd.core.intake import Intake
from slopd.core.layout import Signature
from slopd.core.lifecycle import Status
from slopd.core.names import Kind
from slopd.core.plans import (
    Advance,
    Clean,
    Defer,
    Done,
    Duplicate,
    Effect,
    Forget,
    Hold,
    IndexNote,
    Log,
    Move,
    Notify,
    OrderWaits,
    Plan,
    Quieten,
    Record,
    Send,
    Start,
)
from slopd.daemon import notebook
from slopd.daemon.approvals import Approvals
from slopd.daemon.batch import Batch
from slopd.daemon.gate import Gate
from slopd.daemon.parts import Parts
from slopd.daemon.runs import Runs
from slopd.daemon.standups import REFUSED, Standups
from slopd.shell.archive import Move as ArchiveMove
from slopd.shell.log import Logger


class Interpreter:
    def __init__(
        self, parts: Parts, intake: Intake, gate: Gate, runs: Runs, standups: Standups, approvals: Approvals
    ) -> None:
        self.parts, self.intake, self.gate = parts, intake, gate
        self.runs, self.standups, self.approvals = runs, standups, approvals

    def reconfigure(self, parts: Parts) -> None:
        self.parts = parts

    def execute(
        self,
        batch: Batch,
        plan: Plan,
        input: Input,
        signature: Signature | None = None,
        kind: Kind | None = None,
    ) -> None:
        """Every effect of `plan`, in order (`signature`, `kind`: the lane entry's, for the intake)."""
        log = self.parts.log.bind(lane=input.lane, file=input.name, **dict(plan.bind))
        for effect in plan.effects:
            self._one(batch, effect, input, log, signature, kind)

    def _one(  # noqa: PLR0912  # one branch per effect, read top to bottom
        self,
        batch: Batch,
        effect: Effect,
        input: Input,
        log: Logger,
        signature: Signature | None,
        kind: Kind | None,
    ) -> None:
        parts = self.parts
        match effect:
            case Log(level, event, fields):
                getattr(log, level)(event, **dict(fields))
            case Defer(until):
                assert signature is not None
                self.intake.defer(input.where, signature, until=until, kind=kind or Kind.INPUT)
            case Quieten():
                assert signature is not None
                self.intake.quiet(input.where, signature)
            case Hold(key, since, waiting):
                self.gate.hold(key, since, waiting)
            case Forget(key):
                self.gate.forget(key)
            case Notify(notice):
                parts.notifier.notify(notice, time.monotonic(), log)
            case OrderWaits(name, sha256, signed, missing):
                self.approvals.order_waits(name, sha256, signed=signed, missing=missing)
            case Record():
                batch.ledger.insert(
                    key=effect.key,
                    id=effect.id,
                    lane=effect.lane,
                    file=effect.file,
                    sha256=effect.sha256,
                    type=effect.type,
                    sender=effect.sender,
                    mode=effect.mode,
                    decision=effect.decision,
                    target=effect.target,
                    now=parts.clock.stamp(),
                )
            case Advance(key, status, outcome):
                batch.ledger.advance(key, status, now=parts.clock.stamp(), outcome=outcome)
            case Send():
                self._send(batch, effect, log)
            case IndexNote(note):
                batch.ledger.add_note(note, now=parts.clock.stamp())
                present = lambda name: parts.hub.exists("notes", name)  # noqa: E731
                for name, data in notebook.files(parts.ledger, note.id, present):
                    parts.commits.write(batch, "notes", name, data)
            case Done():
                self._done(batch, effect, log)
            case Move(lane, name, target, event, fields):
                chosen = target or parts.commits.target(batch, name, parts.clock.wall())
                parts.commits.move(batch, ArchiveMove(lane, name, chosen), log, event, **dict(fields))
            case Duplicate(id, lane, name, sha256):
                chosen = parts.commits.target(batch, name, parts.clock.wall())
                batch.ledger.add_duplicate(
                    id=id, lane=lane, file=name, sha256=sha256, archive=chosen, now=parts.clock.stamp()
                )
                parts.commits.move(batch, ArchiveMove(lane, name, chosen), log, "envelope.duplicate")
            case Start(envelope, target):
                batch.jobs.append(lambda: self.runs.start(envelope, target, input, log))
            case Clean(id):
                folder = self.runs.run_dir(id)
                batch.jobs.append(lambda: shutil.rmtree(folder, ignore_errors=True))

    def _send(self, batch: Batch, send: Send, log: Logger) -> None:
        """Rule 2."""
        parts, reply = self.parts, send.reply
        if send.standup is not None:
            note = self.standups.apply(send.standup, log)
            reply = replies.noted(reply, note.text, refused=REFUSED if note.refused else None)
        path = f"outbox/{reply.id}.md"
        if send.files is not None:
            count = parts.hub.copy_tree(self.runs.run_dir(send.files) / "out", "outbox", reply.id)
            log.info("deliverable.written", path=f"outbox/{reply.id}/", files=count)
        parts.commits.write(batch, "outbox", f"{reply.id}.md", render(reply))
        reply_class = replies.reply_class(reply)
        batch.ledger.add_reply(
            send.key,
            reply_id=reply.id,
            in_reply_to=reply.in_reply_to,
            type=reply.type,
            reply_class=reply_class,
            path=path,
            now=parts.clock.stamp(),
            recipient=reply.to,
        )
        log.info("reply.written", reply=reply.id, reply_type=reply.type, reply_class=reply_class)
        notice = notices.of_reply(reply, path)
        if notice is not None:
            parts.notifier.notify(notice, time.monotonic(), log)

    def _done(self, batch: Batch, done: Done, log: Logger) -> None:
        """Rule 3: archive the very file that was read; else only mark it done."""
        parts = self.parts
        status = parts.hub.lstat(done.lane, done.name) if done.inode is not None else None
        if status is not None and status.st_ino == done.inode:
            target = parts.commits.target(batch, done.name, parts.clock.wall())
            batch.ledger.advance(done.key, Status.DONE, now=parts.clock.stamp(), archive=target)
            parts.commits.move(batch, ArchiveMove(done.lane, done.name, target), log, "envelope.archived")
            return
        if status is not None:
            log.warning("envelope.replaced", reason="a new file took its name; read next scan")
        batch.ledger.advance(done.key, Status.DONE, now=parts.clock.stamp())
