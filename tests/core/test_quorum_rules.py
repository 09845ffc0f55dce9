"""Quorum in the order verifier (`core.orders.check`, rules 3 and 5), pure: who counts as a human.

Keys are made in-process; allowed_signers text is parsed by `allowed_signers.parse`; each
sidecar's bytes are handed over by name, as the gate does.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from slopd.core import allowed_signers, sshkeys, sshsig
from slopd.core.orders import Policy, Trust, check
from slopd.core.validation import parse
from slopd.core.verdicts import Invalid, Valid
from tests.authenticator import Authenticator

NOW = datetime(2026, 7, 4, 8, 0, 0, tzinfo=UTC)
KEYS = {name: Ed25519PrivateKey.from_private_bytes(bytes([n]) * 32) for n, name in enumerate("abcdx", 1)}
SIDECARS = ("o.md.sig", "o.md.2.sig", "o.md.3.sig")


def line(principals: str, key: str) -> str:
    return f"{principals} {sshkeys.ed25519(KEYS[key].public_key().public_bytes_raw()).line()}"


DEFAULT_SIGNERS = "\n".join([line("alice", "a"), line("bob", "b"), line("carol", "c"), line("dave", "d")])


def order(sidecars: tuple[str, ...] = SIDECARS[:2], sender: str = "alice") -> bytes:
    return (
        f"---\nprotocol: slop.v1\nid: o-1\ntype: instigate\nfrom: {sender}\nto: watcher\n"
        f"created_at: 2026-07-04T08:00:00Z\nauth: signed:{','.join(sidecars)}\naction: release\n---\nGo.\n"
    ).encode()


def verdict(
    signers: list[str | None],
    *,
    quorum: int = 2,
    allowed: str = DEFAULT_SIGNERS,
    sender: str = "alice",
    message: bytes | None = None,
) -> Valid | Invalid:
    """Check an order listing one sidecar per entry of `signers` (a key name, or None: never came)."""
    sidecars = SIDECARS[: len(signers)]
    data = order(sidecars, sender)
    signatures = {
        sidecar: None if key is None else sshsig.sign(message or data, KEYS[key])
        for sidecar, key in zip(sidecars, signers, strict=True)
    }
    trust = Trust(
        signers=allowed_signers.parse(allowed + "\n", local_zone=UTC),
        namespace="slop",
        max_age=timedelta(hours=1),
        names=frozenset({"watcher"}),
        policies={"release": Policy(quorum=quorum)},
    )
    return check(parse(data, name="o.md"), data, signatures, trust, NOW)


def reason(result: Valid | Invalid) -> str:
    assert isinstance(result, Invalid), result
    return result.reason


def test_two_distinct_humans_meet_a_quorum_of_two() -> None:
    """alice (the sender) and bob sign: valid, bob listed as the co-signer."""
    result = verdict(["a", "b"])
    assert isinstance(result, Valid)
    assert result.principal == "alice"
    assert result.cosigners == (
        f"bob ({sshkeys.ed25519(KEYS['b'].public_key().public_bytes_raw()).fingerprint})",
    )


def test_two_of_three_with_one_signature_missing_is_enough() -> None:
    """Three listed, two came: a quorum of two is met."""
    assert isinstance(verdict(["a", None, "c"]), Valid)


def test_one_signature_is_refused_naming_who_signed_and_what_is_missing() -> None:
    """Only alice came: the reason names her, one more signer, and the sidecar that never arrived."""
    text = reason(verdict(["a", None]))
    assert text.startswith("quorum not met: 1 of the 2 humans needed signed (alice)")
    assert "missing 1 more distinct signer" in text
    assert "o.md.2.sig: never arrived" in text


def test_the_sender_must_be_among_the_signers() -> None:
    """bob and carol sign alice's order: refused, saying alice (the order's from) is missing."""
    text = reason(verdict(["b", "c"]))
    assert "signed (bob, carol)" in text
    assert "missing a signature by alice (the order's from)" in text


def test_one_key_listed_under_two_principals_is_one_human() -> None:
    """alice's key is also listed as bob's: her two signatures count once."""
    allowed = "\n".join([line("alice", "a"), line("bob", "a")])
    text = reason(verdict(["a", "a"], allowed=allowed))
    assert "the same key as another signature" in text


def test_one_principal_with_two_keys_is_one_human() -> None:
    """alice has a laptop key and a desktop key: signing twice is still one human."""
    allowed = "\n".join([line("alice", "a"), line("alice", "x"), line("bob", "b")])
    text = reason(verdict(["a", "x"], allowed=allowed))
    assert "alice already signed: one human counts once" in text


def test_an_unknown_key_or_a_signature_over_other_bytes_never_counts() -> None:
    """dave is not in allowed_signers here; bob signed other bytes: neither counts."""
    allowed = "\n".join([line("alice", "a"), line("bob", "b")])
    text = reason(verdict(["a", "d"], allowed=allowed))
    assert "o.md.2.sig: signer SHA256:" in text
    assert "key not in allowed_signers" in text
    data = order(SIDECARS[:2])
    signatures = {SIDECARS[0]: sshsig.sign(data, KEYS["a"]), SIDECARS[1]: sshsig.sign(data + b"x", KEYS["b"])}
    trust = Trust(
        signers=allowed_signers.parse(allowed + "\n", local_zone=UTC),
        namespace="slop",
        max_age=timedelta(hours=1),
        names=frozenset({"watcher"}),
        policies={"release": Policy(quorum=2)},
    )
    text = reason(check(parse(data, name="o.md"), data, signatures, trust, NOW))
    assert "signature o.md.2.sig: bad signature" in text


def test_a_co_signer_is_named_by_the_first_literal_principal_of_their_line() -> None:
    """A line `bob@example.com,*@ops` names its co-signer bob@example.com; a wildcard-only line
    names no one, so its key does not count for a quorum."""
    allowed = "\n".join([line("alice", "a"), line("bob@example.com,*@ops", "b"), line("*@example.com", "c")])
    result = verdict(["a", "b"], allowed=allowed)
    assert isinstance(result, Valid)
    assert result.cosigners[0].startswith("bob@example.com (")
    text = reason(verdict(["a", "c"], allowed=allowed))
    assert "key not allowed for principal 'alice'" in text


@pytest.mark.parametrize("quorum", [1, 2, 3])
def test_quorum_m_needs_exactly_m(quorum: int) -> None:
    """With three distinct signers listed, quorum M is met by any M of them, the sender among them."""
    signers: list[str | None] = ["a", "b", "c"]
    for present in range(1, 4):
        listed = signers[:present] + [None] * (3 - present)
        assert isinstance(verdict(listed, quorum=quorum), Valid) == (present >= quorum)


def test_with_quorum_one_an_order_may_list_extra_signatures() -> None:
    """The default quorum of 1: alice's signature is enough; a bad extra one is harmless."""
    assert isinstance(verdict(["a", "d"], quorum=1, allowed=line("alice", "a")), Valid)


@pytest.mark.parametrize(
    ("require", "flags", "allow_no_touch", "valid"),
    [
        (None, 0x01, False, True),
        (None, 0x00, False, False),
        (None, 0x00, True, True),
        ("touch", 0x00, True, False),  # `require` means touched, whatever allow_no_touch says
        ("touch", 0x01, False, True),
        ("verified", 0x01, False, False),
        ("verified", 0x05, False, True),
        ("verified", 0x04, True, False),
    ],
)
def test_a_security_key_signature_counts_by_its_flags_and_the_action(
    require: str | None, flags: int, allow_no_touch: bool, valid: bool
) -> None:
    """Rule 4: the touch flag is needed unless `allow_no_touch` — but never under `require`;
    `require = "verified"` needs the user-verified flag too."""
    token = Authenticator.ed25519("alice")
    data = order(SIDECARS[:1])
    trust = Trust(
        signers=allowed_signers.parse(token.allowed_signers_line("alice") + "\n", local_zone=UTC),
        namespace="slop",
        max_age=timedelta(hours=1),
        names=frozenset({"watcher"}),
        allow_no_touch=allow_no_touch,
        policies={"release": Policy(require=require)},
    )
    signatures = {SIDECARS[0]: token.sign(data, flags=flags)}
    result = check(parse(data, name="o.md"), data, signatures, trust, NOW)
    assert isinstance(result, Valid) is valid, result
