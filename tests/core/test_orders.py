"""The order verifier (slopd.core.orders.check): each rule of its docstring, in order, with real keys.

Keys are made in-process (`Ed25519PrivateKey.generate()`), signatures by `sshsig.sign`, trust by
`allowed_signers.parse` of a line built from `sshsig.public_key_line`. Time is passed in.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hypothesis import given, settings
from hypothesis import strategies as st

from slopd.core import allowed_signers, sshkeys, sshsig
from slopd.core.envelope import Envelope, EnvelopeError
from slopd.core.orders import FUTURE_SKEW, Trust, check
from slopd.core.sshkeys import PublicKey
from slopd.core.validation import parse
from slopd.core.verdicts import Invalid, Valid, Verification

ALICE = "alice@example.com"
NOW = datetime(2026, 7, 4, 8, 0, 0, tzinfo=UTC)
MAX_AGE = timedelta(hours=24)
NAMES = frozenset({"watcher", "watcher:testhost"})
ALICE_KEY = Ed25519PrivateKey.generate()
STRANGER_KEY = Ed25519PrivateKey.generate()


def stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def public(key: Ed25519PrivateKey) -> PublicKey:
    return sshkeys.ed25519(key.public_key().public_bytes_raw())


def by_name(envelope: Envelope, signature: bytes | None) -> dict[str, bytes | None]:
    """The sidecars' bytes as the gate hands them over: the one the order names."""
    return dict.fromkeys(envelope.sidecars, signature)


def order(body: str = "Deploy build 42.\n", **fields: str | None) -> bytes:
    """A signed-order envelope's bytes (`from_` sets `from`; None drops a key)."""
    headers: dict[str, str | None] = {
        "protocol": "slop.v1",
        "id": "20260704t080000z-order",
        "type": "instigate",
        "from": ALICE,
        "to": "watcher",
        "in_reply_to": "null",
        "created_at": stamp(NOW),
        "auth": "signed:o1.md.sig",
        "action": "deploy",
    }
    if "from_" in fields:
        fields["from"] = fields.pop("from_")
    headers.update(fields)
    lines = [f"{key}: {value}" for key, value in headers.items() if value is not None]
    return ("---\n" + "\n".join(lines) + "\n---\n" + body).encode()


def trust(options: str = "", *, principal: str = ALICE, namespace: str = "slop") -> Trust:
    """Alice's key on line 2 of an allowed_signers file (a comment on line 1)."""
    line = f"{principal} {options} {public(ALICE_KEY).line()}".replace("  ", " ")
    signers = allowed_signers.parse(f"# operators\n{line}\n", local_zone=UTC)
    return Trust(signers=signers, namespace=namespace, max_age=MAX_AGE, names=NAMES)


def verify(
    message: bytes,
    *,
    key: Ed25519PrivateKey = ALICE_KEY,
    namespace: str = "slop",
    signature: bytes | str | None = "sign",
    with_trust: Trust | str | None = "default",
    now: datetime = NOW,
) -> Verification:
    """Parse `message`, sign it (unless `signature` is given) and check it against Alice's trust."""
    envelope = parse(message, name="o1.md")
    armored = sshsig.sign(message, key, namespace=namespace) if signature == "sign" else signature
    assert not isinstance(armored, str)
    chosen = trust() if with_trust == "default" else with_trust
    assert not isinstance(chosen, str)
    return check(envelope, message, by_name(envelope, armored), chosen, now)


def reason_of(verdict: Verification) -> str:
    assert isinstance(verdict, Invalid), verdict
    return verdict.reason


# --- the verdicts, rule by rule ---


def test_a_valid_order_names_the_principal_the_fingerprint_and_the_line() -> None:
    """A good order gives `Valid(from, SHA256 fingerprint of the key, allowed_signers line)`."""
    verdict = verify(order())
    assert verdict == Valid(ALICE, public(ALICE_KEY).fingerprint, 2)
    assert verdict.fingerprint.startswith("SHA256:")


@pytest.mark.parametrize("algorithm", ["sha256", "sha512"])
def test_both_hash_algorithms_verify(algorithm: str) -> None:
    """Signatures over SHA-256 and SHA-512 digests are both accepted."""
    message = order()
    signature = sshsig.sign(message, ALICE_KEY, hash_algorithm=algorithm)
    assert isinstance(verify(message, signature=signature), Valid)


def test_rule_1_auth_none_is_unsigned() -> None:
    """`auth: none` is refused as unsigned, whatever else is wrong or right."""
    reason = reason_of(verify(order(auth="none"), with_trust=None))
    assert reason.startswith("unsigned:")
    assert "auth: none" in reason


def test_rule_1_a_sidecar_that_never_came_is_unsigned_and_named() -> None:
    """A signature that never arrived (None) is unsigned, naming the sidecar the order named."""
    reason = reason_of(verify(order(auth="signed:deploy-42.md.sig"), signature=None, with_trust=None))
    assert reason.startswith("unsigned:")
    assert "deploy-42.md.sig" in reason


def test_no_trust_configured_runs_nothing() -> None:
    """Without an allowed_signers file even a perfect signature is refused, saying so."""
    assert "no allowed_signers" in reason_of(verify(order(), with_trust=None))


def test_rule_2_a_tampered_message_is_a_bad_signature() -> None:
    """One byte of the order changed after signing: bad signature."""
    message = order()
    signature = sshsig.sign(message, ALICE_KEY)
    tampered = message.replace(b"build 42", b"build 43")
    envelope = parse(tampered, name="o1.md")
    reason = reason_of(check(envelope, tampered, by_name(envelope, signature), trust(), NOW))
    assert "bad signature" in reason
    assert "o1.md.sig" in reason


def test_rule_2_the_signature_must_be_over_the_bytes_given_not_the_envelope_parsed() -> None:
    """The verdict is about `message`: a different message with the same envelope fails."""
    message = order()
    signature = sshsig.sign(message, ALICE_KEY)
    envelope = parse(message, name="o1.md")
    crlf = message.replace(b"\n", b"\r\n")
    assert "bad signature" in reason_of(check(envelope, crlf, by_name(envelope, signature), trust(), NOW))


def test_rule_2_a_wrong_namespace_is_refused() -> None:
    """A signature made in namespace `git` does not verify in `slop`."""
    reason = reason_of(verify(order(), namespace="git"))
    assert "namespace" in reason
    assert "git" in reason


def test_rule_2_the_configured_namespace_is_the_one_checked() -> None:
    """With the trust's namespace set to `orders`, an `orders` signature verifies and `slop` does not."""
    assert isinstance(verify(order(), namespace="orders", with_trust=trust(namespace="orders")), Valid)
    assert "namespace" in reason_of(verify(order(), with_trust=trust(namespace="orders")))


def test_rule_2_garbage_signature_bytes_are_malformed() -> None:
    """A sidecar that is not an SSHSIG is refused as malformed, not raised."""
    assert "malformed" in reason_of(verify(order(), signature=b"hello\n"))


def test_rule_3_an_unknown_key_is_refused() -> None:
    """A key that is not in allowed_signers is refused even with a perfect signature."""
    reason = reason_of(verify(order(), key=STRANGER_KEY))
    assert "key not in allowed_signers" in reason
    assert public(STRANGER_KEY).fingerprint in reason


def test_rule_3_the_principal_must_equal_from() -> None:
    """Alice's key signing an order `from: mallory@example.com` is refused."""
    reason = reason_of(verify(order(from_="mallory@example.com")))
    assert "not allowed for principal" in reason
    assert "mallory@example.com" in reason


def test_rule_3_a_key_restricted_to_another_namespace_is_refused() -> None:
    """`namespaces="other"` on the key's line refuses a `slop` signature."""
    reason = reason_of(verify(order(), with_trust=trust('namespaces="other"')))
    assert "not permitted for namespace" in reason


def test_rule_3_an_expired_key_is_refused() -> None:
    """`valid-before` in the past (UTC, `Z`) refuses the key."""
    reason = reason_of(verify(order(), with_trust=trust('valid-before="20260704Z"')))
    assert "key expired" in reason


def test_rule_3_a_key_not_yet_valid_is_refused() -> None:
    """`valid-after` in the future refuses the key."""
    reason = reason_of(verify(order(), with_trust=trust('valid-after="20260705Z"')))
    assert "not yet valid" in reason


def test_rule_3_a_key_inside_its_validity_window_is_accepted() -> None:
    """A key valid from yesterday to tomorrow, limited to namespace slop, verifies now."""
    options = 'namespaces="slop",valid-after="20260703Z",valid-before="20260705Z"'
    assert isinstance(verify(order(), with_trust=trust(options)), Valid)


def test_rule_3_a_principal_pattern_matches() -> None:
    """An allowed_signers principal pattern `*@example.com` covers `from: alice@example.com`."""
    assert isinstance(verify(order(), with_trust=trust(principal="*@example.com")), Valid)


@pytest.mark.parametrize("to", ["human", "watcher:otherhost", "claude-code"])
def test_rule_4_an_order_for_someone_else_is_refused(to: str) -> None:
    """`to` must be one of this watcher's names."""
    reason = reason_of(verify(order(to=to)))
    assert f"addressed to {to!r}" in reason


def test_rule_4_any_of_the_watchers_names_is_accepted() -> None:
    """`to: watcher:testhost` (another of its names) is ours."""
    assert isinstance(verify(order(to="watcher:testhost")), Valid)


def test_rule_5_an_order_older_than_max_age_is_expired() -> None:
    """`created_at` one second older than `max_age` is refused as expired."""
    created = stamp(NOW - MAX_AGE - timedelta(seconds=1))
    reason = reason_of(verify(order(created_at=created)))
    assert reason.startswith("expired:")
    assert created in reason


def test_rule_5_an_order_exactly_max_age_old_is_accepted() -> None:
    """`created_at` exactly `max_age` ago is still valid (the boundary is inclusive)."""
    assert isinstance(verify(order(created_at=stamp(NOW - MAX_AGE))), Valid)


def test_rule_5_an_order_exactly_five_minutes_ahead_is_accepted() -> None:
    """`created_at` exactly five minutes in the future is valid (clock skew allowance)."""
    assert timedelta(minutes=5) == FUTURE_SKEW
    assert isinstance(verify(order(created_at=stamp(NOW + timedelta(minutes=5)))), Valid)


def test_rule_5_an_order_more_than_five_minutes_ahead_is_refused() -> None:
    """`created_at` five minutes and one second ahead is refused."""
    created = stamp(NOW + timedelta(minutes=5, seconds=1))
    reason = reason_of(verify(order(created_at=created)))
    assert "more than 5 minutes in the future" in reason


def test_rule_5_ten_minutes_ahead_is_refused() -> None:
    """`created_at` ten minutes ahead is refused."""
    assert "future" in reason_of(verify(order(created_at=stamp(NOW + timedelta(minutes=10)))))


def test_rule_5_fractional_and_offset_forms_count_by_their_instant() -> None:
    """`+00:00` and fractional seconds compare by the instant they name."""
    assert isinstance(verify(order(created_at="2026-07-03T08:00:00.000+00:00")), Valid)
    assert "expired" in reason_of(verify(order(created_at="2026-07-03T07:59:59.999+00:00")))


# --- the order of the rules ---


@pytest.mark.parametrize(
    ("fields", "options", "arguments", "expected"),
    [
        pytest.param(
            {"auth": "none"}, "", {"with_trust": None}, "unsigned: the order says", id="1-before-trust"
        ),
        pytest.param({}, "", {"signature": None, "with_trust": None}, "never arrived", id="1b-before-trust"),
        pytest.param(
            {}, "", {"namespace": "git", "with_trust": None}, "no allowed_signers", id="trust-before-2"
        ),
        pytest.param(
            {"from_": "mallory", "to": "human", "created_at": "2020-01-01T00:00:00Z"},
            "",
            {"namespace": "git"},
            "namespace",
            id="2-before-3-4-5",
        ),
        pytest.param(
            {"from_": "mallory", "to": "human", "created_at": "2020-01-01T00:00:00Z"},
            "",
            {},
            "not allowed for principal",
            id="3-before-4-5",
        ),
        pytest.param(
            {"to": "human", "created_at": "2020-01-01T00:00:00Z"},
            'valid-before="20200101Z"',
            {},
            "key expired",
            id="3-expiry-before-4-5",
        ),
        pytest.param(
            {"to": "human", "created_at": "2020-01-01T00:00:00Z"}, "", {}, "addressed to", id="4-before-5"
        ),
        pytest.param({"created_at": "2020-01-01T00:00:00Z"}, "", {}, "expired: created_at", id="5"),
    ],
)
def test_the_first_failing_rule_names_the_verdict(
    fields: dict[str, str], options: str, arguments: dict[str, object], expected: str
) -> None:
    """When several rules fail, the verdict is the earliest one's, in the docstring's order."""
    message = order(**fields)
    chosen: dict[str, object] = {"with_trust": trust(options)} | arguments
    verdict = verify(message, **chosen)  # type: ignore[arg-type]
    assert expected in reason_of(verdict)


# --- properties ---

SIGNED = order("Deploy build 42 to staging, then report.\n")
SIGNATURE = sshsig.sign(SIGNED, ALICE_KEY)
ENVELOPE: Envelope = parse(SIGNED, name="o1.md")


def test_the_property_fixture_is_valid() -> None:
    """The unmodified order and signature used by the properties verify."""
    assert isinstance(check(ENVELOPE, SIGNED, by_name(ENVELOPE, SIGNATURE), trust(), NOW), Valid)


@settings(max_examples=300, deadline=None)
@given(position=st.integers(0, len(SIGNED) - 1), mask=st.integers(1, 255))
def test_flipping_any_byte_of_the_order_never_verifies(position: int, mask: int) -> None:
    """Any single byte of the signed order changed (any bit pattern) is never `Valid`."""
    flipped = bytearray(SIGNED)
    flipped[position] ^= mask
    message = bytes(flipped)
    assert isinstance(check(ENVELOPE, message, by_name(ENVELOPE, SIGNATURE), trust(), NOW), Invalid)
    try:
        envelope = parse(message, name="o1.md")
    except EnvelopeError:
        return
    assert isinstance(check(envelope, message, by_name(envelope, SIGNATURE), trust(), NOW), Invalid)


@settings(max_examples=300, deadline=None)
@given(position=st.integers(0, len(SIGNATURE) - 1), mask=st.integers(1, 255))
def test_flipping_any_byte_of_the_signature_never_verifies(position: int, mask: int) -> None:
    """Any single byte of the armored signature changed is never `Valid`."""
    flipped = bytearray(SIGNATURE)
    flipped[position] ^= mask
    assert isinstance(check(ENVELOPE, SIGNED, by_name(ENVELOPE, bytes(flipped)), trust(), NOW), Invalid)


@settings(max_examples=200, deadline=None)
@given(signature=st.binary(max_size=2048))
def test_any_signature_bytes_give_a_verdict_never_an_exception(signature: bytes) -> None:
    """Whatever the sidecar holds, `check` returns `Invalid` (never raises)."""
    assert isinstance(check(ENVELOPE, SIGNED, by_name(ENVELOPE, signature), trust(), NOW), Invalid)


def test_an_order_without_created_at_is_refused_for_the_replay_window() -> None:
    """`created_at` may be absent outside `authorized/`; a signed order must carry it."""
    assert reason_of(verify(order(created_at=None))).startswith("created_at: missing")
