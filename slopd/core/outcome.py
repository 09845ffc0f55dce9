"""What a run of a configured command came to, as frozen values. Pure.

Rules:
1. A run that could not start, was cancelled, timed out or exited non-zero is `Failed` with
   every reason a human needs (the exit code and the last 20 lines of stderr); otherwise it
   `Produced` its stdout (noting a truncation) and, maybe, files.
2. A run cut short by slopd stopping is `INTERRUPTED`: answered, never retried.
3. Outcomes are stored in the ledger as JSON (`encode`/`decode`), in the form ledgers have
   always held: `{"kind": "result", "text", "files"}` or `{"kind": "error", "reasons"}`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

STDERR_LINES = 20
INTERRUPTED_REASON = "interrupted, not retried: slopd stopped while the command ran"


@dataclass(frozen=True, slots=True)
class RunResult:
    """What one command did, as the executor saw it."""

    exit_code: int | None  # None when the command could not start
    stdout: bytes
    stderr_tail: bytes
    timed_out: bool = False
    cancelled: bool = False
    truncated: bool = False
    start_error: str | None = None

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not (self.timed_out or self.cancelled)


@dataclass(frozen=True, slots=True)
class Produced:
    text: str
    files: bool = False  # the command left files in its output folder: a deliverable


@dataclass(frozen=True, slots=True)
class Failed:
    reasons: tuple[str, ...]


Outcome = Produced | Failed
INTERRUPTED = Failed((INTERRUPTED_REASON,))


def of_run(result: RunResult, *, timeout: float, files: bool) -> Outcome:
    """Rule 1 (`files`: whether the run's output folder holds any file)."""
    if result.start_error is not None:
        return Failed((f"could not start the command: {result.start_error}",))
    if result.cancelled:
        return INTERRUPTED
    if result.timed_out:
        return Failed((f"timed out after {timeout:g} s; its process group was killed",))
    if result.exit_code != 0:
        tail = result.stderr_tail.decode("utf-8", "replace").strip().splitlines()[-STDERR_LINES:]
        reasons = [f"the command exited with code {result.exit_code}"]
        if tail:
            reasons.append("stderr ends with:\n\n  " + "\n  ".join(tail))
        return Failed(tuple(reasons))
    text = result.stdout.decode("utf-8", "replace")
    if result.truncated:
        text += f"\n\n[output truncated at {len(result.stdout)} bytes]\n"
    return Produced(text or "(no output)\n", files)


def summary_of(result: RunResult) -> str | None:
    """A summarizer's answer: its stdout when it succeeded with some, else None."""
    text = result.stdout.decode("utf-8", "replace").strip() if result.ok else ""
    return text or None


def encode(outcome: Outcome) -> str:
    if isinstance(outcome, Produced):
        return json.dumps({"kind": "result", "text": outcome.text, "files": outcome.files})
    return json.dumps({"kind": "error", "reasons": list(outcome.reasons)})


def decode(text: str) -> Outcome:
    stored = json.loads(text)
    if stored["kind"] == "result":
        return Produced(stored["text"], bool(stored.get("files")))
    return Failed(tuple(stored["reasons"]))
