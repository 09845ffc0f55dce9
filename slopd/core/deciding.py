"""What a new (or resumed, not yet answered) envelope comes to: rules 4, 7 and 8 of
`core.handling`, with the gate (`core.holds`) and routing (`core.routing.decide`). Pure.

Rules:
1. An envelope addressed to another watcher is left quiet without being verified (`elsewhere`);
   so is, on a hub others watch, a new id another watcher has already answered in `outbox/`.
2. In `authorized/` the order is held for its signatures or verified; any envelope listing
   assets is held for them or refused for one; a hold is a `Defer`, said once (`envelope.held`),
   and an order with some of its signatures is told to the human (`OrderWaits`).
3. `decide` runs once, with the verdict. Before a recipient is refused as unknown, and before a
   watcher that is not home runs one of its seats, the presence files are read again
   (`Ask(presences=True)`): only `elsewhere` is asked again, with the policy they give.
4. What the decision writes is `core.answers.perform`'s.
"""

from __future__ import annotations

from slopd.core import answers, holds
from slopd.core.envelope import Envelope
from slopd.core.facts import Arrival, Bytes, Now, Policy
from slopd.core.holds import Held
from slopd.core.plans import Ask, Defer, Effect, OrderWaits, Plan, Quieten, log
from slopd.core.routing import Decision, Execute, Lane, Leave, Reject, decide, elsewhere, unknown_recipient
from slopd.core.routing import Policy as Routing
from slopd.core.targets import TargetKind
from slopd.core.verdicts import Invalid, Valid, Verification


def new(facts: Arrival, envelope: Envelope, sha: str, policy: Policy, now: Now) -> Plan | Ask:
    """Rules 4, 7 and 8."""
    routing, row = policy.routing, facts.row
    shared = row is None and routing.shared
    leave = elsewhere(envelope, routing) or (_answered_elsewhere(facts, routing) if shared else None)
    if leave is not None:
        return Plan(
            (log("info", "envelope.left", reason=leave.reason), Quieten()) if row is None else (Quieten(),)
        )
    gated = _gate(facts, envelope, sha, policy, now)
    if isinstance(gated, Plan):
        return gated
    effects, verdict, refused = gated
    if refused is not None:
        effects.append(log("warning", "assets.rejected", reason=refused.reason))
        decision: Decision = Reject(refused.reason)
    else:
        decision = decide(envelope, Lane(facts.lane), routing, verdict)
        if _ask_again(envelope, decision, routing):
            if facts.rechecked is None:
                return Ask(presences=True)
            decision = elsewhere(envelope, facts.rechecked) or decision
        if isinstance(decision, Leave):
            return Plan((*effects, log("info", "envelope.left", reason=decision.reason), Quieten()))
    sent = row.replies if row is not None else ()
    effects += answers.perform(
        facts.input, envelope, decision, sent, row is None, sha, facts.companions, policy, now
    )
    return Plan(tuple(effects))


def _gate(
    facts: Arrival, envelope: Envelope, sha: str, policy: Policy, now: Now
) -> Plan | tuple[list[Effect], Verification | None, Invalid | None]:
    """Rule 4's holds (a plan that waits), or the gate's effects, the order's verdict (None: not
    an order) and the assets' refusal (None: none)."""
    effects: list[Effect] = []
    verdict: Verification | None = None
    if facts.lane == "authorized":
        assert isinstance(facts.read, Bytes)
        checked, gate = holds.order(facts, envelope, facts.read.data, policy.grace, now)
        effects += gate
        if isinstance(checked, Held):
            if checked.first:
                effects.append(
                    log("info", "envelope.held", reason=f"waiting for its signatures {checked.missing}")
                )
            effects += [OrderWaits(facts.name, sha, checked.signed, checked.missing), Defer(checked.until)]
            return Plan(tuple(effects))
        verdict = checked
    refused: Invalid | None = None
    if envelope.assets and not isinstance(verdict, Invalid):
        attached, gate = holds.attachments(facts, envelope, policy.grace, now)
        effects += gate
        if isinstance(attached, Held):
            if attached.first:
                effects.append(
                    log("info", "envelope.held", reason=f"waiting for its assets {attached.missing}")
                )
            return Plan((*effects, Defer(attached.until)))
        refused = attached
    if verdict is not None:
        effects.append(_verdict(verdict))
    return effects, verdict, refused


def _ask_again(envelope: Envelope, decision: Decision, routing: Routing) -> bool:
    """Rule 8: a decision that another watcher's seats could change."""
    if isinstance(decision, Reject):
        return unknown_recipient(envelope, routing)
    seat = isinstance(decision, Execute) and decision.target.kind is TargetKind.SEAT
    return seat and not routing.home


def _verdict(verdict: Valid | Invalid) -> Effect:
    if isinstance(verdict, Invalid):
        return log("warning", "order.rejected", reason=verdict.reason)
    return log(
        "info",
        "order.verified",
        principal=verdict.principal,
        key=verdict.fingerprint,
        line=verdict.line,
        cosigners=list(verdict.cosigners),
        **({} if verdict.flags is None else {"flags": verdict.flags}),
        **({} if verdict.origin is None else {"origin": verdict.origin}),
    )


def _answered_elsewhere(facts: Arrival, routing: Routing) -> Leave | None:
    """Rule 7: a new id another watcher has already answered (the home moved meanwhile)."""
    for file, sender in facts.answered:
        if sender not in routing.names:
            return Leave(f"already answered by {sender} (outbox/{file})")
    return None
