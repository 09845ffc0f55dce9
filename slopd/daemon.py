"""The daemon: the one module that knows the whole life of an input.

Order of effects for one input (SPEC §7): ledger `received` → (ack) → `executing` → run →
`finished` (outcome stored) → reply written → ledger `done` → moved to `archive/`.

Rules:
1. The main loop owns the hub, the ledger and every reply; worker threads only run commands.
2. A file is read once it has settled (size, mtime and inode unchanged for `settle`), or at
   once when its last write is already older than `settle`.
3. An input never crashes the loop: any unexpected failure is logged and the file stays for
   the next scan.
4. At start, an id left `executing` is answered `interrupted, not retried`; everything else
   unfinished is resumed from its ledger status.
5. Due inputs are handled in batches of up to BATCH (group commit): the replies are made
   durable together, and the ledger commit, the directory fsyncs and the moves into
   `archive/` happen once per batch, in the order above (docs/design.md). A job never starts
   from an uncommitted batch; finished jobs are answered one at a time.
"""

from __future__ import annotations

import hashlib
import queue
import shutil
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from slopd import executor, log
from slopd.batch import GroupCommit
from slopd.config import Command, Config, load_trust
from slopd.core import notes, replies, sshsig, summary
from slopd.core.envelope import Envelope, EnvelopeError, parse, render, to_json
from slopd.core.names import Kind, classify, is_sane
from slopd.core.orders import Trust, Valid
from slopd.core.routing import (
    ACTION_PREFIX,
    EXECUTOR,
    Acknowledge,
    Decision,
    Discuss,
    Execute,
    Lane,
    Leave,
    Record,
    Reject,
    decide,
    label,
    requested_mode,
)
from slopd.executor import RunResult
from slopd.gate import Gate, Hold
from slopd.hub import INPUT_LANES, Contents, Entry, Hub, Unreadable, has_files, read_file, signature
from slopd.intake import Intake, Oldest
from slopd.jobs import Job, JobPool
from slopd.ledger import Ledger, Row
from slopd.notifier import Notifier
from slopd.notify import SystemdNotifier
from slopd.watcher import Hint, Notice, Watcher

SUMMARIZER = "summarizer"
SUMMARIZER_TIMEOUT = 120.0
INTERRUPTED = "interrupted, not retried: slopd stopped while the command ran"
WRITER_TIMEOUT = 30.0
MAX_CANDIDATES = 1000  # a backlog is taken in slices, so memory does not grow with it
BATCH = 100  # inputs per group commit
Runner = Callable[..., RunResult]


@dataclass(frozen=True, slots=True)
class Where:
    """An input file: its lane, its name, and the inode that was read (None: not read now)."""

    lane: str
    name: str
    inode: int | None = None

    @property
    def path(self) -> str:
        """`lane/name`, with an unsafe name (undecodable, control characters) escaped."""
        return f"{self.lane}/{self.name if is_sane(self.name) else ascii(self.name)[1:-1]}"


class Daemon:
    def __init__(
        self,
        *,
        hub: Hub,
        ledger: Ledger,
        config: Config,
        state_dir: Path,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        runner: Runner = executor.run,
        trust: Trust | None = None,
    ) -> None:
        self.hub, self.ledger, self.config, self.state_dir = hub, ledger, config, state_dir
        self.clock, self.runner = clock, runner
        self.policy = config.policy()
        self.log = log.get()
        self.wakeup = threading.Event()
        limits = {EXECUTOR: config.executor.max_parallel if config.executor else 1, SUMMARIZER: 2}
        self.jobs = JobPool(limits, wake=self.wakeup.set, before_start=self._before_start)
        self.in_flight: set[tuple[str, str]] = set()
        self.backlog = False
        self.rescan_requested = False
        self.systemd = SystemdNotifier()
        self.last_error: str | None = None
        self._last_status = ""
        self.notifier = Notifier(config.notify, runner, executor.child_environment({}), self.log)
        self.gate = Gate(hub, trust, config.auth.sig_grace, clock)
        self.notices: queue.SimpleQueue[Notice] = queue.SimpleQueue()
        self.watcher: Watcher | None = None
        self.intake = Intake(settle=config.settle, writer_timeout=WRITER_TIMEOUT, track_writers=False)
        self.reload: Callable[[], Config] | None = None
        self.reload_requested = False
        self._now: tuple[datetime | None, str] = (None, "")
        self.commits = GroupCommit(hub, ledger, self.log, self._failed)

    # -- the loop ------------------------------------------------------------------------

    def run(
        self, *, stop: threading.Event, once: bool = False, grace: float = 30.0, polling: bool = False
    ) -> None:
        """Recover, then scan and serve until `stop` (or, with `once`, until nothing is left)."""
        self.recover()
        if not once:
            self._start_watcher(polling)
        next_scan = 0.0
        ready = False
        try:
            while not stop.is_set():
                if self.reload_requested:
                    self._reload()
                if self._take_notices() or not self._watcher_healthy():
                    next_scan = 0.0
                if self.rescan_requested:
                    next_scan, self.rescan_requested = 0.0, False
                if time.monotonic() >= next_scan:
                    self.scan()
                    next_scan = time.monotonic() + self.config.rescan_interval
                    if not ready:
                        self.systemd.ready(self.summary())
                        ready = True
                self.process_due()
                self.finish_jobs()
                if once and not len(self.intake) and not self.jobs.busy() and not self.backlog:
                    break
                self._report_health()
                if self.backlog and not len(self.intake):
                    next_scan = 0.0  # the next slice of a backlog, at once
                next_notice = self.notifier.tick(time.monotonic())
                deadline = min(
                    next_scan,
                    self.intake.next_deadline(),
                    next_notice,
                    self.systemd.ping_due(time.monotonic()),
                )
                self.wakeup.wait(timeout=max(deadline - time.monotonic(), 0.0))
                self.wakeup.clear()
        finally:
            if self.watcher is not None:
                self.watcher.stop()
        self.shutdown(grace)

    def summary(self) -> str:
        """The one-line STATUS for systemd: pending, in flight, the last error."""
        waiting = len(self.jobs.waiting())
        return (
            f"{len(self.intake)} pending, {self.jobs.running()} running, {waiting} queued; "
            f"last error: {self.last_error or 'none'}"
        )[:200]

    def _report_health(self) -> None:
        """STATUS when it changed; WATCHDOG=1 only while the loop runs and the observer lives."""
        status = self.summary()
        if status != self._last_status:
            self.systemd.status(status)
            self._last_status = status
        if self.watcher is None or self.watcher.healthy():
            self.systemd.ping(time.monotonic())

    def _start_watcher(self, polling: bool) -> None:
        def put(notice: Notice) -> None:
            self.notices.put(notice)
            self.wakeup.set()

        self.watcher = Watcher(self.hub.root, INPUT_LANES, polling=polling, put=put)
        self.watcher.start()
        self.intake.track_writers = self.watcher.reports_close
        for error in self.watcher.errors:
            self.log.error("watcher.unavailable", reason=error, fallback="rescans only")
        self.log.info("watcher.started", polling=polling)

    def _watcher_healthy(self) -> bool:
        """False (after restarting it) when the observer thread died: a rescan must follow."""
        if self.watcher is None or self.watcher.healthy():
            return True
        self.log.error("watcher.died", action="restarted; rescanning")
        self.last_error = "the watcher thread died (restarted)"
        self.watcher.restart()
        return False

    def _take_notices(self) -> bool:
        """Feed event hints to the intake; True when a full rescan was asked for."""
        rescan = False
        while True:
            try:
                lane, name, hint = self.notices.get_nowait()
            except queue.Empty:
                return rescan
            if hint is Hint.RESCAN:
                self.log.warning("watcher.overflowed", action="rescanning")
                rescan = True
                continue
            kind = classify(name, lane=lane)
            if kind is Kind.SIDECAR:
                self._sidecar_arrived(name)
            if (lane, name) in self.in_flight or kind not in (Kind.INPUT, Kind.BAD_NAME):
                continue
            status = self.hub.lstat(lane, name)
            self.intake.hinted((lane, name), hint, signature(status), now=time.monotonic(), wall=time.time())

    def _reload(self) -> None:
        """SIGHUP: take the new config, or keep the old one and say which key is wrong."""
        self.reload_requested = False
        if self.reload is None:
            return
        self.systemd.reloading()
        try:
            self._apply_reload()
        finally:
            self.systemd.ready(self.summary())

    def _apply_reload(self) -> None:
        assert self.reload is not None
        try:
            config = self.reload()
            trust = load_trust(config)
        except Exception as error:  # any failure keeps the running config
            self.log.error("config.reload_failed", reason=str(error))
            self.last_error = f"reload failed: {error}"
            return
        self.config, self.policy = config, config.policy()
        self.notifier.argv = config.notify
        self.intake.settle = config.settle
        self.gate.trust, self.gate.grace = trust, config.auth.sig_grace
        self.jobs.set_limit(EXECUTOR, config.executor.max_parallel if config.executor else 1)
        self.intake.release_all()
        self.rescan_requested = True
        self.log.info("config.reloaded")

    def now(self) -> str:
        second = self.clock().replace(microsecond=0)
        if second != self._now[0]:
            self._now = (second, replies.timestamp(second))
        return self._now[1]

    def scan(self) -> None:
        """Stream the input lanes; the oldest new inputs become candidates, at most MAX_CANDIDATES.

        Nothing but those candidates and the names already tracked is kept, so a backlog of any
        size costs no more memory than a full slice; the rest is taken at the next scan.
        """
        self.backlog = False
        self.intake.scan_started()
        now, wall = time.monotonic(), time.time()
        oldest: Oldest[Entry] = Oldest(max(MAX_CANDIDATES - len(self.intake), 0))
        sidecars: list[tuple[str, Entry]] = []
        seen: set[tuple[str, str]] = set()  # tracked names still present
        for lane in INPUT_LANES:
            try:
                for entry in self.hub.entries(lane):
                    where = (lane, entry.name)
                    if self.intake.tracks(where):
                        seen.add(where)
                    if where in self.in_flight or self.intake.is_quiet(where, entry.signature):
                        continue
                    kind = classify(entry.name, lane=lane)
                    if kind in (Kind.INPUT, Kind.BAD_NAME):
                        if not self.intake.has(where):
                            oldest.offer(where, entry.stat.st_mtime_ns, entry)
                        continue
                    if kind is Kind.SIDECAR:
                        sidecars.append((lane, entry))
                        continue
                    self.intake.quiet(where, entry.signature)
                    seen.add(where)
                    if kind is Kind.OTHER:
                        self.log.info("file.unrecognized", lane=lane, file=entry.name)
            except OSError as error:
                self.log.error("lane.unreadable", lane=lane, reason=str(error))
                self.last_error = f"{lane}/ unreadable"
        self.backlog = oldest.overflowed
        for where, entry in oldest.sorted():
            self.intake.scanned(where, entry.signature, age=wall - entry.stat.st_mtime, now=now)
            seen.add(where)
        for lane, entry in sidecars:
            where = (lane, entry.name)
            self._sidecar_arrived(entry.name)
            seen.add(where)
            order = entry.name.removesuffix(".sig")
            if self.hub.exists(lane, order):
                self.intake.quiet(where, entry.signature)
            elif not self.intake.has(where):
                order_archived = self.ledger.archive_paths(lane, order)
                until = now if order_archived else self.gate.orphan_until(entry.name, now)
                self.intake.defer(where, entry.signature, until=until)
        self.intake.forget_missing(seen)

    def _sidecar_arrived(self, sidecar: str) -> None:
        """The signature an authorized order waited for has arrived: the order is due now."""
        order = self.gate.arrived(sidecar)
        if order is None:
            return
        status = self.hub.lstat("authorized", order)
        self.intake.hinted(("authorized", order), Hint.ARRIVED, signature(status), now=time.monotonic())

    def process_due(self) -> None:
        """Handle every candidate whose wait is over and that has not changed meanwhile.

        In batches (rule 5); the inputs of a batch that failed as a whole are redone one by one,
        so an input that cannot be answered never holds back the others.
        """
        due = self.intake.due(time.monotonic())
        for start in range(0, len(due), BATCH):
            undone = self._batch(due[start : start + BATCH], confirm=True)
            if len(undone) > 1:
                for where in undone:
                    self._batch([where], confirm=False)

    # -- group commit --------------------------------------------------------------------

    def _batch(self, inputs: list[tuple[str, str]], *, confirm: bool) -> list[tuple[str, str]]:
        """Handle `inputs` as one batch; returns those whose effects a failed commit undid."""
        self.commits.begin(stage=len(inputs) > 1)
        try:
            for lane, name in inputs:
                status = self.hub.lstat(lane, name)
                if confirm:
                    if not self.intake.confirm((lane, name), signature(status), now=time.monotonic()):
                        continue
                elif status is None or (lane, name) in self.in_flight:
                    continue
                assert status is not None
                self.commits.inputs.append((lane, name))
                self.handle(lane, Entry(name, status))
        finally:
            undone = self.commits.end()
        return undone

    def _failed(self, where: tuple[str, str], reason: str) -> None:
        """An input the batch could not finish: it stays in its lane for the next scan."""
        self.intake.failed(where)
        self.last_error = reason

    # -- one input -----------------------------------------------------------------------

    def handle(self, lane: str, entry: Entry) -> None:
        bound = self.log.bind(lane=lane, file=entry.name)
        try:
            self._handle(lane, entry, bound)
        except Exception:  # one bad input must never stop the loop
            bound.exception("envelope.failed")
            self.last_error = f"{lane}/{entry.name}: handling failed"
            self.intake.failed((lane, entry.name))  # retried at the next full scan, not in a hot loop

    def _handle(self, lane: str, entry: Entry, bound: Any) -> None:
        where = Where(lane, entry.name, entry.stat.st_ino)
        kind = classify(entry.name, lane=lane)
        if kind is Kind.SIDECAR:
            self._orphan_signature(where, entry, bound)
            return
        if kind is Kind.BAD_NAME:
            reason = "has a name that is not valid UTF-8, is over 255 bytes, or has control characters"
            self._reject_unreadable(where, entry, reason, bound)
            return
        if entry.stat.st_nlink > 1 and self._finish_interrupted_archive(where, bound):
            return
        contents = self.hub.read(lane, entry.name, self.config.max_envelope_bytes)
        if isinstance(contents, Unreadable):
            if contents.stat is None and not self.hub.exists(lane, entry.name):
                bound.debug("envelope.vanished")  # renamed away or deleted since the scan
                return
            self._reject_unreadable(where, entry, contents.reason, bound)
            return
        where = Where(lane, entry.name, contents.stat.st_ino)
        sha = hashlib.sha256(contents.data).hexdigest()
        try:
            envelope = parse(contents.data, name=entry.name, max_bytes=self.config.max_envelope_bytes)
        except EnvelopeError as error:
            identity = f"{lane}\0{entry.name}\0{sha}".encode(errors="surrogateescape")
            key = "invalid:" + hashlib.sha256(identity).hexdigest()
            self._answer_invalid(where, key, sha, error.reasons, error.id, error.sender, bound)
            return
        self._accept(
            where, entry, sha, envelope, contents.data, bound.bind(id=envelope.id, type=envelope.type)
        )

    def _orphan_signature(self, where: Where, entry: Entry, bound: Any) -> None:
        """A `NAME.md.sig` alone in the lane: left behind by its archived order (a crash between
        the two moves) it follows it quietly; otherwise, once the grace is over, it is answered."""
        order = where.name.removesuffix(".sig")
        if self.hub.exists(where.lane, order):
            self.intake.quiet((where.lane, where.name), entry.signature)
            return
        if entry.stat.st_nlink > 1 and self._finish_interrupted_sidecar(where, order, bound):
            return
        if self._belongs_to_archived_order(where, order):
            target = self.hub.archive_target(where.name, self.clock())
            self.commits.move(
                where.lane, where.name, target, bound, "sidecar.archived", sidecar=where.name, resumed=True
            )
            self.gate.forget(where.name)
            return
        until = self.gate.orphan_until(where.name, time.monotonic())
        if time.monotonic() < until:
            self.intake.defer((where.lane, where.name), entry.signature, until=until)
            return
        self.gate.forget(where.name)
        grace = self.config.auth.sig_grace
        reason = f"is a signature without its order: {order} did not arrive within {grace:g} s"
        self._reject_unreadable(where, entry, reason, bound)

    def _finish_interrupted_sidecar(self, where: Where, order: str, bound: Any) -> bool:
        """A signature with a second link beside its archived order: a move cut short; finish it."""
        stem, dot, suffix = where.name[1:].partition(".")
        stem, suffix = where.name[0] + stem, dot + suffix
        for archived in self.ledger.archive_paths(where.lane, order):
            folder = archived.rpartition("/")[0]
            for name in [where.name, *(f"{stem}-{n}{suffix}" for n in range(2, 10))]:
                if self.hub.is_archived_copy(where.lane, where.name, f"{folder}/{name}"):
                    self.commits.move(
                        where.lane,
                        where.name,
                        f"{folder}/{name}",
                        bound,
                        "sidecar.archived",
                        sidecar=where.name,
                        resumed=True,
                    )
                    self.gate.forget(where.name)
                    return True
        return False

    def _belongs_to_archived_order(self, where: Where, order: str) -> bool:
        """Whether this signature signs the exact bytes of an order already archived under `order`."""
        sidecar = self.hub.read(where.lane, where.name, sshsig.MAX_SIGNATURE_BYTES)
        if not isinstance(sidecar, Contents):
            return False
        for archived in self.ledger.archive_paths(where.lane, order):
            message = read_file(self.hub.root / archived, self.config.max_envelope_bytes)
            if isinstance(message, Contents) and isinstance(
                sshsig.verify(message.data, sidecar.data, namespace=self.config.auth.namespace),
                sshsig.Verified,
            ):
                return True
        return False

    def _finish_interrupted_archive(self, where: Where, bound: Any) -> bool:
        """A second link to an archived copy is a move cut short by a crash: finish it (and its
        signature, which the crash may have left behind too)."""
        for target in self.ledger.archive_paths(where.lane, where.name):
            if self.hub.is_archived_copy(where.lane, where.name, target):
                self.commits.move(where.lane, where.name, target, bound, "envelope.archived", resumed=True)
                self._archive_sidecar(where, None, bound)
                return True
        return False

    def _reject_unreadable(self, where: Where, entry: Entry, reason: str, bound: Any) -> None:
        status = entry.stat
        identity = (
            f"{where.lane}\0{where.name}\0{reason}\0{status.st_ino}\0{status.st_size}\0{status.st_mtime_ns}"
        ).encode(errors="surrogateescape")
        key = "invalid:" + hashlib.sha256(identity).hexdigest()
        self._answer_invalid(where, key, "", [f"the file {reason}"], None, None, bound)

    def _answer_invalid(
        self,
        where: Where,
        key: str,
        sha: str,
        reasons: tuple[str, ...] | list[str],
        id_: str | None,
        sender: str | None,
        bound: Any,
    ) -> None:
        if id_ is not None:
            bound = bound.bind(id=id_)
        row = self.ledger.get(key)
        if row is None:
            self.ledger.insert(
                key=key,
                id=id_,
                lane=where.lane,
                file=where.name,
                sha256=sha,
                type=None,
                sender=sender,
                mode=None,
                decision="invalid",
                now=self.now(),
            )
            bound.warning("envelope.invalid", reasons=list(reasons))
        elif row.status == "done":
            self._archive(key, where, bound)
            return
        reply = replies.invalid(
            file=where.path,
            reasons=reasons,
            digest=key.removeprefix("invalid:"),
            id=id_,
            sender=sender,
            watcher=self.config.watcher,
            now=self.clock(),
        )
        self._complete(key, where, reply, row.replies if row else (), bound)

    def _accept(
        self, where: Where, entry: Entry, sha: str, envelope: Envelope, data: bytes, bound: Any
    ) -> None:
        row = self.ledger.get(envelope.id)
        if row is not None:
            same = (row.lane, row.file, row.sha256) == (where.lane, where.name, sha)
            if same and row.archive is None:
                self._resume(row, where, entry, envelope, data, bound)
            elif same and row.status == "done" and row.archive and not self.hub.path_exists(row.archive):
                # Committed as archived, but the move was cut short before its link: finish it.
                self.commits.move(
                    where.lane, where.name, row.archive, bound, "envelope.archived", resumed=True
                )
                self._archive_sidecar(where, envelope, bound)
            else:
                self.gate.forget(where.name)
                self._duplicate(where, sha, envelope, bound)
            return
        decision = self._decide(where, entry, envelope, data, bound)
        if decision is None:
            return
        if isinstance(decision, Leave):
            bound.info("envelope.left", reason=decision.reason)
            self.intake.quiet((where.lane, where.name), entry.signature)
            return
        mode = requested_mode(envelope)
        self.ledger.insert(
            key=envelope.id,
            id=envelope.id,
            lane=where.lane,
            file=where.name,
            sha256=sha,
            type=envelope.type,
            sender=envelope.sender,
            mode=mode,
            decision=label(decision),
            now=self.now(),
        )
        bound.info("envelope.received", sha256=sha, mode=mode, decision=label(decision))
        self._perform(envelope, decision, where, (), bound)

    def _decide(
        self, where: Where, entry: Entry, envelope: Envelope, data: bytes, bound: Any
    ) -> Decision | None:
        """Route one envelope; in `authorized/` verify it first. None: held for its signature."""
        decision = decide(envelope, Lane(where.lane), self.policy)
        if where.lane != "authorized" or isinstance(decision, Leave):
            return decision
        verdict = self.gate.examine(where.name, envelope, data, time.monotonic())
        if isinstance(verdict, Hold):
            if verdict.first:
                bound.info("envelope.held", reason=f"waiting for its signature {verdict.sidecar}")
            self.intake.defer((where.lane, where.name), entry.signature, until=verdict.until)
            return None
        if isinstance(verdict, Valid):
            bound.info(
                "order.verified", principal=verdict.principal, key=verdict.fingerprint, line=verdict.line
            )
        else:
            bound.warning("order.rejected", reason=verdict.reason)
        return decide(envelope, Lane(where.lane), self.policy, verdict)

    def _duplicate(self, where: Where, sha: str, envelope: Envelope, bound: Any) -> None:
        target = self.hub.archive_target(where.name, self.clock())
        self.ledger.add_duplicate(
            id=envelope.id, lane=where.lane, file=where.name, sha256=sha, archive=target, now=self.now()
        )
        self.commits.move(where.lane, where.name, target, bound, "envelope.duplicate")
        self._archive_sidecar(where, envelope, bound)

    def _resume(
        self, row: Row, where: Where, entry: Entry, envelope: Envelope, data: bytes, bound: Any
    ) -> None:
        bound.info("envelope.resumed", status=row.status)
        recorded = row.decision or ""
        if row.status == "queued" and recorded.startswith("execute:"):
            # Accepted (and for an order, verified) before the crash: run it as decided then.
            self._submit(envelope, Execute(recorded.removeprefix("execute:")), where)
            return
        if row.status in ("received", "queued"):
            decision = self._decide(where, entry, envelope, data, bound)
            if decision is not None and not isinstance(decision, Leave):
                self._perform(envelope, decision, where, row.replies, bound)
        elif row.status in ("executing", "finished"):
            self._answer_outcome(
                row, row.outcome or {"kind": "error", "reasons": [INTERRUPTED]}, where, bound, envelope
            )
        else:
            self._archive(row.key, where, bound, envelope)

    def _perform(
        self,
        envelope: Envelope,
        decision: Decision,
        where: Where,
        sent: tuple[str, ...],
        bound: Any,
    ) -> None:
        key, sender, watcher, now = envelope.id, envelope.sender, self.config.watcher, self.clock()
        match decision:
            case Acknowledge():
                if envelope.type == "note":
                    self._index_note(envelope, bound)
                    text = "Note indexed into notes/INDEX.md."
                else:
                    text = f"Handshake received by {watcher}."
                reply = replies.ack(
                    answering=key, to=sender, text=text, mode="discuss", watcher=watcher, now=now
                )
                self._complete(key, where, reply, sent, bound, envelope)
            case Discuss() if self.config.summarizer is not None:
                self._submit(envelope, decision, where)
            case Discuss():
                reply = replies.result(
                    answering=key,
                    to=sender,
                    text=summary.summarize(envelope),
                    mode="discuss",
                    watcher=watcher,
                    now=now,
                )
                self._complete(key, where, reply, sent, bound, envelope)
            case Execute(target):
                if replies.reply_id(key, "ack") not in sent:
                    what = (
                        "the executor"
                        if target == EXECUTOR
                        else f"action {target.removeprefix(ACTION_PREFIX)}"
                        if target.startswith(ACTION_PREFIX)
                        else f"seat {target}"
                    )
                    self._send(
                        key,
                        replies.ack(
                            answering=key,
                            to=sender,
                            mode="execute",
                            text=f"Accepted: running {what}.",
                            watcher=watcher,
                            now=now,
                        ),
                        bound,
                    )
                self.ledger.advance(key, "queued", now=self.now())
                self._submit(envelope, decision, where)
            case Record():
                self._notify(replies.incoming(envelope), bound)
                if not self._archive(key, where, bound, envelope):
                    self.ledger.advance(key, "done", now=self.now())
            case Reject(reason):
                reply = replies.error(
                    answering=key,
                    to=sender,
                    reasons=[reason],
                    file=where.path,
                    mode=requested_mode(envelope),
                    watcher=watcher,
                    now=now,
                )
                self._complete(key, where, reply, sent, bound, envelope)
            case Leave():  # pragma: no cover  # answered before _perform is reached
                pass

    def _complete(
        self,
        key: str,
        where: Where,
        reply: Envelope,
        sent: tuple[str, ...],
        bound: Any,
        envelope: Envelope | None = None,
        files: Path | None = None,
    ) -> None:
        """Write the terminal reply (unless already written), mark done, archive."""
        if reply.id not in sent:
            self._send(key, reply, bound, files)
        if not self._archive(key, where, bound, envelope):
            self.ledger.advance(key, "done", now=self.now())

    def _send(self, key: str, reply: Envelope, bound: Any, files: Path | None = None) -> None:
        path = f"outbox/{reply.id}.md"
        if files is not None:
            count = self.hub.copy_tree(files, "outbox", reply.id)
            bound.info("deliverable.written", path=f"outbox/{reply.id}/", files=count)
        self.hub.write("outbox", f"{reply.id}.md", render(reply))
        reply_class = replies.reply_class(reply)
        self.ledger.add_reply(
            key,
            reply_id=reply.id,
            in_reply_to=reply.in_reply_to,
            type=reply.type,
            reply_class=reply_class,
            path=path,
            now=self.now(),
        )
        bound.info("reply.written", reply=reply.id, reply_type=reply.type, reply_class=reply_class)
        text = replies.notification(reply, path)
        if text is not None:
            self._notify(text, bound)

    def _archive(self, key: str, where: Where, bound: Any, envelope: Envelope | None = None) -> bool:
        """Mark done and archive the input — only the very file that was read (same inode).

        The target is in the ledger before the link exists, so a crash between link and unlink
        is finished at the next scan. False when there was nothing to archive.
        """
        archived = False
        status = self.hub.lstat(where.lane, where.name)
        if where.inode is not None and status is not None:
            if status.st_ino != where.inode:
                bound.warning("envelope.replaced", reason="a new file took its name; read next scan")
            else:
                target = self.hub.archive_target(where.name, self.clock())
                self.ledger.advance(key, "done", now=self.now(), archive=target)
                self.commits.move(where.lane, where.name, target, bound, "envelope.archived")
                archived = True
        self._archive_sidecar(where, envelope, bound)
        return archived

    def _archive_sidecar(self, where: Where, envelope: Envelope | None, bound: Any) -> None:
        """An order's signature goes with it: the one it names, or `NAME.sig` if unreadable."""
        if where.lane != "authorized":
            return
        own = f"{where.name}.sig"
        sidecar = envelope.sidecar if envelope is not None else own
        lane = where.lane
        if not sidecar:
            return
        if sidecar != own and self.hub.exists(lane, sidecar.removesuffix(".sig")):
            return  # it belongs to another order in the lane: naming it does not make it ours
        if self.hub.exists(lane, sidecar):
            target = self.hub.archive_target(sidecar, self.clock())
            self.commits.move(lane, sidecar, target, bound, "sidecar.archived", sidecar=sidecar)

    def _index_note(self, envelope: Envelope, bound: Any) -> None:
        self.ledger.add_note(notes.from_envelope(envelope), now=self.now())
        self.hub.write("notes", "INDEX.md", notes.render_index(self.ledger.notes()).encode())
        bound.info("note.indexed")

    def _notify(self, text: str, bound: Any) -> None:
        self.notifier.notify(text, time.monotonic(), bound)

    # -- jobs ----------------------------------------------------------------------------

    def _command_for(self, target: str) -> Command:
        if target == EXECUTOR:
            assert self.config.executor is not None
            return self.config.executor
        if target.startswith(ACTION_PREFIX):
            return self.config.actions[target.removeprefix(ACTION_PREFIX)]
        return self.config.seats[target]

    def _submit(self, envelope: Envelope, decision: Decision, where: Where) -> None:
        kind, target = (
            ("execute", decision.target) if isinstance(decision, Execute) else ("summarize", SUMMARIZER)
        )
        job = Job(
            key=envelope.id,
            kind=kind,
            target=target,
            envelope=envelope,
            lane=where.lane,
            file=where.name,
            inode=where.inode or 0,
            start=self._run_command,
        )
        with self.commits.outside():  # a job never runs from state a failed batch could undo
            self.in_flight.add((where.lane, where.name))
            self.jobs.submit(job)

    def _before_start(self, job: Job) -> None:
        """On the main loop, just before the job's thread starts: the at-most-once point."""
        if job.kind == "execute":
            with self.commits.outside():
                self.ledger.advance(job.key, "executing", now=self.now())
            self.log.info("execution.started", id=job.key, lane=job.lane, file=job.file, target=job.target)

    def run_dir(self, envelope_id: str) -> Path:
        return self.state_dir / "runs" / envelope_id

    def _run_command(self, job: Job) -> RunResult:
        """In a worker thread: run the executor, a seat, an action or the summarizer for one envelope.

        An action gets the whole envelope as JSON on stdin (SPEC §6); the others get the body.
        """
        envelope = job.envelope
        stdin, cwd = envelope.body.encode(), None
        if job.kind == "execute":
            command = self._command_for(job.target)
            argv, timeout, extra_env = command.argv, command.timeout, command.env
            if job.target.startswith(ACTION_PREFIX):
                stdin, cwd = to_json(envelope).encode(), command.cwd
        else:
            assert self.config.summarizer is not None
            argv, timeout, extra_env = self.config.summarizer, SUMMARIZER_TIMEOUT, {}
        run_dir = self.run_dir(envelope.id)
        shutil.rmtree(run_dir, ignore_errors=True)
        out_dir = run_dir / "out"
        out_dir.mkdir(parents=True)
        slop = {
            "SLOP_ID": envelope.id,
            "SLOP_FROM": envelope.sender,
            "SLOP_TO": envelope.to,
            "SLOP_TYPE": envelope.type,
            "SLOP_HUB": str(self.hub.root),
            "SLOP_OUT_DIR": str(out_dir),
        }
        job.context["timeout"] = timeout
        return self.runner(
            argv,
            stdin=stdin,
            env=executor.child_environment(slop, extra_env),
            timeout=timeout,
            cwd=Path(cwd) if cwd else run_dir,
            cancel=job.cancel,
        )

    def finish_jobs(self) -> None:
        """Answer finished jobs one at a time, not batched: an outcome is committed at once."""
        for job in self.jobs.collect():
            bound = self.log.bind(id=job.key, lane=job.lane, file=job.file, type=job.envelope.type)
            self.in_flight.discard((job.lane, job.file))
            try:
                self._finish(job, bound)
            except Exception:  # the loop outlives a failed reply; the next start resumes it
                bound.exception("job.failed")
                self.last_error = f"{job.key}: its reply failed"

    def _finish(self, job: Job, bound: Any) -> None:
        result = job.result
        assert result is not None
        if job.kind == "summarize":
            text = result.stdout.decode("utf-8", "replace").strip() if result.ok else ""
            if not text:
                bound.warning("summarizer.failed", exit_code=result.exit_code, timed_out=result.timed_out)
                text = summary.summarize(job.envelope)
            reply = replies.result(
                answering=job.key,
                to=job.envelope.sender,
                text=text + "\n",
                mode="discuss",
                watcher=self.config.watcher,
                now=self.clock(),
            )
            row = self.ledger.get(job.key)
            self._complete(job.key, self._where(job), reply, row.replies if row else (), bound, job.envelope)
            return
        outcome = self._outcome(job, result)
        bound.info(
            "execution.finished",
            exit_code=result.exit_code,
            timed_out=result.timed_out,
            cancelled=result.cancelled,
            outcome=outcome["kind"],
        )
        self.ledger.advance(job.key, "finished", now=self.now(), outcome=outcome)
        row = self.ledger.get(job.key)
        assert row is not None
        self._answer_outcome(row, outcome, self._where(job), bound, job.envelope)

    @staticmethod
    def _where(job: Job) -> Where:
        return Where(job.lane, job.file, job.inode)

    def _outcome(self, job: Job, result: RunResult) -> dict[str, Any]:
        if result.start_error is not None:
            return {"kind": "error", "reasons": [f"could not start the command: {result.start_error}"]}
        if result.cancelled:
            return {"kind": "error", "reasons": [INTERRUPTED]}
        if result.timed_out:
            timeout = job.context.get("timeout")
            return {
                "kind": "error",
                "reasons": [f"timed out after {timeout:g} s; its process group was killed"],
            }
        if result.exit_code != 0:
            tail = result.stderr_tail.decode("utf-8", "replace").strip().splitlines()[-20:]
            reasons = [f"the command exited with code {result.exit_code}"]
            if tail:
                reasons.append("stderr ends with:\n\n  " + "\n  ".join(tail))
            return {"kind": "error", "reasons": reasons}
        text = result.stdout.decode("utf-8", "replace")
        if result.truncated:
            text += f"\n\n[output truncated at {len(result.stdout)} bytes]\n"
        return {
            "kind": "result",
            "text": text or "(no output)\n",
            "files": has_files(self.run_dir(job.key) / "out"),
        }

    def _answer_outcome(
        self, row: Row, outcome: dict[str, Any], where: Where, bound: Any, envelope: Envelope | None = None
    ) -> None:
        assert row.id is not None
        assert row.sender is not None
        watcher, now = self.config.watcher, self.clock()
        if row.status != "finished":
            self.ledger.advance(row.key, "finished", now=self.now(), outcome=outcome)
        files = self.run_dir(row.id) / "out" if outcome.get("files") else None
        if outcome["kind"] == "result":
            reply = replies.result(
                answering=row.id,
                to=row.sender,
                text=outcome["text"],
                mode="execute",
                watcher=watcher,
                now=now,
                files=files is not None and files.is_dir(),
            )
        else:
            reply = replies.error(
                answering=row.id,
                to=row.sender,
                reasons=outcome["reasons"],
                file=where.path,
                mode="execute",
                watcher=watcher,
                now=now,
                headline="Execution failed for",
            )
        self._complete(
            row.key,
            where,
            reply,
            row.replies,
            bound,
            envelope,
            files if files is not None and files.is_dir() else None,
        )
        shutil.rmtree(self.run_dir(row.id), ignore_errors=True)

    # -- start and stop ------------------------------------------------------------------

    def recover(self) -> None:
        """Answer what a crash left unanswered; files still in lanes are resumed by the scan."""
        for removed in self.hub.remove_temps(now=time.time()):
            self.log.info("temp.removed", path=removed)
        for row in self.ledger.unfinished():
            bound = self.log.bind(id=row.id, lane=row.lane, file=row.file)
            where = Where(row.lane, row.file)  # no inode: the scan archives it after a sha check
            if row.status == "executing":
                bound.warning("execution.interrupted")
                self._answer_outcome(row, {"kind": "error", "reasons": [INTERRUPTED]}, where, bound)
            elif row.status == "finished" and row.outcome is not None:
                self._answer_outcome(row, row.outcome, where, bound)
            elif not self.hub.exists(row.lane, row.file) and row.id is not None and row.sender:
                reason = "the input file vanished from the hub before it was handled; nothing was run"
                reply = replies.error(
                    answering=row.id,
                    to=row.sender,
                    reasons=[reason],
                    file=where.path,
                    mode=row.mode or "discuss",
                    watcher=self.config.watcher,
                    now=self.clock(),
                )
                self._complete(row.key, where, reply, row.replies, bound)

    def shutdown(self, grace: float) -> None:
        """Stop taking work; let running jobs finish within `grace`, then cancel them."""
        self.systemd.stopping()
        for job in self.jobs.drop_waiting():
            self.in_flight.discard((job.lane, job.file))
        deadline = time.monotonic() + grace
        while self.jobs.running() and time.monotonic() < deadline:
            self.wakeup.wait(timeout=min(0.1, max(deadline - time.monotonic(), 0.0)))
            self.wakeup.clear()
            self.finish_jobs()
        if self.jobs.running():
            self.jobs.cancel_all()
            while self.jobs.running():
                self.wakeup.wait(timeout=0.1)
                self.wakeup.clear()
                self.finish_jobs()
        self.notifier.flush()
        self.notifier.wait()
