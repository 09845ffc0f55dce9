#!/usr/bin/env python3
"""Coverage-guided fuzzing of the SSHSIG parser and verifier with atheris (libFuzzer).

Invariants (slopd/core/sshsig.py, rules 1 and 5), for any bytes:
- `sshsig.parse` returns a `Signature` or raises `SignatureError` with a non-empty reason;
- `sshsig.verify` never raises: it returns `Verified` or `Rejected`, in any namespace;
- a signature that verifies `MESSAGE` never also verifies `MESSAGE` with one more byte;
- `sshsig.load_private_key` and `sshsig.parse_public_key` raise only `SignatureError`.
Each input is tried as an armored `.sig` file and, armored by the harness, as a raw SSHSIG blob,
so mutations reach the binary parser behind the base64 armor too.

    python fuzz/fuzz_sshsig.py -runs=100000              # seed corpus fuzz/corpus/sshsig
    python fuzz/fuzz_sshsig.py -max_total_time=600 WORK_DIR fuzz/corpus/sshsig
"""

from __future__ import annotations

import base64
import sys

import atheris
from common import MESSAGE, libfuzzer_argv

with atheris.instrument_imports(include=["slopd"]):
    from slopd.core import sshsig

BEGIN, END = b"-----BEGIN SSH SIGNATURE-----", b"-----END SSH SIGNATURE-----"


def armor(blob: bytes) -> bytes:
    encoded = base64.b64encode(blob)
    return b"\n".join([BEGIN, *(encoded[at : at + 70] for at in range(0, len(encoded), 70)), END]) + b"\n"


def check_reason(error: sshsig.SignatureError, what: str) -> None:
    if not isinstance(error.reason, str) or not error.reason:
        raise AssertionError(f"{what}: SignatureError without a reason: {error.reason!r}")


def check_signature(armored: bytes) -> None:
    try:
        parsed = sshsig.parse(armored)
    except sshsig.SignatureError as error:
        check_reason(error, "parse")
    else:
        if not isinstance(parsed, sshsig.Signature) or len(parsed.public_key) != 32:
            raise AssertionError(f"parse returned {parsed!r}")
    for namespace in ("slop", "git"):
        verdict = sshsig.verify(MESSAGE, armored, namespace=namespace)
        if not isinstance(verdict, sshsig.Verified | sshsig.Rejected):
            raise AssertionError(f"verify returned {verdict!r}")
        if isinstance(verdict, sshsig.Verified):
            other = sshsig.verify(MESSAGE + b"\n", armored, namespace=namespace)
            if not isinstance(other, sshsig.Rejected):
                raise AssertionError("one signature verified two different messages")


def test_one_input(data: bytes) -> None:
    check_signature(data)
    check_signature(armor(data))
    try:
        sshsig.load_private_key(data)
    except sshsig.SignatureError as error:
        check_reason(error, "load_private_key")
    try:
        sshsig.parse_public_key("ssh-ed25519", data.decode("latin-1"))
    except sshsig.SignatureError as error:
        check_reason(error, "parse_public_key")


def main() -> None:
    atheris.Setup(libfuzzer_argv(sys.argv, "sshsig"), test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
