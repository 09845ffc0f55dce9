"""What the shell knows of one input when the handler is asked about it: frozen values. Pure.

`core.handling.handle(facts, policy, now)` reads nothing but these. The daemon gathers them
(`daemon.gathering`), once per input: a lane entry (`Arrival`), an unfinished ledger row at
start-up (`Recovered`), an execution whose outcome is recorded (`Executed`), a summarizer's
answer (`Summarized`). Rules for what is gathered:
1. An `Arrival` always has the entry's lstat (`Stat`) and kind; an input's bytes are read once
   (`Read`), admitted (`core.admission.examine`, or the admission the HTTP and MCP intake made of
   the same bytes) and its ledger row looked up by id; a file with two links also has the
   archived copy it is a link of, if any (`linked`).
2. In `authorized/`: every signature the order names, read once (`Sidecar`), the allowed signers
   as they are now, and the gate's first sight of the order; for an envelope listing assets,
   each asset's digest (`Attached`) and the gate's first sight of the wait.
3. For anything in `authorized/` that may be archived, the signatures that would go with it
   (`Companion`): the order's `NAME.sig` and those it names.
4. On a hub other watchers watch, for a new id, the replies to it another watcher already wrote
   in `outbox/` (`answered`).
5. What depends on a decision — a refusal's ledger row, the presence files read again — is
   gathered when the handler asks for it (`core.plans.Ask`), and the input handled again.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from slopd.core import routing
from slopd.core.admission import Examined, Refused
from slopd.core.envelope import Envelope
from slopd.core.layout import Signature
from slopd.core.lifecycle import Row
from slopd.core.names import Kind, is_sane
from slopd.core.orders import Trust
from slopd.core.outcome import Outcome, RunResult

Where = tuple[str, str]


@dataclass(frozen=True, slots=True)
class Now:
    """The wall clock (replies, verdicts) and the monotonic one (holds), read once per input."""

    wall: datetime
    monotonic: float


@dataclass(frozen=True, slots=True)
class Policy:
    """What this watcher is, for the handler: the routing policy of the moment (its home and the
    seats others answer included) and what the config says."""

    routing: routing.Policy
    watcher: str  # the `from` of its replies
    summarizer: bool  # a summarizer command is configured
    grace: float  # `auth.sig_grace`: how long an order waits for a signature, or an envelope its assets
    namespace: str  # the SSHSIG namespace


@dataclass(frozen=True, slots=True)
class Input:
    """An input file: its lane, its name, the inode that was read (None: not read now)."""

    lane: str
    name: str
    inode: int | None

    @property
    def where(self) -> Where:
        return (self.lane, self.name)

    @property
    def path(self) -> str:
        """`lane/name`, with an unsafe name (undecodable, control characters) escaped."""
        return f"{self.lane}/{self.name if is_sane(self.name) else ascii(self.name)[1:-1]}"


@dataclass(frozen=True, slots=True)
class Stat:
    """The entry's lstat: what must stay equal while it settles, and its link count."""

    signature: Signature  # inode, size, mtime_ns, ctime_ns
    links: int = 1

    @property
    def inode(self) -> int:
        return self.signature[0]


@dataclass(frozen=True, slots=True)
class Bytes:
    """The file as read once: its bytes and the inode they came from."""

    data: bytes
    inode: int


@dataclass(frozen=True, slots=True)
class Unread:
    """The file could not be read: why, and whether it is gone altogether (vanished)."""

    reason: str
    gone: bool = False


@dataclass(frozen=True, slots=True)
class Sidecar:
    """One signature an order names: its bytes, why it cannot be read, or neither (not there)."""

    name: str
    data: bytes | None = None
    problem: str | None = None


@dataclass(frozen=True, slots=True)
class Attached:
    """One asset an envelope lists: its digest, why it cannot be read, or neither (not there)."""

    name: str
    digest: str | None = None
    problem: str | None = None


@dataclass(frozen=True, slots=True)
class Companion:
    """A signature that may go to `archive/` with the input (rule 3)."""

    name: str
    present: bool = True
    order_present: bool = False  # the order it is named after is in the lane (another order's)
    linked: str | None = None  # the archived copy it is a second link of (a move cut short)


@dataclass(frozen=True, slots=True)
class Arrival:
    """A lane entry due to be handled (rules 1-4)."""

    lane: str
    name: str
    kind: Kind
    stat: Stat
    read: Bytes | Unread | None = None  # None: not read (a lone signature, a bad name)
    admitted: Examined | Refused | None = None
    row: Row | None = None  # the ledger's row for the envelope's id
    archive_present: bool = True  # the row's archive path exists (when it is this input's)
    linked: str | None = None  # the archived copy this file is a second link of
    outputs: bool = False  # STATE/runs/ID/out/ exists (an execution to answer)
    answered: tuple[tuple[str, str], ...] = ()  # (reply file, its sender) already in outbox/
    signatures: tuple[Sidecar, ...] = ()
    trust: Trust | None = None
    held_since: float | None = None  # the gate's first sight (an order, or a lone signature)
    assets: tuple[Attached, ...] = ()
    assets_since: float | None = None  # the gate's first sight of the wait for its assets
    companions: tuple[Companion, ...] = ()
    order_present: bool = False  # a lone signature: its order is in the lane
    archived_orders: tuple[bytes, ...] = ()  # a lone signature: its order's archived copies' bytes
    sidecar: bytes | None = None  # a lone signature: its bytes
    looked_up: tuple[str, Row | None] | None = None  # rule 5: (key, its row) when asked
    rechecked: routing.Policy | None = None  # rule 5: the policy after the presences were read again

    @property
    def input(self) -> Input:
        inode = self.read.inode if isinstance(self.read, Bytes) else self.stat.inode
        return Input(self.lane, self.name, inode)


@dataclass(frozen=True, slots=True)
class Recovered:
    """An unfinished ledger row found at start-up."""

    row: Row
    present: bool  # its file is still in its lane
    outputs: bool = False  # STATE/runs/ID/out/ exists
    companions: tuple[Companion, ...] = ()


@dataclass(frozen=True, slots=True)
class Executed:
    """An execution whose outcome the ledger now holds (`finished`, committed on its own)."""

    input: Input
    envelope: Envelope
    outcome: Outcome
    sent: tuple[str, ...]  # the replies already written for it
    outputs: bool = False
    companions: tuple[Companion, ...] = ()


@dataclass(frozen=True, slots=True)
class Summarized:
    """A summarizer's run for a discussion: its answer (None: it failed) and what it did."""

    input: Input
    envelope: Envelope
    text: str | None
    result: RunResult
    sent: tuple[str, ...]
    companions: tuple[Companion, ...] = ()


Facts = Arrival | Recovered | Executed | Summarized
