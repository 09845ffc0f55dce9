"""What a crash leaves behind, and how it is finished (SPEC §7).

Rules:
1. At start, slopd's own temporary files are removed (in `inbox/` only old ones: a
   `slopd send` may be writing one now).
2. At start, every unfinished ledger row is answered by `core.lifecycle.recovery_step`: an
   execution found `executing` is answered `interrupted, not retried` and never runs again; a
   `finished` one gets its reply rewritten from the stored outcome; an input whose file
   vanished before it was handled is told so. Files still in their lanes are left to the scan.
3. A lane file that is the same inode as an archived copy is a move cut short: it is finished
   to that copy, and an order's signature left beside it follows it.
4. A signature alone in `authorized/` that signs the exact bytes of an order already archived
   under its name belongs to that order: it is archived too, quietly.
"""

from __future__ import annotations

import time

from slopd.core import replies, sshsig
from slopd.core.lifecycle import Recovery, recovery_step
from slopd.core.outcome import INTERRUPTED
from slopd.daemon import plans
from slopd.daemon.parts import Parts
from slopd.daemon.plans import Input
from slopd.shell.archive import numbered
from slopd.shell.fs import Contents

_VANISHED = "the input file vanished from the hub before it was handled; nothing was run"
_NUMBERED = 10  # archive names tried for a cut-short signature move: NAME, NAME-2 … NAME-9


class Recoveries:
    def __init__(self, parts: Parts) -> None:
        self.parts = parts

    def reconfigure(self, parts: Parts) -> None:
        self.parts = parts

    def at_start(self) -> list[plans.Plan]:
        """Rules 1 and 2: what start-up must answer before the first scan."""
        parts = self.parts
        for removed in parts.hub.remove_temps(now=time.time()):
            parts.log.info("temp.removed", path=removed)
        found: list[plans.Plan] = []
        for row in parts.ledger.unfinished():
            log = parts.log.bind(id=row.id, lane=row.lane, file=row.file)
            input = Input(row.lane, row.file, None, log)  # no inode: the scan archives it after a sha check
            step = recovery_step(
                row.status,
                has_outcome=row.outcome is not None,
                file_present=parts.hub.exists(row.lane, row.file),
                addressable=row.id is not None and bool(row.sender),
            )
            if step is Recovery.SCAN:
                continue
            assert row.id is not None
            assert row.sender is not None
            if step is Recovery.INTERRUPTED:
                log.warning("execution.interrupted")
                found.append(
                    plans.Answer(input, row.key, row.id, row.sender, INTERRUPTED, False, row.replies)
                )
            elif step is Recovery.OUTCOME:
                assert row.outcome is not None
                found.append(plans.Answer(input, row.key, row.id, row.sender, row.outcome, True, row.replies))
            else:
                reply = replies.error(
                    answering=row.id,
                    to=row.sender,
                    reasons=[_VANISHED],
                    file=input.path,
                    mode=row.mode or "discuss",
                    watcher=parts.config.watcher,
                    now=parts.clock.wall(),
                )
                found.append(plans.Reply(input, row.key, reply, row.replies))
        return found

    def interrupted_archive(self, lane: str, name: str) -> str | None:
        """Rule 3: the archived copy `lane/name` is a second link of, if any."""
        for target in self.parts.ledger.archive_paths(lane, name):
            if self.parts.archive.is_archived_copy(lane, name, target):
                return target
        return None

    def interrupted_sidecar(self, lane: str, name: str, order: str) -> str | None:
        """Rule 3 for a signature: the copy beside its archived order that it is a link of."""
        for archived in self.parts.ledger.archive_paths(lane, order):
            folder = archived.rpartition("/")[0]
            for attempt in range(1, _NUMBERED):
                candidate = f"{folder}/{numbered(name, attempt)}"
                if self.parts.archive.is_archived_copy(lane, name, candidate):
                    return candidate
        return None

    def belongs_to_archived_order(self, lane: str, name: str, order: str) -> bool:
        """Rule 4."""
        parts = self.parts
        sidecar = parts.hub.read(lane, name, sshsig.MAX_SIGNATURE_BYTES)
        if not isinstance(sidecar, Contents):
            return False
        for archived in parts.ledger.archive_paths(lane, order):
            message = parts.hub.read_path(archived, parts.config.max_envelope_bytes)
            if isinstance(message, Contents) and isinstance(
                sshsig.verify(message.data, sidecar.data, namespace=parts.config.auth.namespace),
                sshsig.Verified,
            ):
                return True
        return False
