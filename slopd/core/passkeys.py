"""A browser's passkey, made into OpenSSH's own files: its allowed_signers line, and its
assertions wrapped as SSHSIG signatures (SPEC §15; PROTOCOL.u2f, PROTOCOL.sshsig). Pure.

Rules:
1. A passkey is an `sk-ecdsa-sha2-nistp256@openssh.com` key: the credential's P-256 point
   (uncompressed, 65 bytes) and, as its application, the bare RP ID. Its allowed_signers line
   is `PRINCIPAL namespaces="NAMESPACE" sk-ecdsa-sha2-nistp256@openssh.com BASE64`.
2. To approve a file, the passkey signs the challenge `challenge(message)`: the SSHSIG signed
   data of the file's bytes in the namespace, with SHA-512 (what `ssh-keygen -Y sign` uses).
3. `wrap` turns the assertion the browser returned (authenticatorData, clientDataJSON and the
   DER signature, byte for byte) into the armored SSHSIG file `ssh-keygen -Y verify` accepts:
   signature type `webauthn-sk-ecdsa-sha2-nistp256@openssh.com`, r and s from the DER form,
   flags and counter from the authenticator data, the origin from clientDataJSON, clientDataJSON
   itself unchanged, the extensions (the authenticator data after the counter).
4. `wrap` refuses, with `SignatureError` naming why, what could never verify: a key that is not
   a passkey, authenticator data too short or made for another RP ID, attested credential data,
   a clientDataJSON without a string origin, a signature that is not DER. Whether it verifies
   is the verifier's to say (`sshsig.verify`), never this module's.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import struct

from slopd.core import sshkeys, sshsig, webauthn
from slopd.core.sshkeys import SK_ECDSA, PublicKey
from slopd.core.vocabulary import NAMESPACE
from slopd.core.wire import SignatureError, mpint, string

HASH_ALGORITHM = "sha512"
_HEADER = 37  # rpIdHash (32) ‖ flags (1) ‖ counter (4)
_B64URL = re.compile(r"[A-Za-z0-9_-]*")


def public_key(point: bytes, rp_id: str) -> PublicKey:
    """Rule 1: the sk-ecdsa key of a passkey with this point for this relying party."""
    return sshkeys.security_key(SK_ECDSA, point, rp_id)


def key_line(principal: str, point: bytes, rp_id: str, namespace: str = NAMESPACE) -> str:
    """Rule 1: the allowed_signers line of a passkey."""
    return f'{principal} namespaces="{namespace}" {public_key(point, rp_id).line()}'


def challenge(message: bytes, namespace: str = NAMESPACE) -> bytes:
    """Rule 2: what the passkey is asked to sign to approve `message`."""
    return sshsig.signed_data(message, namespace, HASH_ALGORITHM)


def wrap(
    key: PublicKey,
    authenticator_data: bytes,
    client_data: bytes,
    der_signature: bytes,
    namespace: str = NAMESPACE,
) -> bytes:
    """Rules 3 and 4: the armored SSHSIG of the file whose `challenge` the passkey signed."""
    if key.type != SK_ECDSA or key.application is None:
        raise SignatureError(f"a passkey is an {SK_ECDSA} key, not {key.type}")
    if len(authenticator_data) < _HEADER:
        raise SignatureError(f"authenticator data of {len(authenticator_data)} bytes is truncated")
    if authenticator_data[:32] != hashlib.sha256(key.application.encode()).digest():
        raise SignatureError(f"the assertion was made for another relying party than {key.application!r}")
    flags, counter = struct.unpack(">BI", authenticator_data[32:_HEADER])
    if flags & webauthn.ATTESTED_DATA:
        raise SignatureError("the authenticator data carries attested credential data (a registration?)")
    blob = (
        string(webauthn.SIGNATURE_TYPE.encode())
        + string(_raw_signature(der_signature))
        + struct.pack(">BI", flags, counter)
        + string(_origin(client_data).encode())
        + string(client_data)
        + string(authenticator_data[_HEADER:])
    )
    return sshsig.assemble(key, namespace, HASH_ALGORITHM, blob)


def _raw_signature(der_signature: bytes) -> bytes:
    # Loaded on first use (PLC0415), as in sshsig: only a passkey's signature needs the DER decoder.
    from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature  # noqa: PLC0415

    try:
        r, s = decode_dss_signature(der_signature)
    except ValueError:
        raise SignatureError("the signature is not a DER-encoded ECDSA signature") from None
    return mpint(r) + mpint(s)


def _origin(client_data: bytes) -> str:
    try:
        origin = json.loads(client_data.decode("utf-8")).get("origin")
    except (ValueError, AttributeError, RecursionError):
        origin = None
    if not isinstance(origin, str):
        raise SignatureError("clientDataJSON is not a JSON object with a string origin")
    return origin


def b64url_decode(text: str) -> bytes:
    """Unpadded base64url, as WebAuthn's JSON carries bytes; raises ValueError on anything else."""
    if not _B64URL.fullmatch(text) or len(text) % 4 == 1:
        raise ValueError("not unpadded base64url")
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
