"""What the pipeline decided to do with one input: plain values, carried out by `effects`.

The pipeline (read → parse → verify → decide) returns exactly one plan per input; the plans
that touch the hub or the ledger are carried out inside a batch (`daemon.batch`), the others
only tell the intake when to look again.
"""

from __future__ import annotations

from dataclasses import dataclass

from slopd.core.admission import Refusal
from slopd.core.envelope import Envelope
from slopd.core.layout import Signature
from slopd.core.names import is_sane
from slopd.core.outcome import Outcome
from slopd.core.routing import Decision
from slopd.core.targets import Target
from slopd.shell.log import Logger


@dataclass(frozen=True, slots=True)
class Input:
    """An input file: its lane, its name, the inode that was read (None: not read now), and the
    log bound to it (lane, file, and once known, id and type)."""

    lane: str
    name: str
    inode: int | None
    log: Logger

    @property
    def where(self) -> tuple[str, str]:
        return (self.lane, self.name)

    @property
    def path(self) -> str:
        """`lane/name`, with an unsafe name (undecodable, control characters) escaped."""
        return f"{self.lane}/{self.name if is_sane(self.name) else ascii(self.name)[1:-1]}"


# -- plans that only tell the intake ---------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Nothing:
    """Gone since it was listed (renamed away or deleted): nothing to do."""


@dataclass(frozen=True, slots=True)
class Wait:
    """Look again at `until` (monotonic): an order held for its signature, a lone signature."""

    signature: Signature
    until: float


@dataclass(frozen=True, slots=True)
class Quiet:
    """Leave it in place until it changes: another watcher's, or a signature beside its order."""

    signature: Signature


# -- plans carried out in a batch ------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Refuse:
    """Refused at admission (invalid, unreadable, badly named, `action:` outside authorized/, an
    id used with other bytes): an error reply listing `reasons`; the id is not claimed."""

    input: Input
    key: str  # invalid:DIGEST
    sha256: str
    reasons: tuple[str, ...]
    id: str | None
    sender: str | None
    refusal: Refusal = Refusal.INVALID
    envelope: Envelope | None = None  # when it parsed: its signatures go with it


@dataclass(frozen=True, slots=True)
class Duplicate:
    """An id already known: archived as a duplicate; nothing runs, no reply."""

    input: Input
    envelope: Envelope
    sha256: str


@dataclass(frozen=True, slots=True)
class FinishMove:
    """A move into `archive/` that a crash cut short: finish it (to `target`, or a fresh name)."""

    input: Input
    target: str | None
    sidecar: bool  # the input is an order's signature, not an order
    envelope: Envelope | None = None


@dataclass(frozen=True, slots=True)
class Perform:
    """Carry out `decision`; `sent` are the replies already written (a resumed input)."""

    input: Input
    envelope: Envelope
    decision: Decision
    sent: tuple[str, ...]
    new: bool  # not in the ledger yet: record it first
    sha256: str


@dataclass(frozen=True, slots=True)
class Run:
    """An execution recorded as queued before a crash: run it as decided then."""

    input: Input
    envelope: Envelope
    target: Target


@dataclass(frozen=True, slots=True)
class Answer:
    """Answer an execution's outcome (`recorded`: the ledger already holds it as finished)."""

    input: Input
    key: str
    id: str
    sender: str
    outcome: Outcome
    recorded: bool
    sent: tuple[str, ...]
    envelope: Envelope | None = None


@dataclass(frozen=True, slots=True)
class Reply:
    """Write `reply` (unless already sent), mark done, archive."""

    input: Input
    key: str
    reply: Envelope
    sent: tuple[str, ...]
    envelope: Envelope | None = None


@dataclass(frozen=True, slots=True)
class Archive:
    """Everything is answered: mark done and archive."""

    input: Input
    key: str
    envelope: Envelope | None = None


Plan = Nothing | Wait | Quiet | Refuse | Duplicate | FinishMove | Perform | Run | Answer | Reply | Archive
