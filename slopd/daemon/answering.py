"""Answering inputs: each one's facts gathered, handled, and its plan carried out in a batch.

Rules:
1. One input's trip goes one way: the intake says it is due and unchanged → gathering (its facts)
   → the handler (`core.handling`: a plan, asking for at most two more facts) → the interpreter,
   in a batch (SPEC §7's order of effects).
2. Due inputs are handled in batches of up to `BATCH` (group commit, `daemon.batch`); a batch
   whose commit failed is redone one input at a time, so an input that cannot be answered never
   holds back the others. Finished jobs and start-up recovery are batches of one: an outcome is
   committed at once.
3. An input never crashes the loop: an unexpected failure is logged (`envelope.failed`,
   `job.failed`) and the file stays in its lane for the next full scan.
4. Recovery first makes the lanes a git or sync client dropped, then answers every row a crash
   left unfinished.
"""

from __future__ import annotations

import time

from slopd.core.facts import Arrival, Facts, Input, Now, Policy
from slopd.core.handling import handle
from slopd.core.intake import Intake
from slopd.core.names import Kind
from slopd.core.plans import Ask, Plan
from slopd.daemon import recovery
from slopd.daemon.arrivals import Arrivals
from slopd.daemon.batch import Batch, Where
from slopd.daemon.gathering import Gatherer
from slopd.daemon.homing import Homing
from slopd.daemon.interpreter import Interpreter
from slopd.daemon.parts import Parts
from slopd.daemon.runs import Runs
from slopd.shell.lanes import Entry, signature_of

BATCH = 100  # inputs per group commit


class Answering:
    def __init__(
        self,
        parts: Parts,
        intake: Intake,
        arrivals: Arrivals,
        gathering: Gatherer,
        interpreter: Interpreter,
        homing: Homing,
        runs: Runs,
    ) -> None:
        self.parts, self.intake, self.arrivals = parts, intake, arrivals
        self.gathering, self.interpreter, self.homing, self.runs = gathering, interpreter, homing, runs

    def reconfigure(self, parts: Parts) -> None:
        """A reload: the new snapshot (`daemon.parts` rule 1)."""
        self.parts = parts

    def recover(self) -> None:
        """Rule 4, each row in a batch of one (rule 2)."""
        self.arrivals.ensure_lanes()
        recovery.remove_temps(self.parts.hub, self.parts.log)
        for row in self.parts.ledger.unfinished():
            facts = self.gathering.recovered(row)
            plan = handle(facts, self._policy(), self._now())
            assert isinstance(plan, Plan)
            if plan.effects:
                self._in_batch_of_one(plan, Input(row.lane, row.file, None))

    def process_due(self, now: float) -> None:
        """Handle every candidate whose wait is over and that has not changed meanwhile (rule 2)."""
        due = self.intake.due(now)
        for start in range(0, len(due), BATCH):
            undone = self._batch([(where, None) for where in due[start : start + BATCH]])
            if len(undone) > 1:
                for item in undone:
                    self._batch([item])

    def finish_jobs(self) -> None:
        """Answer finished jobs, each in a batch of one (rules 2 and 3)."""
        for done in self.runs.collect():
            try:
                facts = self.gathering.finished(done, self.runs.settle(done))
                self._in_batch_of_one(self._plan(facts), facts.input)
            except Exception:  # the loop outlives a failed reply; the next start resumes it
                done.job.log.exception("job.failed")
                self.parts.health.failed(f"{done.job.key}: its reply failed")

    def _batch(self, inputs: list[tuple[Where, Kind | None]]) -> list[tuple[Where, Kind | None]]:
        """Handle `inputs` as one batch; returns those whose effects a failed commit undid.

        An input with no kind yet is a candidate: it is confirmed unchanged (and its kind taken)
        first; one with a kind is being redone, already confirmed.
        """
        parts = self.parts
        batch = parts.commits.open(stage=len(inputs) > 1)
        try:
            for (lane, name), known in inputs:
                status = parts.hub.lstat(lane, name)
                if known is None:
                    kind = self.intake.take((lane, name), signature_of(status), now=time.monotonic())
                else:
                    kind = None if self.runs.busy((lane, name)) else known
                if kind is None or status is None:
                    continue
                batch.inputs.append(((lane, name), kind))
                self._handle(batch, lane, Entry(name, status), kind)
        finally:
            undone = self._commit(batch)
        return undone

    def _commit(self, batch: Batch) -> list[tuple[Where, Kind | None]]:
        """Commit `batch`; the inputs left in their lanes wait for the next full scan."""
        committed = self.parts.commits.commit(batch)
        for where, reason in committed.failed:
            self._failed(where, reason)
        undone = set(committed.undone)
        return [(where, kind) for where, kind in batch.inputs if where in undone]

    def _handle(self, batch: Batch, lane: str, entry: Entry, kind: Kind) -> None:
        """Rules 1 and 3 for one input."""
        try:
            admitted = self.arrivals.admitted((lane, entry.name))
            facts = self.gathering.arrival(lane, entry, kind, self.homing.policy, admitted)
            plan = self._plan(facts)
            self.interpreter.execute(batch, plan, facts.input, entry.signature, kind)
        except Exception:  # one bad input must never stop the loop
            self.parts.log.bind(lane=lane, file=entry.name).exception("envelope.failed")
            self._failed((lane, entry.name), f"{lane}/{entry.name}: handling failed")

    def _failed(self, where: Where, reason: str) -> None:
        """An input that could not be finished: it stays in its lane for the next full scan."""
        self.intake.failed(where)
        self.parts.health.failed(reason)

    def _plan(self, facts: Facts) -> Plan:
        """The handler's plan for `facts`, with whatever more it asks for (at most twice)."""
        policy, now = self._policy(), self._now()
        planned = handle(facts, policy, now)
        for _ in range(2):
            if not isinstance(planned, Ask):
                break
            assert isinstance(facts, Arrival)
            facts = self.gathering.answer(facts, planned, self.homing)
            planned = handle(facts, policy, now)
        assert isinstance(planned, Plan), planned
        return planned

    def _policy(self) -> Policy:
        config = self.parts.config
        return Policy(
            self.homing.policy,
            config.watcher,
            config.summarizer is not None,
            config.auth.sig_grace,
            config.auth.namespace,
        )

    def _now(self) -> Now:
        return Now(self.parts.clock.wall(), time.monotonic())

    def _in_batch_of_one(self, plan: Plan, input: Input) -> None:
        batch = self.parts.commits.open(stage=False)
        try:
            self.interpreter.execute(batch, plan, input)
        finally:
            self._commit(batch)  # what was done is committed, as for any batch
