"""The daemon's loop: recover, then scan, take what is due, answer finished jobs, until stopped.

Order of effects for one input (SPEC §7): ledger `received` → (ack) → `executing` → run →
`finished` (outcome stored) → reply written → ledger `done` → moved to `archive/`.

Rules:
1. The loop's thread owns the hub, the ledger and every reply; worker threads only run
   commands (`daemon.jobs`). Signal handlers only set a flag and wake the loop.
2. One input's trip goes one way: arrivals → intake → `daemon.answering` (gathering, the
   handler, the interpreter, in batches); finished jobs and start-up recovery go there too.
3. What the loop waits for is the earliest of: the next scan, the intake's next deadline, the
   notifier's, systemd's watchdog, this watcher's presence, the next look at trusted files — or a
   wake-up (a watcher hint, a finished job, a console notice, a signal).
4. Nothing crashes the loop: an input, a job's reply, a console notice that fails is logged and
   left for later (the next full scan, the next start, the console's own error).
5. SIGHUP reloads the config (an invalid one is logged and the old one kept) and decides the
   home watcher again (`daemon.homing`), which also refreshes this watcher's presence; SIGTERM stops
   taking work, lets running jobs finish for `grace` seconds, then cancels them.
6. Without a signal, the allowed-signers file and the other trusted files (`parts.watched`)
   are looked at once a second (one stat each) and re-read when they changed (SPEC §14);
   the inputs' path pays nothing for it.
7. The loop owns the intake and the gate (state of this run, kept across reloads); a reload
   builds a new `Parts` snapshot and hands it to every module that keeps one (`reconfigure`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import replace

from slopd.core.intake import Intake
from slopd.daemon.answering import Answering
from slopd.daemon.approvals import Approvals
from slopd.daemon.arrivals import Arrivals
from slopd.daemon.gate import Gate, Trusted, trusted, warn_skipped
from slopd.daemon.gathering import Gatherer
from slopd.daemon.homing import Homing
from slopd.daemon.interpreter import Interpreter
from slopd.daemon.notices import Notices, carry_out
from slopd.daemon.parts import Parts
from slopd.daemon.runs import Runs
from slopd.daemon.standups import Standups
from slopd.shell.config import Config
from slopd.shell.sdnotify import SystemdNotifier

WRITER_TIMEOUT = 30.0  # seconds an open writer is waited for before it is presumed gone
Reload = Callable[[], Config]


class Daemon:
    def __init__(
        self,
        parts: Parts,
        *,
        trusted: Trusted = None,
        reload: Reload | None = None,
        notices: Notices | None = None,
    ) -> None:
        self.parts, self.reload = parts, reload
        self.wakeup = threading.Event()
        self.notices = notices or Notices()
        self.notices.connect(self.wakeup.set)
        config = parts.config
        self.intake = Intake(settle=config.settle, writer_timeout=WRITER_TIMEOUT, track_writers=False)
        self.gate = Gate(trusted, config.auth.sig_grace)
        self.homing = Homing(parts)
        self.runs = Runs(parts, self.wakeup.set)
        self.arrivals = Arrivals(parts, self.intake, self.gate, self.runs.busy, self.wakeup.set)
        self.approvals = Approvals(parts, lambda: self.homing.policy.home, self.wakeup.set)
        self.gathering = Gatherer(parts, self.gate)
        self.interpreter = Interpreter(
            parts, self.intake, self.gate, self.runs, Standups(parts), self.approvals
        )
        self.answering = Answering(
            parts, self.intake, self.arrivals, self.gathering, self.interpreter, self.homing, self.runs
        )
        self.systemd = SystemdNotifier()
        self._reload_requested = self._rescan_requested = False
        self._last_status = ""
        self._next_look = 0.0

    # -- what signal handlers may call -----------------------------------------------------

    def request_reload(self) -> None:
        self._reload_requested = True
        self.wakeup.set()

    # -- the loop --------------------------------------------------------------------------

    def run(
        self,
        *,
        stop: threading.Event,
        once: bool = False,
        grace: float = 30.0,
        polling: bool = False,
        stopping: Callable[[], None] | None = None,
    ) -> None:
        """Recover, then scan and serve until `stop` (or, with `once`, until nothing is left);
        `stopping` runs once the loop has ended, before the shutdown (the HTTP server's drain)."""
        self.homing.resolve()
        self.homing.tick(time.monotonic())  # this watcher's presence, before the first scan
        self.answering.recover()
        if not once:
            self.arrivals.watch(polling=polling, also=self.approvals.watched())
        next_scan, ready = 0.0, False
        try:
            while not stop.is_set():
                now = time.monotonic()
                if self._reload_requested:
                    self._reload()
                if self.arrivals.take_hints(now) or not self.arrivals.revive(now) or self._rescan_requested:
                    next_scan, self._rescan_requested = 0.0, False
                if now >= next_scan or self.approvals.hinted.is_set():
                    self.approvals.check()
                if now >= next_scan:
                    self.arrivals.scan(now)
                    next_scan = time.monotonic() + self.parts.config.rescan_interval
                    if not ready:
                        self.systemd.ready(self.summary())
                        ready = True
                self.answering.process_due(time.monotonic())
                self.process_notices()
                self.answering.finish_jobs()
                if once and self._drained():
                    break
                self._report_health()
                self._look_at_trusted_files(time.monotonic())
                self.homing.tick(time.monotonic())
                if self.homing.take_changed():  # inputs it left may be its own now, or no longer
                    self.intake.release_all()
                    next_scan = 0.0
                next_scan = self._wait(next_scan)
        finally:
            self.arrivals.stop()
            if stopping is not None:
                stopping()
        self.shutdown(grace)

    def process_notices(self) -> None:
        """The console's replies (`daemon.notices`), on this thread like every reply."""
        for notice in self.notices.take():
            try:
                notice.done.set_result(carry_out(self.parts, notice))
            except Exception as error:  # rule 4: a notice never crashes the loop; the console is told
                reply = notice.reply.id if notice.reply is not None else None
                self.parts.log.exception("notice.failed", reply=reply, draft=notice.draft, reason=str(error))
                notice.done.set_exception(error)

    def _drained(self) -> bool:
        return not len(self.intake) and not self.runs.pool.busy() and not self.arrivals.backlog

    def _wait(self, next_scan: float) -> float:
        """Sleep until the next deadline or a wake-up; returns the (maybe advanced) next scan."""
        if self.arrivals.backlog and not len(self.intake):
            next_scan = 0.0  # the next slice of a backlog, at once
        now = time.monotonic()
        deadline = min(
            next_scan,
            self.intake.next_deadline(),
            self.parts.notifier.tick(now),
            self.systemd.ping_due(now),
            self.homing.next_presence,
            self._next_look,
        )
        self.wakeup.wait(timeout=max(deadline - time.monotonic(), 0.0))
        self.wakeup.clear()
        return next_scan

    # -- health, reload, shutdown ----------------------------------------------------------

    def summary(self) -> str:
        """The one-line STATUS for systemd: pending, in flight, the last error."""
        pool = self.runs.pool
        return (
            f"{len(self.intake)} pending, {pool.running()} running, {len(pool.waiting())} queued; "
            f"last error: {self.parts.health.last_error or 'none'}"
        )[:200]

    def _report_health(self) -> None:
        """STATUS when it changed; WATCHDOG=1 only while the loop runs and the observer lives."""
        status = self.summary()
        if status != self._last_status:
            self.systemd.status(status)
            self._last_status = status
        if self.arrivals.healthy():
            self.systemd.ping(time.monotonic())

    def _look_at_trusted_files(self, now: float) -> None:
        """Rule 6: a stat a second per file; a changed file is re-read (and logged) at once."""
        trusted, watched = self.gate.trusted, self.parts.watched
        files = [trusted, *watched] if trusted is not None else watched
        self._next_look = min((one.poll(now) for one in files), default=float("inf"))

    def _reload(self) -> None:
        """SIGHUP: take the new config, or keep the old one and say which key is wrong."""
        self._reload_requested = False
        if self.reload is None:
            return
        self.systemd.reloading()
        try:
            self._apply_reload(self.reload)
        finally:
            self.systemd.ready(self.summary())

    def _apply_reload(self, reload: Reload) -> None:
        parts = self.parts
        for watched in parts.watched:
            watched.check()  # the tokens file, at once (rule 6)
        try:
            config = reload()
            trust = trusted(config, parts.log)
            sinks = parts.sinks_for(config)
        except Exception as error:  # any failure keeps the running config
            parts.log.error("config.reload_failed", reason=str(error))
            parts.health.failed(f"reload failed: {error}")
            return
        self.parts = parts = replace(parts, config=config)  # rule 7; the policy is decided below
        modules = (self.homing, self.runs, self.approvals, self.arrivals, self.gathering, self.interpreter)
        for module in (*modules, self.answering):
            module.reconfigure(parts)
        parts.notifier.configure(config.notify, sinks)
        self.intake.reconfigure(settle=config.settle)
        self.gate.reconfigure(trust, config.auth.sig_grace)
        warn_skipped(parts.log, config, self.gate.trust)
        self.homing.resolve()
        self.intake.release_all()
        self._rescan_requested = True
        parts.log.info("config.reloaded")

    def shutdown(self, grace: float) -> None:
        """Stop taking work; let running jobs finish within `grace`, then cancel them."""
        self.systemd.stopping()
        pool = self.runs.pool
        self.runs.drop_waiting()
        deadline = time.monotonic() + grace
        while pool.running() and time.monotonic() < deadline:
            self.wakeup.wait(timeout=min(0.1, max(deadline - time.monotonic(), 0.0)))
            self.wakeup.clear()
            self.answering.finish_jobs()
        if pool.running():
            pool.cancel_all()
            while pool.running():
                self.wakeup.wait(timeout=0.1)
                self.wakeup.clear()
                self.answering.finish_jobs()
        self.homing.stopped()
        self.parts.notifier.flush()
        self.parts.notifier.wait()
