"""`slopd console enroll`: a passkey for the console, added to allowed_signers by the human (SPEC §15).

Rules:
1. The code is made in the daemon's state dir (`transport.console.enrolments`), printed once with
   the enrolment page's address, and valid for 10 minutes.
2. The command waits (polling the code's record every half second) until the console records the
   new passkey's line, prints the line, and appends it to the configured allowed_signers only on
   `y` at the terminal (or `--yes`); anything else leaves the file untouched. The console itself
   never writes allowed_signers.
3. Exit 0 when the line was appended, 1 when it was not (declined, or the code expired).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from slopd import app
from slopd.core.errors import UsageError
from slopd.core.validation import PARTY_PATTERN
from slopd.ops import running
from slopd.shell.lanes import require_hub
from slopd.transport.console import enrolments

POLL = 0.5


def enroll(args: argparse.Namespace) -> int:
    if not PARTY_PATTERN.fullmatch(args.principal):
        raise UsageError(
            f"principal {args.principal!r}: must be a valid `from` (1-128 of A-Z a-z 0-9 . _ : @ -)"
        )
    root = require_hub(args.hub).absolute()
    config = app.load_config(root, Path(args.config) if args.config else None)
    allowed = config.auth.allowed_signers
    if allowed is None:
        raise UsageError(
            "no allowed_signers is configured ([auth] allowed_signers): the line would go nowhere"
        )
    located = running.locate(root, args.state)  # the console reads codes where its daemon keeps state
    if not located.found:
        raise UsageError(
            f"{running.NOT_FOUND}: start `slopd run --http` on this hub first (the code is kept in its "
            "state dir, found through the hub), or give that dir with --state"
        )
    state = located.state.absolute()
    code = enrolments.new_code(state, args.principal)
    where = config.console.public_url or (
        f"http://{_loopback(config.http.listen)}" if config.http.listen else "the console"
    )
    print(f"enrolment code for {args.principal}: {code}  (valid 10 minutes)")
    print(f"open {where.rstrip('/')}/enroll, type the code and create a passkey; waiting…", flush=True)
    line = _wait_for_line(state, code)
    if line is None:
        print("the code expired before a passkey was created; nothing was changed")
        return 1
    print(f"\nthe passkey's allowed_signers line:\n{line}\n")
    if not args.yes:
        print(f"append it to {allowed}? [y/N] ", end="", flush=True)
        answer = sys.stdin.readline().strip().lower()
        if answer not in ("y", "yes"):
            enrolments.forget(state, code)
            print("not appended; allowed_signers is unchanged")
            return 1
    _append(allowed, line)
    enrolments.forget(state, code)
    print(f"appended to {allowed}: sign in at {where.rstrip('/')}/signin")
    return 0


def _loopback(listen: str) -> str:
    host, _, port = listen.rpartition(":")
    return f"localhost:{port}" if host.strip("[]") in ("127.0.0.1", "::1", "localhost") else listen


def _wait_for_line(state: Path, code: str) -> str | None:
    """Rule 2: the recorded line, or None once the code expired."""
    while True:
        found = enrolments.read(state, code)
        if found is None:
            return None
        if found.line is not None:
            return found.line
        if found.expires < time.time():
            enrolments.forget(state, code)
            return None
        time.sleep(POLL)  # the console's record is the only signal; a file, written by another process


def _append(path: Path, line: str) -> None:
    """One line at the end, after a newline if the file does not end with one."""
    with path.open("ab") as file:
        if file.tell() and not _ends_with_newline(path):
            file.write(b"\n")
        file.write(line.encode() + b"\n")


def _ends_with_newline(path: Path) -> bool:
    with path.open("rb") as file:
        file.seek(-1, 2)
        return file.read(1) == b"\n"
