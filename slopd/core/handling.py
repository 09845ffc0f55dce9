"""The daemon's decisions as one function: `handle(facts, policy, now) -> Plan | Ask`. Pure.

Facts are gathered once per input by the shell (`core.facts`); the plan is every effect as data
(`core.plans`), carried out by `daemon.interpreter`, which decides nothing. Like h11's state
machine, this reads no file, no ledger and no clock: what it needs and does not have, it asks
for (`Ask`), and is called again with it. The rules, for a lane entry (SPEC §7, §8, §14):
1. The bytes read are the bytes hashed, parsed, verified and — for an action — executed. A file
   that cannot be read is refused with the reason; one that vanished since it was listed is
   nothing. A file that is a second link of its archived copy is a move cut short: finished.
2. The bytes are admitted as on every surface (`core.admission`): an invalid envelope, `action:`
   outside `authorized/`, or an id already used with other bytes is refused — an `error` reply
   to its sender — under the key `invalid:DIGEST` of its lane, name and bytes (or, unread, of
   its stat), so a crash mid-answer resumes the same answer; a refusal never claims the id.
3. An admitted envelope's ledger row, if any, picks the step (`core.lifecycle.step`): the same
   file resumes, the same bytes under another name are a duplicate.
4. A new or resumed envelope addressed to another watcher is left quiet without being verified;
   in `authorized/` the order is then held for its signatures or verified, and any envelope
   listing assets is held for them or refused for one (`core.holds`); `core.routing.decide`
   runs once, with the verdict (`core.deciding`), and `core.answers` says what carrying it out
   writes.
5. A signature alone in `authorized/` waits for its order for the grace, is finished after a
   cut-short move, follows an order already archived (it signs that order's exact bytes), or
   is refused once the grace is over.
6. On a watcher that is not the hub's home (`core.home`) nothing unroutable is refused: an
   invalid or unreadable file, or a lone signature, is left for the home watcher to answer.
   `action:` outside `authorized/` on an envelope addressed to another watcher is left to it.
7. On a hub other watchers watch too, a new id whose reply another watcher has already written
   in `outbox/` is left alone.
8. Before a recipient is refused as unknown, and before a watcher that is not home runs one of
   its seats, the presence files are read again (`Ask(presences=True)`): a seat another watcher
   answers is left to it.
9. A lane entry refused or found a duplicate leaves nothing in the gate's memory (`Forget`): the
   next file of its name — an order under the same file name, a corrected envelope — is held
   for its own signatures and assets from its own first sight, never judged by an old one.
The other facts — an unfinished row at start-up, an execution's recorded outcome, a
summarizer's answer — are answered by `core.finishing`.
"""

from __future__ import annotations

import hashlib

from slopd.core import admission, answers, archiving, deciding, finishing, sshsig
from slopd.core.admission import Examined, Refusal, Refused
from slopd.core.answers import Refusing
from slopd.core.envelope import Envelope
from slopd.core.facts import (
    Arrival,
    Bytes,
    Executed,
    Facts,
    Input,
    Now,
    Policy,
    Recovered,
    Summarized,
    Unread,
)
from slopd.core.lifecycle import Row, Seen, Status, Step, step
from slopd.core.names import Kind, order_of
from slopd.core.outcome import INTERRUPTED
from slopd.core.plans import Ask, Defer, Effect, Forget, Hold, Plan, Quieten, Start, log
from slopd.core.routing import elsewhere

BAD_NAME = "has a name that is not valid UTF-8, is over 255 bytes, or has control characters"
QUIET = Plan((Quieten(),))


def handle(facts: Facts, policy: Policy, now: Now) -> Plan | Ask:
    """The one plan for `facts`, or the one more fact it needs."""
    match facts:
        case Arrival(kind=Kind.SIDECAR):
            return _signature(facts, policy, now)
        case Arrival(kind=Kind.BAD_NAME):
            return _refuse(facts, _unread(facts, BAD_NAME), policy, now)
        case Arrival():
            return _envelope(facts, policy, now)
        case Recovered():
            return finishing.recovered(facts, policy, now)
        case Executed():
            return finishing.executed(facts, policy, now)
        case Summarized():
            return finishing.summarized(facts, policy, now)


# -- a lane entry -----------------------------------------------------------------------------------


def _refuse(
    facts: Arrival, refusing: Refusing, policy: Policy, now: Now, before: tuple[Effect, ...] = ()
) -> Plan | Ask:
    """Rule 6, then rule 2's answer under its key (whose row is asked for first)."""
    bind: tuple[tuple[str, str], ...] = (("id", refusing.id),) if refusing.id is not None else ()
    if refusing.envelope is not None:
        bind = (("id", refusing.envelope.id), ("type", refusing.envelope.type))
    if not policy.routing.home and refusing.envelope is None:
        return Plan((*before, Quieten()), bind)
    if facts.looked_up is None or facts.looked_up[0] != refusing.key:
        return Ask(row=refusing.key)
    effects = answers.refuse(refusing, facts.looked_up[1], facts.companions, policy, now)
    return Plan((*before, *effects), bind)


def _refused(input: Input, refused: Refused, envelope: Envelope | None = None) -> Refusing:
    """Rule 2: refused at admission, answered under a key of its lane, name and bytes."""
    identity = f"{input.lane}\0{input.name}\0{refused.sha256}".encode(errors="surrogateescape")
    key = "invalid:" + hashlib.sha256(identity).hexdigest()
    return Refusing(
        input, key, refused.sha256, refused.reasons, refused.id, refused.sender, refused.refusal, envelope
    )


def _unread(facts: Arrival, reason: str) -> Refusing:
    """Rule 2 for a file whose bytes are not read: keyed by what its stat says."""
    inode, size, mtime_ns, _ctime = facts.stat.signature
    identity = f"{facts.lane}\0{facts.name}\0{reason}\0{inode}\0{size}\0{mtime_ns}".encode(
        errors="surrogateescape"
    )
    key = "invalid:" + hashlib.sha256(identity).hexdigest()
    input = Input(facts.lane, facts.name, facts.stat.inode)
    return Refusing(input, key, "", (f"the file {reason}",), None, None, Refusal.INVALID)


def _envelope(facts: Arrival, policy: Policy, now: Now) -> Plan | Ask:
    """Rules 1 and 2."""
    if facts.stat.links > 1 and facts.linked is not None:
        input, companions = Input(facts.lane, facts.name, facts.stat.inode), facts.companions
        return Plan(
            tuple(
                archiving.finish_move(
                    input, facts.linked, sidecar=False, envelope=None, companions=companions
                )
            )
        )
    if isinstance(facts.read, Unread):
        if facts.read.gone:  # renamed away or deleted since the scan
            return Plan((log("debug", "envelope.vanished"),))
        return _refuse(facts, _unread(facts, facts.read.reason), policy, now, _forgotten(facts))
    assert isinstance(facts.read, Bytes)
    assert facts.admitted is not None
    if isinstance(facts.admitted, Refused):
        return _refuse(facts, _refused(facts.input, facts.admitted), policy, now, _forgotten(facts))
    return _admitted(facts, facts.admitted, policy, now)


def _forgotten(facts: Arrival) -> tuple[Effect, ...]:
    """Rule 9: what the gate may remember of this lane entry, forgotten once it is answered: its
    hold for assets, and in `authorized/` its hold for signatures (orders are held by name)."""
    forget: tuple[Effect, ...] = (Forget((facts.lane, facts.name)),)
    return (Forget(facts.name), *forget) if facts.lane == "authorized" else forget


def _admitted(facts: Arrival, admitted: Examined, policy: Policy, now: Now) -> Plan | Ask:
    """Rule 2's judgement against the ledger's row for this id, then rule 3."""
    envelope, row = admitted.envelope, facts.row
    bind = (("id", envelope.id), ("type", envelope.type))
    judged = admission.judge(admitted, row.sha256 if row is not None else None)
    if isinstance(judged, Refused):
        forget = _forgotten(facts)
        if judged.refusal is Refusal.ACTION and elsewhere(envelope, policy.routing) is not None:
            return Plan((*forget, Quieten()), bind)  # the watcher it is for refuses it the same way
        return _refuse(facts, _refused(facts.input, judged, envelope), policy, now, forget)
    plan = _known(facts, admitted, policy, now)
    return plan if isinstance(plan, Ask) else Plan(plan.effects, bind)


def _known(facts: Arrival, admitted: Examined, policy: Policy, now: Now) -> Plan | Ask:
    """Rule 3: what the ledger's row for this id (the same bytes, if any) says to do."""
    envelope, sha, row, input, companions = (
        admitted.envelope,
        admitted.sha256,
        facts.row,
        facts.input,
        facts.companions,
    )
    chosen = step(_seen(facts, row))
    effects: list[Effect] = []
    if row is not None and chosen not in (Step.DUPLICATE, Step.FINISH_MOVE):
        effects.append(log("info", "envelope.resumed", status=row.status))
    match chosen:
        case Step.NEW | Step.REDECIDE:
            decided = deciding.new(facts, envelope, sha, policy, now)
            return decided if isinstance(decided, Ask) else Plan((*effects, *decided.effects))
        case Step.RUN:
            assert row is not None
            assert row.target is not None
            effects.append(Start(envelope, row.target))
        case Step.ANSWER:
            assert row is not None
            effects += answers.answer(
                input, row.key, envelope.id, envelope.sender, row.outcome or INTERRUPTED,
                recorded=row.status is Status.FINISHED, sent=row.replies, envelope=envelope,
                outputs=facts.outputs, companions=companions, policy=policy, now=now,
            )  # fmt: skip
        case Step.ARCHIVE:
            assert row is not None
            effects += archiving.done(input, row.key, envelope, companions)
        case Step.FINISH_MOVE:
            assert row is not None
            effects += archiving.finish_move(
                input, row.archive, sidecar=False, envelope=envelope, companions=companions
            )
        case Step.DUPLICATE:
            effects += [*_forgotten(facts), *archiving.duplicate(input, envelope, sha, companions)]
    return Plan(tuple(effects))


def _seen(facts: Arrival, row: Row | None) -> Seen | None:
    """The row of an id met again with the same bytes (admission refused other bytes)."""
    if row is None:
        return None
    same = (row.lane, row.file) == (facts.lane, facts.name)
    present = row.archive is None or not same or facts.archive_present
    return Seen(row.status, same, row.archive is not None, row.target is not None, present)


def _signature(facts: Arrival, policy: Policy, now: Now) -> Plan | Ask:
    """Rule 5: a `NAME.md.sig` alone in the lane."""
    name = facts.name
    order = order_of(name)
    assert order is not None  # classified as a sidecar
    if facts.order_present:
        return QUIET
    input = Input(facts.lane, name, facts.stat.inode)
    if facts.stat.links > 1 and facts.linked is not None:
        return Plan(
            (
                Forget(name),
                *archiving.finish_move(input, facts.linked, sidecar=True, envelope=None, companions=()),
            )
        )
    if facts.sidecar is not None and any(
        isinstance(sshsig.verify(message, facts.sidecar, namespace=policy.namespace), sshsig.Verified)
        for message in facts.archived_orders
    ):
        return Plan(
            (Forget(name), *archiving.finish_move(input, None, sidecar=True, envelope=None, companions=()))
        )
    since = now.monotonic if facts.held_since is None else facts.held_since
    if now.monotonic < since + policy.grace:
        return Plan((Hold(name, since), Defer(since + policy.grace)))
    reason = f"is a signature without its order: {order} did not arrive within {policy.grace:g} s"
    return _refuse(facts, _unread(facts, reason), policy, now, (Forget(name),))
