"""What answering one input writes, as effects in SPEC §7's order. Pure.

These were the rules of `daemon.effects` before it became an interpreter (`daemon.interpreter`).

Rules (for one input):
1. A new input is recorded (`received`) before anything is written for it.
2. A reply is sent, then recorded; its notification goes to the human as it is written. A reply
   already sent (a resumed input) is never sent twice — nor its standup changed twice.
3. A terminal reply is followed by `done` and the move into `archive/` of the very file that
   was read, its signatures with it (`core.archiving`).
4. An execution's ack and its `queued` row are written, and its job starts once they are
   committed; its outcome's reply comes with the deliverable, if any, and the run folder is
   removed after. A discussion with a summarizer configured is answered when it has run.
5. A `handoff` or `handshake` with `project:` changes its Standing Standup as its reply is sent
   (`core.plans.Standup`).
"""

from __future__ import annotations

from dataclasses import dataclass

from slopd.core import archiving, notes, notices, replies, summary
from slopd.core.admission import Refusal
from slopd.core.envelope import Envelope
from slopd.core.facts import Companion, Input, Now, Policy
from slopd.core.ids import reply_id, timestamp
from slopd.core.lifecycle import Row, Status
from slopd.core.outcome import Outcome, Produced
from slopd.core.plans import (
    Advance,
    Clean,
    Effect,
    IndexNote,
    Notify,
    Record,
    Send,
    Standup,
    Start,
    log,
)
from slopd.core.routing import Acknowledge, Decision, Discuss, Execute, Reject, label, requested_mode
from slopd.core.routing import Record as Recorded

Companions = tuple[Companion, ...]


@dataclass(frozen=True, slots=True)
class Refusing:
    """An input refused at admission (invalid, unreadable, badly named, `action:` outside
    authorized/, an id used with other bytes): an error reply listing `reasons`; the id is not
    claimed. `envelope`: when it parsed (its signatures go with it)."""

    input: Input
    key: str  # invalid:DIGEST
    sha256: str
    reasons: tuple[str, ...]
    id: str | None
    sender: str | None
    refusal: Refusal = Refusal.INVALID
    envelope: Envelope | None = None


def standup(envelope: Envelope, now: Now) -> Standup | None:
    """Rule 5: the change `envelope` makes to its standup, if any."""
    project = envelope.extra.get("project")
    if envelope.type not in ("handoff", "handshake") or project is None:
        return None
    return Standup(project, envelope, timestamp(now.wall))


def perform(
    input: Input,
    envelope: Envelope,
    decision: Decision,
    sent: tuple[str, ...],
    new: bool,
    sha256: str,
    companions: Companions,
    policy: Policy,
    now: Now,
) -> list[Effect]:
    """Carry `decision` out (`sent`: the replies already written, for a resumed input)."""
    effects = record(input, envelope, decision, sha256) if new else []
    key, sender, watcher = envelope.key, envelope.sender, policy.watcher
    match decision:
        case Acknowledge():
            effects += acknowledge(input, envelope, sent, companions, policy, now)
        case Discuss() if policy.summarizer:
            effects.append(Start(envelope, None))
        case Discuss():
            changed = standup(envelope, now) if reply_id(key, "result") not in sent else None
            text = summary.summarize(envelope)
            reply = replies.result(
                answering=envelope.id, to=sender, text=text, mode="discuss", watcher=watcher, now=now.wall
            )
            effects += complete(input, key, reply, sent, envelope, companions, standup=changed)
        case Execute(target):
            if reply_id(key, "ack") not in sent:
                text = f"Accepted: running {target.description}."
                ack = replies.ack(
                    answering=envelope.id, to=sender, mode="execute", text=text, watcher=watcher, now=now.wall
                )
                effects.append(Send(key, ack))
            effects += [Advance(key, Status.QUEUED), Start(envelope, target)]
        case Recorded():
            notice = notices.of_incoming(envelope, input.path)
            if notice is not None:
                effects.append(Notify(notice))
            effects += archiving.done(input, key, envelope, companions)
        case Reject(reason):
            reply = replies.error(
                answering=envelope.id,
                to=sender,
                reasons=[reason],
                file=input.path,
                mode=requested_mode(envelope),
                watcher=watcher,
                now=now.wall,
            )
            effects += complete(input, key, reply, sent, envelope, companions)
    return effects


def record(input: Input, envelope: Envelope, decision: Decision, sha256: str) -> list[Effect]:
    """Rule 1: the first sighting of an envelope, with its decision."""
    mode, decided = requested_mode(envelope), label(decision)
    target = decision.target if isinstance(decision, Execute) else None
    return [
        Record(
            envelope.key,
            envelope.id,
            input.lane,
            input.name,
            sha256,
            envelope.type,
            envelope.sender,
            mode,
            decided,
            target,
        ),
        log("info", "envelope.received", sha256=sha256, mode=mode, decision=decided),
    ]


def acknowledge(
    input: Input, envelope: Envelope, sent: tuple[str, ...], companions: Companions, policy: Policy, now: Now
) -> list[Effect]:
    """A silent ack; a note is indexed first, a handshake may tag its sender in (rule 5)."""
    effects: list[Effect] = []
    changed = None
    if envelope.type == "note":
        effects += [
            IndexNote(notes.from_envelope(envelope, seen_at=timestamp(now.wall))),
            log("info", "note.indexed"),
        ]
        text = "Note indexed into notes/INDEX.md."
    else:
        text = f"Handshake received by {policy.watcher}."
        changed = standup(envelope, now) if reply_id(envelope.key, "ack") not in sent else None
    reply = replies.ack(
        answering=envelope.id,
        to=envelope.sender,
        text=text,
        mode="discuss",
        watcher=policy.watcher,
        now=now.wall,
    )
    return effects + complete(input, envelope.key, reply, sent, envelope, companions, standup=changed)


def refuse(
    refusing: Refusing, row: Row | None, companions: Companions, policy: Policy, now: Now
) -> list[Effect]:
    """An admission refusal, under its `invalid:` key (`row`: that key's row, if recorded)."""
    input, key, envelope = refusing.input, refusing.key, refusing.envelope
    effects: list[Effect] = []
    if row is None:
        effects.append(
            Record(
                key,
                refusing.id,
                input.lane,
                input.name,
                refusing.sha256,
                envelope.type if envelope is not None else None,
                refusing.sender,
                None,
                str(refusing.refusal),
            )
        )
        if refusing.refusal is Refusal.INVALID:
            effects.append(log("warning", "envelope.invalid", reasons=list(refusing.reasons)))
        else:
            reasons = list(refusing.reasons)
            effects.append(log("warning", "envelope.refused", refusal=str(refusing.refusal), reasons=reasons))
    elif row.status is Status.DONE:
        return archiving.done(input, key, envelope, companions)
    reply = replies.invalid(
        file=input.path,
        reasons=refusing.reasons,
        digest=key.removeprefix("invalid:"),
        id=refusing.id,
        sender=refusing.sender,
        watcher=policy.watcher,
        now=now.wall,
    )
    return effects + complete(input, key, reply, row.replies if row else (), envelope, companions)


def answer(
    input: Input,
    key: str,
    id: str,
    sender: str,
    outcome: Outcome,
    *,
    recorded: bool,
    sent: tuple[str, ...],
    envelope: Envelope | None,
    outputs: bool,
    companions: Companions,
    policy: Policy,
    now: Now,
) -> list[Effect]:
    """Rule 4: the terminal reply to an execution, from its outcome (`recorded`: the ledger holds
    it as finished already; `outputs`: its run folder's `out/` is there)."""
    effects: list[Effect] = [] if recorded else [Advance(key, Status.FINISHED, outcome)]
    deliverable = isinstance(outcome, Produced) and outcome.files and outputs
    reply = replies.of_outcome(
        outcome,
        answering=id,
        to=sender,
        file=input.path,
        watcher=policy.watcher,
        now=now.wall,
        files=deliverable,
    )
    files = id if deliverable else None
    return [*effects, *complete(input, key, reply, sent, envelope, companions, files=files), Clean(id)]


def complete(
    input: Input,
    key: str,
    reply: Envelope,
    sent: tuple[str, ...],
    envelope: Envelope | None,
    companions: Companions,
    *,
    files: str | None = None,
    standup: Standup | None = None,
) -> list[Effect]:
    """Rules 2 and 3: the terminal reply (unless already sent), then done and the archive."""
    effects: list[Effect] = [] if reply.id in sent else [Send(key, reply, files, standup)]
    return effects + archiving.done(input, key, envelope, companions)
