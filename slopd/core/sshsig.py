"""OpenSSH SSHSIG signatures (PROTOCOL.sshsig), Ed25519 only: bytes in, values out.

Rules (SPEC §6; research §1, Appendix A):
1. `parse` raises only `SignatureError`, and `verify` never raises: whatever the bytes, it
   returns `Verified` or `Rejected` with a short reason. Anything else escaping is a bug.
2. Anything `ssh-keygen -Y verify` rejects is rejected too, and a little more: the armor starts
   with the exact header line, uses LF only, ends with the exact footer (one final newline
   optional, nothing after it), and holds canonical base64; the blob is at most
   `MAX_SIGNATURE_BYTES` of armor, version exactly 1, every string complete, no trailing
   bytes anywhere; hash `sha256` or `sha512`; key and signature type exactly `ssh-ed25519`.
3. Ed25519 signs `"SSHSIG" + string(namespace) + string("") + string(hash) + string(H(message))`;
   the reserved field of the blob is ignored, as the protocol says.
4. `verify` checks the signature with the key it carries; the caller then checks that key
   against allowed_signers (`slopd.core.allowed_signers`).
5. Key files: `load_private_key` reads an unencrypted `openssh-key-v1` Ed25519 key and raises
   only `SignatureError`; `private_key_bytes` writes one that ssh-keygen reads.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
import struct
from dataclasses import dataclass
from typing import TYPE_CHECKING

from slopd.core.vocabulary import NAMESPACE

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

MAX_SIGNATURE_BYTES = 8192
KEY_TYPE = "ssh-ed25519"

_MAGIC = b"SSHSIG"
_VERSION = 1
_BEGIN = b"-----BEGIN SSH SIGNATURE-----"
_END = b"-----END SSH SIGNATURE-----"
_KEY_BEGIN = b"-----BEGIN OPENSSH PRIVATE KEY-----"
_KEY_END = b"-----END OPENSSH PRIVATE KEY-----"
_KEY_MAGIC = b"openssh-key-v1\0"
_HASHES = {"sha256": hashlib.sha256, "sha512": hashlib.sha512}
_BASE64_LINE = re.compile(rb"[A-Za-z0-9+/=]+")
_WRAP = 70


class SignatureError(ValueError):
    """A malformed signature file or key; `reason` says why (the only exception parse/load raise)."""

    reason: str

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


@dataclass(frozen=True, slots=True)
class Signature:
    public_key: bytes
    namespace: str
    hash_algorithm: str
    signature: bytes
    reserved: bytes


@dataclass(frozen=True, slots=True)
class Verified:
    public_key: bytes


@dataclass(frozen=True, slots=True)
class Rejected:
    reason: str


class _Reader:
    """SSH wire-format reader where every read must be fully satisfied.

    `context` names what is read ("signature", "key") in the `malformed …` reasons.
    """

    __slots__ = ("_at", "_context", "_data", "_where")

    def __init__(self, data: bytes, context: str, where: str = "") -> None:
        self._data, self._at, self._context, self._where = data, 0, context, where

    def fail(self, reason: str) -> SignatureError:
        return SignatureError(f"malformed {self._context}: {reason}")

    def take(self, size: int, field: str) -> bytes:
        if self._at + size > len(self._data):
            raise self.fail(f"truncated {field}")
        chunk = self._data[self._at : self._at + size]
        self._at += size
        return chunk

    def uint32(self, field: str) -> int:
        value: int = struct.unpack(">I", self.take(4, field))[0]
        return value

    def string(self, field: str) -> bytes:
        return self.take(self.uint32(field), field)

    def rest(self) -> bytes:
        chunk, self._at = self._data[self._at :], len(self._data)
        return chunk

    def end(self) -> None:
        if self._at != len(self._data):
            raise self.fail(f"trailing data{self._where}")


def _malformed(reason: str) -> SignatureError:
    return SignatureError(f"malformed signature: {reason}")


def _show(value: str | bytes) -> str:
    text = value.decode("utf-8", "replace") if isinstance(value, bytes) else value
    shown = ascii(text)
    return shown if len(shown) <= 60 else shown[:57] + "..."


def _string(data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + data


def _key_blob(public_key: bytes) -> bytes:
    return _string(KEY_TYPE.encode()) + _string(public_key)


def _signed_data(message: bytes, namespace: str, hash_algorithm: str) -> bytes:
    digest = _HASHES[hash_algorithm](message).digest()
    return (
        _MAGIC
        + _string(namespace.encode())
        + _string(b"")
        + _string(hash_algorithm.encode())
        + _string(digest)
    )


def _b64decode(text: bytes) -> bytes | None:
    """Strict, canonical base64 (ssh-keygen rejects non-zero padding bits too), or None."""
    try:
        decoded = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return None
    return decoded if base64.b64encode(decoded) == text else None


def _armor(begin: bytes, end: bytes, blob: bytes) -> bytes:
    encoded = base64.b64encode(blob)
    lines = [encoded[at : at + _WRAP] for at in range(0, len(encoded), _WRAP)]
    return b"\n".join([begin, *lines, end]) + b"\n"


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
    blob = _b64decode(b"".join(lines))
    if blob is None:
        raise _malformed("invalid base64")
    return blob


def _ed25519_public_key(blob: bytes, context: str) -> bytes:
    """The raw key from an SSH public key blob: `string "ssh-ed25519"`, `string key[32]`, nothing more."""
    reader = _Reader(blob, context, " in public key")
    key_type = reader.string("key type")
    if key_type != KEY_TYPE.encode():
        raise SignatureError(f"unsupported key type {_show(key_type)}")
    key = reader.string("public key")
    reader.end()
    if len(key) != 32:
        raise reader.fail(f"public key is {len(key)} bytes, expected 32")
    return key


def parse(armored: bytes) -> Signature:
    """Decode and check an armored SSHSIG file; strict, raises only `SignatureError`."""
    reader = _Reader(_dearmor(armored), "signature")
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
    public_key = _ed25519_public_key(key_blob, "signature")
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
        raise SignatureError(f"unsupported hash algorithm {_show(hash_algorithm)}")
    sig_reader = _Reader(signature_blob, "signature", " in signature blob")
    signature_type = sig_reader.string("signature type")
    if signature_type != KEY_TYPE.encode():
        raise SignatureError(f"unsupported signature type {_show(signature_type)}")
    signature = sig_reader.string("signature")
    sig_reader.end()
    if len(signature) != 64:
        raise reader.fail(f"signature is {len(signature)} bytes, expected 64")
    return Signature(public_key, namespace_text, algorithm, signature, reserved)


def verify(message: bytes, armored: bytes, *, namespace: str = NAMESPACE) -> Verified | Rejected:
    """Check that `armored` signs `message` in `namespace`; never raises, whatever the bytes."""
    try:
        signature = parse(armored)
    except SignatureError as error:
        return Rejected(error.reason)
    if signature.namespace != namespace:
        return Rejected(f"namespace is {_show(signature.namespace)}, expected {_show(namespace)}")
    signed = _signed_data(message, signature.namespace, signature.hash_algorithm)
    # Loaded on first use (PLC0415): a daemon that never meets a signed order never pays for it.
    from cryptography.exceptions import InvalidSignature  # noqa: PLC0415
    from cryptography.hazmat.primitives.asymmetric import ed25519  # noqa: PLC0415

    try:
        ed25519.Ed25519PublicKey.from_public_bytes(signature.public_key).verify(signature.signature, signed)
    except (InvalidSignature, ValueError):
        return Rejected("bad signature")
    return Verified(signature.public_key)


def sign(
    message: bytes, key: Ed25519PrivateKey, *, namespace: str = NAMESPACE, hash_algorithm: str = "sha512"
) -> bytes:
    """An armored SSHSIG of `message`, byte-identical to `ssh-keygen -Y sign` (Ed25519 is deterministic)."""
    if not namespace:
        raise ValueError("the namespace must not be empty")
    if hash_algorithm not in _HASHES:
        raise ValueError(f"hash algorithm must be sha256 or sha512, not {hash_algorithm!r}")
    public_key = key.public_key().public_bytes_raw()
    raw = key.sign(_signed_data(message, namespace, hash_algorithm))
    blob = (
        _MAGIC
        + struct.pack(">I", _VERSION)
        + _string(_key_blob(public_key))
        + _string(namespace.encode())
        + _string(b"")
        + _string(hash_algorithm.encode())
        + _string(_string(KEY_TYPE.encode()) + _string(raw))
    )
    return _armor(_BEGIN, _END, blob)


def load_private_key(data: bytes) -> Ed25519PrivateKey:
    """Read an unencrypted OpenSSH Ed25519 private key file; raises only `SignatureError`."""
    text = data.strip()
    if not text.startswith(_KEY_BEGIN) or not text.endswith(_KEY_END):
        raise SignatureError("not an OpenSSH private key file")
    blob = _b64decode(b"".join(text[len(_KEY_BEGIN) : -len(_KEY_END)].split()))
    if blob is None:
        raise SignatureError("malformed private key: invalid base64")
    reader = _Reader(blob, "private key")
    if reader.take(len(_KEY_MAGIC), "magic") != _KEY_MAGIC:
        raise reader.fail("bad magic (not openssh-key-v1)")
    cipher, kdf = reader.string("cipher"), reader.string("kdf")
    reader.string("kdf options")
    if cipher != b"none" or kdf != b"none":
        raise SignatureError("private key is encrypted (passphrase-protected keys are not supported)")
    if reader.uint32("key count") != 1:
        raise reader.fail("the file must hold exactly one key")
    public_key = _ed25519_public_key(reader.string("public key"), "private key")
    private = _Reader(reader.string("private section"), "private key", " in private section")
    reader.end()
    if private.uint32("check") != private.uint32("check"):
        raise private.fail("check values differ")
    key_type = private.string("key type")
    if key_type != KEY_TYPE.encode():
        raise SignatureError(f"unsupported key type {_show(key_type)}")
    if private.string("public key") != public_key:
        raise private.fail("public keys differ")
    secret = private.string("secret key")
    private.string("comment")
    padding = private.rest()
    if padding != bytes(range(1, len(padding) + 1)):
        raise private.fail("bad padding")
    if len(secret) != 64 or secret[32:] != public_key:
        raise private.fail("bad Ed25519 secret")
    # Loaded on first use (PLC0415), as in `verify`.
    from cryptography.hazmat.primitives.asymmetric import ed25519  # noqa: PLC0415

    key = ed25519.Ed25519PrivateKey.from_private_bytes(secret[:32])
    if key.public_key().public_bytes_raw() != public_key:
        raise private.fail("the secret does not match the public key")
    return key


def private_key_bytes(key: Ed25519PrivateKey, comment: str = "") -> bytes:
    """The key as an unencrypted `openssh-key-v1` file, as `ssh-keygen -N ''` writes it.

    The check value is derived from the key rather than random, so the output is a pure function.
    """
    public_key = key.public_key().public_bytes_raw()
    seed = key.private_bytes_raw()
    check = hashlib.sha256(public_key).digest()[:4]
    private = (
        check
        + check
        + _string(KEY_TYPE.encode())
        + _string(public_key)
        + _string(seed + public_key)
        + _string(comment.encode())
    )
    private += bytes(range(1, 1 + (-len(private) % 8)))
    blob = (
        _KEY_MAGIC
        + _string(b"none")
        + _string(b"none")
        + _string(b"")
        + struct.pack(">I", 1)
        + _string(_key_blob(public_key))
        + _string(private)
    )
    return _armor(_KEY_BEGIN, _KEY_END, blob)


def public_key_line(public_key: bytes, comment: str = "") -> str:
    """`ssh-ed25519 AAAA… comment`, as in a `.pub`, authorized_keys or allowed_signers line (no newline)."""
    if len(public_key) != 32:
        raise ValueError(f"an Ed25519 public key is 32 bytes, not {len(public_key)}")
    line = f"{KEY_TYPE} {base64.b64encode(_key_blob(public_key)).decode('ascii')}"
    return f"{line} {comment}" if comment else line


def parse_public_key(keytype: str, base64_blob: str) -> bytes:
    """The raw 32-byte key from a key line's type and base64 fields; `SignatureError` if not ssh-ed25519."""
    if keytype != KEY_TYPE:
        raise SignatureError(f"unsupported key type {_show(keytype)}")
    if not base64_blob.isascii():
        raise SignatureError("malformed key: invalid base64")
    blob = _b64decode(base64_blob.encode("ascii"))
    if blob is None:
        raise SignatureError("malformed key: invalid base64")
    return _ed25519_public_key(blob, "key")


def fingerprint(public_key: bytes) -> str:
    """`SHA256:…` exactly as `ssh-keygen -l` prints it: unpadded base64 of SHA-256 of the key blob."""
    digest = hashlib.sha256(_key_blob(public_key)).digest()
    return "SHA256:" + base64.b64encode(digest).decode("ascii").rstrip("=")
