"""What the daemon's modules share: the hub, the ledger, the config of the moment, the clock.

Rules:
1. One `Parts` per daemon, built by the composition root (`slopd.app`); the modules of this
   package take it and read `config` and `policy` at each use, so a reload reaches them all.
2. Only the main loop's thread touches the hub, the ledger and `in_flight`; worker threads
   run commands and hand results back (`daemon.jobs`).
3. Wall-clock time comes from `clock`, monotonic time is passed in as `now`.
4. `watched` holds the trusted files other parts re-read when they change (the HTTP server's
   tokens file): the loop looks at each once a second and at SIGHUP, so a change is logged soon.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from slopd.core.ids import timestamp
from slopd.core.intake import Intake
from slopd.core.routing import Policy
from slopd.daemon.batch import GroupCommit, Where
from slopd.daemon.gate import Gate
from slopd.shell.archive import Archive
from slopd.shell.config import Config
from slopd.shell.executor import Runner
from slopd.shell.lanes import Hub
from slopd.shell.ledger import Ledger
from slopd.shell.log import Logger
from slopd.shell.notifier import Notifier, Sink
from slopd.shell.reloading import Reloading


class Clock:
    """The wall clock, and its whole second formatted once for the ledger."""

    def __init__(self, wall: Callable[[], datetime]) -> None:
        self.wall = wall
        self._second: tuple[datetime | None, str] = (None, "")

    def stamp(self) -> str:
        second = self.wall().replace(microsecond=0)
        if second != self._second[0]:
            self._second = (second, timestamp(second))
        return self._second[1]


@dataclass(eq=False)
class Parts:
    hub: Hub
    archive: Archive
    ledger: Ledger
    config: Config
    log: Logger
    clock: Clock
    intake: Intake
    gate: Gate
    notifier: Notifier
    commits: GroupCommit
    runner: Runner
    state_dir: Path
    policy: Policy = field(init=False)
    in_flight: set[Where] = field(default_factory=set)  # inputs whose job is queued or running
    last_error: str | None = None
    recheck_homes: Callable[[], None] = lambda: None  # re-read who else watches (`daemon.homing`)
    watched: list[Reloading[Any]] = field(default_factory=list)  # trusted files besides allowed_signers
    sinks_for: Callable[[Config], list[Sink]] = lambda _config: []  # a config's push destinations

    def __post_init__(self) -> None:
        self.policy = self.config.policy()

    def failed(self, where: Where, reason: str) -> None:
        """An input that could not be finished: it stays in its lane for the next full scan."""
        self.intake.failed(where)
        self.last_error = reason
