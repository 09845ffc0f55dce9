"""Properties of the whole pure pipeline: bytes → `parse` → `orders.check` → `decide` (SPEC §3, §4, §6).

Whatever bytes arrive, under whatever name, in whatever lane, with whatever policy: parsing gives
an `Envelope` or an `EnvelopeError`; routing gives one of the decision classes; nothing invalid,
unsigned or unverified is ever executed; and a signature made over an order's original bytes
never verifies once any single byte of the order (or of the signature) has changed.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from slopd.core import allowed_signers, orders, sshkeys, sshsig, verdicts
from slopd.core.envelope import Envelope, EnvelopeError
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
)
from slopd.core.targets import EXECUTOR, Target, TargetKind
from slopd.core.validation import parse
from slopd.shell import config

DECISIONS = (Acknowledge, Discuss, Execute, Record, Reject, Leave)
SETTINGS = settings(deadline=None, max_examples=150, suppress_health_check=[HealthCheck.too_slow])
NAMES = st.sampled_from(["x.md", "x.json", "X.MD", "x.JSON", "o1 (conflicted copy).md", "a.b.json"])
LANES = st.sampled_from(list(Lane))

ALICE = "alice@example.com"
KEY = Ed25519PrivateKey.from_private_bytes(bytes(range(32)))
OTHER_KEY = Ed25519PrivateKey.from_private_bytes(bytes(range(1, 33)))
WATCHER_NAMES = frozenset({"watcher", "watcher:testhost"})
CREATED = datetime(2026, 7, 4, 8, 0, 0, tzinfo=UTC)
NOW = CREATED + timedelta(minutes=1)
TRUST = orders.Trust(
    signers=allowed_signers.parse(
        f"{ALICE} {sshkeys.ed25519(KEY.public_key().public_bytes_raw()).line()}\n", local_zone=UTC
    ),
    namespace="slop",
    max_age=timedelta(hours=1),
    names=WATCHER_NAMES,
)
FULL_POLICY = Policy(
    names=WATCHER_NAMES,
    executor=True,
    seats=frozenset({"claude-code"}),
    actions=frozenset({"deploy", "hello"}),
)


# -- building blocks ----------------------------------------------------------------------------

HEADER_LINES = [
    "protocol: slop.v1\n",
    "id: 20260704t080000z-a\n",
    "id: a..b\n",
    "id: A/B\n",
    "type: instigate\n",
    "type: handshake\n",
    "type: result\n",
    "from: alice@example.com\n",
    'from: "evil\\nline"\n',
    "to: watcher\n",
    "to: watcher:otherhost\n",
    "to: human\n",
    "in_reply_to: null\n",
    "in_reply_to: 20260704t070000z-q\n",
    "created_at: 2026-07-04T08:00:00Z\n",
    "created_at: 2026-13-45T99:00:00Z\n",
    "auth: none\n",
    "auth: signed:x.md.sig\n",
    "auth: signed:../x.sig\n",
    "mode: execute\n",
    "mode: discuss\n",
    "action: deploy\n",
    "body: smuggled\n",
]
YAML_SYNTAX = [
    "a: &x [1, 2]\n",
    "b: *x\n",
    "c: !!python/object/apply:os.system ['true']\n",
    "d: !custom x\n",
    "e: [[[[[[\n",
    "f: {g: {h: i}}\n",
    "- item\n",
    "? key\n: value\n",
    "%YAML 1.1\n",
    "...\n",
    "  indented: 1\n",
    "\t\n",
    "'unclosed\n",
    '"\\ud800"\n',
    "g: |\n  block\n",
    "flag: on\nperm: 0755\n",
    "k: v # comment\n",
]
JSON_SYNTAX = [
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    '"id"',
    '"protocol"',
    '"slop.v1"',
    '"instigate"',
    '"watcher"',
    '"body"',
    "null",
    "true",
    "NaN",
    "Infinity",
    "1e999",
    '"\\u0000"',
    '"\\ud800"',
    " ",
]
RAW_PIECES = [
    b"---\n",
    b"---\r\n",
    b"----\n",
    b"\xef\xbb\xbf",
    b"\r\n",
    b"\n",
    b"\0",
    b"\xff",
    b"\xc3",
    b"\xe2\x80\xae",
    b"Discuss only.\n",
]
FRAGMENT = st.one_of(
    st.sampled_from([line.encode() for line in HEADER_LINES]),
    st.sampled_from([line.encode() for line in YAML_SYNTAX]),
    st.sampled_from([piece.encode() for piece in JSON_SYNTAX]),
    st.sampled_from(RAW_PIECES),
    st.binary(max_size=16),
)


@st.composite
def fragment_files(draw: st.DrawFn) -> bytes:
    """Bytes assembled from envelope header lines, YAML and JSON syntax, fences and stray bytes."""
    pieces = draw(st.lists(FRAGMENT, max_size=24))
    if draw(st.booleans()):
        pieces = [b"---\n", *pieces[: len(pieces) // 2], b"---\n", *pieces[len(pieces) // 2 :]]
    return b"".join(pieces)


def parse_or_error(data: bytes, name: str) -> Envelope | EnvelopeError:
    """`parse`, with its `EnvelopeError` returned; any other exception fails the property."""
    try:
        return parse(data, name=name)
    except EnvelopeError as error:
        caught = error
    assert caught.reasons, "an EnvelopeError must say why"
    assert all(isinstance(reason, str) and reason for reason in caught.reasons)
    return caught


def ids() -> st.SearchStrategy[str]:
    return st.sampled_from(["20260704t080000z-a", "b1", "0.x_y:z-w"])


PARTIES = st.sampled_from(
    [ALICE, "claude-code", "grok", "human", "watcher", "watcher:testhost", "watcher:otherhost", "somebody"]
)


@st.composite
def envelope_fields(draw: st.DrawFn) -> dict[str, Any]:
    """Front-matter fields that are valid one by one (the combination may still be invalid)."""
    kind = draw(
        st.sampled_from(["instigate", "handoff", "ack", "result", "error", "query", "handshake", "note"])
    )
    fields: dict[str, Any] = {
        "protocol": "slop.v1",
        "id": draw(ids()),
        "type": kind,
        "from": draw(PARTIES),
        "to": draw(PARTIES),
        "in_reply_to": draw(st.sampled_from([None, "20260704t070000z-q"])),
        "created_at": draw(st.sampled_from(["2026-07-04T08:00:00Z", "2026-07-04T08:00:00.5+00:00"])),
        "auth": draw(st.sampled_from(["none", "signed:x.md.sig", "signed:o1 (1).md.sig"])),
    }
    for key, values in (
        ("mode", ["execute", "discuss"]),
        ("action", ["deploy", "hello", "nuke"]),
        ("flag", ["on", "0755", "[a, b]"]),
    ):
        if draw(st.booleans()):
            fields[key] = draw(st.sampled_from(values))
    if draw(st.booleans()):  # a request to run something half the time, so Execute is really reached
        fields.update(
            type="instigate", to=draw(st.sampled_from(["watcher", "watcher:testhost", "claude-code"]))
        )
        fields.pop("mode", None)
        fields.pop("action", None)
        action = draw(st.sampled_from(["deploy", "hello", "nuke", None, None, None]))
        if action is not None:
            fields["action"] = action
    return fields


BODIES = st.sampled_from(
    ["", "Do it.\n", "Run it.\n", "Discuss only: should we?\n", "discuss-only\n", "$(rm -rf ~); id --help\n"]
)


def render_md(fields: dict[str, Any], body: str) -> bytes:
    lines = "".join(f"{key}: {'null' if value is None else value}\n" for key, value in fields.items())
    return f"---\n{lines}---\n{body}".encode()


def render_json(fields: dict[str, Any], body: str) -> bytes:
    return json.dumps({**fields, "body": body}).encode()


@st.composite
def inputs(draw: st.DrawFn) -> tuple[bytes, str]:
    """(bytes, name): a well-formed-looking envelope as Markdown or JSON (it may still be invalid)."""
    fields, body = draw(envelope_fields()), draw(BODIES)
    if draw(st.booleans()):
        return render_json(fields, body), draw(st.sampled_from(["x.json", "X.JSON"]))
    return render_md(fields, body), draw(st.sampled_from(["x.md", "o1 (conflicted copy).md"]))


POLICIES = st.builds(
    Policy,
    names=st.sets(st.sampled_from(["watcher", "watcher:testhost", "watcher:odysseus"]), min_size=1).map(
        lambda names: frozenset(names | {"watcher"}) if len(names) > 1 else frozenset(names)
    ),
    executor=st.booleans(),
    seats=st.sets(st.sampled_from(["claude-code", "grok"])).map(frozenset),
    actions=st.sets(st.sampled_from(["deploy", "hello"])).map(frozenset),
)
VERIFICATIONS: st.SearchStrategy[verdicts.Verification | None] = st.one_of(
    st.none(),
    st.builds(verdicts.Invalid, reason=st.sampled_from(["bad signature", "unsigned: no .sig"])),
    st.builds(verdicts.Valid, principal=st.just(ALICE), fingerprint=st.just("SHA256:x"), line=st.just(1)),
)


def pipeline(
    data: bytes,
    name: str,
    lane: Lane,
    policy: Policy,
    signature: bytes | None,
    trust: orders.Trust | None = TRUST,
) -> Decision | EnvelopeError:
    """What the daemon does with one new input: parse, verify (authorized/ only), decide."""
    parsed = parse_or_error(data, name)
    if isinstance(parsed, EnvelopeError):
        return parsed
    verification = (
        orders.check(parsed, data, dict.fromkeys(parsed.sidecars, signature), trust, NOW)
        if lane is Lane.AUTHORIZED
        else None
    )
    return decide(parsed, lane, policy, verification)


# -- parse is total ----------------------------------------------------------------------------


@SETTINGS
@given(data=st.binary(max_size=4096), name=NAMES)
def test_any_bytes_give_an_envelope_or_an_envelope_error(data: bytes, name: str) -> None:
    """Arbitrary bytes under any .md or .json name give an Envelope or an EnvelopeError, nothing else."""
    assert isinstance(parse_or_error(data, name), Envelope | EnvelopeError)


@SETTINGS
@given(data=fragment_files(), name=NAMES)
def test_bytes_built_from_envelope_yaml_and_json_fragments_give_an_envelope_or_an_error(
    data: bytes, name: str
) -> None:
    """Files spliced from header lines, YAML and JSON syntax, fences, BOMs and bad bytes never escape."""
    assert isinstance(parse_or_error(data, name), Envelope | EnvelopeError)


@SETTINGS
@given(data=fragment_files(), name=NAMES, prefix=st.sampled_from([b"", b"\xef\xbb\xbf", b"---\n"]))
def test_fragments_after_a_valid_front_matter_give_an_envelope_or_an_error(
    data: bytes, name: str, prefix: bytes
) -> None:
    """A valid envelope with hostile fragments spliced into its front matter or body never escapes parse."""
    valid = render_md(
        {"protocol": "slop.v1", "id": "a1", "type": "note", "from": "x", "to": "watcher"}
        | {"created_at": "2026-07-04T08:00:00Z"},
        "Body.\n",
    )
    cut = len(valid) // 2
    for spliced in (prefix + valid[:cut] + data + valid[cut:], prefix + valid + data):
        assert isinstance(parse_or_error(spliced, name), Envelope | EnvelopeError)


# -- decide is total and never executes what it must not ---------------------------------------


@SETTINGS
@given(source=inputs(), lane=LANES, policy=POLICIES, verification=VERIFICATIONS)
def test_decide_returns_a_decision_for_any_parsed_envelope_lane_and_policy(
    source: tuple[bytes, str], lane: Lane, policy: Policy, verification: verdicts.Verification | None
) -> None:
    """For every parsed envelope, in either lane, under any policy and verdict, decide gives a Decision."""
    parsed = parse_or_error(*source)
    assume(isinstance(parsed, Envelope))
    assert isinstance(parsed, Envelope)
    decision = decide(parsed, lane, policy, verification)
    assert isinstance(decision, DECISIONS), decision
    if isinstance(decision, Execute):
        if lane is Lane.AUTHORIZED:
            assert isinstance(verification, verdicts.Valid)
            assert parsed.type == "instigate"
            assert parsed.action is not None
            assert decision.target == Target(TargetKind.ACTION, parsed.action)
            assert parsed.action in policy.actions
        else:
            assert parsed.type == "instigate"
            assert parsed.action is None, "an action never runs from the inbox"
            seat = decision.target.kind is TargetKind.SEAT and decision.target.name in policy.seats
            assert decision.target == EXECUTOR or seat
            assert decision.target != EXECUTOR or policy.executor


@SETTINGS
@given(
    source=inputs(),
    policy=POLICIES,
    verification=st.one_of(st.none(), st.builds(verdicts.Invalid, reason=st.text(min_size=1, max_size=20))),
)
def test_in_authorized_nothing_without_a_valid_verification_is_executed(
    source: tuple[bytes, str], policy: Policy, verification: verdicts.Invalid | None
) -> None:
    """In authorized/, with no verification or an Invalid one, decide never returns Execute."""
    parsed = parse_or_error(*source)
    assume(isinstance(parsed, Envelope))
    assert isinstance(parsed, Envelope)
    decision = decide(parsed, Lane.AUTHORIZED, policy, verification)
    assert not isinstance(decision, Execute), (parsed, decision)


@SETTINGS
@given(
    data=st.one_of(fragment_files(), st.binary(max_size=1024), inputs().map(lambda source: source[0])),
    name=NAMES,
    lane=LANES,
    signature=st.one_of(st.none(), st.binary(max_size=512)),
)
def test_an_invalid_input_never_reaches_an_execute_decision(
    data: bytes, name: str, lane: Lane, signature: bytes | None
) -> None:
    """Through the whole pipeline, an input that does not parse is answered invalid, never executed."""
    outcome = pipeline(data, name, lane, FULL_POLICY, signature)
    if isinstance(outcome, EnvelopeError):
        assert not isinstance(outcome, Execute)
        return
    assert isinstance(outcome, DECISIONS)
    if lane is Lane.AUTHORIZED:
        assert not isinstance(outcome, Execute), "an arbitrary signature file never authorizes an order"


@SETTINGS
@given(source=inputs(), signature=st.one_of(st.none(), st.binary(max_size=512)))
def test_an_unsigned_order_in_authorized_never_executes(
    source: tuple[bytes, str], signature: bytes | None
) -> None:
    """An order with `auth: none`, or whose signature never came, is never executed, whatever else it says."""
    data, name = source
    fields = parse_or_error(data, name)
    assume(isinstance(fields, Envelope))
    assert isinstance(fields, Envelope)
    unsigned = data.replace(f"auth: {fields.auth}".encode(), b"auth: none").replace(
        f'"auth": "{fields.auth}"'.encode(), b'"auth": "none"'
    )
    for candidate, sig in ((unsigned, signature), (data, None)):
        outcome = pipeline(candidate, name, Lane.AUTHORIZED, FULL_POLICY, sig)
        assert not isinstance(outcome, Execute), outcome


# -- a signature covers the exact bytes ---------------------------------------------------------


ORDER_BODIES = st.text(st.characters(codec="utf-8", exclude_characters="\0"), max_size=200)


@st.composite
def signed_orders(draw: st.DrawFn) -> tuple[bytes, str]:
    """A valid signed order for this watcher (Markdown or JSON) and its name; it verifies and runs."""
    fields = {
        "protocol": "slop.v1",
        "id": draw(ids()),
        "type": "instigate",
        "from": ALICE,
        "to": draw(st.sampled_from(sorted(WATCHER_NAMES))),
        "in_reply_to": None,
        "created_at": CREATED.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "auth": "signed:o1.md.sig",
        "action": draw(st.sampled_from(["deploy", "hello"])),
    }
    body = draw(ORDER_BODIES).replace("iscuss", "")  # no "discuss only": it must run
    if draw(st.booleans()):
        return render_json(fields, body), "o1.json"
    bom = draw(st.sampled_from([b"", b"\xef\xbb\xbf"]))
    return bom + render_md(fields, body), "o1.md"


@settings(deadline=None, max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(
    order=signed_orders(),
    at=st.integers(min_value=0),
    flip=st.integers(min_value=1, max_value=255),
    hash_algorithm=st.sampled_from(["sha256", "sha512"]),
)
def test_an_order_changed_by_any_single_byte_never_verifies(
    order: tuple[bytes, str], at: int, flip: int, hash_algorithm: str
) -> None:
    """A signature over the original bytes: the original runs; any one-byte change of it never verifies."""
    original, name = order
    signature = sshsig.sign(original, KEY, hash_algorithm=hash_algorithm)
    envelope = parse(original, name=name)
    verdict = orders.check(envelope, original, dict.fromkeys(envelope.sidecars, signature), TRUST, NOW)
    assert isinstance(verdict, verdicts.Valid), verdict  # the property below is not vacuous
    assert isinstance(decide(envelope, Lane.AUTHORIZED, FULL_POLICY, verdict), Execute)

    index = at % len(original)
    changed = original[:index] + bytes([original[index] ^ flip]) + original[index + 1 :]
    assert changed != original
    parsed = parse_or_error(changed, name)
    if isinstance(parsed, EnvelopeError):
        return  # answered invalid: never verified, never run
    after = orders.check(parsed, changed, dict.fromkeys(parsed.sidecars, signature), TRUST, NOW)
    assert isinstance(after, verdicts.Invalid), (index, changed[max(0, index - 10) : index + 10])
    assert not isinstance(decide(parsed, Lane.AUTHORIZED, FULL_POLICY, after), Execute)


@settings(deadline=None, max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(order=signed_orders(), at=st.integers(min_value=0), flip=st.integers(min_value=1, max_value=255))
def test_a_signature_changed_by_any_single_byte_never_verifies(
    order: tuple[bytes, str], at: int, flip: int
) -> None:
    """The order intact but one byte of its `.sig` changed: never Valid, so the order never runs."""
    original, name = order
    signature = sshsig.sign(original, KEY)
    index = at % len(signature)
    changed = signature[:index] + bytes([signature[index] ^ flip]) + signature[index + 1 :]
    envelope = parse(original, name=name)
    after = orders.check(envelope, original, dict.fromkeys(envelope.sidecars, changed), TRUST, NOW)
    assert isinstance(after, verdicts.Invalid), (index, changed)
    assert not isinstance(decide(envelope, Lane.AUTHORIZED, FULL_POLICY, after), Execute)


@SETTINGS
@given(order=signed_orders())
def test_a_signature_by_a_key_not_in_allowed_signers_never_verifies(order: tuple[bytes, str]) -> None:
    """The exact bytes, well signed, but by a key the operator does not trust: Invalid, never executed."""
    original, name = order
    envelope = parse(original, name=name)
    verdict = orders.check(
        envelope, original, dict.fromkeys(envelope.sidecars, sshsig.sign(original, OTHER_KEY)), TRUST, NOW
    )
    assert isinstance(verdict, verdicts.Invalid)
    assert "not in allowed_signers" in verdict.reason
    assert not isinstance(decide(envelope, Lane.AUTHORIZED, FULL_POLICY, verdict), Execute)


# -- the verifier is total for every configuration the config parser accepts -------------------------


@pytest.mark.parametrize("max_age", ["3600", "315360000", "1e12", "inf", "nan"])
def test_every_max_age_the_config_accepts_gives_a_verifier_that_never_raises(
    tmp_path: Path, max_age: str
) -> None:
    """A `max_age` the config takes (else a ConfigError naming it) verifies a good order; nothing raises."""
    allowed = tmp_path / "allowed_signers"
    allowed.write_text(f"{ALICE} {sshkeys.ed25519(KEY.public_key().public_bytes_raw()).line()}\n")
    text = f'names = ["watcher"]\n[auth]\nallowed_signers = "{allowed}"\nmax_age = {max_age}\n'
    try:
        trust = config.load_trust(config.parse(text))
    except config.ConfigError as error:
        refused = str(error)
    else:
        refused = ""
    if refused:
        assert "max_age" in refused
        return
    assert trust is not None
    data = render_md(
        {"protocol": "slop.v1", "id": "o1", "type": "instigate", "from": ALICE, "to": "watcher"}
        | {"created_at": "2026-07-04T08:00:00Z", "auth": "signed:o1.md.sig", "action": "deploy"},
        "Run it.\n",
    )
    envelope = parse(data, name="o1.md")
    verdict = orders.check(
        envelope, data, dict.fromkeys(envelope.sidecars, sshsig.sign(data, KEY)), trust, NOW
    )
    assert isinstance(verdict, verdicts.Valid)
