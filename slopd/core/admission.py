"""Admission (SPEC §14): what an envelope means at intake — one decision for every surface. Pure.

A file in a lane, a `POST /v1/envelopes` and an MCP `slop_send` all pass through `examine`
and then `judge`; the surfaces differ only in how they answer (an `error` reply and the archive
for a file, 422 over HTTP, a tool error over MCP), never in what they decide or the reasons.

Rules, in order — the first that applies decides:
1. Bytes that are not a valid envelope are `Refused` (`INVALID`) with every reason the parser
   gives (SPEC §3).
2. A seat speaks only for itself: over HTTP and MCP an envelope whose `from` is not the seat is
   `Refused` (`WRONG_SEAT`). A file has no seat: anyone may drop anything (SPEC §1).
3. An id already known (the ledger's row, or an HTTP receipt) with the same bytes is a `Replay`:
   a retry, for which nothing new happens (SPEC §4's duplicate, a replayed signed order too).
4. An id already known with other bytes is `Refused` (`CONFLICT`), naming the id and the sha256
   of the refused bytes (never the first's: it may be another seat's). Ids compare
   case-insensitively.
5. `action:` outside `authorized/` is `Refused` (`ACTION`): actions run only from signed orders.
6. Anything else is `New`.
Rules 1-2 need only the bytes (`examine`); 3-6 the id's record too (`judge`), which the caller
looks up between the two. A refusal never claims the id: the sender may send it again corrected.
7. Bytes are examined once per process: a surface in the daemon's process hands its `Examined`
   to the daemon just before it writes the file (`Admit`); the daemon takes it for the file it
   reads when the sha256 is the same, and parses nothing again.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

from slopd.core.envelope import Envelope, EnvelopeError
from slopd.core.validation import parse

ACTION_OUTSIDE = "action is only read from authorized/ (signed orders)"


class Refusal(StrEnum):
    INVALID = "invalid"  # rule 1
    WRONG_SEAT = "wrong-seat"  # rule 2
    CONFLICT = "conflict"  # rule 4
    ACTION = "action"  # rule 5


@dataclass(frozen=True, slots=True)
class Examined:
    """Bytes that passed rules 1-2: the envelope they parse to, their sha256, and their lane."""

    envelope: Envelope
    sha256: str
    lane: str


@dataclass(frozen=True, slots=True)
class Refused:
    """Refused at intake; `id` and `sender` are the envelope's when they could be read."""

    refusal: Refusal
    reasons: tuple[str, ...]
    sha256: str
    id: str | None = None
    sender: str | None = None


@dataclass(frozen=True, slots=True)
class New:
    examined: Examined


@dataclass(frozen=True, slots=True)
class Replay:
    examined: Examined


Judgement = New | Replay | Refused


Admit = Callable[[str, str, Examined], None]  # rule 7: (lane, name, what its bytes were admitted as)


def unheard(lane: str, name: str, examined: Examined) -> None:
    """An `Admit` for when no daemon runs in this process: nobody to tell."""


def examine(
    data: bytes, *, name: str, lane: str, max_bytes: int, seat: str | None = None
) -> Examined | Refused:
    """Rules 1-2 for `data`, read as the file `name` (its suffix picks Markdown or JSON) in `lane`."""
    sha = hashlib.sha256(data).hexdigest()
    try:
        envelope = parse(data, name=name, max_bytes=max_bytes)
    except EnvelopeError as error:
        return Refused(Refusal.INVALID, tuple(error.reasons), sha, error.id, error.sender)
    if seat is not None and envelope.sender != seat:
        reason = f"the envelope is from {envelope.sender!r}; this seat is {seat!r}"
        return Refused(Refusal.WRONG_SEAT, (reason,), sha, envelope.id, envelope.sender)
    return Examined(envelope, sha, lane)


def judge(examined: Examined, known_sha256: str | None) -> Judgement:
    """Rules 3-6: `known_sha256` is the sha256 recorded for the envelope's id (None: unknown)."""
    envelope, sha = examined.envelope, examined.sha256
    if known_sha256 == sha:
        return Replay(examined)
    if known_sha256 is not None:
        return Refused(Refusal.CONFLICT, (conflict(envelope.id, sha),), sha, envelope.id, envelope.sender)
    if envelope.action is not None and examined.lane != "authorized":
        return Refused(Refusal.ACTION, (ACTION_OUTSIDE,), sha, envelope.id, envelope.sender)
    return New(examined)


def conflict(id: str, sha256: str) -> str:
    """Rule 4's reason."""
    return f"conflict: id {id} was already used with other content (this content's sha256 {sha256})"
