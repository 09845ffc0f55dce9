"""What is answered without a lane entry: unfinished rows at start-up, an execution's recorded
outcome, a summarizer's answer (the other halves of `core.handling`). Pure.

Rules:
1. An unfinished row at start-up is answered by `core.lifecycle.recovery_step`: `executing` is
   `interrupted, not retried` (recorded, never run again); `finished` is answered from its
   stored outcome; a row whose file vanished is told so; a file still in its lane is the scan's.
   The file is not read now, so it is only marked done: the scan archives it after its check.
2. An execution's outcome (recorded `finished` on its own before) is answered, done, archived;
   its run folder is removed after (`core.answers` rule 4).
3. A summarizer's answer is the discussion's result; when it failed (`summarizer.failed`), the
   built-in summary stands in. A standup change rides on the result, unless it was sent.
"""

from __future__ import annotations

from slopd.core import answers, replies, summary
from slopd.core.facts import Executed, Input, Now, Policy, Recovered, Summarized
from slopd.core.ids import reply_id
from slopd.core.lifecycle import Recovery, recovery_step
from slopd.core.outcome import INTERRUPTED
from slopd.core.plans import Effect, Plan, log

VANISHED = "the input file vanished from the hub before it was handled; nothing was run"


def recovered(facts: Recovered, policy: Policy, now: Now) -> Plan:
    """An unfinished row at start (`core.lifecycle.recovery_step`); its file, if any, is the scan's."""
    row = facts.row
    chosen = recovery_step(
        row.status,
        has_outcome=row.outcome is not None,
        file_present=facts.present,
        addressable=row.id is not None and bool(row.sender),
    )
    if chosen is Recovery.SCAN:
        return Plan()
    assert row.id is not None
    assert row.sender is not None
    input = Input(row.lane, row.file, None)  # no inode: the scan archives it after a sha check
    bind = (("id", row.id),)
    if chosen is Recovery.VANISHED:
        reply = replies.error(
            answering=row.id,
            to=row.sender,
            reasons=[VANISHED],
            file=input.path,
            mode=row.mode or "discuss",
            watcher=policy.watcher,
            now=now.wall,
        )
        return Plan(tuple(answers.complete(input, row.key, reply, row.replies, None, facts.companions)), bind)
    effects: list[Effect] = (
        [log("warning", "execution.interrupted")] if chosen is Recovery.INTERRUPTED else []
    )
    outcome = INTERRUPTED if chosen is Recovery.INTERRUPTED else row.outcome
    assert outcome is not None
    effects += answers.answer(
        input, row.key, row.id, row.sender, outcome, recorded=chosen is Recovery.OUTCOME, sent=row.replies,
        envelope=None, outputs=facts.outputs, companions=facts.companions, policy=policy, now=now,
    )  # fmt: skip
    return Plan(tuple(effects), bind)


def executed(facts: Executed, policy: Policy, now: Now) -> Plan:
    envelope = facts.envelope
    effects = answers.answer(
        facts.input, envelope.key, envelope.id, envelope.sender, facts.outcome, recorded=True,
        sent=facts.sent, envelope=envelope, outputs=facts.outputs, companions=facts.companions,
        policy=policy, now=now,
    )  # fmt: skip
    return Plan(tuple(effects), (("id", envelope.id), ("type", envelope.type)))


def summarized(facts: Summarized, policy: Policy, now: Now) -> Plan:
    """A summarizer's answer, or the built-in summary when it failed."""
    envelope, result = facts.envelope, facts.result
    effects: list[Effect] = []
    text = facts.text
    if text is None:
        effects.append(
            log("warning", "summarizer.failed", exit_code=result.exit_code, timed_out=result.timed_out)
        )
        text = summary.summarize(envelope)
    changed = answers.standup(envelope, now) if reply_id(envelope.key, "result") not in facts.sent else None
    reply = replies.result(
        answering=envelope.id,
        to=envelope.sender,
        text=text + "\n",
        mode="discuss",
        watcher=policy.watcher,
        now=now.wall,
    )
    effects += answers.complete(
        facts.input, envelope.key, reply, facts.sent, envelope, facts.companions, standup=changed
    )
    return Plan(tuple(effects), (("id", envelope.id), ("type", envelope.type)))
