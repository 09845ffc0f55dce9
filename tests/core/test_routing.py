"""Routing (SPEC §4), tested exhaustively against an independent reading of the spec."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import pytest

from slopd.core.envelope import Envelope
from slopd.core.routing import (
    Acknowledge,
    Decision,
    Discuss,
    Execute,
    Lane,
    Leave,
    Policy,
    Record,
    Reject,
    decide,
    label,
    requested_mode,
)
from slopd.core.targets import EXECUTOR, Target, TargetKind
from slopd.core.verdicts import Invalid, Valid, Verification

TYPES = ("instigate", "handoff", "ack", "result", "error", "query", "handshake", "note")
REPLIES = ("ack", "result", "error")
MODES = (None, "execute", "discuss")
RECIPIENTS = ("watcher", "watcher:self", "watcher:other", "human", "claude-code", "nobody")
NAMES = frozenset({"watcher", "watcher:self"})
SEATS = frozenset({"claude-code"})
ACTIONS = (None, "deploy", "nuke")  # deploy is configured, nuke is not
CONFIGURED_ACTIONS = frozenset({"deploy"})
VERDICTS = ("missing", "invalid", "valid")
PLAIN_BODY = "Please run the test suite and report.\n"
DISCUSS_BODY = "Please look at the test suite. Discuss only.\n"


@dataclass(frozen=True)
class Case:
    kind: str
    lane: Lane
    mode: str | None
    discuss_only: bool
    executor: bool
    to: str
    action: str | None
    verdict: str = "missing"

    def verification(self) -> Verification | None:
        if self.verdict == "valid":
            return Valid("claude-code", "SHA256:x", 1)
        if self.verdict == "invalid":
            return Invalid("signature o.md.sig: bad signature")
        return None

    def envelope(self, **extra: str) -> Envelope:
        return Envelope(
            protocol="slop.v1",
            id="20260704t071553z-case",
            type=self.kind,
            sender="claude-code",
            to=self.to,
            created_at="2026-07-04T07:15:53Z",
            in_reply_to="20260704t070000z-orig" if self.kind in REPLIES else None,
            mode=self.mode,
            action=self.action,
            body=DISCUSS_BODY if self.discuss_only else PLAIN_BODY,
            extra=dict(extra),
        )

    def policy(self) -> Policy:
        return Policy(names=NAMES, executor=self.executor, seats=SEATS, actions=CONFIGURED_ACTIONS)

    def decide(self) -> Decision:
        return decide(self.envelope(), self.lane, self.policy(), self.verification())


ALL_CASES = [
    Case(*values)
    for values in itertools.product(
        TYPES, list(Lane), MODES, (False, True), (False, True), RECIPIENTS, ACTIONS, VERDICTS
    )
]


def expected(case: Case) -> tuple[type, str]:
    """What SPEC §4 and the routing docstring say, as (decision class, target or reason word).

    Written from the text, in the docstring's rule order:
    1. `to: watcher:X` that is not one of ours → leave it for that watcher;
    2. in authorized/: no or a failed verification → error with its reason; verified but not an
       instigate → error; verified and discuss-mode → discuss; verified without an action, or
       with one that is not configured → error; else run that action;
    3. ack/result/error arriving → recorded, never answered;
    4. a recipient that is not ours, not human, not a seat → error;
    5. `action` in the inbox → error (actions run only from authorized/);
    6. handshake/note → silent ack; query/handoff → discuss result; instigate → discuss when
       `mode: discuss`, "discuss only" or `to: human`, else run on the seat named by `to`, else on
       the executor, else error (nothing configured).
    """
    to = case.to
    if to == "watcher:other":
        return Leave, "watcher:other"
    if case.lane == "authorized":
        if case.verdict == "missing":
            return Reject, "unsigned"
        if case.verdict == "invalid":
            return Reject, "bad signature"
        if case.kind != "instigate":
            return Reject, "instigate"
        if case.mode == "discuss" or case.discuss_only:
            return Discuss, ""
        if case.action is None:
            return Reject, "action"
        if case.action not in CONFIGURED_ACTIONS:
            return Reject, case.action
        return Execute, f"action:{case.action}"
    if case.kind in ("ack", "result", "error"):
        return Record, ""
    if to == "nobody":
        return Reject, "nobody"
    if case.action:
        return Reject, "action"
    if case.kind in ("handshake", "note"):
        return Acknowledge, ""
    if case.kind in ("query", "handoff"):
        return Discuss, ""
    discussion = case.mode == "discuss" or case.discuss_only
    if discussion or to == "human":
        return Discuss, ""
    if to == "claude-code":
        return Execute, "claude-code"
    if case.executor:
        return Execute, "executor"
    return Reject, "executor"


def describe(decision: Decision) -> str:
    if isinstance(decision, Execute):
        return decision.target.label
    if isinstance(decision, Reject | Leave):
        return decision.reason
    return ""


def test_every_rule_is_reached_by_decide() -> None:
    """Over the whole table `decide` reaches every kind of decision and every target and refusal
    the spec's reading names, so no rule is left untested by the comparison below."""
    reached = {(type(case.decide()).__name__, describe(case.decide())) for case in ALL_CASES}
    kinds = {kind for kind, _ in reached}
    assert kinds == {"Acknowledge", "Discuss", "Execute", "Record", "Reject", "Leave"}
    targets = {shown for kind, shown in reached if kind == "Execute"}
    assert targets == {"executor", "claude-code", "action:deploy"}
    wanted = {word for case in ALL_CASES for kind, word in [expected(case)] if kind is Reject}
    for word in wanted:
        assert any(kind == "Reject" and word in shown for kind, shown in reached), word


def test_decide_matches_the_spec_on_every_combination() -> None:
    """`decide` gives the decision the spec prescribes for every combination of inputs."""
    mismatches = []
    for case in ALL_CASES:
        decision = case.decide()
        kind, word = expected(case)
        shown = describe(decision)
        if type(decision) is not kind or (word not in shown if kind is not Execute else shown != word):
            mismatches.append((case, decision, kind.__name__, word))
    assert mismatches == [], f"{len(mismatches)} mismatches, first: {mismatches[:3]}"


def test_nothing_in_authorized_executes_without_a_valid_signature() -> None:
    """In authorized/ only a verified instigate naming a configured action executes, and only that action."""
    executed = 0
    for case in ALL_CASES:
        decision = case.decide()
        if case.lane is Lane.AUTHORIZED and isinstance(decision, Execute):
            executed += 1
            assert case.verdict == "valid", case
            assert case.kind == "instigate", case
            assert case.action in CONFIGURED_ACTIONS, case
            assert decision.target == Target(TargetKind.ACTION, str(case.action)), case
    assert executed > 0


def test_discuss_mode_never_executes() -> None:
    """`mode: discuss` or "discuss only" in the body never yields Execute, whatever else is set."""
    for case in ALL_CASES:
        if case.mode == "discuss" or case.discuss_only:
            assert not isinstance(case.decide(), Execute), case


def test_execute_targets_only_the_executor_or_the_seat_named_by_to() -> None:
    """Execute runs the named seat when `to` is a seat, else the executor, and only if configured."""
    executed = 0
    for case in ALL_CASES:
        decision = case.decide()
        if isinstance(decision, Execute):
            executed += 1
            assert case.kind == "instigate", case
            if case.lane is Lane.AUTHORIZED:
                continue  # the signed-order rule above
            assert not case.action, case
            if case.to in SEATS:
                assert decision.target == Target(TargetKind.SEAT, case.to), case
            else:
                assert case.to in NAMES, case
                assert case.executor, case
                assert decision.target == EXECUTOR, case
    assert executed > 0


def test_replies_never_get_a_reply_outside_authorized() -> None:
    """An ack/result/error in the inbox never yields Acknowledge, Discuss, Execute or Reject."""
    for case in ALL_CASES:
        if case.kind in REPLIES and case.lane is Lane.INBOX:
            assert isinstance(case.decide(), Record | Leave), case


def test_another_watcher_is_always_left_alone() -> None:
    """`to: watcher:other` is always Leave, in every lane, whatever the type, mode or action."""
    for case in ALL_CASES:
        decision = case.decide()
        assert isinstance(decision, Leave) == (case.to == "watcher:other"), case


def test_unknown_recipient_is_rejected_naming_it() -> None:
    """An unknown recipient gets an error that names it and lists who this watcher handles."""
    case = Case("handoff", Lane.INBOX, None, False, True, "nobody", None)
    decision = case.decide()
    assert isinstance(decision, Reject)
    assert "'nobody'" in decision.reason
    for known in (*NAMES, *SEATS, "human"):
        assert known in decision.reason


def test_unknown_keys_never_influence_routing() -> None:
    """Extra front-matter keys that look like routing hints change no decision."""
    for case in ALL_CASES:
        hinted = case.envelope(Mode="execute", run="yes", target="executor", discuss="only", To="human")
        assert decide(hinted, case.lane, case.policy(), case.verification()) == case.decide(), case


def test_decide_is_deterministic() -> None:
    """The same envelope, lane and policy always give an equal decision."""
    for case in ALL_CASES[::7]:
        assert case.decide() == case.decide()


def test_seat_executes_without_a_general_executor() -> None:
    """An instigate addressed to a configured seat runs on that seat even with no executor."""
    decision = Case("instigate", Lane.INBOX, None, False, False, "claude-code", None).decide()
    assert decision == Execute(Target(TargetKind.SEAT, "claude-code"))


def test_name_outside_names_starting_with_watcher_is_left() -> None:
    """A policy with other names leaves `watcher:self` alone and still answers its own names."""
    envelope = Case("instigate", Lane.INBOX, None, False, True, "watcher:self", None).envelope()
    policy = Policy(names=frozenset({"watcher", "watcher:box"}), executor=True)
    assert isinstance(decide(envelope, Lane.INBOX, policy), Leave)
    own = Policy(names=frozenset({"watcher:self"}), executor=True)
    assert decide(envelope, Lane.INBOX, own) == Execute(EXECUTOR)


@pytest.mark.parametrize(
    ("decision", "text"),
    [
        (Acknowledge(), "acknowledge"),
        (Discuss(), "discuss"),
        (Execute(EXECUTOR), "execute:executor"),
        (Execute(Target(TargetKind.SEAT, "claude-code")), "execute:claude-code"),
        (Execute(Target(TargetKind.ACTION, "deploy")), "execute:action:deploy"),
        (Record(), "record"),
        (Reject("x"), "reject"),
        (Leave("x"), "leave"),
    ],
)
def test_label(decision: Decision, text: str) -> None:
    """Each decision has a short ledger label; Execute names its target."""
    assert label(decision) == text


@pytest.mark.parametrize("kind", TYPES)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("discuss_only", [False, True])
@pytest.mark.parametrize("to", ["watcher", "human"])
def test_requested_mode(kind: str, mode: str | None, discuss_only: bool, to: str) -> None:
    """The sender asked to execute only with an instigate that neither says discuss nor discuss only."""
    envelope = Case(kind, Lane.INBOX, mode, discuss_only, True, to, None).envelope()
    asked = kind == "instigate" and mode != "discuss" and not discuss_only
    assert requested_mode(envelope) == ("execute" if asked else "discuss")
