"""Receipts and the reply feed's cursor (SPEC §12): the decisions, as tables. Pure.

Rules:
1. An envelope's id is its idempotency key; what a resend means (a replay, or a conflict) is
   `core.admission`'s, for every surface; a receipt still `writing` is the HTTP intake's 409.
2. The public state of an accepted envelope comes from its ledger row: none yet or
   `received`/`queued` → `received`; `executing`/`finished` → `executing`; `done` → `done`; a
   row holding other bytes, while the receipt's bytes were seen as a duplicate → `duplicate`.
3. A cursor is a reply `seq`. `after` past the ledger's last seq is `AHEAD` (a cursor from
   another ledger, or a typo); below the oldest seq still kept, minus one, is `EXPIRED`.
   Replies are never pruned today, so a cursor expires only if a ledger is cut back by hand.
4. A reply is terminal for its envelope when it is one of the envelope type's terminal kinds
   (`submit.terminal_kinds`), or any `error`.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass

WRITING, WRITTEN = "writing", "written"


class Cursor(enum.Enum):
    OK = "ok"
    AHEAD = "ahead"
    EXPIRED = "expired"


@dataclass(frozen=True, slots=True)
class Receipt:
    """A POSTed envelope's receipt as stored (the `receipts` table)."""

    seq: int
    key: str
    id: str
    seat: str
    type: str
    file: str
    sha256: str
    received_at: str
    state: str  # WRITING or WRITTEN

    def public(self, **extra: object) -> dict[str, object]:
        body: dict[str, object] = {
            "id": self.id,
            "seat": self.seat,
            "received_at": self.received_at,
            "sha256": self.sha256,
            "seq": self.seq,
            "status": "accepted",
        }
        body.update(extra)
        return body


def public_state(status: str | None, *, same_bytes: bool = True, seen_as_duplicate: bool = False) -> str:
    """Rule 2: `status` is the ledger row's (None: no row yet)."""
    if status is not None and not same_bytes and seen_as_duplicate:
        return "duplicate"
    if status in (None, "received", "queued"):
        return "received"
    if status in ("executing", "finished"):
        return "executing"
    return "done"


def check_cursor(after: int, *, oldest: int, tail: int) -> Cursor:
    """Rule 3: `oldest` and `tail` are the first and last seq kept (0 and 0 for none)."""
    if after > tail:
        return Cursor.AHEAD
    if oldest > 0 and after < oldest - 1:
        return Cursor.EXPIRED
    return Cursor.OK


def is_terminal(reply_types: Iterable[str], kinds: tuple[str, ...]) -> bool:
    """Rule 4."""
    return any(kind == "error" or kind in kinds for kind in reply_types)
