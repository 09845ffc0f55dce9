"""OpenSSH private key files (`openssh-key-v1`), unencrypted Ed25519 only. Pure.

Rules:
1. `load_private_key` reads what `ssh-keygen -t ed25519 -N ''` writes and raises only
   `SignatureError`: encrypted keys, other key types and inconsistent files are refused.
2. `private_key_bytes` writes a file ssh-keygen reads; its check value is derived from the key
   rather than random, so the output is a pure function of the key and comment.
"""

from __future__ import annotations

import base64
import hashlib
import struct
from typing import TYPE_CHECKING

from slopd.core.sshkeys import ED25519, PublicKey, UnacceptedKeyTypeError, b64decode, decode
from slopd.core.wire import Reader, SignatureError, show, string

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

_BEGIN = b"-----BEGIN OPENSSH PRIVATE KEY-----"
_END = b"-----END OPENSSH PRIVATE KEY-----"
_MAGIC = b"openssh-key-v1\0"
_WRAP = 70


def armor(begin: bytes, end: bytes, blob: bytes) -> bytes:
    encoded = base64.b64encode(blob)
    lines = [encoded[at : at + _WRAP] for at in range(0, len(encoded), _WRAP)]
    return b"\n".join([begin, *lines, end]) + b"\n"


def load_private_key(data: bytes) -> Ed25519PrivateKey:
    """Read an unencrypted OpenSSH Ed25519 private key file; raises only `SignatureError`."""
    text = data.strip()
    if not text.startswith(_BEGIN) or not text.endswith(_END):
        raise SignatureError("not an OpenSSH private key file")
    blob = b64decode(b"".join(text[len(_BEGIN) : -len(_END)].split()))
    if blob is None:
        raise SignatureError("malformed private key: invalid base64")
    reader = Reader(blob, "private key")
    if reader.take(len(_MAGIC), "magic") != _MAGIC:
        raise reader.fail("bad magic (not openssh-key-v1)")
    cipher, kdf = reader.string("cipher"), reader.string("kdf")
    reader.string("kdf options")
    if cipher != b"none" or kdf != b"none":
        raise SignatureError("private key is encrypted (passphrase-protected keys are not supported)")
    if reader.uint32("key count") != 1:
        raise reader.fail("the file must hold exactly one key")
    public = _ed25519_only(reader.string("public key"))
    private = Reader(reader.string("private section"), "private key", " in private section")
    reader.end()
    if private.uint32("check") != private.uint32("check"):
        raise private.fail("check values differ")
    key_type = private.string("key type")
    if key_type != ED25519.encode():
        raise SignatureError(f"unsupported key type {show(key_type)}")
    if private.string("public key") != public.point:
        raise private.fail("public keys differ")
    secret = private.string("secret key")
    private.string("comment")
    padding = private.rest()
    if padding != bytes(range(1, len(padding) + 1)):
        raise private.fail("bad padding")
    if len(secret) != 64 or secret[32:] != public.point:
        raise private.fail("bad Ed25519 secret")
    # Loaded on first use (PLC0415): a command that never signs never pays for it.
    from cryptography.hazmat.primitives.asymmetric import ed25519  # noqa: PLC0415

    key = ed25519.Ed25519PrivateKey.from_private_bytes(secret[:32])
    if key.public_key().public_bytes_raw() != public.point:
        raise private.fail("the secret does not match the public key")
    return key


def _ed25519_only(blob: bytes) -> PublicKey:
    try:
        public = decode(blob, "private key")
    except UnacceptedKeyTypeError as error:
        key_type = error.key_type
    else:
        key_type = public.type
        if key_type == ED25519:
            return public
    raise SignatureError(
        f"slopd signs with plain Ed25519 key files only, not {show(key_type)} "
        "(sign with `ssh-keygen -Y sign` for a security key)"
    )


def private_key_bytes(key: Ed25519PrivateKey, comment: str = "") -> bytes:
    """The key as an unencrypted `openssh-key-v1` file, as `ssh-keygen -N ''` writes it (rule 2)."""
    public_key = key.public_key().public_bytes_raw()
    seed = key.private_bytes_raw()
    check = hashlib.sha256(public_key).digest()[:4]
    private = (
        check
        + check
        + string(ED25519.encode())
        + string(public_key)
        + string(seed + public_key)
        + string(comment.encode())
    )
    private += bytes(range(1, 1 + (-len(private) % 8)))
    blob = (
        _MAGIC
        + string(b"none")
        + string(b"none")
        + string(b"")
        + struct.pack(">I", 1)
        + string(string(ED25519.encode()) + string(public_key))
        + string(private)
    )
    return armor(_BEGIN, _END, blob)
