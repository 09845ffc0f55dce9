"""Fuzz inputs replayed through the parsers' invariants without atheris (fast, in the default run).

Every seed in `fuzz/corpus/HARNESS/` and every crash kept in `fuzz/regressions/HARNESS/` (see
fuzz/README.md) must keep the invariant its harness asserts:
- envelope: `parse` gives an `Envelope` or an `EnvelopeError` with reasons, as `.md` and as `.json`;
- sshsig: `parse` gives a `Signature` or a `SignatureError`; `verify` never raises; the private and
  public key readers raise only `SignatureError`;
- allowed_signers: `parse` gives entries or an `AllowedSignersError` naming a line of the text, and
  `authorize` is total over what it parsed.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone
from functools import partial
from pathlib import Path

import pytest

from slopd.core import allowed_signers, keyfiles, sshkeys, sshsig
from slopd.core.envelope import Envelope, EnvelopeError, parse
from slopd.core.wire import SignatureError

FUZZ = Path(__file__).resolve().parents[2] / "fuzz"
HARNESSES = ("envelope", "sshsig", "allowed_signers")
NOW = datetime(2026, 7, 4, 8, 0, tzinfo=UTC)


def inputs(harness: str) -> list[Path]:
    found: list[Path] = []
    for folder in (FUZZ / "corpus" / harness, FUZZ / "regressions" / harness):
        if folder.is_dir():
            found += sorted(path for path in folder.iterdir() if path.is_file() and path.name[0] != ".")
    return found


def envelope_invariant(data: bytes) -> None:
    for name in ("fuzz.md", "fuzz.json", "FUZZ.MD"):
        try:
            parsed = parse(data, name=name)
        except EnvelopeError as error:
            reasons = error.reasons
        else:
            assert isinstance(parsed, Envelope)
            continue
        assert reasons
        assert all(isinstance(reason, str) and reason for reason in reasons)


def armor(blob: bytes) -> bytes:
    encoded = base64.b64encode(blob)
    lines = [encoded[at : at + 70] for at in range(0, len(encoded), 70)]
    return b"\n".join([b"-----BEGIN SSH SIGNATURE-----", *lines, b"-----END SSH SIGNATURE-----"]) + b"\n"


def signature_reason(call: Callable[[], object]) -> str | None:
    """None when `call` returns; the reason when it raises `SignatureError` (anything else escapes)."""
    try:
        call()
    except SignatureError as error:
        return error.reason
    return None


def sshsig_invariant(data: bytes, message: bytes = b"any message\n") -> None:
    for armored in (data, armor(data)):
        assert signature_reason(partial(sshsig.parse, armored)) != ""
        for namespace in ("slop", "git"):
            verdict = sshsig.verify(message, armored, namespace=namespace)
            assert isinstance(verdict, sshsig.Verified | sshsig.Rejected)
    assert signature_reason(lambda: keyfiles.load_private_key(data)) != ""
    assert signature_reason(lambda: sshkeys.from_fields("ssh-ed25519", data.decode("latin-1"))) != ""


def allowed_signers_invariant(data: bytes) -> None:
    text = data.decode("utf-8", "surrogateescape")
    for zone in (UTC, timezone(timedelta(hours=-5)), timezone(timedelta(hours=9))):
        try:
            entries = allowed_signers.parse(text, local_zone=zone)
        except allowed_signers.AllowedSignersError as error:
            refused: allowed_signers.AllowedSignersError | None = error
        else:
            refused = None
        if refused is not None:
            assert 1 <= refused.line <= text.count("\n") + 1
            assert refused.reason
            continue
        for entry in entries:
            for principal in (entry.principals, "mallory@example.com"):
                verdict = allowed_signers.authorize(
                    entries, public_key=entry.public_key, principal=principal, namespace="slop", now=NOW
                )
                assert isinstance(verdict, allowed_signers.Authorized | allowed_signers.Refused)


INVARIANTS = {
    "envelope": envelope_invariant,
    "sshsig": sshsig_invariant,
    "allowed_signers": allowed_signers_invariant,
}
CASES = [(harness, path) for harness in HARNESSES for path in inputs(harness)]


@pytest.mark.parametrize(
    ("harness", "path"),
    CASES,
    ids=[f"{harness}/{path.parent.parent.name}/{path.name}" for harness, path in CASES],
)
def test_a_kept_fuzz_input_still_holds_its_parsers_invariant(harness: str, path: Path) -> None:
    """A seed or a kept crash input, replayed: its parser gives a value or its own error, nothing else."""
    INVARIANTS[harness](path.read_bytes())


def test_every_harness_has_a_seed_corpus() -> None:
    """Each harness has at least fifteen seeds, so the replays above are not vacuous."""
    for harness in HARNESSES:
        assert len(list((FUZZ / "corpus" / harness).iterdir())) >= 15, harness


def test_the_sshsig_seeds_include_signatures_that_really_verify() -> None:
    """The good seeds verify the harness's message, so the fuzzer starts from the deepest path."""
    message = (FUZZ / "corpus" / "envelope" / "signed-order.md").read_bytes()
    for name in ("good-sha512.sig", "good-sha256.sig", "reserved-field.sig"):
        signature = (FUZZ / "corpus" / "sshsig" / name).read_bytes()
        assert isinstance(sshsig.verify(message, signature), sshsig.Verified), name
    for name in ("md5.sig", "trailing-bytes.sig", "padding-bits.sig", "namespace-git.sig"):
        signature = (FUZZ / "corpus" / "sshsig" / name).read_bytes()
        assert isinstance(sshsig.verify(message, signature), sshsig.Rejected), name
