"""What a crash leaves behind, as the ledger and `archive/` show it (SPEC §7): read for the handler.

Rules:
1. At start, slopd's own temporary files are removed (in `inbox/` only old ones: a
   `slopd send` may be writing one now); the unfinished rows are then handled one by one
   (`core.lifecycle.recovery_step`, through `core.handling`).
2. A lane file that is the same inode as an archived copy is a move cut short (`linked`); so
   is an order's signature left beside its order's archived copy (`sidecar_linked`).
3. A signature alone in `authorized/` whose order was archived under its name is given, with
   its bytes, the bytes of those archived copies (`archived_orders`): the handler checks whether
   it signs one of them.
"""

from __future__ import annotations

import time

from slopd.core import sshsig
from slopd.shell.archive import Archive, numbered
from slopd.shell.lanes import Hub
from slopd.shell.ledger import Ledger
from slopd.shell.log import Logger
from slopd.shell.reads import Contents

_NUMBERED = 10  # archive names tried for a cut-short signature move: NAME, NAME-2 … NAME-9


def remove_temps(hub: Hub, log: Logger) -> None:
    """Rule 1's first step."""
    for removed in hub.remove_temps(now=time.time()):
        log.info("temp.removed", path=removed)


def linked(ledger: Ledger, archive: Archive, lane: str, name: str) -> str | None:
    """Rule 2: the archived copy `lane/name` is a second link of, if any."""
    for target in ledger.archive_paths(lane, name):
        if archive.is_archived_copy(lane, name, target):
            return target
    return None


def sidecar_linked(ledger: Ledger, archive: Archive, lane: str, name: str, order: str) -> str | None:
    """Rule 2 for a signature: the copy beside its archived order that it is a link of."""
    for archived in ledger.archive_paths(lane, order):
        folder = archived.rpartition("/")[0]
        for attempt in range(1, _NUMBERED):
            candidate = f"{folder}/{numbered(name, attempt)}"
            if archive.is_archived_copy(lane, name, candidate):
                return candidate
    return None


def archived_orders(ledger: Ledger, hub: Hub, lane: str, order: str, limit: int) -> tuple[bytes, ...]:
    """Rule 3: the bytes of every archived copy of the order `lane/order` that can be read."""
    found = []
    for archived in ledger.archive_paths(lane, order):
        message = hub.read_path(archived, limit)
        if isinstance(message, Contents):
            found.append(message.data)
    return tuple(found)


def signature_of(hub: Hub, lane: str, name: str) -> bytes | None:
    """Rule 3: a lone signature's bytes (None: it cannot be read)."""
    found = hub.read(lane, name, sshsig.MAX_SIGNATURE_BYTES)
    return found.data if isinstance(found, Contents) else None
