"""Arrivals: the scans and the watcher's hints that make lane entries candidates (`core.intake`).

Rules:
1. A scan streams the input lanes; the oldest new inputs become candidates, at most
   `MAX_CANDIDATES`, so a backlog of any size costs no more memory than one slice — the rest is
   taken at the next scan, which the loop runs at once while a backlog lasts.
2. A hint only makes a candidate of the name it is about; a lost hint costs latency, never an
   input: the loop rescans every `rescan_interval`, and at once on an overflow or a dead watcher.
3. Each name is classified once per sighting, and the candidate keeps that kind.
4. A signature arriving releases the order held for it at once; a signature whose order is not
   there waits for it (the grace), or follows it at once when the order is already archived.
5. Inputs whose job is queued or running are not candidates.
6. A lane that is missing — at start, or gone since — is created again before start-up recovery
   writes its first reply, before the watcher starts and at each scan (SPEC §7), and the watcher
   restarted to watch it.
7. A writer in this process (the HTTP and MCP intake) hands on the admission of what it is
   about to write (`admit`, `core.admission` rule 7): kept until the file is read (`admitted`),
   at most `MAX_ADMITTED` of them (the oldest are dropped: that file is then parsed again).
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable

from slopd.core.admission import Examined
from slopd.core.intake import Hint, Intake, Oldest
from slopd.core.layout import INPUT_LANES
from slopd.core.names import Kind, classify, order_of
from slopd.daemon.batch import Where
from slopd.daemon.gate import Gate
from slopd.daemon.parts import Parts
from slopd.shell.lanes import Entry, signature_of
from slopd.shell.watcher import Notice, Watcher

MAX_CANDIDATES = 1000
MAX_ADMITTED = 10_000
REVIVE_PAUSE = 5.0  # seconds between two restarts of a watcher that will not stay up


class Arrivals:
    def __init__(
        self,
        parts: Parts,
        intake: Intake,
        gate: Gate,
        busy: Callable[[Where], bool],
        wake: Callable[[], None],
    ) -> None:
        self.parts, self.intake, self.gate, self.busy, self.wake = parts, intake, gate, busy, wake
        self.notices: queue.SimpleQueue[Notice] = queue.SimpleQueue()
        self.watcher: Watcher | None = None
        self.backlog = False  # the last scan left inputs for the next one
        self._revive_at = 0.0
        self._admitted: dict[Where, Examined] = {}  # rule 7, filled from other threads
        self._admitting = threading.Lock()

    def reconfigure(self, parts: Parts) -> None:
        """A reload: the new snapshot (`daemon.parts` rule 1)."""
        self.parts = parts

    # -- the watcher -----------------------------------------------------------------------

    def watch(self, *, polling: bool, also: dict[str, Callable[[], None]] | None = None) -> None:
        """Watch the input lanes; `also`: more folders on the same observer (one inotify instance),
        each with what a change there calls (any thread; it only hands the news on)."""
        extra = also or {}

        def put(notice: Notice) -> None:
            hinted = extra.get(notice[0])
            if hinted is not None:
                hinted()
                return
            self.notices.put(notice)
            self.wake()

        log = self.parts.log
        self.ensure_lanes()
        self.watcher = Watcher(self.parts.hub.root, (*INPUT_LANES, *extra), polling=polling, put=put)
        self.watcher.start()
        self.intake.track(writers=self.watcher.reports_close)
        for error in self.watcher.errors:
            log.error("watcher.unavailable", reason=error, fallback="rescans only")
        log.info("watcher.started", polling=polling)

    def arrived(self, lane: str, name: str) -> None:
        """A writer in this process says `lane/name` is complete (`Hint.ARRIVED`); any thread."""
        self.notices.put((lane, name, Hint.ARRIVED))
        self.wake()

    def admit(self, lane: str, name: str, examined: Examined) -> None:
        """Rule 7: a writer in this process is about to write `lane/name`, admitted as `examined`;
        any thread."""
        with self._admitting:
            if len(self._admitted) >= MAX_ADMITTED:
                del self._admitted[next(iter(self._admitted))]
            self._admitted[(lane, name)] = examined

    def admitted(self, where: Where) -> Examined | None:
        """Rule 7: the admission handed on for `where`, once (None: none)."""
        if not self._admitted:
            return None
        with self._admitting:
            return self._admitted.pop(where, None)

    def healthy(self) -> bool:
        return self.watcher is None or self.watcher.healthy()

    def revive(self, now: float) -> bool:
        """False (after restarting it) when the observer thread died: a rescan must follow.

        A watcher that will not stay up is restarted at most every `REVIVE_PAUSE` seconds; the
        periodic rescans go on meanwhile, so nothing is missed, only later.
        """
        if self.healthy() or now < self._revive_at:
            return True
        assert self.watcher is not None
        self.parts.log.error("watcher.died", action="restarted; rescanning")
        self.parts.health.failed("the watcher thread died (restarted)")
        self.ensure_lanes()
        self.watcher.restart()
        for error in self.watcher.errors:
            self.parts.log.error("watcher.unavailable", reason=error, fallback="rescans only")
        self._revive_at = now + REVIVE_PAUSE
        return False

    def ensure_lanes(self) -> bool:
        """Re-create lanes that vanished (SPEC §7); True when one was made."""
        made = self.parts.hub.ensure_lanes()
        for lane in made:
            self.parts.log.warning(
                "lane.created", lane=lane, reason="it was missing (git and sync clients drop empty folders)"
            )
        return bool(made)

    def stop(self) -> None:
        if self.watcher is not None:
            self.watcher.stop()

    # -- hints -----------------------------------------------------------------------------

    def take_hints(self, now: float) -> bool:
        """Feed the watcher's hints to the intake; True when a full rescan was asked for."""
        parts, intake, rescan = self.parts, self.intake, False
        while True:
            try:
                lane, name, hint = self.notices.get_nowait()
            except queue.Empty:
                return rescan
            if hint is Hint.RESCAN:
                parts.log.warning("watcher.overflowed", action="rescanning")
                rescan = True
                continue
            kind = classify(name, lane=lane)
            if kind is Kind.SIDECAR:
                self._signature_arrived(name, now)
            if self.busy((lane, name)) or kind not in (Kind.INPUT, Kind.BAD_NAME):
                continue
            status = parts.hub.lstat(lane, name)
            intake.hinted((lane, name), hint, signature_of(status), now=now, wall=time.time(), kind=kind)

    def _signature_arrived(self, sidecar: str, now: float) -> None:
        """Rule 4: the order that waited for this signature is due now."""
        order = self.gate.arrived(sidecar)
        if order is None:
            return
        status = self.parts.hub.lstat("authorized", order)
        self.intake.hinted(("authorized", order), Hint.ARRIVED, signature_of(status), now=now)

    # -- scans -----------------------------------------------------------------------------

    def scan(self, now: float) -> None:
        """Rule 1."""
        parts, intake = self.parts, self.intake
        self.backlog = False
        if self.ensure_lanes() and self.watcher is not None:
            self.watcher.restart()  # watch the lanes just made
        intake.scan_started()
        wall = time.time()
        oldest: Oldest[tuple[Entry, Kind]] = Oldest(max(MAX_CANDIDATES - len(intake), 0))
        sidecars: list[tuple[str, Entry]] = []
        seen: set[tuple[str, str]] = set()  # tracked names still present
        for lane in INPUT_LANES:
            try:
                for entry in parts.hub.entries(lane):
                    where = (lane, entry.name)
                    if intake.tracks(where):
                        seen.add(where)
                    if self.busy(where) or intake.is_quiet(where, entry.signature):
                        continue
                    kind = classify(entry.name, lane=lane)
                    if kind in (Kind.INPUT, Kind.BAD_NAME):
                        if not intake.has(where):
                            oldest.offer(where, entry.stat.st_mtime_ns, (entry, kind))
                        continue
                    if kind is Kind.SIDECAR:
                        sidecars.append((lane, entry))
                        continue
                    intake.quiet(where, entry.signature)
                    seen.add(where)
                    if kind is Kind.OTHER:
                        parts.log.info("file.unrecognized", lane=lane, file=entry.name)
            except OSError as error:
                parts.log.error("lane.unreadable", lane=lane, reason=str(error))
                parts.health.failed(f"{lane}/ unreadable")
        self.backlog = oldest.overflowed
        for where, (entry, kind) in oldest.sorted():
            intake.scanned(where, entry.signature, age=wall - entry.stat.st_mtime, now=now, kind=kind)
            seen.add(where)
        for lane, entry in sidecars:
            self._scanned_signature(lane, entry, now)
            seen.add((lane, entry.name))
        intake.forget_missing(seen)

    def _scanned_signature(self, lane: str, entry: Entry, now: float) -> None:
        """Rule 4 for a signature a scan found."""
        parts, intake, where = self.parts, self.intake, (lane, entry.name)
        self._signature_arrived(entry.name, now)
        order = order_of(entry.name)
        assert order is not None  # classified as a sidecar
        if parts.hub.exists(lane, order):
            intake.quiet(where, entry.signature)
        elif not intake.has(where):
            order_archived = parts.ledger.archive_paths(lane, order)
            until = now if order_archived else self.gate.orphan_until(entry.name, now)
            intake.defer(where, entry.signature, until=until, kind=Kind.SIDECAR)
