"""`slopd keygen`, `slopd sign` and `slopd verify`, black-box, against the real `ssh-keygen` (SPEC §6, §8).

Every key and signature is real: made by `ssh-keygen -t ed25519` / `ssh-keygen -Y sign`, or by
slopd, and checked by the other side.
"""

from __future__ import annotations

import os
import stat
import subprocess
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.conftest import SLOPD

SSH_KEYGEN = "/usr/bin/ssh-keygen"
ALICE = "alice@example.com"


def run(*args: str, cwd: Path | None = None, stdin: bytes = b"") -> subprocess.CompletedProcess[str]:
    """Run a command (slopd or ssh-keygen) with TZ=UTC; never raises on a non-zero exit."""
    return subprocess.run(
        list(args),
        input=stdin.decode(),
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, "TZ": "UTC", "PYTHONDONTWRITEBYTECODE": "1"},
        timeout=60,
        check=False,
    )


def slopd(*args: str) -> subprocess.CompletedProcess[str]:
    return run(*SLOPD, *args)


def ssh_keygen_key(path: Path, comment: str = ALICE) -> Path:
    result = run(SSH_KEYGEN, "-t", "ed25519", "-N", "", "-C", comment, "-f", str(path), "-q")
    assert result.returncode == 0, result.stderr
    return path


def ssh_sign(key: Path, file: Path, namespace: str = "slop", *options: str) -> bytes:
    result = run(SSH_KEYGEN, "-Y", "sign", "-f", str(key), "-n", namespace, *options, str(file))
    assert result.returncode == 0, result.stderr
    return Path(f"{file}.sig").read_bytes()


def ssh_verify(allowed: Path, signature: Path, message: bytes, principal: str = ALICE) -> int:
    """The exit status of `ssh-keygen -Y verify -n slop` for `message` read from stdin."""
    result = run(
        SSH_KEYGEN, "-Y", "verify", "-f", str(allowed), "-I", principal, "-n", "slop", "-s", str(signature),
        stdin=message,
    )  # fmt: skip
    return result.returncode


def key_fields(line: str) -> str:
    """`ssh-ed25519 AAAA…` of a public key line (the comment dropped)."""
    keytype, blob = line.split()[:2]
    return f"{keytype} {blob}"


def now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def order_text(body: str = "Deploy build 42.\n", **fields: str) -> str:
    headers = {
        "protocol": "slop.v1",
        "id": "20260704t080000z-deploy",
        "type": "instigate",
        "from": ALICE,
        "to": "watcher",
        "in_reply_to": "null",
        "created_at": now(),
        "auth": "signed:o1.md.sig",
        "action": "deploy",
    } | fields
    return "---\n" + "".join(f"{key}: {value}\n" for key, value in headers.items()) + "---\n" + body


def temps(directory: Path) -> list[str]:
    return sorted(path.name for path in directory.iterdir() if path.name.startswith("."))


@dataclass(frozen=True)
class Alice:
    key: Path
    pub: str
    allowed: Path  # `alice@example.com ssh-ed25519 …`, no options


@pytest.fixture(scope="module")
def alice(tmp_path_factory: pytest.TempPathFactory) -> Alice:
    """Alice's key made by ssh-keygen, and an allowed_signers file trusting it for any namespace."""
    directory = tmp_path_factory.mktemp("alice")
    key = ssh_keygen_key(directory / "alice_key")
    pub = (directory / "alice_key.pub").read_text().strip()
    allowed = directory / "allowed_signers"
    allowed.write_text(f"{ALICE} {key_fields(pub)}\n")
    return Alice(key, pub, allowed)


# --- slopd keygen ---


def test_keygen_writes_a_private_key_0600_and_a_matching_pub(tmp_path: Path) -> None:
    """keygen writes PATH (mode 0600) and PATH.pub; ssh-keygen derives the same public key from PATH."""
    path = tmp_path / "id_slop"
    result = slopd("keygen", str(path), "--principal", ALICE)
    assert result.returncode == 0, result.stderr
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    pub = Path(f"{path}.pub").read_text()
    assert pub.startswith("ssh-ed25519 AAAA")
    assert pub.endswith("\n")
    derived = run(SSH_KEYGEN, "-y", "-f", str(path))
    assert derived.returncode == 0, derived.stderr
    assert key_fields(derived.stdout) == key_fields(pub)
    assert temps(tmp_path) == []


def test_keygen_prints_an_allowed_signers_line_ssh_keygen_accepts(tmp_path: Path) -> None:
    """keygen's stdout, as an allowed_signers file, lets `ssh-keygen -Y verify` accept its key's signature."""
    path = tmp_path / "id_slop"
    result = slopd("keygen", str(path), "--principal", ALICE)
    assert result.returncode == 0, result.stderr
    line = result.stdout.strip()
    assert line.count("\n") == 0
    assert line.startswith(f"{ALICE} ")
    assert key_fields(Path(f"{path}.pub").read_text()) in line
    allowed = tmp_path / "allowed_signers"
    allowed.write_text(result.stdout)
    message = tmp_path / "o1.md"
    message.write_text(order_text())
    ssh_sign(path, message)
    assert ssh_verify(allowed, Path(f"{message}.sig"), message.read_bytes()) == 0
    assert ssh_verify(allowed, Path(f"{message}.sig"), message.read_bytes(), "mallory@example.com") != 0


def test_keygen_refuses_to_overwrite_an_existing_key(tmp_path: Path) -> None:
    """keygen onto an existing PATH exits 2 naming it and changes nothing."""
    path = tmp_path / "id_slop"
    path.write_text("precious key material\n")
    result = slopd("keygen", str(path), "--principal", ALICE)
    assert result.returncode == 2
    assert str(path) in result.stderr
    assert path.read_text() == "precious key material\n"
    assert not Path(f"{path}.pub").exists()
    assert result.stdout == ""
    assert temps(tmp_path) == []


def test_keygen_refusing_because_the_pub_exists_leaves_no_unmatched_private_key(tmp_path: Path) -> None:
    """keygen where only PATH.pub exists exits 2 and leaves no PATH whose key differs from PATH.pub."""
    path = tmp_path / "id_slop"
    other = ssh_keygen_key(tmp_path / "other")
    pub = Path(f"{path}.pub")
    pub.write_text(Path(f"{other}.pub").read_text())
    before = pub.read_bytes()
    result = slopd("keygen", str(path), "--principal", ALICE)
    assert result.returncode == 2
    assert str(pub) in result.stderr
    assert pub.read_bytes() == before
    if path.exists():  # a private key left behind must at least be the one PATH.pub describes
        derived = run(SSH_KEYGEN, "-y", "-f", str(path))
        assert key_fields(derived.stdout) == key_fields(before.decode()), "PATH and PATH.pub differ"


@pytest.mark.parametrize("principal", ["alice example", 'a"b'])
def test_keygen_never_prints_a_line_slopd_itself_refuses(tmp_path: Path, principal: str) -> None:
    """A principal that cannot be one allowed_signers field: refused (exit 2), or printed usably."""
    path = tmp_path / "id_slop"
    result = slopd("keygen", str(path), "--principal", principal)
    if result.returncode == 2:
        assert not path.exists()
        return
    assert result.returncode == 0, result.stderr
    allowed = tmp_path / "allowed_signers"
    allowed.write_text(result.stdout)
    message = tmp_path / "o1.md"
    message.write_text(order_text())
    assert slopd("sign", "--key", str(path), str(message)).returncode == 0
    checked = verify(allowed, message)
    assert "allowed_signers line" not in checked.stderr, checked.stderr
    assert checked.returncode in (0, 1), checked.stderr


# --- slopd sign ---


def test_sign_writes_a_signature_ssh_keygen_verifies(tmp_path: Path, alice: Alice) -> None:
    """`slopd sign --key K FILE` (a key made by ssh-keygen) writes FILE.sig that ssh-keygen verifies."""
    message = tmp_path / "o1.md"
    message.write_text(order_text())
    result = slopd("sign", "--key", str(alice.key), str(message))
    assert result.returncode == 0, result.stderr
    signature = Path(f"{message}.sig")
    assert str(signature) in result.stdout
    assert signature.read_bytes().startswith(b"-----BEGIN SSH SIGNATURE-----\n")
    assert ssh_verify(alice.allowed, signature, message.read_bytes()) == 0
    assert ssh_verify(alice.allowed, signature, message.read_bytes() + b"x") != 0
    assert sorted(path.name for path in tmp_path.iterdir()) == ["o1.md", "o1.md.sig"]


def test_sign_is_byte_identical_to_ssh_keygen(tmp_path: Path, alice: Alice) -> None:
    """Ed25519 is deterministic: slopd's signature equals ssh-keygen's for the same key and file."""
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    for directory in (ours, theirs):
        directory.mkdir()
        (directory / "o1.md").write_text(order_text(created_at="2026-07-04T08:00:00Z"))
    assert slopd("sign", "--key", str(alice.key), str(ours / "o1.md")).returncode == 0
    assert (ours / "o1.md.sig").read_bytes() == ssh_sign(alice.key, theirs / "o1.md")


def test_sign_with_a_slopd_key_verifies_in_ssh_keygen(tmp_path: Path) -> None:
    """A key from `slopd keygen` signs with `slopd sign`; ssh-keygen verifies with keygen's line."""
    key = tmp_path / "id_slop"
    made = slopd("keygen", str(key), "--principal", ALICE)
    assert made.returncode == 0, made.stderr
    allowed = tmp_path / "allowed_signers"
    allowed.write_text(made.stdout)
    message = tmp_path / "o1.md"
    message.write_text(order_text())
    assert slopd("sign", "--key", str(key), str(message)).returncode == 0
    assert ssh_verify(allowed, Path(f"{message}.sig"), message.read_bytes()) == 0


def test_sign_refuses_to_replace_an_existing_signature(tmp_path: Path, alice: Alice) -> None:
    """An existing FILE.sig: exit 2 naming it, the old signature byte-identical, no temp left."""
    message = tmp_path / "o1.md"
    message.write_text(order_text())
    signature = Path(f"{message}.sig")
    signature.write_bytes(b"old signature\n")
    result = slopd("sign", "--key", str(alice.key), str(message))
    assert result.returncode == 2
    assert str(signature) in result.stderr
    assert "--force" in result.stderr
    assert signature.read_bytes() == b"old signature\n"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["o1.md", "o1.md.sig"]


def test_sign_force_replaces_a_stale_signature(tmp_path: Path, alice: Alice) -> None:
    """`--force` replaces a stale FILE.sig with one ssh-keygen verifies; no temp left."""
    message = tmp_path / "o1.md"
    message.write_text(order_text())
    ssh_sign(alice.key, message)
    message.write_text(order_text("Deploy build 43 instead.\n"))  # the old .sig is now stale
    signature = Path(f"{message}.sig")
    assert ssh_verify(alice.allowed, signature, message.read_bytes()) != 0
    result = slopd("sign", "--force", "--key", str(alice.key), str(message))
    assert result.returncode == 0, result.stderr
    assert ssh_verify(alice.allowed, signature, message.read_bytes()) == 0
    assert sorted(path.name for path in tmp_path.iterdir()) == ["o1.md", "o1.md.sig"]


@pytest.mark.parametrize(
    "content",
    [
        pytest.param(b"this is not a key\n", id="text"),
        pytest.param(b"", id="empty"),
        pytest.param(
            b"-----BEGIN OPENSSH PRIVATE KEY-----\n!!!!\n-----END OPENSSH PRIVATE KEY-----\n", id="armor"
        ),
    ],
)
def test_sign_with_a_garbage_key_exits_2_naming_it(tmp_path: Path, content: bytes) -> None:
    """A key file that is not an OpenSSH Ed25519 key: exit 2 naming the key file, no .sig, no temp."""
    key = tmp_path / "garbage_key"
    key.write_bytes(content)
    message = tmp_path / "o1.md"
    message.write_text(order_text())
    result = slopd("sign", "--key", str(key), str(message))
    assert result.returncode == 2
    assert str(key) in result.stderr
    assert sorted(path.name for path in tmp_path.iterdir()) == ["garbage_key", "o1.md"]


def test_sign_refuses_a_passphrase_protected_key(tmp_path: Path) -> None:
    """An encrypted ssh-keygen key: exit 2 saying it is encrypted; no .sig."""
    key = tmp_path / "locked"
    made = run(SSH_KEYGEN, "-t", "ed25519", "-N", "secret words", "-C", ALICE, "-f", str(key), "-q")
    assert made.returncode == 0, made.stderr
    message = tmp_path / "o1.md"
    message.write_text(order_text())
    result = slopd("sign", "--key", str(key), str(message))
    assert result.returncode == 2
    assert "encrypted" in result.stderr
    assert not Path(f"{message}.sig").exists()


def test_sign_of_a_missing_file_exits_2_naming_it(tmp_path: Path, alice: Alice) -> None:
    """Signing a file that does not exist: exit 2 naming it; nothing written."""
    message = tmp_path / "absent.md"
    result = slopd("sign", "--key", str(alice.key), str(message))
    assert result.returncode == 2
    assert str(message) in result.stderr
    assert list(tmp_path.iterdir()) == []


# --- slopd verify ---


def verify(allowed: Path, file: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return slopd("verify", "--allowed-signers", str(allowed), *extra, str(file))


@pytest.mark.parametrize("signer", ["ssh-keygen", "ssh-keygen-sha256", "slopd"])
def test_verify_accepts_a_good_order_and_prints_the_principal(
    tmp_path: Path, alice: Alice, signer: str
) -> None:
    """A valid order signed by ssh-keygen (sha512, sha256) or slopd: exit 0, the principal on stdout."""
    message = tmp_path / "o1.md"
    message.write_text(order_text())
    if signer == "slopd":
        assert slopd("sign", "--key", str(alice.key), str(message)).returncode == 0
    elif signer == "ssh-keygen-sha256":
        ssh_sign(alice.key, message, "slop", "-O", "hashalg=sha256")
    else:
        ssh_sign(alice.key, message)
    result = verify(alice.allowed, message)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"good signature by {ALICE}" in result.stdout
    fingerprint = run(SSH_KEYGEN, "-l", "-f", f"{alice.key}.pub").stdout.split()[1]
    assert fingerprint in result.stdout


def test_verify_refuses_a_tampered_order(tmp_path: Path, alice: Alice) -> None:
    """One byte changed after signing: exit 1, "bad signature"."""
    message = tmp_path / "o1.md"
    message.write_text(order_text())
    ssh_sign(alice.key, message)
    message.write_bytes(message.read_bytes().replace(b"build 42", b"build 43"))
    result = verify(alice.allowed, message)
    assert result.returncode == 1
    assert "not verified" in result.stdout
    assert "bad signature" in result.stdout


def test_verify_refuses_a_wrong_principal(tmp_path: Path, alice: Alice) -> None:
    """Alice's signature on an order `from: mallory@example.com`: exit 1 naming the principal."""
    message = tmp_path / "o1.md"
    message.write_text(order_text(**{"from": "mallory@example.com"}))
    ssh_sign(alice.key, message)
    result = verify(alice.allowed, message)
    assert result.returncode == 1
    assert "not allowed for principal" in result.stdout
    assert "mallory@example.com" in result.stdout


def test_verify_refuses_a_wrong_namespace_unless_asked_for_it(tmp_path: Path, alice: Alice) -> None:
    """A `-n git` signature: exit 1 by default ("namespace"); `--namespace git` verifies it."""
    message = tmp_path / "o1.md"
    message.write_text(order_text())
    ssh_sign(alice.key, message, "git")
    refused = verify(alice.allowed, message)
    assert refused.returncode == 1
    assert "namespace" in refused.stdout
    accepted = verify(alice.allowed, message, "--namespace", "git")
    assert accepted.returncode == 0, accepted.stdout
    assert f"good signature by {ALICE}" in accepted.stdout


def test_verify_refuses_an_unknown_key(tmp_path: Path, alice: Alice) -> None:
    """A signature by a key not in allowed_signers: exit 1, "key not in allowed_signers"."""
    bob = ssh_keygen_key(tmp_path / "bob_key")
    message = tmp_path / "o1.md"
    message.write_text(order_text())
    ssh_sign(bob, message)
    result = verify(alice.allowed, message)
    assert result.returncode == 1
    assert "key not in allowed_signers" in result.stdout


def test_verify_refuses_a_missing_signature(tmp_path: Path, alice: Alice) -> None:
    """No sidecar: exit 1 naming the .sig the order names."""
    message = tmp_path / "o1.md"
    message.write_text(order_text())
    result = verify(alice.allowed, message)
    assert result.returncode == 1
    assert "o1.md.sig" in result.stdout
    assert "not verified" in result.stdout


def test_verify_checks_a_file_that_is_not_an_envelope_as_ssh_keygen_does(
    tmp_path: Path, alice: Alice
) -> None:
    """A signed file that is not an envelope: its signature alone is checked (exit 0, naming the
    principal); the same file changed by one byte is refused (exit 1)."""
    message = tmp_path / "notes.md"
    message.write_text("# Just some notes\n\nNo front matter here.\n")
    ssh_sign(alice.key, message)
    result = verify(alice.allowed, message)
    assert result.returncode == 0, result.stdout
    assert f"good signature by {ALICE}" in result.stdout
    message.write_text("# Just some notes\n\nNo front matter here!\n")
    result = verify(alice.allowed, message)
    assert result.returncode == 1
    assert "bad signature" in result.stdout


def test_verify_with_a_missing_allowed_signers_file_exits_2(tmp_path: Path, alice: Alice) -> None:
    """An allowed_signers path that does not exist is a usage error (exit 2) naming it."""
    message = tmp_path / "o1.md"
    message.write_text(order_text())
    ssh_sign(alice.key, message)
    missing = tmp_path / "no_such_allowed_signers"
    result = verify(missing, message)
    assert result.returncode == 2
    assert str(missing) in result.stderr
