"""SSH public keys as slopd meets them, in signatures and allowed_signers lines. Pure.

Rules (SPEC §6, "The keys humans already have"; OpenSSH PROTOCOL.u2f, sshkey.c):
1. A key is its wire blob: two keys are one key when their blobs are equal (what OpenSSH's
   `sshkey_equal_public` compares: type, key material and, for a security key, application).
2. Accepted for orders: `ssh-ed25519` (`string type, string key[32]`), and the FIDO security-key
   types `sk-ssh-ed25519@openssh.com` (`… string key[32], string application`) and
   `sk-ecdsa-sha2-nistp256@openssh.com` (`string type, string "nistp256", string Q[65]
   uncompressed, string application`). Every field complete, nothing after.
3. Any other key type — RSA, ECDSA, certificates, hybrids — raises `UnacceptedKeyTypeError` naming
   it: a well-formed key slopd will not take, as distinct from a malformed one.
4. `decode`, `from_fields` raise only `SignatureError` (of which `UnacceptedKeyTypeError` is one).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from dataclasses import dataclass

from slopd.core.wire import Reader, SignatureError, show, string

ED25519 = "ssh-ed25519"
SK_ED25519 = "sk-ssh-ed25519@openssh.com"
SK_ECDSA = "sk-ecdsa-sha2-nistp256@openssh.com"
ACCEPTED = (ED25519, SK_ED25519, SK_ECDSA)
SECURITY_KEYS = (SK_ED25519, SK_ECDSA)
_CURVE = b"nistp256"
_MAX_APPLICATION = 1024


class UnacceptedKeyTypeError(SignatureError):
    """A key of a type slopd does not accept for orders (rule 3)."""

    def __init__(self, key_type: str) -> None:
        self.key_type = key_type
        super().__init__(f"key type {show(key_type)} is not accepted for orders")


@dataclass(frozen=True, slots=True)
class PublicKey:
    type: str
    blob: bytes  # the whole wire encoding: what is compared and fingerprinted
    point: bytes  # Ed25519: the 32-byte key; ECDSA: the 65-byte uncompressed point
    application: str | None = None  # a security key's FIDO application ("ssh:" by default)

    @property
    def security_key(self) -> bool:
        return self.type in SECURITY_KEYS

    @property
    def fingerprint(self) -> str:
        """`SHA256:…` exactly as `ssh-keygen -l` prints it: unpadded base64 of SHA-256 of the blob."""
        digest = hashlib.sha256(self.blob).digest()
        return "SHA256:" + base64.b64encode(digest).decode("ascii").rstrip("=")

    def line(self, comment: str = "") -> str:
        """`TYPE BASE64 [comment]`, as in a `.pub`, authorized_keys or allowed_signers line."""
        text = f"{self.type} {base64.b64encode(self.blob).decode('ascii')}"
        return f"{text} {comment}" if comment else text


def ed25519(raw: bytes) -> PublicKey:
    """The plain Ed25519 key with these 32 bytes."""
    if len(raw) != 32:
        raise ValueError(f"an Ed25519 public key is 32 bytes, not {len(raw)}")
    return PublicKey(ED25519, string(ED25519.encode()) + string(raw), raw)


def security_key(key_type: str, point: bytes, application: str = "ssh:") -> PublicKey:
    """A FIDO key of `key_type` (SK_ED25519 or SK_ECDSA) with this key material and application."""
    middle = string(_CURVE) if key_type == SK_ECDSA else b""
    blob = string(key_type.encode()) + middle + string(point) + string(application.encode())
    return decode(blob, "key")


def decode(blob: bytes, context: str) -> PublicKey:
    """The key a wire blob encodes (rules 2-4); `context` names where it was found."""
    reader = Reader(blob, context, " in public key")
    raw_type = reader.string("key type")
    key_type = raw_type.decode("utf-8", "replace")
    if key_type not in ACCEPTED:
        if not raw_type or not raw_type.isascii() or not raw_type.decode().isprintable():
            raise reader.fail(f"bad key type {show(raw_type)}")
        raise UnacceptedKeyTypeError(key_type)
    if key_type == SK_ECDSA and reader.string("curve") != _CURVE:
        raise reader.fail("the curve of an sk-ecdsa key must be nistp256")
    point = reader.string("public key")
    application = None
    if key_type in SECURITY_KEYS:
        raw_application = reader.string("application")
        if len(raw_application) > _MAX_APPLICATION or b"\0" in raw_application:
            raise reader.fail("bad security-key application")
        application = raw_application.decode("utf-8", "replace")
    reader.end()
    if key_type == SK_ECDSA:
        if len(point) != 65 or point[0] != 4:
            raise reader.fail("the point of an sk-ecdsa key must be 65 bytes, uncompressed")
    elif len(point) != 32:
        raise reader.fail(f"public key is {len(point)} bytes, expected 32")
    return PublicKey(key_type, blob, point, application)


def from_fields(key_type: str, encoded: str) -> PublicKey:
    """The key of a key line's type and base64 fields; they must agree (rule 4)."""
    if key_type not in ACCEPTED:
        raise UnacceptedKeyTypeError(key_type)
    blob = b64decode(encoded.encode("ascii")) if encoded.isascii() else None
    if blob is None:
        raise SignatureError("malformed key: invalid base64")
    try:
        key = decode(blob, "key")
    except UnacceptedKeyTypeError as error:
        if error.key_type == key_type:
            raise
        raise SignatureError(
            f"malformed key: the line says {show(key_type)}, the key is {show(error.key_type)}"
        ) from None
    if key.type != key_type:
        raise SignatureError(f"malformed key: the line says {show(key_type)}, the key is {show(key.type)}")
    return key


def b64decode(text: bytes) -> bytes | None:
    """Strict, canonical base64 (ssh-keygen rejects non-zero padding bits too), or None."""
    try:
        decoded = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return None
    return decoded if base64.b64encode(decoded) == text else None
