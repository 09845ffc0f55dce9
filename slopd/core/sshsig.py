"""OpenSSH SSHSIG signatures (PROTOCOL.sshsig, PROTOCOL.u2f): bytes in, values out.

Rules (SPEC §6; research §1, Appendix A):
1. `parse` raises only `SignatureError`, and `verify` never raises: whatever the bytes, it
   returns `Verified` or `Rejected` with a short reason. Anything else escaping is a bug.
2. Anything `ssh-keygen -Y verify` rejects is rejected too, and a little more: the armor starts
   with the exact header line, uses LF only, ends with the exact footer (one final newline
   optional, nothing after it), and holds canonical base64; the blob is at most
   `MAX_SIGNATURE_BYTES` of armor, version exactly 1, every string complete, no trailing
   bytes anywhere; hash `sha256` or `sha512`; the signature type is the key's type.
3. The signed data is `"SSHSIG" + string(namespace) + string("") + string(hash) +
   string(H(message))`; the reserved field of the blob is ignored, as the protocol says.
4. Key types (`core.sshkeys`): `ssh-ed25519` signs the signed data. A security key signs
   `SHA256(application) + flags + uint32 counter + SHA256(signed data)` — Ed25519 as is,
   ECDSA P-256 with SHA-256 — and its signature carries the flags and counter, which `Verified`
   reports (`0x01` user present, `0x04` user verified). Judging the flags is the caller's job,
   as it is sshd's, not ssh-keygen's. Other key types are rejected as not accepted for orders.
   An sk-ecdsa key may also sign as a passkey, with the signature type
   `webauthn-sk-ecdsa-sha2-nistp256@openssh.com`: its rules are `core.webauthn`'s, and
   `Verified` reports its origin.
5. `verify` checks the signature with the key it carries; the caller then checks that key
   against allowed_signers (`core.authorizing`). Curve arithmetic is `cryptography`'s.
"""

from __future__ import annotations

import hashlib
import re
import struct
from dataclasses import dataclass
from typing import TYPE_CHECKING

from slopd.core import sshkeys, webauthn
from slopd.core.keyfiles import armor
from slopd.core.sshkeys import ED25519, SK_ECDSA, SK_ED25519, PublicKey
from slopd.core.vocabulary import NAMESPACE
from slopd.core.wire import Reader, SignatureError, show, string

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey


MAX_SIGNATURE_BYTES = 8192
USER_PRESENT = 0x01
USER_VERIFIED = 0x04

_MAGIC = b"SSHSIG"
_VERSION = 1
_BEGIN = b"-----BEGIN SSH SIGNATURE-----"
_END = b"-----END SSH SIGNATURE-----"
_HASHES = {"sha256": hashlib.sha256, "sha512": hashlib.sha512}
_BASE64_LINE = re.compile(rb"[A-Za-z0-9+/=]+")


@dataclass(frozen=True, slots=True)
class Signature:
    public_key: PublicKey
    namespace: str
    hash_algorithm: str
    signature: bytes  # Ed25519: the 64 bytes; ECDSA: the DER form of (r, s)
    reserved: bytes
    flags: int | None = None  # a security key's authenticator flags
    counter: int | None = None  # … and its signature counter
    assertion: webauthn.Assertion | None = None  # a passkey's origin, clientDataJSON, extensions


@dataclass(frozen=True, slots=True)
class Verified:
    public_key: PublicKey
    flags: int | None = None
    counter: int | None = None
    origin: str | None = None  # a passkey signature's web origin


@dataclass(frozen=True, slots=True)
class Rejected:
    reason: str


def _malformed(reason: str) -> SignatureError:
    return SignatureError(f"malformed signature: {reason}")


def signed_data(message: bytes, namespace: str, hash_algorithm: str) -> bytes:
    """Rule 3: what the key signs (a security key signs it wrapped, rule 4)."""
    digest = _HASHES[hash_algorithm](message).digest()
    return (
        _MAGIC + string(namespace.encode()) + string(b"") + string(hash_algorithm.encode()) + string(digest)
    )


def authenticator_data(
    application: str, flags: int, counter: int, data: bytes, extensions: bytes = b""
) -> bytes:
    """Rule 4: what a security key signs over `data` (PROTOCOL.u2f); for a passkey, `data` is
    its clientDataJSON and `extensions` the authenticator's."""
    return (
        hashlib.sha256(application.encode()).digest()
        + bytes([flags])
        + struct.pack(">I", counter)
        + extensions
        + hashlib.sha256(data).digest()
    )


def _dearmor(armored: bytes) -> bytes:
    if len(armored) > MAX_SIGNATURE_BYTES:
        raise _malformed(f"over {MAX_SIGNATURE_BYTES} bytes")
    if b"\r" in armored:
        raise _malformed("carriage return in armor (CRLF line endings?)")
    if not armored.startswith(_BEGIN + b"\n"):
        raise _malformed("missing header (the file must start with it)")
    body, footer, after = armored[len(_BEGIN) :].partition(b"\n" + _END)
    if not footer:
        raise _malformed("missing footer")
    if after not in (b"", b"\n"):
        raise _malformed("text after footer")
    if not body:
        raise _malformed("empty signature")
    lines = body[1:].split(b"\n")
    if not all(_BASE64_LINE.fullmatch(line) for line in lines):
        raise _malformed("invalid base64")
    blob = sshkeys.b64decode(b"".join(lines))
    if blob is None:
        raise _malformed("invalid base64")
    return blob


def parse(armored: bytes) -> Signature:
    """Decode and check an armored SSHSIG file; strict, raises only `SignatureError`."""
    reader = Reader(_dearmor(armored), "signature")
    if reader.take(len(_MAGIC), "magic") != _MAGIC:
        raise reader.fail("bad magic (not an SSHSIG blob)")
    version = reader.uint32("version")
    if version != _VERSION:
        raise reader.fail(f"unsupported version {version}")
    key_blob = reader.string("public key")
    namespace = reader.string("namespace")
    reserved = reader.string("reserved")
    hash_algorithm = reader.string("hash algorithm")
    signature_blob = reader.string("signature")
    reader.end()
    public_key = sshkeys.decode(key_blob, "signature")
    if not namespace:
        raise reader.fail("empty namespace")
    try:
        namespace_text = namespace.decode("utf-8")
    except UnicodeDecodeError:
        raise reader.fail("namespace is not UTF-8") from None
    if "\0" in namespace_text:
        raise reader.fail("NUL in namespace")
    algorithm = hash_algorithm.decode("latin-1")
    if algorithm not in _HASHES:
        raise SignatureError(f"unsupported hash algorithm {show(hash_algorithm)}")
    return _signature_blob(signature_blob, public_key, namespace_text, algorithm, reserved)


def _signature_blob(
    blob: bytes, key: PublicKey, namespace: str, algorithm: str, reserved: bytes
) -> Signature:
    """The signature from `string type, string raw[, byte flags, uint32 counter[, passkey fields]]`."""
    reader = Reader(blob, "signature", " in signature blob")
    signature_type = reader.string("signature type")
    passkey = key.type == SK_ECDSA and signature_type == webauthn.SIGNATURE_TYPE.encode()
    if signature_type != key.type.encode() and not passkey:
        raise SignatureError(f"unsupported signature type {show(signature_type)} for a {key.type} key")
    raw = reader.string("signature")
    flags = counter = assertion = None
    if key.security_key:
        flags, counter = reader.byte("flags"), reader.uint32("counter")
    if passkey:
        origin = reader.string("origin").decode("utf-8", "replace")
        assertion = webauthn.Assertion(origin, reader.string("clientDataJSON"), reader.string("extensions"))
    reader.end()
    if key.type == SK_ECDSA:
        inner = Reader(raw, "signature", " in ECDSA signature")
        r, s = inner.mpint("r"), inner.mpint("s")
        inner.end()
        # Loaded on first use (PLC0415): only an ECDSA signature needs the DER encoder.
        from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature  # noqa: PLC0415

        raw = encode_dss_signature(r, s)
    elif len(raw) != 64:
        raise reader.fail(f"signature is {len(raw)} bytes, expected 64")
    return Signature(key, namespace, algorithm, raw, reserved, flags, counter, assertion)


def verify(message: bytes, armored: bytes, *, namespace: str = NAMESPACE) -> Verified | Rejected:
    """Check that `armored` signs `message` in `namespace`; never raises, whatever the bytes."""
    try:
        signature = parse(armored)
    except SignatureError as error:
        return Rejected(error.reason)
    if signature.namespace != namespace:
        return Rejected(f"namespace is {show(signature.namespace)}, expected {show(namespace)}")
    key, assertion = signature.public_key, signature.assertion
    data = signed_data(message, signature.namespace, signature.hash_algorithm)
    if key.security_key:
        assert key.application is not None
        assert signature.flags is not None
        assert signature.counter is not None
        extensions = b""
        if assertion is not None:
            refused = webauthn.judge(assertion, signature.flags, data, key.application)
            if refused is not None:
                return Rejected(refused)
            data, extensions = assertion.client_data, assertion.extensions
        data = authenticator_data(key.application, signature.flags, signature.counter, data, extensions)
    origin = None if assertion is None else assertion.origin
    return (
        Verified(key, signature.flags, signature.counter, origin)
        if _good(key, signature.signature, data)
        else Rejected("bad signature")
    )


def _good(key: PublicKey, signature: bytes, data: bytes) -> bool:
    # Loaded on first use (PLC0415): a daemon that never meets a signed order never pays for it.
    from cryptography.exceptions import InvalidSignature  # noqa: PLC0415
    from cryptography.hazmat.primitives import hashes  # noqa: PLC0415
    from cryptography.hazmat.primitives.asymmetric import ec, ed25519  # noqa: PLC0415

    try:
        if key.type in (ED25519, SK_ED25519):
            ed25519.Ed25519PublicKey.from_public_bytes(key.point).verify(signature, data)
        else:
            point = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), key.point)
            point.verify(signature, data, ec.ECDSA(hashes.SHA256()))
    except (InvalidSignature, ValueError):
        return False
    return True


def sign(
    message: bytes, key: Ed25519PrivateKey, *, namespace: str = NAMESPACE, hash_algorithm: str = "sha512"
) -> bytes:
    """An armored SSHSIG of `message`, byte-identical to `ssh-keygen -Y sign` (Ed25519 is deterministic)."""
    if not namespace:
        raise ValueError("the namespace must not be empty")
    if hash_algorithm not in _HASHES:
        raise ValueError(f"hash algorithm must be sha256 or sha512, not {hash_algorithm!r}")
    public = sshkeys.ed25519(key.public_key().public_bytes_raw())
    raw = key.sign(signed_data(message, namespace, hash_algorithm))
    return assemble(public, namespace, hash_algorithm, string(ED25519.encode()) + string(raw))


def assemble(public: PublicKey, namespace: str, hash_algorithm: str, signature_blob: bytes) -> bytes:
    """The armored SSHSIG file of a key, namespace, hash and signature blob (`string type, …`)."""
    blob = (
        _MAGIC
        + struct.pack(">I", _VERSION)
        + string(public.blob)
        + string(namespace.encode())
        + string(b"")
        + string(hash_algorithm.encode())
        + string(signature_blob)
    )
    return armor(_BEGIN, _END, blob)
