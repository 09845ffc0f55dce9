"""Human sessions and ceremonies in progress, in the server's memory (SPEC §15).

Rules:
1. A session is a random id (256 bits) in a cookie, opened by a passkey sign-in, for one
   principal and the key that signed in; it ends after `[console] session_ttl` or at sign-out.
   The server keeps them in memory: a restart signs everyone out (nothing to steal on disk).
2. Each session has its own CSRF token, compared in constant time on every state change.
3. A ceremony (an enrolment, a sign-in, an approval) keeps its WebAuthn state server-side under a
   random token, for at most `CEREMONY_TTL` (an approval page's pinned bytes, `PIN_TTL`), and is
   used once: taking it removes it.
4. Time comes in as `now` (seconds); expired entries are dropped as they are met.
"""

from __future__ import annotations

import hmac
import secrets
from dataclasses import dataclass, field
from typing import Any

CEREMONY_TTL = 300.0
PIN_TTL = 3600.0
_MAX = 10_000  # sessions or ceremonies kept at once; the oldest beyond it are dropped
ANONYMOUS = ("signin", "enrol")  # ceremonies a request without a session may begin


@dataclass(frozen=True, slots=True)
class Session:
    id: str
    principal: str
    fingerprint: str  # the key that signed in
    csrf: str
    expires: float


@dataclass(frozen=True, slots=True)
class Ceremony:
    kind: str  # "enrol", "signin", "approve"
    state: Any  # the WebAuthn library's state
    expires: float
    data: dict[str, Any] = field(default_factory=dict)


class Sessions:
    def __init__(self, ttl: float) -> None:
        self.ttl = ttl
        self._sessions: dict[str, Session] = {}
        self._ceremonies: dict[str, Ceremony] = {}  # those of a signed-in human: pins, approvals
        self._anonymous: dict[str, Ceremony] = {}  # sign-ins and enrolments, begun by anyone

    def open(self, principal: str, fingerprint: str, now: float) -> Session:
        """Rule 1."""
        session = Session(
            secrets.token_urlsafe(32), principal, fingerprint, secrets.token_urlsafe(32), now + self.ttl
        )
        self._sessions[session.id] = session
        _trim(self._sessions)
        return session

    def get(self, session_id: str | None, now: float) -> Session | None:
        session = self._sessions.get(session_id or "")
        if session is not None and session.expires <= now:
            del self._sessions[session.id]
            return None
        return session

    def close(self, session_id: str) -> None:
        self._sessions.pop(session_id, None)

    @staticmethod
    def csrf_ok(session: Session, presented: str | None) -> bool:
        """Rule 2."""
        return presented is not None and hmac.compare_digest(session.csrf.encode(), presented.encode())

    def begin(self, kind: str, state: Any, now: float, ttl: float = CEREMONY_TTL, **data: Any) -> str:
        """Rule 3: a ceremony's token. Sign-ins and enrolments, which anyone may begin, are kept
        apart from a signed-in human's pins and approvals, so a flood of them never evicts those;
        each table drops its expired entries first, then its oldest beyond `_MAX`."""
        table = self._anonymous if kind in ANONYMOUS else self._ceremonies
        for stale in [token for token, ceremony in table.items() if ceremony.expires <= now]:
            del table[stale]
        token = secrets.token_urlsafe(24)
        table[token] = Ceremony(kind, state, now + ttl, data)
        _trim(table)
        return token

    def take(self, token: object, kind: str, now: float) -> Ceremony | None:
        """Rule 3: the ceremony, once; None when unknown, of another kind or expired."""
        table = self._anonymous if kind in ANONYMOUS else self._ceremonies
        ceremony = table.pop(token, None) if isinstance(token, str) else None
        if ceremony is None or ceremony.kind != kind or ceremony.expires <= now:
            return None
        return ceremony


def _trim(table: dict[str, Any]) -> None:
    while len(table) > _MAX:
        del table[next(iter(table))]
