"""Passkey signatures (`webauthn-sk-ecdsa-sha2-nistp256@openssh.com`): slopd.core.webauthn's rules,
slopd.core.passkeys' wrapping and key lines, each held against the real `ssh-keygen -Y verify`.

Every forgery is signed for real by the software passkey of `tests.authenticator` over what it
claims, unless the forgery is exactly a claim that differs from what was signed; so each row
differs from a good signature only in its defect, and is refused for its own reason. Where slopd
is stricter than OpenSSH (rules 4 and 5 of `core.webauthn`), ssh-keygen accepts what slopd refuses.
"""

from __future__ import annotations

import hashlib
import struct
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from slopd.core import allowed_signers, passkeys, sshkeys, sshsig, webauthn
from slopd.core.sshsig import Rejected, Verified
from slopd.core.wire import SignatureError, string
from tests.authenticator import USER_PRESENT, USER_VERIFIED, Authenticator

SSH_KEYGEN = "/usr/bin/ssh-keygen"
MESSAGE = b"---\nprotocol: slop.v1\nid: o1\n---\nDeploy build 42.\n"
ORIGIN = "http://localhost:8787"
PASSKEY = Authenticator.ecdsa("alice's passkey", application="localhost")
TYPE = webauthn.SIGNATURE_TYPE.encode()


@dataclass(frozen=True)
class Claim:
    """What a signature file says; `signed` overrides what the passkey really signed."""

    flags: int = USER_PRESENT
    counter: int = 7
    origin: str = ORIGIN
    client_data: bytes | None = None
    extensions: bytes = b""
    namespace: str = "slop"
    message: bytes = MESSAGE
    hash_algorithm: str = "sha512"


def client_data(challenge: bytes, origin: str = ORIGIN, tail: str = ',"crossOrigin":false}') -> bytes:
    """clientDataJSON as Chromium writes it, with its tail after the origin replaceable."""
    start = f'{{"type":"webauthn.get","challenge":"{webauthn.b64url(challenge)}","origin":"{origin}"'
    return (start + tail).encode()


def forge(
    claim: Claim, signed: Claim | None = None, *, token: Authenticator = PASSKEY, rp_id: str | None = None
) -> bytes:
    """An armored SSHSIG claiming `claim`, its ECDSA signature made over `signed` (default: the claim)."""
    made = signed or claim

    def parts(what: Claim) -> tuple[bytes, bytes]:
        challenge = sshsig.signed_data(what.message, what.namespace, what.hash_algorithm)
        data = what.client_data if what.client_data is not None else client_data(challenge, what.origin)
        return data, struct.pack(">BI", what.flags, what.counter) + what.extensions

    signed_client, signed_middle = parts(made)
    relying_party = token.application if rp_id is None else rp_id
    to_sign = (
        hashlib.sha256(relying_party.encode()).digest()
        + signed_middle
        + hashlib.sha256(signed_client).digest()
    )
    raw = token.raw_signature(to_sign)
    claimed_client, _ = parts(claim)
    blob = (
        string(TYPE)
        + string(raw)
        + struct.pack(">BI", claim.flags, claim.counter)
        + string(claim.origin.encode())
        + string(claimed_client)
        + string(claim.extensions)
    )
    return sshsig.assemble(token.public_key, claim.namespace, claim.hash_algorithm, blob)


CHALLENGE = passkeys.challenge(MESSAGE)
OTHER_SITE = Authenticator.ecdsa("alice's passkey", application="example.com")


@dataclass(frozen=True)
class Row:
    signature: Callable[[], bytes]
    reason: str | None  # None: it verifies
    openssh_accepts: bool


ROWS: dict[str, Row] = {
    "good": Row(lambda: forge(Claim()), None, True),
    "good-user-verified": Row(lambda: forge(Claim(flags=USER_PRESENT | USER_VERIFIED)), None, True),
    "good-with-extensions": Row(lambda: forge(Claim(flags=0x81, extensions=b"\xa0")), None, True),
    "good-on-a-subdomain": Row(
        lambda: forge(Claim(origin="https://console.example.com"), token=OTHER_SITE), None, True
    ),
    "good-without-a-touch": Row(lambda: forge(Claim(flags=0x00)), None, True),  # the caller judges it
    "other-message": Row(
        lambda: forge(Claim(client_data=client_data(passkeys.challenge(MESSAGE + b"!")))),
        "webauthn: the challenge is not this file's signed data",
        False,
    ),
    "other-namespace": Row(
        lambda: forge(Claim(client_data=client_data(passkeys.challenge(MESSAGE, "git")))),
        "webauthn: the challenge is not this file's signed data",
        False,
    ),
    "registration-type": Row(
        lambda: forge(Claim(client_data=client_data(CHALLENGE).replace(b"webauthn.get", b"webauthn.create"))),
        'webauthn: clientDataJSON does not begin {"type":"webauthn.get",',
        False,
    ),
    "origin-field-differs": Row(
        lambda: forge(Claim(origin="http://localhost:9999", client_data=client_data(CHALLENGE))),
        "webauthn: clientDataJSON does not name the signature's origin 'http://localhost:9999'",
        False,
    ),
    "origin-with-a-quote": Row(
        lambda: forge(Claim(origin='http://localhost"', client_data=client_data(CHALLENGE))),
        "webauthn: the origin contains a quote",
        False,
    ),
    "attested-data-flag": Row(
        lambda: forge(Claim(flags=USER_PRESENT | webauthn.ATTESTED_DATA)),
        "webauthn: the attested-data flag (0x40) is set",
        False,
    ),
    "extensions-flag-without-extensions": Row(
        lambda: forge(Claim(flags=USER_PRESENT | webauthn.EXTENSION_DATA)),
        "webauthn: the extensions flag (0x80) is set, but there are no extensions",
        False,
    ),
    "extensions-without-the-flag": Row(
        lambda: forge(Claim(extensions=b"\xa0")),
        "webauthn: the extensions flag (0x80) is clear, but extensions follow",
        False,
    ),
    "not-json": Row(
        lambda: forge(Claim(client_data=client_data(CHALLENGE, tail=",}"))),
        "webauthn: clientDataJSON is not one JSON object",
        True,
    ),
    "duplicate-key": Row(
        lambda: forge(Claim(client_data=client_data(CHALLENGE, tail=',"type":"webauthn.create"}'))),
        "webauthn: clientDataJSON is not one JSON object",
        True,
    ),
    "escaped-origin": Row(
        lambda: forge(
            Claim(
                origin=r"http:\/\/localhost:8787",
                client_data=client_data(CHALLENGE, r"http:\/\/localhost:8787"),
            )
        ),
        "webauthn: clientDataJSON, read as JSON, holds another challenge or origin",
        True,
    ),
    "cross-origin": Row(
        lambda: forge(Claim(client_data=client_data(CHALLENGE, tail=',"crossOrigin":true}'))),
        "webauthn: crossOrigin is true",
        True,
    ),
    "another-site": Row(
        lambda: forge(Claim(origin="https://evil.example")),
        "webauthn: the origin 'https://evil.example' is not a page of the key's relying party 'localhost'",
        True,
    ),
    "a-suffix-that-is-not-a-subdomain": Row(
        lambda: forge(Claim(origin="https://notexample.com"), token=OTHER_SITE),
        "webauthn: the origin 'https://notexample.com' is not a page of the key's relying party",
        True,
    ),
    "plain-http-on-a-name": Row(
        lambda: forge(Claim(origin="http://example.com"), token=OTHER_SITE),
        "webauthn: the origin 'http://example.com' is not a page of the key's relying party 'example.com'",
        True,
    ),
    "made-for-another-rp-id": Row(lambda: forge(Claim(), rp_id="evil.example"), "bad signature", False),
    "flags-changed": Row(
        lambda: forge(Claim(flags=USER_PRESENT | USER_VERIFIED), Claim(flags=USER_PRESENT)),
        "bad signature",
        False,
    ),
    "counter-changed": Row(lambda: forge(Claim(counter=8), Claim(counter=7)), "bad signature", False),
    "client-data-tail-changed": Row(
        lambda: forge(
            Claim(client_data=client_data(CHALLENGE, tail=',"crossOrigin":false,"x":1}')),
            Claim(client_data=client_data(CHALLENGE)),
        ),
        "bad signature",
        False,
    ),
    "extensions-changed": Row(
        lambda: forge(Claim(flags=0x81, extensions=b"\xa1\x00\x00"), Claim(flags=0x81, extensions=b"\xa0")),
        "bad signature",
        False,
    ),
    "webauthn-type-on-an-ed25519-key": Row(
        lambda: sshsig.assemble(
            Authenticator.ed25519().public_key,
            "slop",
            "sha512",
            string(TYPE)
            + string(bytes(64))
            + struct.pack(">BI", 1, 1)
            + string(b"o")
            + string(b"{}")
            + string(b""),
        ),
        "unsupported signature type 'webauthn-sk-ecdsa-sha2-nistp256@openssh.com' for a sk-ssh-ed25519",
        False,
    ),
}


def keygen_verify(directory: Path, signature: bytes, key: sshkeys.PublicKey, message: bytes = MESSAGE) -> int:
    """`ssh-keygen -Y verify` of `signature` over `message` with `key` in allowed_signers: its exit code."""
    (directory / "allowed_signers").write_text(f"alice {key.line()}\n")
    (directory / "FILE.sig").write_bytes(signature)
    result = subprocess.run(
        [SSH_KEYGEN, "-Y", "verify", "-f", "allowed_signers", "-I", "alice", "-n", "slop", "-s", "FILE.sig"],
        input=message, capture_output=True, cwd=directory, timeout=30, check=False,
    )  # fmt: skip
    assert result.returncode in (0, 255), result.stderr
    return result.returncode


@pytest.mark.parametrize("name", list(ROWS))
def test_each_forgery_is_refused_for_its_own_reason_and_good_ones_verify(name: str, tmp_path: Path) -> None:
    """A good passkey signature verifies with its flags, counter and origin; each forgery is refused
    with the reason of its rule, and ssh-keygen agrees except where slopd is stricter."""
    row = ROWS[name]
    signature = row.signature()
    verdict = sshsig.verify(MESSAGE, signature)
    if row.reason is None:
        assert isinstance(verdict, Verified), verdict
        parsed = sshsig.parse(signature)
        assert (verdict.flags, verdict.counter) == (parsed.flags, parsed.counter)
        assert parsed.assertion is not None
        assert verdict.origin == parsed.assertion.origin
    else:
        assert isinstance(verdict, Rejected), verdict
        assert verdict.reason.startswith(row.reason), verdict.reason
    key = sshsig.parse(signature).public_key if name != "webauthn-type-on-an-ed25519-key" else None
    if key is not None:
        assert (keygen_verify(tmp_path, signature, key) == 0) is row.openssh_accepts


def test_every_refusal_reason_is_distinct_except_the_ecdsa_check() -> None:
    """Each rule-level forgery has a reason no other rule gives; only ECDSA failures share "bad signature"."""
    reasons: dict[str, list[str]] = {}
    for name, row in ROWS.items():
        verdict = sshsig.verify(MESSAGE, row.signature())
        if isinstance(verdict, Rejected) and verdict.reason != "bad signature":
            reasons.setdefault(verdict.reason, []).append(name)
    shared = {reason: names for reason, names in reasons.items() if len(names) > 1}
    assert shared == {
        "webauthn: the challenge is not this file's signed data "
        "(the passkey signed other bytes, another namespace or hash)": ["other-message", "other-namespace"],
        "webauthn: clientDataJSON is not one JSON object (UTF-8, no duplicate keys)": [
            "not-json",
            "duplicate-key",
        ],
    }


# -- wrap: a browser's assertion into an SSHSIG file -------------------------------------------


def test_a_wrapped_assertion_verifies_in_slopd_and_in_ssh_keygen(tmp_path: Path) -> None:
    """`wrap` of what the browser returns is a file both slopd and ssh-keygen accept, by the passkey."""
    signature = PASSKEY.passkey_sign(MESSAGE, origin=ORIGIN, flags=USER_PRESENT | USER_VERIFIED, counter=3)
    assert sshsig.verify(MESSAGE, signature) == Verified(PASSKEY.public_key, 0x05, 3, ORIGIN)
    assert keygen_verify(tmp_path, signature, PASSKEY.public_key) == 0
    assert keygen_verify(tmp_path, signature, PASSKEY.public_key, MESSAGE + b"\n") == 255


def test_wrap_keeps_the_browsers_client_data_byte_for_byte() -> None:
    """Chromium's extra key after the origin stays, so the signature over it still verifies."""
    odd = client_data(CHALLENGE, tail=',"crossOrigin":false,"other_keys_can_be_added_here":"do not compare"}')
    signature = PASSKEY.passkey_sign(MESSAGE, origin=ORIGIN, client_data=odd)
    parsed = sshsig.parse(signature)
    assert parsed.assertion == webauthn.Assertion(ORIGIN, odd, b"")
    assert isinstance(sshsig.verify(MESSAGE, signature), Verified)


def der(token: Authenticator) -> bytes:
    return PASSKEY.assertion(CHALLENGE, origin=ORIGIN)[2]


WRAP_REFUSALS: dict[str, tuple[Callable[[], tuple[sshkeys.PublicKey, bytes, bytes, bytes]], str]] = {
    "an-ed25519-key": (
        lambda: (Authenticator.ed25519().public_key, *PASSKEY.assertion(CHALLENGE, origin=ORIGIN)),
        "a passkey is an sk-ecdsa-sha2-nistp256@openssh.com key, not sk-ssh-ed25519@openssh.com",
    ),
    "short-authenticator-data": (
        lambda: (PASSKEY.public_key, b"\x00" * 36, client_data(CHALLENGE), der(PASSKEY)),
        "authenticator data of 36 bytes is truncated",
    ),
    "another-relying-party": (
        lambda: (PASSKEY.public_key, *PASSKEY.assertion(CHALLENGE, origin=ORIGIN, rp_id="evil.example")),
        "the assertion was made for another relying party than 'localhost'",
    ),
    "attested-credential-data": (
        lambda: (PASSKEY.public_key, *PASSKEY.assertion(CHALLENGE, origin=ORIGIN, flags=0x41)),
        "the authenticator data carries attested credential data",
    ),
    "no-origin": (
        lambda: (
            PASSKEY.public_key,
            *PASSKEY.assertion(CHALLENGE, origin=ORIGIN, client_data=b'{"type":"x"}'),
        ),
        "clientDataJSON is not a JSON object with a string origin",
    ),
    "not-der": (
        lambda: (PASSKEY.public_key, *PASSKEY.assertion(CHALLENGE, origin=ORIGIN)[:2], b"\x30\x00"),
        "the signature is not a DER-encoded ECDSA signature",
    ),
}


@pytest.mark.parametrize("name", list(WRAP_REFUSALS))
def test_wrap_refuses_what_could_never_verify_naming_why(name: str) -> None:
    """A wrong key type, truncated or foreign authenticator data, a registration, no origin, non-DER."""
    make, reason = WRAP_REFUSALS[name]
    with pytest.raises(SignatureError) as refused:
        passkeys.wrap(*make())
    assert refused.value.reason.startswith(reason), refused.value.reason


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    message=st.binary(max_size=300),
    flags=st.sampled_from([0x00, 0x01, 0x05, 0x1D, 0x81, 0x85]),
    counter=st.integers(0, 2**32 - 1),
    port=st.integers(1, 65535),
    flip=st.integers(0, 10_000),
)
def test_any_wrapped_assertion_verifies_and_no_other_message_does(
    message: bytes, flags: int, counter: int, port: int, flip: int
) -> None:
    """Wrapped, any passkey assertion verifies with its own flags, counter and origin; changing one
    byte of the message (or adding one) makes it fail."""
    origin = f"http://localhost:{port}"
    extensions = b"\xa0" if flags & webauthn.EXTENSION_DATA else b""
    signature = PASSKEY.passkey_sign(
        message, origin=origin, flags=flags, counter=counter, extensions=extensions
    )
    assert sshsig.verify(message, signature) == Verified(PASSKEY.public_key, flags, counter, origin)
    changed = bytearray(message or b"\0")
    changed[flip % len(changed)] ^= 1 + flip % 255
    other = bytes(changed) if message else message + b"\0"
    assert isinstance(sshsig.verify(other, signature), Rejected)


# -- key lines -----------------------------------------------------------------------------------


def test_the_key_line_is_an_allowed_signers_line_for_the_passkey(tmp_path: Path) -> None:
    """`key_line` is `P namespaces="slop" sk-ecdsa… BASE64`: slopd reads it as the passkey's key for
    the RP ID, and ssh-keygen verifies the passkey's signature with exactly that line."""
    line = passkeys.key_line("alice@example.com", PASSKEY.point, "localhost")
    assert line.startswith('alice@example.com namespaces="slop" sk-ecdsa-sha2-nistp256@openssh.com AAAA')
    (entry,) = allowed_signers.parse(line + "\n", local_zone=UTC)
    assert entry.public_key == PASSKEY.public_key
    assert (entry.principals, entry.namespaces, entry.public_key.application) == (
        "alice@example.com",
        "slop",
        "localhost",
    )
    (tmp_path / "allowed_signers").write_text(line + "\n")
    (tmp_path / "FILE.sig").write_bytes(PASSKEY.passkey_sign(MESSAGE, origin=ORIGIN))
    result = subprocess.run(
        [SSH_KEYGEN, "-Y", "verify", "-f", "allowed_signers", "-I", "alice@example.com", "-n", "slop",
         "-s", "FILE.sig"],
        input=MESSAGE, capture_output=True, cwd=tmp_path, timeout=30, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert b'Good "slop" signature for alice@example.com with ECDSA-SK key' in result.stdout


def test_a_passkey_for_another_rp_id_is_another_key() -> None:
    """The RP ID is part of the key: the same point for another RP ID is not the same allowed key."""
    assert passkeys.public_key(PASSKEY.point, "localhost") == PASSKEY.public_key
    assert passkeys.public_key(PASSKEY.point, "example.com") != PASSKEY.public_key


@pytest.mark.parametrize(
    ("origin", "rp_id", "fits"),
    [
        ("http://localhost:8787", "localhost", True),
        ("http://localhost", "localhost", True),
        ("https://localhost:443", "localhost", True),
        ("https://example.com", "example.com", True),
        ("https://a.b.example.com:8443", "example.com", True),
        ("http://example.com", "example.com", False),
        ("https://example.com.evil", "example.com", False),
        ("https://badexample.com", "example.com", False),
        ("https://example.com/", "example.com", False),
        ("https://EXAMPLE.com", "example.com", False),
        ("http://127.0.0.1:8787", "127.0.0.1", False),
        ("https://example.com", "", False),
        ("https://example.com", "ssh:", False),
    ],
)
def test_origin_fits_its_relying_party_as_a_browser_requires(origin: str, rp_id: str, fits: bool) -> None:
    """https on the RP ID or a name under it, or http on localhost; nothing else (rule 5)."""
    assert webauthn.origin_fits(origin, rp_id) is fits


@pytest.mark.parametrize(
    ("text", "decoded"),
    [
        ("", b""),
        ("AQ", b"\x01"),
        ("_-8", b"\xff\xef"),
        ("AQ==", None),
        ("A", None),
        ("a+b", None),
        ("é", None),
    ],
)
def test_b64url_decode_is_strict(text: str, decoded: bytes | None) -> None:
    """Unpadded base64url only: padding, `+`, a lone character or non-ASCII are refused."""
    if decoded is None:
        with pytest.raises(ValueError, match="not unpadded base64url"):
            passkeys.b64url_decode(text)
    else:
        assert passkeys.b64url_decode(text) == decoded
