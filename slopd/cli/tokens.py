"""`slopd token add|revoke --tokens F SEAT`: the seats' bearer tokens for HTTP and MCP (SPEC §12).

The new token goes to stdout, once (`slopd token add … > seat.token`); the file keeps only its
hash, is written atomically and is left readable by its owner only (0600).
"""

from __future__ import annotations

import argparse
import os
import stat
import sys
from pathlib import Path

from slopd.core.errors import UsageError
from slopd.shell import fs, reads
from slopd.transport import tokens

MAX_BYTES = 1 << 20


def _read(path: Path) -> str:
    if not path.exists():
        return ""
    contents = reads.read_once(path, MAX_BYTES)
    if isinstance(contents, reads.Unreadable):
        raise UsageError(f"{path}: the file {contents.reason}")
    try:
        text = contents.data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise UsageError(f"{path}: not UTF-8 ({error.reason} at byte {error.start})") from None
    problems = tokens.parse(text).problems
    if problems:
        raise UsageError(f"{path}: fix these lines first: " + "; ".join(problems))
    return text


def _write(path: Path, text: str) -> None:
    loose = path.exists() and stat.S_IMODE(path.stat().st_mode) & 0o077
    fs.write_file(path, text.encode("utf-8"), mode=0o600, replace=True)
    if loose:
        print(f"slopd token: {path} was readable by others; it is 0600 now", file=sys.stderr)


def add(args: argparse.Namespace) -> int:
    path = Path(args.tokens)
    text = _read(path)
    token = tokens.new_token(os.urandom(32))
    try:
        updated = tokens.add(text, args.seat, token)
    except ValueError as error:
        raise UsageError(str(error)) from None
    _write(path, updated)
    print(token, flush=True)
    print(
        f"slopd token: a token for {args.seat} is in {path} (as its SHA-256 only: keep this copy)",
        file=sys.stderr,
    )
    return 0


def revoke(args: argparse.Namespace) -> int:
    path = Path(args.tokens)
    if not path.exists():
        print(f"slopd token: {path} does not exist: no token to revoke", file=sys.stderr)
        return 1
    updated, removed = tokens.revoke(_read(path), args.seat)
    if not removed:
        print(f"slopd token: {path} holds no token for {args.seat}", file=sys.stderr)
        return 1
    _write(path, updated)
    print(f"slopd token: revoked {removed} token(s) of {args.seat} in {path}", file=sys.stderr)
    return 0
