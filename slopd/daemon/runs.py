"""Running configured commands for envelopes: which command, where, with what, and what it came to.

Rules:
1. An execution runs its `Target`'s command from the config (the executor, a seat, or an
   action); a discussion with a summarizer configured runs the summarizer. argv is fixed by
   the config; untrusted data reaches the command only on stdin and in `SLOP_*` (SPEC §7).
2. An action gets the whole envelope as JSON on stdin (SPEC §6), everything else the body.
3. Each run has its own folder `STATE/runs/ID/`, its working directory (an action's `cwd`
   replaces it), with `out/` as `SLOP_OUT_DIR`; files left there become a deliverable. The
   folder is removed once the reply is committed.
4. `executing` is committed on its own just before the process starts (`before_start`), and a
   run's outcome is committed on its own (`finished`) before any reply is written for it.
5. An execution's assets are copied into `assets/` of its run folder while being hashed, and
   those copies are what `SLOP_ASSETS` lists (one absolute path per line): a file swapped after
   it was verified is refused, not run on.
6. While an input's job is queued or running, its input is `busy`: no scan or hint takes it.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Hashable
from pathlib import Path

from slopd.core import assets
from slopd.core import outcome as outcomes
from slopd.core.envelope import Envelope, to_json
from slopd.core.facts import Input
from slopd.core.outcome import Outcome, RunResult
from slopd.core.targets import EXECUTOR, Target, TargetKind
from slopd.daemon.batch import Where
from slopd.daemon.jobs import SUMMARIZER, Finished, Job, JobPool, Ran, Work
from slopd.daemon.parts import Parts
from slopd.shell import executor, trees
from slopd.shell.config import Command, Config
from slopd.shell.log import Logger

SUMMARIZER_TIMEOUT = 120.0
SUMMARIES_AT_ONCE = 2


def limits(config: Config) -> dict[Hashable, int]:
    """How many jobs of each queue run at once (the rest wait their turn)."""
    return {EXECUTOR: config.executor.max_parallel if config.executor else 1, SUMMARIZER: SUMMARIES_AT_ONCE}


class Runs:
    def __init__(self, parts: Parts, wake: Callable[[], None]) -> None:
        self.parts = parts
        self._in_flight: set[Where] = set()  # inputs whose job is queued or running
        self.pool = JobPool(limits(parts.config), wake=wake, before_start=self._before_start)

    def reconfigure(self, parts: Parts) -> None:
        """A reload: the new snapshot; the executor's limit applies to the jobs not yet started."""
        self.parts = parts
        self.pool.set_limit(EXECUTOR, limits(parts.config)[EXECUTOR])

    def busy(self, where: Where) -> bool:
        """Rule 6: the input at `where` has a job queued or running."""
        return where in self._in_flight

    def collect(self) -> list[Finished]:
        """The jobs that finished since the last call; their inputs are free again."""
        finished = self.pool.collect()
        for done in finished:
            self._in_flight.discard(done.job.input.where)
        return finished

    def drop_waiting(self) -> None:
        """At shutdown: the jobs not yet started are forgotten (still `queued` in the ledger)."""
        for job in self.pool.drop_waiting():
            self._in_flight.discard(job.input.where)

    def run_dir(self, envelope_id: str) -> Path:
        return run_folder(self.parts.state_dir, envelope_id)

    def start(self, envelope: Envelope, target: Target | None, input: Input, log: Logger) -> None:
        """Queue an execution of `target`, or the summarizer (None), once the batch that decided
        it is committed (`core.plans.Start`)."""
        work = Work.EXECUTE if target is not None else Work.SUMMARIZE
        self._submit(Job(work, envelope, input, log, target, self._run))

    def _submit(self, job: Job) -> None:
        self._in_flight.add(job.input.where)
        self.pool.submit(job)

    def _command(self, target: Target) -> Command:
        config = self.parts.config
        match target.kind:
            case TargetKind.EXECUTOR:
                assert config.executor is not None
                return config.executor
            case TargetKind.SEAT:
                return config.seats[target.name]
            case TargetKind.ACTION:
                return config.actions[target.name]

    def _before_start(self, job: Job) -> None:
        """On the main loop, just before the job's thread starts: the at-most-once point."""
        if job.work is Work.EXECUTE:
            assert job.target is not None
            self.parts.ledger.mark_executing(job.key, now=self.parts.clock.stamp())
            job.log.info("execution.started", target=job.target.label)

    def _run(self, job: Job) -> Ran:
        """In a worker thread: run the job's command for its envelope (rules 1-3)."""
        envelope, config = job.envelope, self.parts.config
        stdin, cwd, extra_env = envelope.body.encode(), None, {}
        if job.target is not None:
            command = self._command(job.target)
            argv, timeout, extra_env = command.argv, command.timeout, dict(command.env)
            if job.target.kind is TargetKind.ACTION:
                stdin, cwd = to_json(envelope).encode(), command.cwd
        else:
            assert config.summarizer is not None
            argv, timeout = config.summarizer, SUMMARIZER_TIMEOUT
        run_dir = self.run_dir(envelope.id)
        shutil.rmtree(run_dir, ignore_errors=True)
        out_dir = run_dir / "out"
        out_dir.mkdir(parents=True)
        attached = self._attach(envelope, run_dir / "assets") if job.target is not None else []
        if isinstance(attached, str):
            return Ran(RunResult(exit_code=None, stdout=b"", stderr_tail=b"", start_error=attached), timeout)
        slop = {
            "SLOP_ID": envelope.id,
            "SLOP_FROM": envelope.sender,
            "SLOP_TO": envelope.to,
            "SLOP_TYPE": envelope.type,
            "SLOP_HUB": str(self.parts.hub.root),
            "SLOP_OUT_DIR": str(out_dir),
            "SLOP_ASSETS": "\n".join(str(path) for path in attached),
        }
        result = self.parts.runner(
            argv,
            stdin=stdin,
            env=executor.child_environment(slop, extra_env),
            timeout=timeout,
            cwd=Path(cwd) if cwd else run_dir,
            cancel=job.cancel,
        )
        return Ran(result, timeout)

    def _attach(self, envelope: Envelope, folder: Path) -> list[Path] | str:
        """Rule 5: copy each asset into the run folder, hashing the bytes copied; the reason when
        one changed since it was verified."""
        copied = []
        if envelope.assets:
            folder.mkdir()
        for asset in envelope.assets:
            target = folder / asset.name
            found = self.parts.hub.digest(assets.LANE, asset.name, copy_to=target)
            digest, problem = (found, None) if isinstance(found, str) else (None, found.reason)
            reason = assets.check(asset, digest, problem)
            if reason is not None:
                return f"{reason} (it changed after it was verified; nothing was run)"
            copied.append(target)
        return copied

    def settle(self, done: Finished) -> Outcome | None:
        """On the main loop, rule 4: an execution's outcome, logged and committed on its own
        before anything is answered (None for a summary: the handler answers its text)."""
        job, result = done.job, done.ran.result
        if job.work is Work.SUMMARIZE:
            return None
        out = run_folder(self.parts.state_dir, job.key) / "out"
        outcome = outcomes.of_run(result, timeout=done.ran.timeout, files=trees.has_files(out))
        job.log.info(
            "execution.finished",
            exit_code=result.exit_code,
            timed_out=result.timed_out,
            cancelled=result.cancelled,
            outcome="result" if isinstance(outcome, outcomes.Produced) else "error",
        )
        self.parts.ledger.mark_finished(job.key, outcome, now=self.parts.clock.stamp())
        return outcome


def run_folder(state: Path, envelope_id: str) -> Path:
    """Rule 3: `STATE/runs/ID/` (the id in its lower-case form, the one ids compare by)."""
    return state / "runs" / envelope_id.lower()
