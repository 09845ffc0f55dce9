"""Group commit: the durable effects of a batch of inputs, made in the one-input order.

Every effect of the daemon — a reply, a ledger write, an archive move, a job to start — is
made through a `Batch`, the explicit value of what is not yet durable; `GroupCommit.commit`
is its one owner. A lone input is a batch of one.

Rules:
1. Inside a batch the ledger's writes are one `Writes` unit; replies are staged when the batch
   holds several inputs (one flush for all), else durable at once (nothing to share a flush
   with); archive moves are only reserved, so no target is handed out twice.
2. `commit` makes the staged replies durable and names them, syncs the written lanes, commits
   the ledger, and only then links the inputs into `archive/`, syncs those folders and unlinks
   the inputs — the order of effects of one input at a time (docs/design.md) — and last starts
   the batch's jobs, so a job never starts from state a failed commit could undo. Once the
   ledger has committed, the bell rings (`shell.bell`): the reply feed's waiters read it again.
3. A failed flush or commit rolls the whole batch back: nothing is moved, no job starts, and
   every input of the batch is returned as undone. Undone inputs, and inputs whose move
   failed, are returned with the reason, for the caller to leave in their lanes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from slopd.core.names import Kind
from slopd.shell import fs
from slopd.shell.archive import Archive, Move
from slopd.shell.bell import Bell
from slopd.shell.lanes import Hub
from slopd.shell.ledger import Ledger, LedgerError
from slopd.shell.ledger.writes import Writes
from slopd.shell.log import Logger

Where = tuple[str, str]


@dataclass(frozen=True, slots=True)
class _Announced:
    """What to log once a move is done."""

    log: Logger
    event: str
    fields: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Committed:
    """What `commit` came to: `undone` when the whole batch was rolled back (rule 3), and every
    input left in its lane, with the reason."""

    undone: list[Where]
    failed: list[tuple[Where, str]]


@dataclass(eq=False)
class Batch:
    """What a batch has done so far that is not yet durable (rule 1)."""

    ledger: Writes
    stage: bool
    inputs: list[tuple[Where, Kind]] = field(default_factory=list)
    staged: list[fs.Staged] = field(default_factory=list)
    moves: list[Move] = field(default_factory=list)
    reserved: set[str] = field(default_factory=set)
    announced: dict[Move, _Announced] = field(default_factory=dict)
    jobs: list[Callable[[], None]] = field(default_factory=list)


class GroupCommit:
    def __init__(
        self, hub: Hub, archive: Archive, ledger: Ledger, log: Logger, bell: Bell | None = None
    ) -> None:
        self.hub, self.archive, self.ledger, self.log = hub, archive, ledger, log
        self.bell = bell or Bell()

    def open(self, *, stage: bool) -> Batch:
        return Batch(self.ledger.writes(), stage)

    def write(self, batch: Batch, lane: str, name: str, data: bytes) -> None:
        """Write `lane/name` as part of `batch`: named at `commit` when staged, else now."""
        staged = self.hub.stage(lane, name, data)
        if batch.stage:
            batch.staged.append(staged)
        else:
            fs.commit([staged])

    def target(self, batch: Batch, name: str, now: datetime) -> str:
        """A free archive path for `name`, reserved for this batch."""
        target = self.archive.target(name, now, batch.reserved)
        batch.reserved.add(target)
        return target

    def move(self, batch: Batch, move: Move, log: Logger, event: str, **fields: Any) -> None:
        """Archive at `commit`, then log `event` with `fields`."""
        batch.moves.append(move)
        batch.reserved.add(move.target)
        batch.announced[move] = _Announced(log, event, fields)

    def commit(self, batch: Batch) -> Committed:
        """Flush, commit, move, start jobs (rules 2 and 3)."""
        try:
            fs.commit(batch.staged)
            batch.ledger.commit()
        except BaseException as error:
            for staged in batch.staged:
                staged.discard()
            batch.ledger.rollback()
            if not isinstance(error, OSError | LedgerError):
                raise
            undone = [where for where, _kind in batch.inputs]
            self.log.error("batch.failed", reason=str(error), inputs=len(undone), action="retried")
            reason = f"a batch of {len(undone)} inputs failed: {error}"
            return Committed(undone, [(where, reason) for where in undone])
        self.bell.ring()
        failed: list[tuple[Where, str]] = []
        for moved in self.archive.move_all(batch.moves):
            move, said = moved.move, batch.announced[moved.move]
            if moved.error is None and moved.moved:
                said.log.info(said.event, archive=move.target, **said.fields)
            elif moved.error is None:
                said.log.info("envelope.vanished", reason="gone before it could be archived")
            else:
                said.log.error("archive.failed", archive=move.target, reason=str(moved.error))
                failed.append(((move.lane, move.name), f"{move.lane}/{move.name}: archiving failed"))
        for start in batch.jobs:
            start()
        return Committed([], failed)
