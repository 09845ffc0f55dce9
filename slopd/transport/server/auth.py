"""Who a request speaks for: its bearer token's seat (SPEC §12).

Rules:
1. Only `Authorization: Bearer TOKEN` is read; a token is never taken from a URL, a query or
   a body, and is never logged or echoed.
2. The tokens file is read at start, then looked at (one stat) on each request and re-read
   when its version (device, inode, size, mtime, ctime) changed (`shell.reloading`, SPEC §14):
   a revoked token's next request is a 401, with no signal. A file that cannot be read or has
   bad lines fails closed — no token opens anything until it is mended — and says so in the log
   (`tokens.reload_failed`), once per version; a good new version is logged as `tokens.reloaded`.
3. A missing, malformed or unknown token gets the same 401, byte for byte: no oracle.
"""

from __future__ import annotations

from pathlib import Path

from slopd.shell import reloading
from slopd.shell.log import Logger
from slopd.shell.reloading import Reloading
from slopd.transport import tokens as token_file
from slopd.transport.problems import Problem

CHALLENGE = {"WWW-Authenticate": 'Bearer realm="slopd"'}


def unauthorized() -> Problem:
    return Problem(
        "unauthorized", "send Authorization: Bearer TOKEN with a token from `slopd token add`", (), CHALLENGE
    )


class Seats:
    def __init__(self, path: Path | None, log: Logger) -> None:
        self.path, self.log = path, log
        self.watched: Reloading[token_file.Tokens] | None = None
        if path is not None:
            seen = reloading.version(path)  # before the read: an edit during it is seen next time
            first, bad = self._first(path)
            self.watched = Reloading(
                path, lambda: _load(path), first, seen, log, "tokens",
                facts=lambda tokens: {"seats": tokens.seats()}, bad=bad,
                closed=lambda _reason: token_file.Tokens((), ()),  # a broken file: no token opens
            )  # fmt: skip

    def _first(self, path: Path) -> tuple[token_file.Tokens, bool]:
        """At start: the file as it is, or an empty set, the reason in the log, and True (rule 2)."""
        try:
            found = _load(path)
        except OSError as error:
            self.log.error("tokens.unreadable", path=str(path), reason=str(error))
            return token_file.Tokens((), ()), True
        except ValueError as error:
            self.log.error("tokens.invalid", path=str(path), reason=str(error))
            return token_file.Tokens((), ()), True
        self.log.info("tokens.loaded", path=str(path), seats=found.seats())
        return found, False

    @property
    def tokens(self) -> token_file.Tokens:
        return self.watched.check() if self.watched is not None else token_file.Tokens((), ())

    def seat(self, authorization: str | None) -> str:
        """Rules 1 and 3: the seat, or the 401 `Problem`."""
        tokens = self.tokens
        scheme, _, presented = (authorization or "").partition(" ")
        seat = tokens.seat_of(presented.strip()) if scheme.lower() == "bearer" and presented else None
        if seat is None:
            raise unauthorized()
        return seat


def _load(path: Path) -> token_file.Tokens:
    """The tokens file, or a ValueError naming every bad line (an OSError if it cannot be read)."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise ValueError(f"not UTF-8: {error}") from None
    parsed = token_file.parse(text)
    if parsed.problems:
        raise ValueError("; ".join(parsed.problems))
    return parsed
