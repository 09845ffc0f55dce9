"""Routing (SPEC §4): what to do with one valid, new envelope. Pure and total.

Rules, in order — the first that applies decides:
1. Addressed to another watcher (`watcher:X` not among ours) or to a seat another watcher
   answers, or — on a watcher that is not the hub's home (`core.home`) — to anything but its
   own specific names and its seats: `Leave` it in place.
2. In `authorized/`: a failed verification is `Reject`ed with its reason; a verified order
   must be an `instigate`; asking for discussion makes it `Discuss`; otherwise it must name a
   configured `action`, which it `Execute`s. Nothing else ever runs an action.
3. A reply (`ack`, `result`, `error`): `Record` it; never reply to a reply.
4. A recipient that is not ours, not `human` and not a seat: `Reject`.
5. `action` outside `authorized/`: `Reject` — actions never run from the inbox (admission
   refuses it before routing, with the same reason; `core.admission`).
6. By type: `handshake`, `note` → `Acknowledge`; `query`, `handoff` → `Discuss`;
   `instigate` → `Discuss` when it asks for discussion (`mode: discuss` or "discuss only") or
   is addressed to the human, else `Execute` on the seat named by `to`, else on the executor,
   else `Reject` (nothing configured to run it).
Invalid inputs and duplicates never reach `decide`: the daemon answers those first. Rule 1 is
also `elsewhere`, so the daemon can leave a file for another watcher without verifying it.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from slopd.core.admission import ACTION_OUTSIDE
from slopd.core.envelope import Envelope, wants_discussion
from slopd.core.home import GENERIC
from slopd.core.targets import EXECUTOR, Target, TargetKind
from slopd.core.verdicts import Valid, Verification
from slopd.core.vocabulary import REPLY_TYPES

HUMAN = "human"


class Lane(StrEnum):
    INBOX = "inbox"
    AUTHORIZED = "authorized"


@dataclass(frozen=True, slots=True)
class Policy:
    """What this watcher is and what it may run; built from the config."""

    names: frozenset[str]
    executor: bool
    seats: frozenset[str] = frozenset()
    actions: frozenset[str] = frozenset()
    home: bool = True  # the hub's home watcher: answers `watcher`, `human` and the rest
    taken: frozenset[str] = frozenset()  # seats another watcher of the hub answers (`core.home`)
    shared: bool = False  # other watchers' presences are in the hub


@dataclass(frozen=True, slots=True)
class Acknowledge:
    """A silent `ack` and nothing else."""


@dataclass(frozen=True, slots=True)
class Discuss:
    """A `result` carrying a summary; nothing runs."""


@dataclass(frozen=True, slots=True)
class Execute:
    """An immediate silent `ack`, then run `target`."""

    target: Target


@dataclass(frozen=True, slots=True)
class Record:
    """A reply arriving: record it, notify the human, answer nothing."""


@dataclass(frozen=True, slots=True)
class Reject:
    """An `error` reply saying `reason`; nothing runs."""

    reason: str


@dataclass(frozen=True, slots=True)
class Leave:
    """Not ours: leave the file in place for the watcher it names."""

    reason: str


Decision = Acknowledge | Discuss | Execute | Record | Reject | Leave


def decide(  # noqa: PLR0911  # one early decision per rule, in the order of the module docstring
    envelope: Envelope, lane: Lane, policy: Policy, verification: Verification | None = None
) -> Decision:
    """Apply the rules of the module docstring to one envelope (`verification`: authorized only)."""
    to = envelope.to
    leave = elsewhere(envelope, policy)
    if leave is not None:
        return leave
    if lane is Lane.AUTHORIZED:
        return _order(envelope, policy, verification)
    if envelope.type in REPLY_TYPES:
        return Record()
    if unknown_recipient(envelope, policy):
        known = ", ".join(sorted(policy.names | policy.seats | {HUMAN}))
        return Reject(f"unknown recipient {to!r}: this watcher handles {known}")
    if envelope.action is not None:
        return Reject(ACTION_OUTSIDE)
    if envelope.type in ("handshake", "note"):
        return Acknowledge()
    if envelope.type != "instigate" or wants_discussion(envelope) or to == HUMAN:
        return Discuss()
    if to in policy.seats:
        return Execute(Target(TargetKind.SEAT, to))
    if policy.executor:
        return Execute(EXECUTOR)
    return Reject("no executor is configured on this watcher; nothing was run")


def _order(envelope: Envelope, policy: Policy, verification: Verification | None) -> Decision:
    if not isinstance(verification, Valid):
        reason = verification.reason if verification is not None else "unsigned: the order was not verified"
        return Reject(f"{reason}; nothing was run")
    if envelope.type != "instigate":
        return Reject(
            f"only signed `instigate` orders run from authorized/, not {envelope.type}; nothing was run"
        )
    if wants_discussion(envelope):
        return Discuss()
    action = envelope.action
    if action is None:
        return Reject("a signed order must name its `action`; nothing was run")
    if action not in policy.actions:
        return Reject(f"action {action!r} is not configured on this watcher; nothing was run")
    return Execute(Target(TargetKind.ACTION, action))


def unknown_recipient(envelope: Envelope, policy: Policy) -> bool:
    """Rule 4: `to` is none of this watcher's names, not `human` and not one of its seats."""
    to = envelope.to
    return not (to in policy.names or to == HUMAN or to in policy.seats)


def elsewhere(envelope: Envelope, policy: Policy) -> Leave | None:
    """Rule 1: addressed to another watcher, so left in place for it."""
    to = envelope.to
    if to.startswith("watcher:") and to not in policy.names:
        return Leave(f"addressed to {to}, another watcher")
    if to in policy.taken:
        return Leave(f"addressed to {to}, a seat another watcher of the hub answers")
    if not policy.home and not ((to in policy.names and to not in GENERIC) or to in policy.seats):
        return Leave(f"addressed to {to}, which the hub's home watcher answers (this one is not home)")
    return None


def requested_mode(envelope: Envelope) -> str:
    """The mode the sender asked for: `execute` only for an instigate not asking to discuss."""
    if envelope.type == "instigate" and not wants_discussion(envelope):
        return "execute"
    return "discuss"


def label(decision: Decision) -> str:
    """A short name for the ledger and the log: `acknowledge`, `execute:executor`, …"""
    name = type(decision).__name__.lower()
    return f"{name}:{decision.target.label}" if isinstance(decision, Execute) else name
