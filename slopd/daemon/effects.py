"""Carrying out a plan: the replies, ledger writes and archive moves of one input, in a batch.

Rules (SPEC §7's order of effects, for one input):
1. A new input is recorded (`received`) before anything is written for it.
2. A reply is written, then recorded; its notification goes to the human as it is written.
   A reply already sent (a resumed input) is never written twice.
3. A terminal reply is followed by `done` and the move into `archive/` — of the very file
   that was read (the same inode), never of a file that took its name meanwhile.
4. An order's signature goes with it (to the copy beside the order's archived copy that it is
   already a link of, when that move was cut short), unless that file is another order's `NAME.md.sig`
   still in the lane (a forged order cannot take away another's signature). A duplicate under
   another name (a sync client's copy) takes only signatures named after itself: one named
   after its original is the original's, archived with it or finished by the scan — taking it
   too could archive it twice (after a move of it cut short by a kill).
5. An execution's ack and its `queued` row are written; its job starts once they are
   committed. Nothing here runs a command.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

from slopd.core import notes, notices, replies, summary
from slopd.core.admission import Refusal
from slopd.core.envelope import Envelope, render
from slopd.core.ids import reply_id
from slopd.core.lifecycle import Status
from slopd.core.names import order_of
from slopd.core.notices import Notice
from slopd.core.outcome import Produced
from slopd.core.routing import Acknowledge, Discuss, Execute, Leave, Record, Reject, label, requested_mode
from slopd.daemon import notebook, plans
from slopd.daemon.batch import Batch
from slopd.daemon.parts import Parts
from slopd.daemon.plans import Input
from slopd.daemon.recovery import Recoveries
from slopd.daemon.runs import Runs
from slopd.daemon.standups import REFUSED, Note, Standups
from slopd.shell.archive import Move


class Effects:
    def __init__(self, parts: Parts, runs: Runs, standups: Standups, recoveries: Recoveries) -> None:
        self.parts, self.runs, self.standups, self.recoveries = parts, runs, standups, recoveries

    def carry_out(self, batch: Batch, plan: plans.Plan) -> None:
        match plan:
            case plans.Refuse():
                self._refuse(batch, plan)
            case plans.Duplicate():
                self._duplicate(batch, plan)
            case plans.FinishMove():
                self._finish_move(batch, plan)
            case plans.Perform():
                self._perform(batch, plan)
            case plans.Run():
                run = plan
                batch.jobs.append(lambda: self.runs.execute(run.envelope, run.target, run.input))
            case plans.Answer():
                self._answer(batch, plan)
            case plans.Reply():
                self._complete(batch, plan.input, plan.key, plan.reply, plan.sent, plan.envelope)
            case plans.Archive():
                self._archive_or_done(batch, plan.input, plan.key, plan.envelope)
            case plans.Nothing() | plans.Wait() | plans.Quiet():  # pragma: no cover  # the loop's
                pass

    # -- one plan each ---------------------------------------------------------------------

    def _perform(self, batch: Batch, plan: plans.Perform) -> None:
        envelope, input, sent, parts = plan.envelope, plan.input, plan.sent, self.parts
        key, sender, watcher, now = envelope.key, envelope.sender, parts.config.watcher, parts.clock.wall()
        if plan.new:
            self._record(batch, plan)
        match plan.decision:
            case Acknowledge():
                self._acknowledge(batch, plan)
            case Discuss() if parts.config.summarizer is not None:
                batch.jobs.append(lambda: self.runs.summarize(envelope, input))
            case Discuss():
                text = summary.summarize(envelope)
                note = (
                    self.standups.note(envelope, input.log) if reply_id(key, "result") not in sent else None
                )
                text += "" if note is None else "\n" + note.text
                refused = REFUSED if note is not None and note.refused else None
                reply = replies.result(
                    answering=envelope.id,
                    to=sender,
                    text=text,
                    mode="discuss",
                    watcher=watcher,
                    now=now,
                    refused=refused,
                )
                self._complete(batch, input, key, reply, sent, envelope)
            case Execute(target):
                if reply_id(key, "ack") not in sent:
                    text = f"Accepted: running {target.description}."
                    ack = replies.ack(
                        answering=envelope.id, to=sender, mode="execute", text=text, watcher=watcher, now=now
                    )
                    self._send(batch, input, key, ack)
                batch.ledger.advance(key, Status.QUEUED, now=parts.clock.stamp())
                batch.jobs.append(lambda: self.runs.execute(envelope, target, input))
            case Record():
                notice = notices.of_incoming(envelope, input.path)
                if notice is not None:
                    self._notify(notice, input)
                self._archive_or_done(batch, input, key, envelope)
            case Reject(reason):
                mode = requested_mode(envelope)
                reply = replies.error(
                    answering=envelope.id,
                    to=sender,
                    reasons=[reason],
                    file=input.path,
                    mode=mode,
                    watcher=watcher,
                    now=now,
                )
                self._complete(batch, input, key, reply, sent, envelope)
            case Leave():  # pragma: no cover  # the pipeline never plans to perform a Leave
                pass

    def _record(self, batch: Batch, plan: plans.Perform) -> None:
        """Rule 1: the first sighting of an envelope, with its decision."""
        envelope, decision, input = plan.envelope, plan.decision, plan.input
        mode = requested_mode(envelope)
        batch.ledger.insert(
            key=envelope.key,
            id=envelope.id,
            lane=input.lane,
            file=input.name,
            sha256=plan.sha256,
            type=envelope.type,
            sender=envelope.sender,
            mode=mode,
            decision=label(decision),
            target=decision.target if isinstance(decision, Execute) else None,
            now=self.parts.clock.stamp(),
        )
        input.log.info("envelope.received", sha256=plan.sha256, mode=mode, decision=label(decision))

    def _acknowledge(self, batch: Batch, plan: plans.Perform) -> None:
        """A silent ack; a note is indexed first."""
        envelope, watcher = plan.envelope, self.parts.config.watcher
        note: Note | None = None
        if envelope.type == "note":
            self._index_note(batch, envelope, plan.input)
            text = "Note indexed into notes/INDEX.md."
        else:
            text = f"Handshake received by {watcher}."
            note = (
                self.standups.note(envelope, plan.input.log)
                if reply_id(envelope.key, "ack") not in plan.sent
                else None
            )
            text += "" if note is None else " " + note.text
        reply = replies.ack(
            answering=envelope.id,
            to=envelope.sender,
            text=text,
            mode="discuss",
            watcher=watcher,
            now=self.parts.clock.wall(),
            refused=REFUSED if note is not None and note.refused else None,
        )
        self._complete(batch, plan.input, envelope.key, reply, plan.sent, envelope)

    def _refuse(self, batch: Batch, plan: plans.Refuse) -> None:
        input, key = plan.input, plan.key
        if plan.id is not None:
            input = Input(input.lane, input.name, input.inode, input.log.bind(id=plan.id))
        row = self.parts.ledger.get(key)
        if row is None:
            batch.ledger.insert(
                key=key,
                id=plan.id,
                lane=input.lane,
                file=input.name,
                sha256=plan.sha256,
                type=plan.envelope.type if plan.envelope is not None else None,
                sender=plan.sender,
                mode=None,
                decision=str(plan.refusal),
                now=self.parts.clock.stamp(),
            )
            if plan.refusal is Refusal.INVALID:
                input.log.warning("envelope.invalid", reasons=list(plan.reasons))
            else:
                input.log.warning("envelope.refused", refusal=str(plan.refusal), reasons=list(plan.reasons))
        elif row.status is Status.DONE:
            self._archive_or_done(batch, input, key, plan.envelope)
            return
        reply = replies.invalid(
            file=input.path,
            reasons=plan.reasons,
            digest=key.removeprefix("invalid:"),
            id=plan.id,
            sender=plan.sender,
            watcher=self.parts.config.watcher,
            now=self.parts.clock.wall(),
        )
        self._complete(batch, input, key, reply, row.replies if row else (), plan.envelope)

    def _duplicate(self, batch: Batch, plan: plans.Duplicate) -> None:
        input, envelope = plan.input, plan.envelope
        target = self.parts.commits.target(batch, input.name, self.parts.clock.wall())
        batch.ledger.add_duplicate(
            id=envelope.id,
            lane=input.lane,
            file=input.name,
            sha256=plan.sha256,
            archive=target,
            now=self.parts.clock.stamp(),
        )
        self.parts.commits.move(batch, Move(input.lane, input.name, target), input.log, "envelope.duplicate")
        self._archive_sidecar(batch, input, envelope, duplicate=True)

    def _finish_move(self, batch: Batch, plan: plans.FinishMove) -> None:
        input, commits = plan.input, self.parts.commits
        target = plan.target or commits.target(batch, input.name, self.parts.clock.wall())
        move = Move(input.lane, input.name, target)
        if plan.sidecar:
            commits.move(batch, move, input.log, "sidecar.archived", sidecar=input.name, resumed=True)
        else:
            commits.move(batch, move, input.log, "envelope.archived", resumed=True)
            self._archive_sidecar(batch, input, plan.envelope)

    def _answer(self, batch: Batch, plan: plans.Answer) -> None:
        """The terminal reply to an execution, from its outcome; its run folder goes after."""
        if not plan.recorded:
            batch.ledger.advance(
                plan.key, Status.FINISHED, now=self.parts.clock.stamp(), outcome=plan.outcome
            )
        run_dir = self.runs.run_dir(plan.id)
        files = run_dir / "out"
        deliverable = isinstance(plan.outcome, Produced) and plan.outcome.files and files.is_dir()
        reply = replies.of_outcome(
            plan.outcome,
            answering=plan.id,
            to=plan.sender,
            file=plan.input.path,
            watcher=self.parts.config.watcher,
            now=self.parts.clock.wall(),
            files=deliverable,
        )
        self._complete(
            batch, plan.input, plan.key, reply, plan.sent, plan.envelope, files if deliverable else None
        )
        batch.jobs.append(lambda: shutil.rmtree(run_dir, ignore_errors=True))

    # -- the steps they share --------------------------------------------------------------

    def _complete(
        self,
        batch: Batch,
        input: Input,
        key: str,
        reply: Envelope,
        sent: tuple[str, ...],
        envelope: Envelope | None = None,
        files: Path | None = None,
    ) -> None:
        """Write the terminal reply (unless already written), mark done, archive (rules 2, 3)."""
        if reply.id not in sent:
            self._send(batch, input, key, reply, files)
        self._archive_or_done(batch, input, key, envelope)

    def _send(self, batch: Batch, input: Input, key: str, reply: Envelope, files: Path | None = None) -> None:
        path = f"outbox/{reply.id}.md"
        if files is not None:
            count = self.parts.hub.copy_tree(files, "outbox", reply.id)
            input.log.info("deliverable.written", path=f"outbox/{reply.id}/", files=count)
        self.parts.commits.write(batch, "outbox", f"{reply.id}.md", render(reply))
        reply_class = replies.reply_class(reply)
        batch.ledger.add_reply(
            key,
            reply_id=reply.id,
            in_reply_to=reply.in_reply_to,
            type=reply.type,
            reply_class=reply_class,
            path=path,
            now=self.parts.clock.stamp(),
            recipient=reply.to,
        )
        input.log.info("reply.written", reply=reply.id, reply_type=reply.type, reply_class=reply_class)
        notice = notices.of_reply(reply, path)
        if notice is not None:
            self._notify(notice, input)

    def _archive_or_done(self, batch: Batch, input: Input, key: str, envelope: Envelope | None) -> None:
        """Mark done and archive the input — only the very file that was read (same inode).

        The target is in the ledger before the link exists, so a crash between link and unlink
        is finished at the next scan. An input not read now (inode None) is only marked done:
        the scan archives it after checking its bytes.
        """
        parts = self.parts
        status = parts.hub.lstat(input.lane, input.name)
        archived = False
        if input.inode is not None and status is not None:
            if status.st_ino != input.inode:
                input.log.warning("envelope.replaced", reason="a new file took its name; read next scan")
            else:
                target = parts.commits.target(batch, input.name, parts.clock.wall())
                batch.ledger.advance(key, Status.DONE, now=parts.clock.stamp(), archive=target)
                parts.commits.move(
                    batch, Move(input.lane, input.name, target), input.log, "envelope.archived"
                )
                archived = True
        self._archive_sidecar(batch, input, envelope)
        if not archived:
            batch.ledger.advance(key, Status.DONE, now=parts.clock.stamp())

    def _archive_sidecar(
        self, batch: Batch, input: Input, envelope: Envelope | None, *, duplicate: bool = False
    ) -> None:
        """Rule 4: the signatures the order names, or `NAME.sig` if it was unreadable."""
        if input.lane != "authorized":
            return
        hub = self.parts.hub
        for sidecar in envelope.sidecars if envelope is not None else (f"{input.name}.sig",):
            order = order_of(sidecar)
            if order not in (None, input.name) and (duplicate or hub.exists(input.lane, order)):
                continue  # it belongs to another order in the lane, or to the original of this copy
            status = hub.lstat(input.lane, sidecar)
            if status is None:
                continue
            # A second link beside the order's archived copy: that move was cut short; finish it.
            if status.st_nlink > 1 and (
                linked := self.recoveries.interrupted_sidecar(input.lane, sidecar, input.name)
            ):
                move = Move(input.lane, sidecar, linked)
                self.parts.commits.move(
                    batch, move, input.log, "sidecar.archived", sidecar=sidecar, resumed=True
                )
                continue
            target = self.parts.commits.target(batch, sidecar, self.parts.clock.wall())
            move = Move(input.lane, sidecar, target)
            self.parts.commits.move(batch, move, input.log, "sidecar.archived", sidecar=sidecar)

    def _index_note(self, batch: Batch, envelope: Envelope, input: Input) -> None:
        ledger = self.parts.ledger
        now = self.parts.clock.stamp()
        batch.ledger.add_note(notes.from_envelope(envelope, seen_at=now), now=now)
        hub = self.parts.hub
        for name, data in notebook.files(ledger, envelope.id, lambda name: hub.exists("notes", name)):
            self.parts.commits.write(batch, "notes", name, data)
        input.log.info("note.indexed")

    def _notify(self, notice: Notice, input: Input) -> None:
        self.parts.notifier.notify(notice, time.monotonic(), input.log)
