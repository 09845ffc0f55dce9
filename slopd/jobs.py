"""Work that runs beside the main loop: executions and summarizer calls, each in its own thread.

Rules:
1. Each target (the executor, a seat, the summarizer) has a FIFO and a concurrency limit;
   a job starts only when its target has a free slot, so one slow target never delays another.
2. A finished job is handed back to the main loop through one queue; only the main loop writes
   replies and the ledger.
3. `cancel_all` asks every running job to stop; a cancelled run reports `cancelled`.
"""

from __future__ import annotations

import queue
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from slopd.core.envelope import Envelope
from slopd.executor import RunResult


@dataclass(eq=False)
class Job:
    key: str
    kind: str  # "execute" or "summarize"
    target: str
    envelope: Envelope
    lane: str
    file: str
    inode: int
    start: Callable[[Job], RunResult]
    cancel: threading.Event = field(default_factory=threading.Event)
    result: RunResult | None = None
    context: dict[str, Any] = field(default_factory=dict)


class JobPool:
    def __init__(
        self,
        limits: dict[str, int],
        *,
        wake: Callable[[], None],
        before_start: Callable[[Job], None],
    ) -> None:
        self._limits = limits
        self._before_start = before_start
        self._waiting: dict[str, deque[Job]] = {}
        self._running: dict[str, set[Job]] = {}
        self.finished: queue.SimpleQueue[Job] = queue.SimpleQueue()
        self._wake = wake

    def set_limit(self, target: str, limit: int) -> None:
        self._limits[target] = limit
        self.start_ready()

    def submit(self, job: Job) -> None:
        self._waiting.setdefault(job.target, deque()).append(job)
        self.start_ready()

    def start_ready(self) -> list[Job]:
        started = []
        for target, waiting in self._waiting.items():
            running = self._running.setdefault(target, set())
            while waiting and len(running) < self._limits.get(target, 1):
                job = waiting.popleft()
                self._before_start(job)
                running.add(job)
                threading.Thread(target=self._work, args=(job,), daemon=True).start()
                started.append(job)
        return started

    def _work(self, job: Job) -> None:
        try:
            job.result = job.start(job)
        except Exception as error:  # a bug in a job must still come back as an answer
            job.result = RunResult(None, b"", b"", start_error=f"internal error: {error!r}")
        self.finished.put(job)
        self._wake()

    def collect(self) -> list[Job]:
        """Jobs that finished since the last call, with their slots freed."""
        done: list[Job] = []
        while True:
            try:
                job = self.finished.get_nowait()
            except queue.Empty:
                if done:
                    self.start_ready()  # the freed slots go to the next jobs in line
                return done
            self._running[job.target].discard(job)
            done.append(job)

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
