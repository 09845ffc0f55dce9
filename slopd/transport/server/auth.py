"""Who a request speaks for: its bearer token's seat (SPEC §12).

Rules:
1. Only `Authorization: Bearer TOKEN` is read; a token is never taken from a URL, a query or
   a body, and is never logged or echoed.
2. The tokens file is read at start and again whenever its size or mtime changes; a file that
   cannot be read or has bad lines keeps the last good set and says so in the log, once.
3. A missing, malformed or unknown token gets the same 401, byte for byte: no oracle.
"""

from __future__ import annotations

import os
from pathlib import Path

from slopd.shell.log import Logger
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
        self._tokens = token_file.Tokens((), ())
        self._seen: tuple[int, int] | None = None
        self.refresh()

    def refresh(self) -> None:
        """Rule 2."""
        if self.path is None:
            return
        try:
            status = os.stat(self.path)
            seen = (status.st_size, status.st_mtime_ns)
            if seen == self._seen:
                return
            text = self.path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            if self._seen != (-1, -1):
                self.log.error("tokens.unreadable", path=str(self.path), reason=str(error))
            self._seen = (-1, -1)
            return
        self._seen = seen
        parsed = token_file.parse(text)
        if parsed.problems:
            self.log.error("tokens.invalid", path=str(self.path), reasons=list(parsed.problems))
            return
        self._tokens = parsed
        self.log.info("tokens.loaded", path=str(self.path), seats=parsed.seats())

    def seat(self, authorization: str | None) -> str:
        """Rules 1 and 3: the seat, or the 401 `Problem`."""
        self.refresh()
        scheme, _, presented = (authorization or "").partition(" ")
        seat = self._tokens.seat_of(presented.strip()) if scheme.lower() == "bearer" and presented else None
        if seat is None:
            raise unauthorized()
        return seat
