"""One-time enrolment codes and the passkeys enrolled with them, in the state dir (SPEC §15).

Rules:
1. `slopd console enroll --principal P` makes a code (`XXXX-XXXX`, 40 random bits) valid for
   `CODE_TTL`; only its SHA-256 is stored, in `STATE/console/enrolments/HASH.json` (0600), with
   the principal and the expiry. The state dir is trusted: agents cannot write it.
2. A code is used once: the console records the new passkey's allowed_signers line in it, and a
   second ceremony with that code is refused. An expired, used or unknown code gets the same
   answer ("no such code, or expired"), so the page is no oracle.
3. The console never writes allowed_signers: the command shows the recorded line and appends it
   only when the human answers yes at the terminal (`slopd.cli.console`).
4. `STATE/console/credentials.json` maps credential ids to the key lines they were enrolled
   with: a hint for `allowCredentials` (security keys that keep no resident credential), never
   a trust root — a passkey signs in only while its key is in allowed_signers.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import secrets
import time
from dataclasses import dataclass
from pathlib import Path

from slopd.shell import fs

CODE_TTL = 600.0
_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I/L
_FOLDER = "console"


@dataclass(frozen=True, slots=True)
class Enrolment:
    principal: str
    expires: float
    line: str | None = None  # the allowed_signers line, once a passkey was created


def _folder(state: Path, *parts: str) -> Path:
    path = state.joinpath(_FOLDER, *parts)
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    return path


def _digest(code: str) -> str:
    return hashlib.sha256(code.strip().upper().replace("-", "").encode()).hexdigest()


def new_code(state: Path, principal: str, now: float | None = None) -> str:
    """Rule 1: a fresh code for `principal`."""
    raw = "".join(secrets.choice(_ALPHABET) for _ in range(8))
    record = {"principal": principal, "expires": (now or time.time()) + CODE_TTL, "line": None}
    path = _folder(state, "enrolments") / f"{_digest(raw)}.json"
    fs.write_file(path, json.dumps(record).encode(), mode=0o600)
    return f"{raw[:4]}-{raw[4:]}"


def _path(state: Path, code: str) -> Path:
    return _folder(state, "enrolments") / f"{_digest(code)}.json"


def read(state: Path, code: str) -> Enrolment | None:
    """The enrolment of `code`, whatever its state, or None."""
    try:
        record = json.loads(_path(state, code).read_text(encoding="utf-8"))
        return Enrolment(str(record["principal"]), float(record["expires"]), record.get("line"))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def usable(state: Path, code: str, now: float | None = None) -> Enrolment | None:
    """Rule 2: the enrolment `code` opens now, or None."""
    found = read(state, code)
    if found is None or found.line is not None or found.expires < (now or time.time()):
        return None
    return found


def complete(state: Path, code: str, line: str, credential_id: bytes) -> None:
    """Rules 2 and 4: record the passkey's line against the code, and its credential id."""
    found = read(state, code)
    assert found is not None
    record = {"principal": found.principal, "expires": found.expires, "line": line}
    fs.write_file(_path(state, code), json.dumps(record).encode(), mode=0o600, replace=True)
    hints = credentials(state)
    hints[credential_id.hex()] = line
    fs.write_file(_folder(state) / "credentials.json", json.dumps(hints).encode(), mode=0o600, replace=True)


def credentials(state: Path) -> dict[str, str]:
    """Rule 4: credential id (hex) → the line it was enrolled with."""
    try:
        found = json.loads((_folder(state) / "credentials.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(key): str(value) for key, value in found.items()} if isinstance(found, dict) else {}


def forget(state: Path, code: str) -> None:
    """The code's record, once the command is done with it."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(_path(state, code))
