#!/usr/bin/env python3
"""Coverage-guided fuzzing of the SSHSIG parser and verifier with atheris (libFuzzer).

Invariants (slopd/core/sshsig.py rules 1 and 4, sshkeys.py rule 4, keyfiles.py rule 1), for any bytes:
- `sshsig.parse` returns a `Signature` or raises `SignatureError` with a non-empty reason; a parsed
  signature's key is of an accepted type, with 32 bytes of Ed25519 key or a 65-byte point, and
  carries flags and a counter exactly when it is a security key's;
- `sshsig.verify` never raises: it returns `Verified` or `Rejected`, in any namespace, and a
  `Verified` reports flags and a counter exactly for a security key, an origin only for an
  sk-ecdsa key (a passkey, `core.webauthn`);
- `passkeys.wrap` of the input cut in three (authenticatorData after a good RP ID hash,
  clientDataJSON, DER signature) raises only `SignatureError`, and what it returns parses;
- a signature that verifies `MESSAGE` never also verifies `MESSAGE` with one more byte;
- `keyfiles.load_private_key`, `sshkeys.decode` and `sshkeys.from_fields` (for every accepted
  type) raise only `SignatureError`.
Each input is tried as an armored `.sig` file and, armored by the harness, as a raw SSHSIG blob,
so mutations reach the binary parser behind the base64 armor too.

    python fuzz/fuzz_sshsig.py -runs=100000              # seed corpus fuzz/corpus/sshsig
    python fuzz/fuzz_sshsig.py -max_total_time=600 WORK_DIR fuzz/corpus/sshsig
"""

from __future__ import annotations

import base64
import hashlib
import sys

import atheris
from common import MESSAGE, libfuzzer_argv

with atheris.instrument_imports(include=["slopd"]):
    from slopd.core import keyfiles, passkeys, sshkeys, sshsig
    from slopd.core.wire import SignatureError

BEGIN, END = b"-----BEGIN SSH SIGNATURE-----", b"-----END SSH SIGNATURE-----"
RP_ID_HASH = hashlib.sha256(b"localhost").digest()  # so the fuzzed bytes reach past the RP check
PASSKEY = sshkeys.security_key(sshkeys.SK_ECDSA, b"\x04" + bytes(range(64)), "localhost")


def armor(blob: bytes) -> bytes:
    encoded = base64.b64encode(blob)
    return b"\n".join([BEGIN, *(encoded[at : at + 70] for at in range(0, len(encoded), 70)), END]) + b"\n"


def check_reason(error: SignatureError, what: str) -> None:
    if not isinstance(error.reason, str) or not error.reason:
        raise AssertionError(f"{what}: SignatureError without a reason: {error.reason!r}")


def check_key(key: sshkeys.PublicKey) -> None:
    size = 65 if key.type == sshkeys.SK_ECDSA else 32
    if key.type not in sshkeys.ACCEPTED or len(key.point) != size:
        raise AssertionError(f"a key slopd does not accept was parsed: {key!r}")
    if (key.application is None) == key.security_key:
        raise AssertionError(f"application does not match the key type: {key!r}")


def check_signature(armored: bytes) -> None:
    try:
        parsed = sshsig.parse(armored)
    except SignatureError as error:
        check_reason(error, "parse")
    else:
        if not isinstance(parsed, sshsig.Signature):
            raise AssertionError(f"parse returned {parsed!r}")
        check_key(parsed.public_key)
        security_key = parsed.public_key.security_key
        if (parsed.flags is not None) != security_key or (parsed.counter is not None) != security_key:
            raise AssertionError(f"flags and counter do not match the key type: {parsed!r}")
    for namespace in ("slop", "git"):
        verdict = sshsig.verify(MESSAGE, armored, namespace=namespace)
        if not isinstance(verdict, sshsig.Verified | sshsig.Rejected):
            raise AssertionError(f"verify returned {verdict!r}")
        if isinstance(verdict, sshsig.Verified):
            if (verdict.flags is None) == verdict.public_key.security_key:
                raise AssertionError(f"flags do not match the key type: {verdict!r}")
            if verdict.origin is not None and verdict.public_key.type != sshkeys.SK_ECDSA:
                raise AssertionError(f"an origin for a key that is no passkey: {verdict!r}")
            other = sshsig.verify(MESSAGE + b"\n", armored, namespace=namespace)
            if not isinstance(other, sshsig.Rejected):
                raise AssertionError("one signature verified two different messages")


def check_wrap(data: bytes) -> None:
    third = len(data) // 3
    try:
        wrapped = passkeys.wrap(
            PASSKEY, RP_ID_HASH + data[:third], data[third : 2 * third], data[2 * third :]
        )
    except SignatureError as error:
        check_reason(error, "wrap")
        return
    sshsig.parse(wrapped)  # a SignatureError here escapes: what wrap makes must parse


def test_one_input(data: bytes) -> None:
    check_signature(data)
    check_signature(armor(data))
    check_wrap(data)
    try:
        keyfiles.load_private_key(data)
    except SignatureError as error:
        check_reason(error, "load_private_key")
    try:
        check_key(sshkeys.decode(data, "key"))
    except SignatureError as error:
        check_reason(error, "decode")
    for key_type in sshkeys.ACCEPTED:
        try:
            check_key(sshkeys.from_fields(key_type, data.decode("latin-1")))
        except SignatureError as error:
            check_reason(error, "from_fields")


def main() -> None:
    atheris.Setup(libfuzzer_argv(sys.argv, "sshsig"), test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
