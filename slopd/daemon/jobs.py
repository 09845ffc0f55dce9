"""Work that runs beside the main loop: executions and summarizer calls, each in its own thread.

Rules:
1. Each queue (the executor, each seat, each action, the summarizer) has a FIFO and a
   concurrency limit; a job starts only when its queue has a free slot, so one slow target
   never delays another.
2. `before_start` runs on the main loop just before a job's thread starts (the at-most-once
   point: an execution's `executing` is committed there).
3. A finished job is handed back to the main loop through one queue, with what it came to
   (`Finished`: the job, its result and the time limit it ran under); only the main loop writes
   replies and the ledger. A job is a frozen value: nothing writes into it once it is made.
4. `cancel_all` asks every running job to stop; a cancelled run reports `cancelled`.
"""

from __future__ import annotations

import queue
import threading
from collections import deque
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from enum import StrEnum

from slopd.core.envelope import Envelope
from slopd.core.facts import Input
from slopd.core.outcome import RunResult
from slopd.core.targets import Target
from slopd.shell.log import Logger

SUMMARIZER = "summarizer"  # the summarizer's queue; execution queues are their `Target`s


class Work(StrEnum):
    EXECUTE = "execute"
    SUMMARIZE = "summarize"


@dataclass(frozen=True, slots=True)
class Ran:
    """What a job's run came to, and the time limit (seconds) it ran under."""

    result: RunResult
    timeout: float = 0.0


@dataclass(frozen=True, eq=False)
class Job:
    work: Work
    envelope: Envelope
    input: Input
    log: Logger  # bound to the input (lane, file, id, type)
    target: Target | None  # what an execution runs; None for a summary
    start: Callable[[Job], Ran]
    cancel: threading.Event = field(default_factory=threading.Event)

    @property
    def key(self) -> str:
        return self.envelope.key

    @property
    def queue(self) -> Hashable:
        return self.target if self.target is not None else SUMMARIZER


@dataclass(frozen=True, slots=True)
class Finished:
    """Rule 3: a job handed back to the main loop."""

    job: Job
    ran: Ran


class JobPool:
    def __init__(
        self,
        limits: dict[Hashable, int],
        *,
        wake: Callable[[], None],
        before_start: Callable[[Job], None],
    ) -> None:
        self._limits = limits
        self._before_start = before_start
        self._waiting: dict[Hashable, deque[Job]] = {}
        self._running: dict[Hashable, set[Job]] = {}
        self.finished: queue.SimpleQueue[Finished] = queue.SimpleQueue()
        self._wake = wake

    def set_limit(self, queue_key: Hashable, limit: int) -> None:
        self._limits[queue_key] = limit
        self.start_ready()

    def submit(self, job: Job) -> None:
        self._waiting.setdefault(job.queue, deque()).append(job)
        self.start_ready()

    def start_ready(self) -> list[Job]:
        started = []
        for queue_key, waiting in self._waiting.items():
            running = self._running.setdefault(queue_key, set())
            while waiting and len(running) < self._limits.get(queue_key, 1):
                job = waiting.popleft()
                self._before_start(job)
                running.add(job)
                threading.Thread(target=self._work, args=(job,), daemon=True).start()
                started.append(job)
        return started

    def _work(self, job: Job) -> None:
        try:
            ran = job.start(job)
        except Exception as error:  # a bug in a job must still come back as an answer
            ran = Ran(RunResult(None, b"", b"", start_error=f"internal error: {error!r}"))
        self.finished.put(Finished(job, ran))
        self._wake()

    def collect(self) -> list[Finished]:
        """Jobs that finished since the last call, with their slots freed."""
        done: list[Finished] = []
        while True:
            try:
                finished = self.finished.get_nowait()
            except queue.Empty:
                if done:
                    self.start_ready()  # the freed slots go to the next jobs in line
                return done
            self._running[finished.job.queue].discard(finished.job)
            done.append(finished)

    def busy(self) -> bool:
        return any(self._running.values()) or any(self._waiting.values())

    def running(self) -> int:
        return sum(len(jobs) for jobs in self._running.values())

    def waiting(self) -> list[Job]:
        return [job for jobs in self._waiting.values() for job in jobs]

    def drop_waiting(self) -> list[Job]:
        """Forget jobs that never started (they stay `queued` in the ledger for the next start)."""
        dropped = self.waiting()
        self._waiting.clear()
        return dropped

    def cancel_all(self) -> None:
        for jobs in self._running.values():
            for job in jobs:
                job.cancel.set()
