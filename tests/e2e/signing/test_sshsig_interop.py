"""Interop with the real `ssh-keygen` (SPEC §6; research §1.4, §9 cases 1-9, 13, 23, 26).

slopd's SSHSIG code and ssh-keygen must accept each other's signatures and keys, reach the same
verdict on allowed_signers, and slopd must reject every malformed signature ssh-keygen rejects.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone, tzinfo
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from slopd.core import allowed_signers, authorizing, keyfiles, sshkeys, sshsig
from slopd.core.allowed_signers import AllowedSignersError
from slopd.core.authorizing import Authorized
from slopd.core.sshkeys import PublicKey
from slopd.core.sshsig import Rejected, Verified
from slopd.core.wire import SignatureError
from tests.core.test_sshsig import CORPUS, KEY, PUB, Case

SSH_KEYGEN = "/usr/bin/ssh-keygen"
MESSAGE = b"---\nprotocol: slop.v1\nid: o1\n---\nRun the tests.\n"
PRINCIPAL = "alice@example.com"


def keygen(*args: str, cwd: Path, stdin: bytes = b"", tz: str = "UTC") -> subprocess.CompletedProcess[bytes]:
    """Run ssh-keygen with stdin bytes and a fixed TZ; never raises on a non-zero exit."""
    return subprocess.run(
        [SSH_KEYGEN, *args],
        input=stdin,
        capture_output=True,
        cwd=cwd,
        env={**os.environ, "TZ": tz},
        timeout=30,
        check=False,
    )


def keygen_verify(
    directory: Path,
    signature: bytes,
    *,
    allowed: str,
    principal: str = PRINCIPAL,
    message: bytes = MESSAGE,
    tz: str = "UTC",
    verify_time: str | None = None,
) -> int:
    """The exit status of `ssh-keygen -Y verify` for this signature, allowed_signers text and message."""
    (directory / "allowed_signers").write_text(allowed)
    (directory / "check.sig").write_bytes(signature)
    extra = ["-O", f"verify-time={verify_time}"] if verify_time else []
    result = keygen(
        "-Y", "verify", "-f", "allowed_signers", "-I", principal, "-n", "slop", "-s", "check.sig", *extra,
        cwd=directory, stdin=message, tz=tz,
    )  # fmt: skip
    assert result.returncode in (0, 255), result.stderr
    return result.returncode


@dataclass(frozen=True)
class Alice:
    directory: Path
    key: Path
    public_key: PublicKey
    pub_line: str


@pytest.fixture(scope="module")
def alice(tmp_path_factory: pytest.TempPathFactory) -> Alice:
    """An Ed25519 key made by `ssh-keygen -t ed25519 -N '' -C alice@example.com`."""
    directory = tmp_path_factory.mktemp("alice")
    result = keygen("-t", "ed25519", "-N", "", "-C", PRINCIPAL, "-f", "alice_key", "-q", cwd=directory)
    assert result.returncode == 0, result.stderr
    pub_line = (directory / "alice_key.pub").read_text().strip()
    keytype, encoded, _comment = pub_line.split(" ", 2)
    return Alice(directory, directory / "alice_key", sshkeys.from_fields(keytype, encoded), pub_line)


@pytest.fixture(scope="module")
def alice_signature(alice: Alice) -> bytes:
    """`ssh-keygen -Y sign -f alice_key -n slop order.md` over MESSAGE (sha512, the default)."""
    return _keygen_sign(alice.directory, alice.key, "order.md", [])


def _keygen_sign(directory: Path, key: Path, name: str, options: list[str]) -> bytes:
    (directory / name).write_bytes(MESSAGE)
    result = keygen("-Y", "sign", "-f", str(key), "-n", "slop", *options, name, cwd=directory)
    assert result.returncode == 0, result.stderr
    return (directory / f"{name}.sig").read_bytes()


def _key_field(alice: Alice) -> str:
    return " ".join(alice.pub_line.split()[:2])


# --- signatures both ways ---


@pytest.mark.parametrize(("algorithm", "options"), [("sha512", []), ("sha256", ["-O", "hashalg=sha256"])])
def test_ssh_keygen_signatures_verify_in_slopd(
    alice: Alice, algorithm: str, options: list[str], tmp_path: Path
) -> None:
    """`ssh-keygen -Y sign` output (sha512 default and hashalg=sha256) verifies with `sshsig.verify`."""
    signature = _keygen_sign(tmp_path, alice.key, "order.md", options)
    assert sshsig.verify(MESSAGE, signature) == Verified(alice.public_key)
    assert sshsig.parse(signature).hash_algorithm == algorithm
    assert sshsig.verify(MESSAGE + b" ", signature) == Rejected("bad signature")


@pytest.mark.parametrize("algorithm", ["sha512", "sha256"])
def test_slopd_signatures_are_byte_identical_to_ssh_keygen(
    alice: Alice, algorithm: str, tmp_path: Path
) -> None:
    """`sshsig.sign` with the loaded ssh-keygen key reproduces ssh-keygen's signature byte for byte."""
    options = ["-O", f"hashalg={algorithm}"]
    expected = _keygen_sign(tmp_path, alice.key, "order.md", options)
    key = keyfiles.load_private_key(alice.key.read_bytes())
    assert sshsig.sign(MESSAGE, key, hash_algorithm=algorithm) == expected


@pytest.mark.parametrize("algorithm", ["sha512", "sha256"])
def test_slopd_signatures_pass_ssh_keygen_verify(algorithm: str, tmp_path: Path) -> None:
    """A `sshsig.sign` signature from a Python-made key passes `ssh-keygen -Y verify`."""
    signature = sshsig.sign(MESSAGE, KEY, hash_algorithm=algorithm)
    allowed = f"{PRINCIPAL} {sshkeys.ed25519(PUB).line()}\n"
    assert keygen_verify(tmp_path, signature, allowed=allowed) == 0
    assert keygen_verify(tmp_path, signature, allowed=allowed, message=MESSAGE + b"x") == 255


def test_ssh_keygen_prints_the_good_signature_line(tmp_path: Path) -> None:
    """ssh-keygen names the principal and slopd's fingerprint when it accepts a slopd signature."""
    (tmp_path / "allowed_signers").write_text(f"{PRINCIPAL} {sshkeys.ed25519(PUB).line()}\n")
    (tmp_path / "order.md.sig").write_bytes(sshsig.sign(MESSAGE, KEY))
    result = keygen(
        "-Y", "verify", "-f", "allowed_signers", "-I", PRINCIPAL, "-n", "slop", "-s", "order.md.sig",
        cwd=tmp_path, stdin=MESSAGE,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    expected = f'Good "slop" signature for {PRINCIPAL} with ED25519 key {sshkeys.ed25519(PUB).fingerprint}'
    assert result.stdout.decode().strip() == expected


# --- key files and fingerprints ---


def test_private_key_bytes_is_read_by_ssh_keygen(tmp_path: Path) -> None:
    """ssh-keygen derives `public_key_line` from a `private_key_bytes` file, and signs identically with it."""
    path = tmp_path / "bob_key"
    path.write_bytes(keyfiles.private_key_bytes(KEY, "bob@example.com"))
    path.chmod(0o600)
    result = keygen("-y", "-f", str(path), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.decode().strip() == sshkeys.ed25519(PUB).line("bob@example.com")
    assert _keygen_sign(tmp_path, path, "order.md", []) == sshsig.sign(MESSAGE, KEY)


def test_load_private_key_reads_an_ssh_keygen_key(alice: Alice) -> None:
    """`load_private_key` reads the key ssh-keygen made; its public half is the one in the .pub file."""
    key = keyfiles.load_private_key(alice.key.read_bytes())
    assert key.public_key().public_bytes_raw() == alice.public_key.point
    assert alice.public_key.line(PRINCIPAL) == alice.pub_line


@pytest.mark.parametrize(
    ("arguments", "reason"),
    [
        (["-t", "ed25519", "-N", "secret"], "private key is encrypted"),
        (
            ["-t", "ecdsa", "-N", ""],
            "slopd signs with plain Ed25519 key files only, not 'ecdsa-sha2-nistp256'",
        ),
        (["-t", "ecdsa", "-N", "", "-m", "PEM"], "not an OpenSSH private key file"),
    ],
    ids=["encrypted", "ecdsa", "pem"],
)
def test_load_private_key_refuses_other_ssh_keygen_keys(
    arguments: list[str], reason: str, tmp_path: Path
) -> None:
    """Passphrase-protected, non-Ed25519 and PEM keys made by ssh-keygen raise `SignatureError`."""
    assert keygen(*arguments, "-f", "other_key", "-q", cwd=tmp_path).returncode == 0
    with pytest.raises(SignatureError) as caught:
        keyfiles.load_private_key((tmp_path / "other_key").read_bytes())
    assert caught.value.reason.startswith(reason), caught.value.reason


def test_fingerprint_matches_ssh_keygen_l(alice: Alice) -> None:
    """`fingerprint` equals the SHA256 field that `ssh-keygen -l -f KEY.pub` prints."""
    result = keygen("-l", "-f", "alice_key.pub", cwd=alice.directory)
    assert result.returncode == 0, result.stderr
    bits, printed, *_rest = result.stdout.decode().split()
    assert (bits, printed) == ("256", alice.public_key.fingerprint)


def test_genuine_ecdsa_signature_is_refused_as_unsupported(tmp_path: Path) -> None:
    """A real ECDSA SSHSIG that ssh-keygen accepts is refused by slopd as an unsupported key type."""
    assert keygen("-t", "ecdsa", "-N", "", "-f", "ecdsa_key", "-q", cwd=tmp_path).returncode == 0
    signature = _keygen_sign(tmp_path, tmp_path / "ecdsa_key", "order.md", [])
    allowed = f"{PRINCIPAL} {(tmp_path / 'ecdsa_key.pub').read_text()}"
    assert keygen_verify(tmp_path, signature, allowed=allowed) == 0
    assert sshsig.verify(MESSAGE, signature) == Rejected(
        "key type 'ecdsa-sha2-nistp256' is not accepted for orders"
    )


# --- allowed_signers: the same verdicts as ssh-keygen ---

PLUS_TWO = timezone(timedelta(hours=2))
BERLIN = ZoneInfo("Europe/Berlin")


@dataclass(frozen=True)
class Row:
    name: str
    lines: tuple[str, ...]  # "{key}" stands for alice's "ssh-ed25519 AAAA…", "{other}" for another key
    allowed: bool
    principal: str = PRINCIPAL
    tz: str = "UTC"
    zone: tzinfo = UTC
    verify_time: str | None = None  # ssh-keygen's -O verify-time, as YYYYMMDDHHMMSSZ


def boundary(
    name: str,
    option: str,
    allowed_at: str,
    refused_at: str,
    *,
    tz: str = "Etc/GMT-2",
    zone: tzinfo = PLUS_TWO,
) -> tuple[Row, Row]:
    """Two rows one second apart across a validity bound, evaluated at ssh-keygen's -O verify-time."""
    line = (f"alice@example.com {option} {{key}}",)
    return (
        Row(f"{name}, allowed at {allowed_at}", line, True, tz=tz, zone=zone, verify_time=allowed_at),
        Row(f"{name}, refused at {refused_at}", line, False, tz=tz, zone=zone, verify_time=refused_at),
    )


ROWS = (
    Row("exact principal", ("alice@example.com {key}",), True),
    Row("wrong principal", ("alice@example.com {key}",), False, principal="mallory@example.com"),
    Row("wildcard principal", ("*@example.com {key}",), True),
    Row("wildcard principal, other domain", ("*@example.com {key}",), False, principal="alice@example.org"),
    Row("principal list", ("bob@example.com,alice@example.com {key}",), True),
    Row("negated principal", ("!alice@example.com,*@example.com {key}",), False),
    Row("quoted principal", ('"alice@example.com" {key}',), True),
    Row("namespaces match", ('alice@example.com namespaces="git,slop" {key}',), True),
    Row("namespaces wildcard", ('alice@example.com namespaces="sl*" {key}',), True),
    Row("namespaces mismatch", ('alice@example.com namespaces="git" {key}',), False),
    Row("namespaces negated", ('alice@example.com namespaces="!slop,*" {key}',), False),
    Row("upper-case options", ('alice@example.com NAMESPACES="slop",VALID-BEFORE="20990101Z" {key}',), True),
    Row("valid-before past without Z", ('alice@example.com valid-before="20200101" {key}',), False),
    Row("valid-before past with Z", ('alice@example.com valid-before="20200101Z" {key}',), False),
    Row("valid-after future without Z", ('alice@example.com valid-after="20990101" {key}',), False),
    Row("valid-after future with Z", ('alice@example.com valid-after="20990101Z" {key}',), False),
    Row(
        "inside the window", ('alice@example.com valid-after="20200101",valid-before="20990101" {key}',), True
    ),
    Row("other key only", ("alice@example.com {other}",), False),
    Row(
        "expired line, then a good one",
        ('alice@example.com valid-before="20200101Z" {key}', "alice@example.com {key}"),
        True,
    ),
    Row(
        "trailing comment",
        ("# the operators", "", "alice@example.com {key} Alice's laptop"),
        True,
    ),
    *boundary("local valid-before", 'valid-before="202001011230"', "20200101103000Z", "20200101103001Z"),
    *boundary("local valid-after", 'valid-after="20200101123000"', "20200101103000Z", "20200101102959Z"),
    *boundary("UTC valid-before", 'valid-before="202001011230Z"', "20200101123000Z", "20200101123001Z"),
    *boundary(
        "summer valid-before in Berlin",
        'valid-before="20260701"',
        "20260630220001Z",  # already past 2026-07-01T00:00 CEST, but ssh-keygen reads standard time (CET)
        "20260630230001Z",
        tz="Europe/Berlin",
        zone=BERLIN,
    ),
)


def _verify_time(text: str) -> datetime:
    return datetime.strptime(text, "%Y%m%d%H%M%SZ").replace(tzinfo=UTC)


@pytest.mark.parametrize("row", ROWS, ids=[row.name for row in ROWS])
def test_authorize_agrees_with_ssh_keygen(
    alice: Alice, alice_signature: bytes, row: Row, tmp_path: Path
) -> None:
    """`authorize` allows exactly when `ssh-keygen -Y verify` does, for this allowed_signers variant."""
    text = "".join(
        line.format(key=_key_field(alice), other=sshkeys.ed25519(PUB).line()) + "\n" for line in row.lines
    )
    status = keygen_verify(
        tmp_path,
        alice_signature,
        allowed=text,
        principal=row.principal,
        tz=row.tz,
        verify_time=row.verify_time,
    )
    verdict = sshsig.verify(MESSAGE, alice_signature)
    assert isinstance(verdict, Verified)
    now = _verify_time(row.verify_time) if row.verify_time else datetime.now(UTC)
    entries = allowed_signers.parse(text, local_zone=row.zone)
    decision = authorizing.authorize(
        entries, public_key=verdict.public_key, principal=row.principal, namespace="slop", now=now
    )
    assert (status == 0) is row.allowed, "ssh-keygen's verdict"
    assert isinstance(decision, Authorized) is row.allowed, decision


REFUSED_LINES = {
    "unknown option": "alice@example.com frobnicate {key}",
    "unquoted value": "alice@example.com namespaces=slop {key}",
    "trailing comma in options": 'alice@example.com namespaces="slop", {key}',
    "valid-before not after valid-after": (
        'alice@example.com valid-after="20200101Z",valid-before="20200101Z" {key}'
    ),
    "garbage": "alice@example.com garbage",
    "bad base64": "alice@example.com ssh-ed25519 AAAA*AAA",
}


@pytest.mark.parametrize("line", REFUSED_LINES.values(), ids=REFUSED_LINES.keys())
def test_lines_slopd_refuses_grant_nothing_in_ssh_keygen(
    alice: Alice, alice_signature: bytes, line: str, tmp_path: Path
) -> None:
    """A line `parse` refuses (slopd will not start) is one ssh-keygen skips too: refusing loses nothing."""
    text = line.format(key=_key_field(alice)) + "\n"
    with pytest.raises(AllowedSignersError) as caught:
        allowed_signers.parse(text, local_zone=UTC)
    assert caught.value.line == 1
    assert keygen_verify(tmp_path, alice_signature, allowed=text) == 255


def test_a_cert_authority_line_slopd_skips_grants_nothing_in_ssh_keygen(
    alice: Alice, alice_signature: bytes, tmp_path: Path
) -> None:
    """A cert-authority line is skipped with a warning; for a plain key's signature ssh-keygen
    grants nothing by it either, so skipping it loses nothing."""
    text = f"alice@example.com cert-authority {_key_field(alice)}\n"
    signers = allowed_signers.read(text, local_zone=UTC)
    assert (signers.entries, [skipped.line for skipped in signers.skipped]) == ((), [1])
    assert keygen_verify(tmp_path, alice_signature, allowed=text) == 255


# --- malformed signatures: whatever ssh-keygen rejects, slopd rejects ---

# Cases ssh-keygen 9.2 accepts and slopd deliberately rejects (stricter; research §1.1, Appendix A).
STRICTER_THAN_SSH_KEYGEN = {
    "version 0",
    "text after footer",
    "10 MB after the footer",
    "space in base64",
    "blank line in body",
}


# ssh-keygen takes seconds to read a 10 MB signature, so those two cases run with the slow suite.
PARITY_CASES = [
    pytest.param(case, id=case.name, marks=[pytest.mark.slow] if len(case.armored) > 1_000_000 else [])
    for case in CORPUS
]


@pytest.mark.parametrize("case", PARITY_CASES)
def test_crafted_corpus_parity_with_ssh_keygen(case: Case, tmp_path: Path) -> None:
    """Each crafted signature ssh-keygen rejects (exit 255) is rejected by `sshsig.verify` too."""
    allowed = f"tester {sshkeys.ed25519(PUB).line()}\n"
    status = keygen_verify(tmp_path, case.armored, allowed=allowed, principal="tester", message=case.message)
    verdict = sshsig.verify(case.message, case.armored)
    if status == 255:
        assert isinstance(verdict, Rejected)
    else:
        assert case.name in STRICTER_THAN_SSH_KEYGEN, f"ssh-keygen accepts {case.name!r}"
        assert isinstance(verdict, Rejected)
