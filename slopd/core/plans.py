"""What the handler decided for one input: every effect as a value, in the order it is made. Pure.

`core.handling.handle` returns a `Plan` (or an `Ask` for one more fact); `daemon.interpreter`
carries the plan's effects out, in order, inside the input's batch (`daemon.batch`), and decides
nothing: each effect below says what it does, including its guard.

Rules:
1. Ledger statements are values (`Record`, `Advance`, the duplicate's row of `Duplicate`, the reply
   rows of `Send`, `IndexNote`'s note); they join the batch's unit and commit with it.
2. A reply is `Send`: written into `outbox/` (staged in a batch), recorded, logged and told to
   the human (`core.notices.of_reply`). A `Standup` change goes first; its paragraph joins the
   reply's body (`core.replies.noted`): the only part of a plan known after an effect.
3. Moves into `archive/` are reserved now and made at the commit. `Done` is guarded by the inode
   that was read: if the lane's name still holds it, its archive path is recorded with `done`
   and it is moved; if another file took the name, `envelope.replaced` is logged and the row
   only marked `done` (the new file is read at the next scan); with no inode, only `done`.
4. Jobs (`Start`, `Clean`) begin after the batch's commit, never before.
5. `Defer` and `Quieten` tell the intake when to look again; `Hold` and `Forget` change the
   gate's memory of first sights; `Log` and `Notify` are said on the input's log.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from slopd.core.envelope import Envelope
from slopd.core.lifecycle import Status
from slopd.core.notes import Note
from slopd.core.notices import Notice
from slopd.core.outcome import Outcome
from slopd.core.targets import Target

_Kind = TypeVar("_Kind")

# -- the intake, the gate, the log ---------------------------------------------------------------


Level = Literal["debug", "info", "warning", "error"]  # a method of `shell.log.Logger` each


@dataclass(frozen=True, slots=True)
class Log:
    level: Level
    event: str
    fields: tuple[tuple[str, Any], ...] = ()


def log(level: Level, event: str, **fields: Any) -> Log:
    return Log(level, event, tuple(fields.items()))


@dataclass(frozen=True, slots=True)
class Defer:
    """Look at the input again at `until` (monotonic) or when a signature it waits for arrives."""

    until: float


@dataclass(frozen=True, slots=True)
class Quieten:
    """Leave the input where it is until it changes."""


@dataclass(frozen=True, slots=True)
class Hold:
    """The gate's first sight of `key` (an order or lone signature by name, an asset wait by
    (lane, name)) is `since`, unless it has one; `waiting`: signatures whose arrival wakes it."""

    key: Hashable
    since: float
    waiting: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Forget:
    """The gate forgets `key`: its first sight, and the signatures it waited for."""

    key: Hashable


@dataclass(frozen=True, slots=True)
class Notify:
    notice: Notice


@dataclass(frozen=True, slots=True)
class OrderWaits:
    """Tell the human an order has some of its signatures and waits for more (once per content)."""

    name: str
    sha256: str
    signed: tuple[str, ...]
    missing: str


# -- the ledger (rule 1) ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Record:
    """The first sighting of an input (a key already recorded is left as it is)."""

    key: str
    id: str | None
    lane: str
    file: str
    sha256: str
    type: str | None
    sender: str | None
    mode: str | None
    decision: str
    target: Target | None = None


@dataclass(frozen=True, slots=True)
class Advance:
    """The input's status moves forward (never to `executing`: that is committed on its own)."""

    key: str
    status: Status
    outcome: Outcome | None = None


# -- replies and notes (rule 2) ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Standup:
    """A Standing Standup change (SPEC §10): a `handoff` files its body, a `handshake` tags its
    sender in `since`. Applied by the daemon's standups (re-reading the file first)."""

    project: object  # the envelope's `project:` as written (the standups check it is a name)
    envelope: Envelope
    since: str


@dataclass(frozen=True, slots=True)
class Send:
    """Write `reply` (answering the input `key`); `files`: the deliverable in the run folder of
    this envelope id, copied beside it; `standup`: changed first, its paragraph joins the body."""

    key: str
    reply: Envelope
    files: str | None = None
    standup: Standup | None = None


@dataclass(frozen=True, slots=True)
class IndexNote:
    """Record the note and write `notes/INDEX.md` and its page (`daemon.notebook`)."""

    note: Note


# -- archive moves (rule 3) ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Done:
    """Mark `key` done and archive the input, guarded by its inode (rule 3)."""

    key: str
    lane: str
    name: str
    inode: int | None


@dataclass(frozen=True, slots=True)
class Move:
    """Move `lane/name` into `archive/` (to `target`, or to a fresh name reserved now), then log
    `event` with `fields` and the archive path."""

    lane: str
    name: str
    target: str | None
    event: str
    fields: tuple[tuple[str, Any], ...] = ()


@dataclass(frozen=True, slots=True)
class Duplicate:
    """An id met again under another name or with the same bytes: record the duplicate and move
    it (fresh name, `envelope.duplicate`)."""

    id: str
    lane: str
    name: str
    sha256: str


# -- jobs (rule 4) ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Start:
    """Run `target` for `envelope` (None: the summarizer), once the batch is committed."""

    envelope: Envelope
    target: Target | None


@dataclass(frozen=True, slots=True)
class Clean:
    """Remove the run folder of the envelope `id` once the reply is committed."""

    id: str


Effect = (
    Log
    | Defer
    | Quieten
    | Hold
    | Forget
    | Notify
    | OrderWaits
    | Record
    | Advance
    | Send
    | IndexNote
    | Done
    | Move
    | Duplicate
    | Start
    | Clean
)


@dataclass(frozen=True, slots=True)
class Plan:
    """Every effect for one input, in order; `bind`: fields its log lines carry (id, type)."""

    effects: tuple[Effect, ...] = ()
    bind: tuple[tuple[str, str], ...] = ()

    def of(self, kind: type[_Kind]) -> list[_Kind]:
        """The effects of one kind (for tests and readers)."""
        return [effect for effect in self.effects if isinstance(effect, kind)]


@dataclass(frozen=True, slots=True)
class Ask:
    """One more fact is needed (`core.facts` rule 5): the ledger row of `row`, or the presence
    files read again (`presences`); the input is then handled again with it."""

    row: str | None = None
    presences: bool = False
