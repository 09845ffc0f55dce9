"""Group commit: the durable effects of a batch of inputs, flushed together in the one-input order.

Rules:
1. Inside a batch the ledger's writes join one transaction, replies are staged (unless the
   batch holds one input: nothing to share a flush with) and archive moves are only reserved.
2. `end` makes the replies durable and names them, syncs their directories, commits the
   ledger, and only then links the inputs into `archive/`, syncs those folders and unlinks
   the inputs — the order of effects of one input at a time (docs/design.md).
3. A failed flush or commit rolls the whole batch back and moves nothing; the inputs handled
   since the batch began are returned as undone, and each is reported to `failed`.
4. `outside` commits an open batch before something that must build on committed state (a
   job's start) and raises BatchCommitError, without running it, when that commit failed.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from slopd.hub import Hub
from slopd.ledger import Ledger

Where = tuple[str, str]


class BatchCommitError(RuntimeError):
    """An open batch could not be committed before something that needed it committed."""


class GroupCommit:
    def __init__(self, hub: Hub, ledger: Ledger, log: Any, failed: Callable[[Where, str], None]) -> None:
        self.hub, self.ledger, self.log, self.failed = hub, ledger, log, failed
        self.open = self.staging = False
        self.inputs: list[Where] = []  # handled since the batch began: undone if it fails
        self._moved: dict[Where, tuple[Any, str, dict[str, Any]]] = {}  # what to log once moved

    def begin(self, *, stage: bool) -> None:
        self.open, self.staging = True, stage
        self.ledger.begin_batch()
        self.hub.defer(stage=stage)

    def end(self) -> list[Where]:
        """Flush, commit, then move (rules 2 and 3); returns the inputs a failure undid."""
        self.open = False
        inputs, self.inputs = self.inputs, []
        moved, self._moved = self._moved, {}
        try:
            self.hub.flush()
            self.ledger.commit_batch()
        except (OSError, sqlite3.Error) as error:
            self.ledger.rollback_batch()
            self.hub.drop_deferred()
            self.log.error("batch.failed", reason=str(error), inputs=len(inputs), action="retried")
            for where in inputs:
                self.failed(where, f"a batch of {len(inputs)} inputs failed: {error}")
            return inputs
        for move in self.hub.complete_archives():
            bound, event, fields = moved[(move.lane, move.name)]
            if move.error is None and move.moved:
                bound.info(event, archive=move.target, **fields)
            elif move.error is None:
                bound.info("envelope.vanished", reason="gone before it could be archived")
            else:
                bound.error("archive.failed", archive=move.target, reason=str(move.error))
                self.failed((move.lane, move.name), f"{move.lane}/{move.name}: archiving failed")
        return []

    @contextmanager
    def outside(self) -> Iterator[None]:
        """Commit an open batch first: what runs inside must build on committed state (rule 4)."""
        if not self.open:
            yield
            return
        undone = self.end()
        try:
            if undone:
                raise BatchCommitError(f"the batch could not be committed ({len(undone)} inputs to redo)")
            yield
        finally:
            self.begin(stage=self.staging)

    def move(self, lane: str, name: str, target: str, bound: Any, event: str, **fields: Any) -> None:
        """Archive `lane/name` to `target` and log `event` once it is done (in a batch: at `end`)."""
        if self.open:
            self._moved[(lane, name)] = (bound, event, fields)
            self.hub.archive(lane, name, target)
        elif self.hub.archive(lane, name, target):
            bound.info(event, archive=target, **fields)
