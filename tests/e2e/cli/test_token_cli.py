"""`slopd token add|revoke` (SPEC §12), black-box: the token printed once, only its hash kept,
the file owner-only and written atomically, bad input refused with nothing changed."""

from __future__ import annotations

import hashlib
import stat
import subprocess
from pathlib import Path

import pytest

from tests.conftest import SLOPD, hub_env


def token(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*SLOPD, "token", *args],
        capture_output=True,
        text=True,
        env=hub_env(tmp_path),
        timeout=60,
        check=False,
    )


def test_add_prints_the_token_once_and_stores_only_its_hash(tmp_path: Path) -> None:
    """stdout is the token alone; the file holds `SEAT sha256:HEX` of it, mode 0600."""
    path = tmp_path / "tokens"
    added = token(tmp_path, "add", "--tokens", str(path), "claude")
    assert added.returncode == 0, added.stderr
    secret = added.stdout.strip()
    assert added.stdout == secret + "\n"
    assert secret.startswith("slopd_")
    assert "keep this copy" in added.stderr
    assert secret not in added.stderr
    text = path.read_text()
    assert text == f"claude sha256:{hashlib.sha256(secret.encode()).hexdigest()}\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    again = token(tmp_path, "add", "--tokens", str(path), "claude").stdout.strip()
    assert again != secret
    assert path.read_text().count("claude sha256:") == 2
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_revoke_removes_the_seats_tokens_and_only_those(tmp_path: Path) -> None:
    """Revoking claude leaves grok and the comments; revoking again exits 1 and changes nothing."""
    path = tmp_path / "tokens"
    path.write_text("# who may post\n")
    token(tmp_path, "add", "--tokens", str(path), "claude")
    token(tmp_path, "add", "--tokens", str(path), "grok")
    revoked = token(tmp_path, "revoke", "--tokens", str(path), "claude")
    assert revoked.returncode == 0, revoked.stderr
    lines = path.read_text().splitlines()
    assert lines[0] == "# who may post"
    assert [line.split()[0] for line in lines[1:]] == ["grok"]
    before = path.read_bytes()
    missing = token(tmp_path, "revoke", "--tokens", str(path), "claude")
    assert missing.returncode == 1
    assert "no token for claude" in missing.stderr
    assert path.read_bytes() == before


def test_a_loose_file_is_tightened_to_owner_only(tmp_path: Path) -> None:
    """A tokens file others could read is rewritten 0600, and the user is told."""
    path = tmp_path / "tokens"
    path.write_text("")
    path.chmod(0o644)
    added = token(tmp_path, "add", "--tokens", str(path), "claude")
    assert added.returncode == 0
    assert "0600 now" in added.stderr
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


@pytest.mark.parametrize(
    ("content", "seat", "said"),
    [
        (None, "not a seat", "is not a seat"),
        ("claude slopd_pasted-a-token-here\n", "grok", "line 1: the hash is not"),
        (b"\xff\xfe\n", "grok", "not UTF-8"),
    ],
)
def test_bad_input_is_refused_and_nothing_is_written(
    tmp_path: Path, content: str | bytes | None, seat: str, said: str
) -> None:
    """A bad seat, or a tokens file with a bad line, exits 2 naming it; the file is unchanged."""
    path = tmp_path / "tokens"
    if isinstance(content, str):
        path.write_text(content)
    elif isinstance(content, bytes):
        path.write_bytes(content)
    before = path.read_bytes() if path.exists() else None
    refused = token(tmp_path, "add", "--tokens", str(path), seat)
    assert refused.returncode == 2
    assert said in refused.stderr
    assert refused.stdout == ""
    assert (path.read_bytes() if path.exists() else None) == before
