"""What the daemon's modules share: the hub, the ledger, the config of the moment, the clock.

Rules:
1. `Parts` is a frozen snapshot, built by the composition root (`slopd.app`) and rebuilt by a
   reload (`Daemon._apply_reload`: `replace(parts, config=…)`), which hands the new snapshot to
   each module that keeps one (`reconfigure`). Nothing writes a field of another object: what
   a module must remember — the intake's candidates, the gate's holds, the home and its policy
   (`daemon.homing`), the jobs in flight (`daemon.runs`), the last error (`Health`) — it keeps
   itself, behind methods.
2. Only the main loop's thread touches the hub and the ledger; worker threads run commands and
   hand results back (`daemon.jobs`).
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
from slopd.daemon.batch import GroupCommit
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


class Health:
    """The last error, for systemd's STATUS and `slopd status` (each module reports its own)."""

    def __init__(self) -> None:
        self._last: str | None = None

    @property
    def last_error(self) -> str | None:
        return self._last

    def failed(self, reason: str) -> None:
        self._last = reason


@dataclass(frozen=True, eq=False)
class Parts:
    hub: Hub
    archive: Archive
    ledger: Ledger
    config: Config
    log: Logger
    clock: Clock
    notifier: Notifier
    commits: GroupCommit
    runner: Runner
    state_dir: Path
    health: Health = field(default_factory=Health)
    watched: tuple[Reloading[Any], ...] = ()  # trusted files besides allowed_signers
    sinks_for: Callable[[Config], list[Sink]] = lambda _config: []  # a config's push destinations
