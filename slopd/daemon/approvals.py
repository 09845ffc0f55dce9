"""Approval requests the human hears of (SPEC §16): new drafts, and orders waiting for a signer.

Rules:
1. A draft is a `*.md` file in `outbox/drafts/` (`core.drafts`), whoever wrote it —
   `slop_request_approval` in this process or in an `slopd mcp` process, or a human. The daemon
   learns of one from a watch on that folder (made at start if missing; on the arrivals'
   observer) and, as a safety net, at every scan (`rescan_interval`).
2. Each draft is announced once per name and content: the ledger keeps what was announced
   (`Ledger.announce`), so a restart does not announce it again; an edited draft is new.
3. An order in `authorized/` held with at least one of its listed signatures present and at
   least one missing waits for a quorum member: announced once per name and content while the
   daemon runs (the gate's holds live in memory too).
4. Only the hub's home watcher announces drafts (one phone buzz per hub, not one per machine);
   an order is announced by the watcher that holds it.
5. A notice names the action, who asked, and where the file waits — never its body.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable

from slopd.core import drafts, notices
from slopd.core.envelope import EnvelopeError
from slopd.core.validation import parse
from slopd.daemon.parts import Parts
from slopd.shell.lanes import LaneError
from slopd.shell.reads import Contents

PLACE = "drafts"


class Approvals:
    def __init__(self, parts: Parts, home: Callable[[], bool], wake: Callable[[], None]) -> None:
        self.parts, self.home, self.wake = parts, home, wake
        self.hinted = threading.Event()
        self._orders: set[tuple[str, str]] = set()

    def reconfigure(self, parts: Parts) -> None:
        self.parts = parts

    def watched(self) -> dict[str, Callable[[], None]]:
        """Rule 1: `outbox/drafts/` (made now if missing), for the arrivals' watcher to watch too."""
        try:
            self.parts.hub.folder_fd(drafts.FOLDER)
        except OSError as error:
            self.parts.log.warning("drafts.unwatched", reason=str(error), fallback="scans only")
            return {}

        def hint() -> None:
            self.hinted.set()
            self.wake()

        return {drafts.FOLDER: hint}

    def check(self) -> None:
        """Rules 1, 2 and 4: announce the drafts not yet announced."""
        self.hinted.clear()
        parts = self.parts
        if not self.home():
            return
        try:
            entries = [entry for entry in parts.hub.entries(drafts.FOLDER) if drafts.is_draft(entry.name)]
        except (OSError, LaneError):
            return  # no drafts folder (yet): nothing to announce
        if not entries:
            return
        announced = parts.ledger.announced(PLACE)
        for entry in entries:
            found = parts.hub.read(drafts.FOLDER, entry.name, parts.config.max_envelope_bytes)
            if not isinstance(found, Contents):
                continue  # a link, a folder, a file being replaced: not a draft to announce
            digest = hashlib.sha256(found.data).hexdigest()
            if (entry.name, digest) in announced:
                continue
            self._announce_draft(entry.name, found.data)
            parts.ledger.announce(PLACE, entry.name, digest, now=parts.clock.stamp())

    def _announce_draft(self, name: str, data: bytes) -> None:
        """Rule 5."""
        try:
            envelope = parse(data, name=name)
            action, seat, ident = envelope.action or "?", drafts.requester(envelope), envelope.id
        except EnvelopeError:
            action, seat, ident = "?", None, None
        path = f"{drafts.FOLDER}/{name}"
        text = (
            f"{seat or 'an agent'} asks a human to approve the action {action}: sign {path}, then move "
            "it and its .sig into authorized/"
        )
        notice = notices.approval("drafts", name, text, ident)
        self.parts.notifier.notify(notice, time.monotonic(), self.parts.log.bind(file=path))

    def order_waits(self, name: str, sha256: str, *, signed: tuple[str, ...], missing: str) -> None:
        """Rule 3 (the interpreter's `OrderWaits`, when the handler holds an order)."""
        if not signed or (name, sha256) in self._orders:
            return
        self._orders.add((name, sha256))
        path = f"authorized/{name}"
        text = f"the order {path} waits for more signatures: it has {', '.join(signed)}; missing {missing}"
        notice = notices.approval("authorized", name, text)
        self.parts.notifier.notify(notice, time.monotonic(), self.parts.log.bind(file=path))
