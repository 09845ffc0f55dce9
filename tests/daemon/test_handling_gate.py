"""`core.handling.handle` in `authorized/` and for assets: orders held, verified or refused, lone
signatures, the signatures archived with an order (`core.holds`, `core.archiving` rule 2). In-process:
keys and signatures are made here (`core.sshsig.sign`), no `ssh-keygen`, no files."""

from __future__ import annotations

import hashlib
from dataclasses import replace

import pytest

from slopd.core import sshsig
from slopd.core.facts import Attached, Companion, Sidecar
from slopd.core.handling import handle
from slopd.core.holds import ASSET_POLL
from slopd.core.plans import Defer, Forget, Hold, Log, Move, OrderWaits, Plan, Quieten, Record, Send, Start
from slopd.core.targets import Target, TargetKind
from tests.daemon.facts import (
    GRACE,
    NOW,
    OPERATOR,
    OPERATOR_KEY,
    POLICY,
    arrival,
    entry,
    envelope,
    kinds,
    planned,
    policy,
    trust,
)

NAME = "20260704t080000z-order.md"
SIG = f"{NAME}.sig"


def order(auth: str = f"signed:{SIG}", **fields: str) -> bytes:
    return envelope(
        "20260704t080000z-order",
        "instigate",
        from_=OPERATOR,
        auth=auth,
        action="deploy",
        body="Deploy 42.\n",
        **fields,
    )


def signed(data: bytes, **facts: object):
    """The order in `authorized/` with its signature read and the operator trusted."""
    signature = sshsig.sign(data, OPERATOR_KEY, namespace="slop")
    chosen = {"trust": trust(), "signatures": (Sidecar(SIG, data=signature),), **facts}
    return arrival(data, lane="authorized", name=NAME, **chosen)


def log_events(plan: Plan) -> list[str]:
    return [effect.event for effect in plan.of(Log)]


def test_a_signed_order_is_verified_and_its_action_started() -> None:
    """Rule 4: verified (`order.verified`), recorded as `execute:action:deploy`, acked, started."""
    plan = planned(signed(order()))
    assert "order.verified" in log_events(plan)
    assert plan.of(Forget) == [Forget(NAME)]
    assert plan.of(Record)[0].decision == "execute:action:deploy"
    assert [(start.envelope.id, start.target) for start in plan.of(Start)] == [
        ("20260704t080000z-order", Target(TargetKind.ACTION, "deploy"))
    ]


def test_an_order_whose_signature_is_missing_is_held_for_the_grace_and_woken_by_it() -> None:
    """`core.holds` rules 1 and 4: first seen now, held until now + grace, woken by its signature."""
    facts = arrival(order(), lane="authorized", name=NAME, signatures=(Sidecar(SIG),), trust=trust())
    plan = planned(facts)
    assert plan.effects[0] == Hold(NAME, NOW.monotonic, (SIG,))
    assert log_events(plan) == ["envelope.held"]
    assert plan.of(OrderWaits) == [OrderWaits(NAME, hashlib.sha256(order()).hexdigest(), (), SIG)]
    assert plan.of(Defer) == [Defer(NOW.monotonic + GRACE)]
    again = planned(replace(facts, held_since=NOW.monotonic - 5))
    assert log_events(again) == []  # held before: said once
    assert again.of(Defer) == [Defer(NOW.monotonic - 5 + GRACE)]


def test_after_the_grace_an_order_without_its_signature_is_refused() -> None:
    """`core.holds` rule 1: once the grace is over it is checked with what came: unsigned."""
    facts = arrival(order(), lane="authorized", name=NAME, signatures=(Sidecar(SIG),), trust=trust())
    plan = planned(replace(facts, held_since=NOW.monotonic - GRACE - 1))
    assert plan.of(Forget) == [Forget(NAME)]
    assert "order.rejected" in log_events(plan)
    assert "never arrived" in plan.of(Send)[0].reply.body
    assert not plan.of(Start)


def test_a_signature_that_is_there_but_unreadable_rejects_the_order_at_once() -> None:
    """`core.holds` rule 1: a link or a folder in its name is not a signature to wait for."""
    facts = arrival(
        order(), lane="authorized", name=NAME, signatures=(Sidecar(SIG, problem="is a symbolic link"),)
    )
    plan = planned(facts)
    assert f"its signature {SIG} is a symbolic link" in plan.of(Send)[0].reply.body


def test_an_order_signed_by_a_stranger_is_refused_and_nothing_runs() -> None:
    """Rule 4: the verdict is the verifier's; an invalid one is an error reply."""
    plan = planned(signed(order(), trust=None))
    assert "no allowed_signers file is configured" in plan.of(Send)[0].reply.body
    assert not plan.of(Start)


def test_an_order_for_another_watcher_is_left_without_being_verified() -> None:
    """Rule 4: `elsewhere` comes first: no gate effect, no verdict."""
    plan = planned(signed(order(to="watcher:other")))
    assert kinds(plan) == ["Log:envelope.left", "Quieten"]


# -- assets -------------------------------------------------------------------------------------------


def with_asset(digest: str = "a" * 64) -> bytes:
    return envelope(type="handoff", body="See the log.\n", assets=f"[assets/run.log sha256:{digest}]")


@pytest.mark.parametrize(
    ("attached", "since", "shape"),
    [
        (Attached("run.log"), None, ["Hold", "Log:envelope.held", "Defer"]),
        (Attached("run.log"), NOW.monotonic - 3, ["Hold", "Defer"]),
        (Attached("run.log", digest="b" * 64), None, ["Forget", "Log:assets.rejected", "Record"]),
        (Attached("run.log", problem="is a directory"), None, ["Forget", "Log:assets.rejected", "Record"]),
        (Attached("run.log", digest="a" * 64), None, ["Forget", "Record"]),
        (Attached("run.log"), NOW.monotonic - GRACE - 1, ["Forget", "Log:assets.rejected", "Record"]),
    ],
    ids=["missing", "missing-again", "other-bytes", "unreadable", "present", "too-late"],
)
def test_an_envelope_waits_for_its_assets_or_is_refused_for_one(
    attached: Attached, since: float | None, shape: list[str]
) -> None:
    """`core.holds` rule 3: held (polled every second), refused for bytes that are not the
    reference, or after the grace; answered when all are there."""
    plan = planned(arrival(with_asset(), assets=(attached,), assets_since=since))
    assert kinds(plan)[: len(shape)] == shape


def test_an_asset_wait_is_looked_at_again_within_a_second() -> None:
    """The assets folder is not watched: the hold is polled every `ASSET_POLL` seconds."""
    plan = planned(arrival(with_asset(), assets=(Attached("run.log"),)))
    assert plan.of(Defer) == [Defer(NOW.monotonic + ASSET_POLL)]
    assert plan.of(Hold) == [Hold(("inbox", "20260704t080000z-q.md"), NOW.monotonic)]


# -- a signature alone (rule 5) -------------------------------------------------------------------------


def test_a_lone_signature_beside_its_order_is_quiet() -> None:
    assert kinds(planned(entry(SIG, order_present=True))) == ["Quieten"]


def test_a_lone_signature_waits_for_its_order_then_is_refused() -> None:
    """Rule 5: held for the grace (first seen now), then an error naming the missing order."""
    waiting = planned(entry(SIG))
    assert waiting.effects == (Hold(SIG, NOW.monotonic), Defer(NOW.monotonic + GRACE))
    late = planned(entry(SIG, held_since=NOW.monotonic - GRACE))
    assert kinds(late)[:3] == ["Forget", "Record", "Log:envelope.invalid"]
    assert f"{NAME} did not arrive within 30 s" in late.of(Send)[0].reply.body


def test_a_lone_signature_after_the_grace_is_left_by_a_watcher_that_is_not_home() -> None:
    """Rule 6."""
    assert kinds(planned(entry(SIG, held_since=0.0), policy(home=False))) == ["Forget", "Quieten"]


def test_a_signature_of_an_order_already_archived_follows_it_quietly() -> None:
    """Rule 5: it signs the archived copy's exact bytes: moved to a fresh archive name."""
    data = order()
    signature = sshsig.sign(data, OPERATOR_KEY, namespace="slop")
    plan = planned(entry(SIG, sidecar=signature, archived_orders=(b"other bytes", data)))
    assert plan.effects == (
        Forget(SIG),
        Move("authorized", SIG, None, "sidecar.archived", (("sidecar", SIG), ("resumed", True))),
    )
    unrelated = planned(entry(SIG, sidecar=signature, archived_orders=(b"other bytes",)))
    assert unrelated.effects == (Hold(SIG, NOW.monotonic), Defer(NOW.monotonic + GRACE))


def test_a_signature_left_as_a_second_link_is_moved_beside_its_order() -> None:
    """Rule 5, a move cut short: finished to the copy it is a link of."""
    plan = planned(entry(SIG, links=2, linked="archive/2026-07-04/x.md.sig"))
    assert plan.of(Move) == [
        Move(
            "authorized",
            SIG,
            "archive/2026-07-04/x.md.sig",
            "sidecar.archived",
            (("sidecar", SIG), ("resumed", True)),
        )
    ]


# -- the signatures that go with an archived order (core.archiving rule 2) -------------------------------


def archived_with(
    companions: tuple[Companion, ...], data: bytes | None = None, **facts: object
) -> list[Move]:
    """The moves of a discussed order (it is answered and archived at once)."""
    chosen = data or order(mode="discuss")
    return planned(signed(chosen, companions=companions, **facts)).of(Move)


def test_an_orders_signature_goes_to_the_archive_with_it() -> None:
    assert archived_with((Companion(SIG),)) == [
        Move("authorized", SIG, None, "sidecar.archived", (("sidecar", SIG),))
    ]


def test_a_signature_already_linked_beside_the_archived_order_finishes_that_move() -> None:
    moves = archived_with((Companion(SIG, linked="archive/2026-07-04/o.md.sig"),))
    assert moves == [
        Move(
            "authorized",
            SIG,
            "archive/2026-07-04/o.md.sig",
            "sidecar.archived",
            (("sidecar", SIG), ("resumed", True)),
        )
    ]


def test_a_forged_order_cannot_take_another_orders_signature() -> None:
    """A signature named after another order that is still in the lane stays for that order."""
    other = "20260704t090000z-real.md.sig"
    data = order(auth=f"signed:{other}", mode="discuss")
    signature = sshsig.sign(data, OPERATOR_KEY, namespace="slop")
    facts = arrival(
        data,
        lane="authorized",
        name=NAME,
        signatures=(Sidecar(other, data=signature),),
        trust=trust(),
        companions=(Companion(other, order_present=True),),
    )
    assert planned(facts).of(Move) == []


def test_a_missing_signature_is_not_moved() -> None:
    assert archived_with((Companion(SIG, present=False),)) == []


def test_signatures_are_archived_only_from_authorized() -> None:
    """An inbox file never takes a `.sig` with it."""
    plan = planned(arrival(envelope(), companions=(Companion("20260704t080000z-q.md.sig"),)))
    assert plan.of(Move) == []


def test_a_held_order_is_quiet_nowhere_and_waits_in_the_intake() -> None:
    """A hold is a `Defer` (looked at again), never a `Quieten` (left until it changes)."""
    facts = arrival(order(), lane="authorized", name=NAME, signatures=(Sidecar(SIG),))
    plan = handle(facts, POLICY, NOW)
    assert isinstance(plan, Plan)
    assert plan.of(Quieten) == []
    assert len(plan.of(Defer)) == 1
