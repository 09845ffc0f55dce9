"""Fuzz inputs replayed through the parsers' invariants without atheris (fast, in the default run).

Every seed in `fuzz/corpus/HARNESS/` and every crash kept in `fuzz/regressions/HARNESS/` (see
fuzz/README.md) must keep the invariant its harness asserts:
- envelope: `parse` gives an `Envelope` or an `EnvelopeError` with reasons, as `.md` and as `.json`,
  and an `Envelope` names distinct, plain `.sig` sidecars (or none, for `auth: none`);
- sshsig: `parse` gives a `Signature` or a `SignatureError`; `verify` never raises, and reports flags
  and a counter exactly for a security key (an origin only for an sk-ecdsa passkey); the private
  and public key readers, and `passkeys.wrap` of the bytes cut in three, raise only
  `SignatureError` (and what `wrap` returns parses);
- allowed_signers: `parse` gives entries or an `AllowedSignersError` naming a line of the text, and
  `authorize` is total over what it parsed;
- handoff_lint: `lint` gives a `Report` whose findings name lines of the file, and the text it read
  renders back exactly (`render(parse(text)) == text`).
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone
from functools import partial
from pathlib import Path

import pytest

from slopd.core import allowed_signers, authorizing, keyfiles, passkeys, sshkeys, sshsig
from slopd.core.envelope import Envelope, EnvelopeError
from slopd.core.validation import parse
from slopd.core.wire import SignatureError
from slopd.handoff import grammar, lint
from tests import ROOT

FUZZ = ROOT / "fuzz"
HARNESSES = ("envelope", "sshsig", "allowed_signers", "handoff_lint")
NOW = datetime(2026, 7, 4, 8, 0, tzinfo=UTC)
MESSAGE = (FUZZ / "corpus" / "envelope" / "signed-order.md").read_bytes()  # fuzz/common.py's MESSAGE


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
            sidecars = parsed.sidecars
            assert (parsed.auth == "none") == (not sidecars)
            assert len(set(sidecars)) == len(sidecars)
            assert all(safe_sidecar(sidecar) for sidecar in sidecars), sidecars
            continue
        assert reasons
        assert all(isinstance(reason, str) and reason for reason in reasons)


def safe_sidecar(sidecar: str) -> bool:
    """A file name in the order's own lane (as fuzz/fuzz_envelope.py states it)."""
    plain = not any(char in sidecar for char in "/\\\0,") and sidecar == sidecar.strip()
    return plain and sidecar.endswith(".sig") and not sidecar.startswith(".") and sidecar.isprintable()


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


def sshsig_invariant(data: bytes, message: bytes = MESSAGE) -> None:
    for armored in (data, armor(data)):
        assert signature_reason(partial(sshsig.parse, armored)) != ""
        for namespace in ("slop", "git"):
            verdict = sshsig.verify(message, armored, namespace=namespace)
            assert isinstance(verdict, sshsig.Verified | sshsig.Rejected)
            if isinstance(verdict, sshsig.Verified):
                assert (verdict.flags is not None) == verdict.public_key.security_key
                assert verdict.origin is None or verdict.public_key.type == sshkeys.SK_ECDSA
                assert isinstance(
                    sshsig.verify(message + b"\n", armored, namespace=namespace), sshsig.Rejected
                )
    wrapped = signature_reason(lambda: sshsig.parse(wrap_passkey(data)))
    assert wrapped != ""
    assert signature_reason(lambda: keyfiles.load_private_key(data)) != ""
    assert signature_reason(lambda: sshkeys.decode(data, "key")) != ""
    text = data.decode("latin-1")
    for key_type in sshkeys.ACCEPTED:
        assert signature_reason(partial(sshkeys.from_fields, key_type, text)) != ""


RP_ID_HASH = hashlib.sha256(b"localhost").digest()  # so the fuzzed bytes reach past the RP check
PASSKEY = sshkeys.security_key(sshkeys.SK_ECDSA, b"\x04" + bytes(range(64)), "localhost")


def wrap_passkey(data: bytes) -> bytes:
    """`passkeys.wrap` of `data` cut in three (authenticatorData, clientDataJSON, DER signature),
    as fuzz/fuzz_sshsig.py does: it raises only `SignatureError`, and what it returns parses."""
    third = len(data) // 3
    parts = data[:third], data[third : 2 * third], data[2 * third :]
    return passkeys.wrap(PASSKEY, RP_ID_HASH + parts[0], *parts[1:])


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
                verdict = authorizing.authorize(
                    entries, public_key=entry.public_key, principal=principal, namespace="slop", now=NOW
                )
                assert isinstance(verdict, authorizing.Authorized | authorizing.Refused)


def handoff_lint_invariant(data: bytes) -> None:
    report = lint.lint(data)
    assert isinstance(report, lint.Report)
    text = data.decode("utf-8", "surrogateescape")
    assert grammar.render(grammar.parse(text)) == text
    assert report.head + grammar.render(report.log) == text
    lines = max(1, len(text.splitlines()))
    assert all(1 <= finding.line <= lines and finding.message and finding.fix for finding in report.findings)


INVARIANTS = {
    "envelope": envelope_invariant,
    "sshsig": sshsig_invariant,
    "allowed_signers": allowed_signers_invariant,
    "handoff_lint": handoff_lint_invariant,
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


SECURITY_KEY_SEEDS = {
    "sk-ed25519-touch.sig": (sshkeys.SK_ED25519, 0x01),
    "sk-ed25519-verified-sha256.sig": (sshkeys.SK_ED25519, 0x05),
    "sk-ed25519-no-touch.sig": (sshkeys.SK_ED25519, 0x00),
    "sk-ed25519-application.sig": (sshkeys.SK_ED25519, 0x01),
    "sk-ecdsa-touch.sig": (sshkeys.SK_ECDSA, 0x01),
    "sk-ecdsa-verified.sig": (sshkeys.SK_ECDSA, 0x05),
    "passkey-touch.sig": (sshkeys.SK_ECDSA, 0x01),
    "passkey-verified-extensions.sig": (sshkeys.SK_ECDSA, 0x85),
    "passkey-no-touch.sig": (sshkeys.SK_ECDSA, 0x00),
}
DAMAGED_SECURITY_KEY_SEEDS = {
    "sk-ed25519-flags-changed.sig": "bad signature",
    "sk-ecdsa-counter-changed.sig": "bad signature",
    "sk-ecdsa-signed-for-other-application.sig": "bad signature",
    "sk-ecdsa-off-curve.sig": "bad signature",
    "sk-ecdsa-s-zero.sig": "bad signature",
    "sk-ecdsa-r-leading-zero.sig": "malformed signature: r has a needless leading zero",
    "sk-ecdsa-s-negative.sig": "malformed signature: negative s",
    "sk-ecdsa-third-mpint.sig": "malformed signature: trailing data in ECDSA signature",
    "sk-ecdsa-nistp384.sig": "malformed signature: the curve of an sk-ecdsa key must be nistp256",
    "sk-ecdsa-compressed-point.sig": "malformed signature: the point of an sk-ecdsa key must be 65 bytes",
    "sk-ed25519-no-application.sig": "malformed signature: truncated application",
    "sk-ed25519-no-counter.sig": "malformed signature: truncated counter",
    "sk-ecdsa-webauthn.sig": 'webauthn: clientDataJSON does not begin {"type":"webauthn.get",',
    "openssh-ecdsa_sk_webauthn.sig": "namespace is 'unittest', expected 'slop'",
    "passkey-other-message.sig": "webauthn: the challenge is not this file's signed data",
    "passkey-other-site.sig": "webauthn: the origin 'https://evil.example' is not a page of the key's",
    "passkey-cross-origin.sig": "webauthn: crossOrigin is true",
    "openssh-rsa.sig": "key type 'ssh-rsa' is not accepted for orders",
}


def test_the_sshsig_seeds_include_security_key_signatures_good_and_damaged() -> None:
    """sk-ed25519 and sk-ecdsa seeds verify with their flags; each damaged one fails its own check."""
    message = (FUZZ / "corpus" / "envelope" / "signed-order.md").read_bytes()
    for name, (key_type, flags) in SECURITY_KEY_SEEDS.items():
        verdict = sshsig.verify(message, (FUZZ / "corpus" / "sshsig" / name).read_bytes())
        assert isinstance(verdict, sshsig.Verified), (name, verdict)
        assert (verdict.public_key.type, verdict.flags) == (key_type, flags), name
    for name, reason in DAMAGED_SECURITY_KEY_SEEDS.items():
        verdict = sshsig.verify(message, (FUZZ / "corpus" / "sshsig" / name).read_bytes())
        assert isinstance(verdict, sshsig.Rejected), name
        assert verdict.reason.startswith(reason), (name, verdict.reason)


QUORUM_SEEDS = {
    "quorum-two.md": ("a.md.sig", "a.md.bob.sig"),
    "quorum-three-spaced.md": ("a.md.sig", "a.md.bob.sig", "a.md.carol.sig"),
    "quorum-quoted.md": ("a.md.sig", "a.md.bob.sig"),
    "quorum-case-duplicate.md": ("a.md.sig", "A.md.sig"),
    "quorum-other-orders-sidecar.md": ("a.md.sig", "b.md.sig"),
    "quorum.json": ("a.json.sig", "a.json.bob.sig"),
}
BROKEN_QUORUM_SEEDS = {
    "quorum-duplicate.md": "auth: a sidecar is listed twice",
    "quorum-empty-item.md": "auth: sidecar must be a plain file name",
    "quorum-trailing-comma.md": "auth: sidecar must be a plain file name",
    "quorum-only-comma.md": "auth: sidecar must be a plain file name",
    "quorum-dotdot.md": "auth: sidecar must be a plain file name",
    "quorum-dotdot-path.md": "auth: sidecar must be a plain file name",
    "quorum-slash.md": "auth: sidecar must be a plain file name",
    "quorum-hidden.md": "auth: sidecar must be a plain file name",
    "quorum-upper-suffix.md": "auth: sidecar must be a plain file name",
}


def test_the_envelope_seeds_include_orders_naming_several_sidecars() -> None:
    """Valid multi-sidecar orders parse with their sidecars in order; broken lists are refused for `auth`."""
    for name, sidecars in QUORUM_SEEDS.items():
        parsed = parse((FUZZ / "corpus" / "envelope" / name).read_bytes(), name=name)
        assert parsed.sidecars == sidecars, name
    for name, reason in BROKEN_QUORUM_SEEDS.items():
        with pytest.raises(EnvelopeError) as refused:
            parse((FUZZ / "corpus" / "envelope" / name).read_bytes(), name=name)
        assert [found for found in refused.value.reasons if found.startswith(reason)], (name, refused.value)
