"""SSHSIG (slopd.core.sshsig): round trips, a crafted corpus of malformed signatures, and totality.

Crafted blobs are signed with a real key over the data they claim, so each differs from a good
signature only in the defect under test. `CORPUS` is reused by the ssh-keygen parity suite.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import struct
from dataclasses import dataclass

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from slopd.core import keyfiles, sshkeys, sshsig
from slopd.core.sshsig import Rejected, Verified
from slopd.core.wire import SignatureError

KEY = Ed25519PrivateKey.from_private_bytes(bytes(range(32)))
PUB = KEY.public_key().public_bytes_raw()
PUBKEY = sshkeys.ed25519(PUB)
MESSAGE = b"hello order\n"
OTHER_MESSAGE = b"goodbye order\n"
HEADER = b"-----BEGIN SSH SIGNATURE-----"
FOOTER = b"-----END SSH SIGNATURE-----"

# Made by `ssh-keygen -Y sign -n slop` (OpenSSH 9.2) with KEY over MESSAGE; Ed25519 is deterministic.
SSH_KEYGEN_SHA512 = b"""-----BEGIN SSH SIGNATURE-----
U1NIU0lHAAAAAQAAADMAAAALc3NoLWVkMjU1MTkAAAAgA6EHv/POEL4dcN0Y50vAmWfk1j
CbpQ1fHdyGZBJVMbgAAAAEc2xvcAAAAAAAAAAGc2hhNTEyAAAAUwAAAAtzc2gtZWQyNTUx
OQAAAEAYLBz2PhywBO2QcGBH++KqqBOUz+AGw3266NjRg1/J+OzDQVDQWzEDgpoqnrSFFo
yinERcQAfIiPRmnhRX9fcO
-----END SSH SIGNATURE-----
"""
SSH_KEYGEN_SHA256 = b"""-----BEGIN SSH SIGNATURE-----
U1NIU0lHAAAAAQAAADMAAAALc3NoLWVkMjU1MTkAAAAgA6EHv/POEL4dcN0Y50vAmWfk1j
CbpQ1fHdyGZBJVMbgAAAAEc2xvcAAAAAAAAAAGc2hhMjU2AAAAUwAAAAtzc2gtZWQyNTUx
OQAAAEB+pz+N8VoIg/J7TyxYBCIgzXdos/OGLrBqlFisqdKfMYuZ7b7hBwzJOJ3slmzA39
H83+qKVIx2aKk799xLNP4I
-----END SSH SIGNATURE-----
"""
SSH_KEYGEN_FINGERPRINT = "SHA256:lbmsoA0yIEcEiVDRnMWuzm+nV+3ZEEpVIURqFoeSspg"  # ssh-keygen -l
SSH_KEYGEN_PUBLIC = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAOhB7/zzhC+HXDdGOdLwJln5NYwm6UNXx3chmQSVTG4"


def s(data: bytes) -> bytes:
    """An SSH wire `string`."""
    return struct.pack(">I", len(data)) + data


def digest(algorithm: bytes, message: bytes) -> bytes:
    """H(message) for any claimed algorithm name, so a crafted blob signs what it claims."""
    name = algorithm.decode().lower()
    if name.startswith("shake_"):
        return hashlib.new(name, message).digest(64)  # type: ignore[call-arg]  # shake takes a length
    return hashlib.new(name, message).digest()


def blob(
    *,
    magic: bytes = b"SSHSIG",
    version: int = 1,
    key_blob: bytes | None = None,
    namespace: bytes = b"slop",
    reserved: bytes = b"",
    hash_algorithm: bytes = b"sha512",
    sig_type: bytes = b"ssh-ed25519",
    sig_length: int = 64,
    sig_tail: bytes = b"",
    tail: bytes = b"",
    message: bytes = MESSAGE,
) -> bytes:
    """An SSHSIG blob really signed by KEY over its own fields; each argument injects one defect."""
    signed = b"SSHSIG" + s(namespace) + s(b"") + s(hash_algorithm) + s(digest(hash_algorithm, message))
    raw = KEY.sign(signed)[:sig_length]
    key_blob = s(b"ssh-ed25519") + s(PUB) if key_blob is None else key_blob
    sig_blob = s(sig_type) + s(raw) + sig_tail
    body = s(key_blob) + s(namespace) + s(reserved) + s(hash_algorithm) + s(sig_blob)
    return magic + struct.pack(">I", version) + body + tail


def armor(data: bytes) -> bytes:
    """ASCII armor as ssh-keygen writes it: base64 at 70 columns between the header and footer."""
    encoded = base64.b64encode(data)
    lines = [encoded[at : at + 70] for at in range(0, len(encoded), 70)]
    return b"\n".join([HEADER, *lines, FOOTER]) + b"\n"


GOOD = armor(blob())


def non_canonical() -> bytes:
    """A signature whose base64 has non-zero padding bits (decodes to the same bytes)."""
    encoded = base64.b64encode(blob(reserved=b"x"))
    assert encoded.endswith(b"==")
    last = encoded[-3:-2]
    alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    changed = alphabet[alphabet.index(last) ^ 1 : (alphabet.index(last) ^ 1) + 1]
    tampered = encoded[:-3] + changed + b"=="
    assert base64.b64decode(tampered) == base64.b64decode(encoded)
    return b"\n".join([HEADER, tampered, FOOTER]) + b"\n"


@dataclass(frozen=True)
class Case:
    name: str
    armored: bytes
    reason: str
    message: bytes = MESSAGE


SK_KEY = s(b"sk-ssh-ed25519@openssh.com") + s(PUB) + s(b"ssh:")
RSA_KEY = s(b"ssh-rsa") + s(b"\x01\x00\x01") + s(b"\x00" + b"\xc5" * 256)
ECDSA_KEY = s(b"ecdsa-sha2-nistp256") + s(b"nistp256") + s(b"\x04" + b"\x11" * 64)

CORPUS = (
    Case("crlf armor", GOOD.replace(b"\n", b"\r\n"), "malformed signature: carriage return in armor"),
    Case("leading blank line", b"\n" + GOOD, "malformed signature: missing header"),
    Case("text before header", b"Signed-off:\n" + GOOD, "malformed signature: missing header"),
    Case("indented header", b" " + GOOD, "malformed signature: missing header"),
    Case("missing footer", GOOD.removesuffix(FOOTER + b"\n"), "malformed signature: missing footer"),
    Case("text after footer", GOOD + b"trailer\n", "malformed signature: text after footer"),
    Case("bad base64", GOOD.replace(b"U1NI", b"U1*I", 1), "malformed signature: invalid base64"),
    Case("space in base64", GOOD.replace(b"U1NI", b"U1 NI", 1), "malformed signature: invalid base64"),
    Case("blank line in body", GOOD.replace(b"\n", b"\n\n", 2), "malformed signature: invalid base64"),
    Case("non-canonical base64", non_canonical(), "malformed signature: invalid base64"),
    Case("10 MB", armor(blob(tail=bytes(7_500_000))), "malformed signature: over 8192 bytes"),
    Case("10 MB after the footer", GOOD + b"A" * 10_000_000, "malformed signature: over 8192 bytes"),
    Case("magic SSHSIH", armor(blob(magic=b"SSHSIH")), "malformed signature: bad magic"),
    Case("version 2", armor(blob(version=2)), "malformed signature: unsupported version 2"),
    Case("version 0", armor(blob(version=0)), "malformed signature: unsupported version 0"),
    Case("empty namespace", armor(blob(namespace=b"")), "malformed signature: empty namespace"),
    Case("namespace git", armor(blob(namespace=b"git")), "namespace is 'git', expected 'slop'"),
    Case("namespace SLOP", armor(blob(namespace=b"SLOP")), "namespace is 'SLOP', expected 'slop'"),
    Case("namespace not UTF-8", armor(blob(namespace=b"sl\xffp")), "malformed signature: namespace is not"),
    Case("namespace with NUL", armor(blob(namespace=b"slop\0")), "malformed signature: NUL in namespace"),
    Case("hash md5", armor(blob(hash_algorithm=b"md5")), "unsupported hash algorithm 'md5'"),
    Case("hash sha1", armor(blob(hash_algorithm=b"sha1")), "unsupported hash algorithm 'sha1'"),
    Case(
        "hash shake_128", armor(blob(hash_algorithm=b"shake_128")), "unsupported hash algorithm 'shake_128'"
    ),
    Case("hash SHA512", armor(blob(hash_algorithm=b"SHA512")), "unsupported hash algorithm 'SHA512'"),
    Case("trailing bytes", armor(blob(tail=b"\0")), "malformed signature: trailing data"),
    Case(
        "trailing bytes in public key",
        armor(blob(key_blob=s(b"ssh-ed25519") + s(PUB) + b"\0")),
        "malformed signature: trailing data in public key",
    ),
    Case(
        "trailing bytes in signature blob",
        armor(blob(sig_tail=b"\0")),
        "malformed signature: trailing data in signature blob",
    ),
    Case("truncated magic", armor(b"SSHS"), "malformed signature: truncated magic"),
    Case("truncated version", armor(b"SSHSIG\0\0"), "malformed signature: truncated version"),
    Case("truncated public key", armor(blob()[:30]), "malformed signature: truncated public key"),
    Case("truncated signature", armor(blob()[:-1]), "malformed signature: truncated signature"),
    Case(
        "namespace length past the end",
        armor(blob()[:65] + b"\xff\xff\xff\xff" + blob()[69:]),
        "malformed signature: truncated namespace",
    ),
    Case(
        "key type sk-ssh-ed25519",
        armor(blob(key_blob=SK_KEY)),
        "unsupported signature type 'ssh-ed25519' for a sk-ssh-ed25519@openssh.com key",
    ),
    Case("key type ssh-rsa", armor(blob(key_blob=RSA_KEY)), "key type 'ssh-rsa' is not accepted for orders"),
    Case(
        "key type ecdsa",
        armor(blob(key_blob=ECDSA_KEY)),
        "key type 'ecdsa-sha2-nistp256' is not accepted for orders",
    ),
    Case(
        "certificate key type",
        armor(blob(key_blob=s(b"ssh-ed25519-cert-v01@openssh.com") + s(b"nonce") + s(PUB))),
        "key type 'ssh-ed25519-cert-v01@openssh.com' is not accepted for orders",
    ),
    Case("signature type ssh-rsa", armor(blob(sig_type=b"ssh-rsa")), "unsupported signature type 'ssh-rsa'"),
    Case(
        "31-byte key",
        armor(blob(key_blob=s(b"ssh-ed25519") + s(PUB[:31]))),
        "malformed signature: public key is 31 bytes, expected 32",
    ),
    Case(
        "63-byte signature",
        armor(blob(sig_length=63)),
        "malformed signature: signature is 63 bytes, expected 64",
    ),
    Case("signature of different bytes", GOOD, "bad signature", message=OTHER_MESSAGE),
    Case("sha256 signature of different bytes", SSH_KEYGEN_SHA256, "bad signature", message=OTHER_MESSAGE),
    Case("message converted to CRLF", GOOD, "bad signature", message=MESSAGE.replace(b"\n", b"\r\n")),
)


# --- round trips ---


@pytest.mark.parametrize("algorithm", ["sha256", "sha512"])
def test_sign_then_verify_round_trips(algorithm: str) -> None:
    """A signature made by `sign` verifies over the same message and yields the signer's key."""
    armored = sshsig.sign(MESSAGE, KEY, hash_algorithm=algorithm)
    assert sshsig.verify(MESSAGE, armored) == Verified(PUBKEY)
    assert sshsig.parse(armored).hash_algorithm == algorithm


@pytest.mark.parametrize(
    ("algorithm", "expected"), [("sha512", SSH_KEYGEN_SHA512), ("sha256", SSH_KEYGEN_SHA256)]
)
def test_sign_is_byte_identical_to_ssh_keygen(algorithm: str, expected: bytes) -> None:
    """`sign` reproduces ssh-keygen's output byte for byte, armor and 70-column wrapping included."""
    assert sshsig.sign(MESSAGE, KEY, hash_algorithm=algorithm) == expected


@pytest.mark.parametrize("armored", [SSH_KEYGEN_SHA512, SSH_KEYGEN_SHA256])
def test_ssh_keygen_signatures_verify(armored: bytes) -> None:
    """Signatures recorded from `ssh-keygen -Y sign` (both hash algorithms) verify."""
    assert sshsig.verify(MESSAGE, armored) == Verified(PUBKEY)


def test_parse_returns_every_field() -> None:
    """`parse` exposes the key, namespace, hash, raw signature and reserved field."""
    parsed = sshsig.parse(SSH_KEYGEN_SHA512)
    assert (parsed.public_key, parsed.namespace, parsed.hash_algorithm) == (PUBKEY, "slop", "sha512")
    assert len(parsed.signature) == 64
    assert parsed.reserved == b""


def test_other_namespace_verifies_only_when_expected() -> None:
    """A signature in namespace `git` verifies when `git` is expected and is rejected for `slop`."""
    armored = sshsig.sign(MESSAGE, KEY, namespace="git")
    assert sshsig.verify(MESSAGE, armored, namespace="git") == Verified(PUBKEY)
    assert sshsig.verify(MESSAGE, armored) == Rejected("namespace is 'git', expected 'slop'")


def test_non_empty_reserved_field_is_ignored() -> None:
    """The reserved field is outside the signed data and ignored, as PROTOCOL.sshsig says."""
    armored = armor(blob(reserved=b"future"))
    assert sshsig.verify(MESSAGE, armored) == Verified(PUBKEY)
    assert sshsig.parse(armored).reserved == b"future"


def test_footer_without_final_newline_is_accepted() -> None:
    """Only the final newline may be missing after the footer (ssh-keygen accepts that too)."""
    assert sshsig.verify(MESSAGE, GOOD.removesuffix(b"\n")) == Verified(PUBKEY)


def test_armor_lines_wrap_at_70_columns() -> None:
    """`sign` wraps base64 at 70 columns and ends with a newline after the footer."""
    lines = sshsig.sign(MESSAGE * 50, KEY).split(b"\n")
    assert lines[0] == HEADER
    assert lines[-2:] == [FOOTER, b""]
    assert all(len(line) == 70 for line in lines[1:-3])
    assert 0 < len(lines[-3]) <= 70


@pytest.mark.parametrize(
    ("arguments", "error"),
    [({"namespace": ""}, "namespace"), ({"hash_algorithm": "md5"}, "sha256 or sha512")],
)
def test_sign_refuses_bad_arguments(arguments: dict[str, str], error: str) -> None:
    """`sign` refuses an empty namespace or a hash other than sha256/sha512."""
    with pytest.raises(ValueError, match=error):
        sshsig.sign(MESSAGE, KEY, **arguments)


# --- the crafted corpus ---


@pytest.mark.parametrize("case", CORPUS, ids=[case.name for case in CORPUS])
def test_crafted_corpus_is_rejected_with_reason(case: Case) -> None:
    """Each crafted defect is rejected by `verify` with its specific reason."""
    verdict = sshsig.verify(case.message, case.armored)
    assert isinstance(verdict, Rejected)
    assert verdict.reason.startswith(case.reason), verdict.reason


@pytest.mark.parametrize("case", CORPUS, ids=[case.name for case in CORPUS])
def test_parse_raises_only_signature_error_on_corpus(case: Case) -> None:
    """`parse` raises `SignatureError` (never anything else) exactly for the malformed cases."""
    structural = case.reason.startswith(("malformed", "unsupported", "key type"))
    if structural:
        with pytest.raises(SignatureError) as caught:
            sshsig.parse(case.armored)
        assert caught.value.reason.startswith(case.reason)
        assert str(caught.value) == caught.value.reason
    else:
        assert sshsig.parse(case.armored).public_key == PUBKEY


def test_every_corpus_blob_differs_only_by_its_defect() -> None:
    """The crafted builder with no defect produces exactly ssh-keygen's signature."""
    assert armor(blob()) == SSH_KEYGEN_SHA512


def test_hostile_namespace_is_shown_escaped() -> None:
    """A namespace with control characters appears escaped and bounded in the reason."""
    verdict = sshsig.verify(MESSAGE, armor(blob(namespace=b"\x1b[31m\n" + b"x" * 200)))
    assert isinstance(verdict, Rejected)
    assert "\n" not in verdict.reason
    assert "\x1b" not in verdict.reason
    assert len(verdict.reason) < 120


# --- totality and tamper properties ---


@settings(deadline=None, max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(armored=st.binary(max_size=400), message=st.binary(max_size=64))
def test_verify_never_raises_on_arbitrary_bytes(armored: bytes, message: bytes) -> None:
    """Arbitrary bytes as signature and message give `Rejected`, never an exception."""
    assert isinstance(sshsig.verify(message, armored), Rejected)
    assert isinstance(sshsig.verify(message, HEADER + b"\n" + armored), Rejected)


@settings(deadline=None, max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.binary(max_size=400))
def test_verify_never_raises_on_arbitrary_armored_blobs(data: bytes) -> None:
    """Arbitrary blobs in valid armor are rejected without an exception; `parse` raises only its own."""
    assert isinstance(sshsig.verify(MESSAGE, armor(data)), Rejected)
    with contextlib.suppress(SignatureError):
        sshsig.parse(armor(data))


@settings(deadline=None, max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(
    fields=st.lists(st.binary(max_size=40), min_size=5, max_size=5),
    version=st.integers(0, 2),
    tail=st.binary(max_size=3),
)
def test_verify_never_raises_on_structured_blobs(fields: list[bytes], version: int, tail: bytes) -> None:
    """Well-framed blobs with arbitrary field contents are rejected without an exception."""
    data = b"SSHSIG" + struct.pack(">I", version) + b"".join(s(field) for field in fields) + tail
    assert isinstance(sshsig.verify(MESSAGE, armor(data)), Rejected)


@settings(deadline=None, max_examples=500, suppress_health_check=[HealthCheck.too_slow])
@given(position=st.integers(0, len(GOOD) - 1), value=st.integers(0, 255))
def test_any_byte_change_in_the_armor_is_rejected(position: int, value: int) -> None:
    """Replacing any one byte of a valid armored signature makes it fail (canonical base64)."""
    if GOOD[position] == value:
        return
    tampered = GOOD[:position] + bytes([value]) + GOOD[position + 1 :]
    assert isinstance(sshsig.verify(MESSAGE, tampered), Rejected)


def test_every_bit_flip_of_the_blob_is_rejected() -> None:
    """Flipping any one bit, or a whole byte, anywhere in the decoded blob makes it fail."""
    data = blob()
    for position in range(len(data)):
        for mask in (0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80, 0xFF):
            tampered = data[:position] + bytes([data[position] ^ mask]) + data[position + 1 :]
            verdict = sshsig.verify(MESSAGE, armor(tampered))
            assert isinstance(verdict, Rejected), (position, mask)


def test_every_truncation_is_rejected() -> None:
    """Every proper prefix of the blob fails as truncated; every prefix of the armor fails too."""
    data = blob()
    for length in range(len(data)):
        verdict = sshsig.verify(MESSAGE, armor(data[:length]))
        assert isinstance(verdict, Rejected)
        assert "truncated" in verdict.reason or "empty signature" in verdict.reason, (length, verdict)
    for length in range(len(GOOD) - 1):  # GOOD[:-1] only drops the optional final newline
        assert isinstance(sshsig.verify(MESSAGE, GOOD[:length]), Rejected), length


@settings(deadline=None, max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(position=st.integers(0, len(MESSAGE) - 1), mask=st.integers(1, 255))
def test_any_byte_flip_of_the_message_is_rejected(position: int, mask: int) -> None:
    """Changing any byte of the signed message gives `bad signature`."""
    tampered = MESSAGE[:position] + bytes([MESSAGE[position] ^ mask]) + MESSAGE[position + 1 :]
    assert sshsig.verify(tampered, GOOD) == Rejected("bad signature")


@settings(deadline=None, max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(message=st.binary(max_size=200), other=st.binary(max_size=200))
def test_a_signature_covers_exactly_its_message(message: bytes, other: bytes) -> None:
    """A signature of one message verifies for it and for no different message."""
    armored = sshsig.sign(message, KEY)
    assert sshsig.verify(message, armored) == Verified(PUBKEY)
    if other != message:
        assert sshsig.verify(other, armored) == Rejected("bad signature")


# --- public keys and fingerprints ---


def test_public_key_line_matches_ssh_keygen() -> None:
    """`public_key_line` writes what ssh-keygen puts in a .pub file, comment optional."""
    assert sshkeys.ed25519(PUB).line() == SSH_KEYGEN_PUBLIC
    assert sshkeys.ed25519(PUB).line("alice@example.com") == SSH_KEYGEN_PUBLIC + " alice@example.com"


def test_public_key_line_round_trips_through_parse_public_key() -> None:
    """The type and base64 fields of `public_key_line` parse back to the same raw key."""
    keytype, encoded = sshkeys.ed25519(PUB).line("c").split()[:2]
    assert sshkeys.from_fields(keytype, encoded) == PUBKEY


def test_public_key_line_refuses_wrong_length() -> None:
    """`public_key_line` refuses a key that is not 32 bytes."""
    with pytest.raises(ValueError, match="32 bytes"):
        sshkeys.ed25519(PUB[:31]).line()


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


@pytest.mark.parametrize(
    ("keytype", "encoded", "reason"),
    [
        ("ssh-rsa", _b64(RSA_KEY), "key type 'ssh-rsa' is not accepted for orders"),
        ("ssh-ed25519", _b64(RSA_KEY), "malformed key: the line says 'ssh-ed25519', the key is 'ssh-rsa'"),
        ("ssh-ed25519", _b64(SK_KEY), "malformed key: the line says 'ssh-ed25519', the key is 'sk-ssh"),
        ("ssh-ed25519", "AAAA*AAA", "malformed key: invalid base64"),
        ("ssh-ed25519", "AAAAC3NzaC1lZDI1NTE5A", "malformed key: invalid base64"),
        ("ssh-ed25519", "ÄÄÄÄ", "malformed key: invalid base64"),
        ("ssh-ed25519", _b64(s(b"ssh-ed25519") + s(PUB[:31])), "malformed key: public key is 31 bytes"),
        ("ssh-ed25519", _b64(s(b"ssh-ed25519") + s(PUB) + b"\0"), "malformed key: trailing data"),
        ("ssh-ed25519", _b64(s(b"ssh-ed25519") + s(PUB)[:-1]), "malformed key: truncated public key"),
        ("ssh-ed25519", "", "malformed key: truncated key type"),
    ],
)
def test_parse_public_key_rejects(keytype: str, encoded: str, reason: str) -> None:
    """`parse_public_key` raises `SignatureError` with a reason for anything but a valid Ed25519 blob."""
    with pytest.raises(SignatureError) as caught:
        sshkeys.from_fields(keytype, encoded)
    assert caught.value.reason.startswith(reason), caught.value.reason


@settings(deadline=None, max_examples=300)
@given(keytype=st.sampled_from(["ssh-ed25519", "ssh-rsa"]), encoded=st.text(max_size=80))
def test_parse_public_key_raises_only_signature_error(keytype: str, encoded: str) -> None:
    """Arbitrary text as a key blob gives 32 bytes or `SignatureError`, nothing else."""
    with contextlib.suppress(SignatureError):
        assert len(sshkeys.from_fields(keytype, encoded).point) == 32


def test_fingerprint_matches_ssh_keygen() -> None:
    """`fingerprint` is what `ssh-keygen -l` printed for this key: unpadded base64 SHA-256."""
    assert sshkeys.ed25519(PUB).fingerprint == SSH_KEYGEN_FINGERPRINT


# --- private key files ---


def test_private_key_bytes_round_trips() -> None:
    """A key written by `private_key_bytes` loads back to the same key, with or without a comment."""
    for comment in ("", "alice@example.com", "x" * 7):
        data = keyfiles.private_key_bytes(KEY, comment)
        assert data.startswith(b"-----BEGIN OPENSSH PRIVATE KEY-----\n")
        assert data.endswith(b"-----END OPENSSH PRIVATE KEY-----\n")
        assert keyfiles.load_private_key(data).private_bytes_raw() == KEY.private_bytes_raw()


def test_private_key_bytes_is_a_pure_function() -> None:
    """`private_key_bytes` gives the same bytes for the same key and comment."""
    assert keyfiles.private_key_bytes(KEY, "c") == keyfiles.private_key_bytes(KEY, "c")


def test_load_private_key_reads_cryptography_openssh_output() -> None:
    """An OpenSSH-format key serialized by `cryptography` loads too."""
    data = KEY.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.OpenSSH, serialization.NoEncryption()
    )
    assert keyfiles.load_private_key(data).private_bytes_raw() == KEY.private_bytes_raw()


def _key_blob_of(data: bytes) -> bytes:
    lines = data.strip().split(b"\n")
    return base64.b64decode(b"".join(lines[1:-1]))


def _key_file(data: bytes) -> bytes:
    encoded = base64.b64encode(data)
    lines = [encoded[at : at + 70] for at in range(0, len(encoded), 70)]
    return b"\n".join([b"-----BEGIN OPENSSH PRIVATE KEY-----", *lines, b"-----END OPENSSH PRIVATE KEY-----"])


def _encrypted_key() -> bytes:
    plain = _key_blob_of(keyfiles.private_key_bytes(KEY))
    header = s(b"none") + s(b"none") + s(b"")
    assert header in plain
    return _key_file(
        plain.replace(header, s(b"aes256-ctr") + s(b"bcrypt") + s(s(b"salt") + b"\0\0\0\x10"), 1)
    )


def _other_key(kind: str) -> bytes:
    key = rsa.generate_private_key(65537, 1024) if kind == "rsa" else ec.generate_private_key(ec.SECP256R1())
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.OpenSSH, serialization.NoEncryption()
    )


def _tampered_private(old: bytes, new: bytes) -> bytes:
    plain = _key_blob_of(keyfiles.private_key_bytes(KEY, "comment"))
    assert plain.count(old) == 1
    return _key_file(plain.replace(old, new))


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"", "not an OpenSSH private key file"),
        (b"garbage\n", "not an OpenSSH private key file"),
        (
            KEY.private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
            ),
            "not an OpenSSH private key file",
        ),
        (_encrypted_key(), "private key is encrypted"),
        (_other_key("rsa"), "slopd signs with plain Ed25519 key files only, not 'ssh-rsa'"),
        (_other_key("ecdsa"), "slopd signs with plain Ed25519 key files only, not 'ecdsa-sha2-nistp256'"),
        (_key_file(b"openssh-key-v2\0"), "malformed private key: bad magic"),
        (_key_file(b"openssh-key-v1\0" + s(b"none")), "malformed private key: truncated kdf"),
        (
            _key_file(_key_blob_of(keyfiles.private_key_bytes(KEY)) + b"\0"),
            "malformed private key: trailing data",
        ),
        (_tampered_private(b"comment\x01\x02", b"comment\x02\x02"), "malformed private key: bad padding"),
        (
            b"-----BEGIN OPENSSH PRIVATE KEY-----\n!!!!\n-----END OPENSSH PRIVATE KEY-----\n",
            "malformed private key: invalid base64",
        ),
    ],
    ids=[
        "empty",
        "garbage",
        "pkcs8",
        "encrypted",
        "rsa",
        "ecdsa",
        "bad magic",
        "truncated",
        "trailing",
        "bad padding",
        "bad base64",
    ],
)
def test_load_private_key_rejects(data: bytes, reason: str) -> None:
    """`load_private_key` gives a reason for anything but an unencrypted Ed25519 key."""
    with pytest.raises(SignatureError) as caught:
        keyfiles.load_private_key(data)
    assert caught.value.reason.startswith(reason), caught.value.reason


def test_load_private_key_detects_mismatched_check_values() -> None:
    """Differing check values (a wrong decryption) are refused."""
    plain = _key_blob_of(keyfiles.private_key_bytes(KEY))
    section = plain.index(s(b"ssh-ed25519") + s(PUB), 60) - 8  # the private section's two check values
    tampered = plain[:section] + bytes([plain[section] ^ 1]) + plain[section + 1 :]
    with pytest.raises(SignatureError, match="check values differ"):
        keyfiles.load_private_key(_key_file(tampered))


@settings(deadline=None, max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(position=st.integers(0, 2000), mask=st.integers(1, 255))
def test_load_private_key_raises_only_signature_error(position: int, mask: int) -> None:
    """Any one-byte change to a key file loads a key or raises `SignatureError`, nothing else."""
    plain = _key_blob_of(keyfiles.private_key_bytes(KEY, "comment"))
    position %= len(plain)
    tampered = plain[:position] + bytes([plain[position] ^ mask]) + plain[position + 1 :]
    with contextlib.suppress(SignatureError):
        keyfiles.load_private_key(_key_file(tampered))
