"""Seat tokens for the HTTP and MCP transports (SPEC §12): who a bearer token speaks for. Pure.

Rules:
1. The tokens file holds one line per token, `SEAT sha256:HEX` (the SHA-256 of the token's
   UTF-8), plus blank lines and `#` comments; a token itself is never stored.
2. `parse` reads every line and reports every bad one (a seat that is not a valid `from`, a
   hash that is not 64 lower-case hex digits, a hash listed twice) with its line number.
3. `seat_of` hashes the presented token once and compares it with every entry in constant
   time (`hmac.compare_digest`), scanning them all whatever matches: how long it takes says
   nothing about which entry, or how much of one, matched.
4. `add` and `revoke` give the new text: other lines, comments and line order are kept;
   `revoke` removes every token of the seat.
5. A new token is `slopd_` and 43 characters of URL-safe base64 (256 random bits): the prefix
   lets secret scanners find one that leaked.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
from dataclasses import dataclass

from slopd.core.validation import PARTY_PATTERN

PREFIX = "slopd_"
_HASH = re.compile(r"sha256:([0-9a-f]{64})")


@dataclass(frozen=True, slots=True)
class Entry:
    seat: str
    digest: bytes  # 32 bytes
    line: int


@dataclass(frozen=True, slots=True)
class Tokens:
    entries: tuple[Entry, ...]
    problems: tuple[str, ...]  # "line N: reason", one per bad line

    def seat_of(self, presented: str) -> str | None:
        """Rule 3."""
        digest = hashlib.sha256(presented.encode("utf-8", "surrogateescape")).digest()
        found = None
        for entry in self.entries:
            if hmac.compare_digest(entry.digest, digest):
                found = entry.seat
        return found

    def seats(self) -> list[str]:
        return sorted({entry.seat for entry in self.entries})


def digest_line(seat: str, token: str) -> str:
    return f"{seat} sha256:{hashlib.sha256(token.encode()).hexdigest()}"


def new_token(random: bytes) -> str:
    """Rule 5, from 32 random bytes (`os.urandom(32)` in the shell)."""
    if len(random) != 32:
        raise ValueError("a token needs 32 random bytes")
    return PREFIX + base64.urlsafe_b64encode(random).decode().rstrip("=")


def parse(text: str) -> Tokens:
    entries: list[Entry] = []
    problems: list[str] = []
    seen: dict[bytes, int] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        fields = line.split()
        if len(fields) != 2:
            problems.append(f"line {number}: expected `SEAT sha256:HEX`, got {len(fields)} fields")
            continue
        seat, written = fields
        reasons = []
        if PARTY_PATTERN.fullmatch(seat) is None:
            reasons.append(f"{seat!r} is not a seat (1-128 of A-Z a-z 0-9 . _ : @ -)")
        matched = _HASH.fullmatch(written)
        if matched is None:
            reasons.append("the hash is not `sha256:` and 64 lower-case hex digits (was a token pasted?)")
        if reasons:
            problems.append(f"line {number}: " + "; ".join(reasons))
            continue
        assert matched is not None
        digest = bytes.fromhex(matched.group(1))
        if digest in seen:
            problems.append(f"line {number}: the same token as line {seen[digest]}")
            continue
        seen[digest] = number
        entries.append(Entry(seat, digest, number))
    return Tokens(tuple(entries), tuple(problems))


def add(text: str, seat: str, token: str) -> str:
    """Rule 4: `text` with a line for `token` appended."""
    if PARTY_PATTERN.fullmatch(seat) is None:
        raise ValueError(f"{seat!r} is not a seat (1-128 of A-Z a-z 0-9 . _ : @ -)")
    newline = "\r\n" if "\r\n" in text else "\n"
    if text and not text.endswith("\n"):
        text += newline
    return text + digest_line(seat, token) + newline


def revoke(text: str, seat: str) -> tuple[str, int]:
    """Rule 4: `text` without the seat's tokens, and how many there were."""
    kept, removed = [], 0
    for raw in text.splitlines(keepends=True):
        fields = raw.split()
        if len(fields) == 2 and fields[0] == seat and not raw.lstrip().startswith("#"):
            removed += 1
            continue
        kept.append(raw)
    return "".join(kept), removed
