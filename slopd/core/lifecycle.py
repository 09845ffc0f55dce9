"""The life of one input over its ledger status, as tables (SPEC §7). Pure.

Status moves forward only: received → queued → executing → finished → done. Whenever an input
is met again — a scan after a crash, a conflict copy, a resend — `step` says what to do from
what the ledger knows, and at start-up `recovery_step` says what a crash left to answer.

`step`, in order — the first that applies decides:
1. No row: the input is `NEW`.
2. A row for another file or other bytes: a `DUPLICATE`.
3. The same input, not yet archived: by status, from `_RESUME` (a queued execution `RUN`s as
   decided then, without deciding again: its order was verified before the crash).
4. The same input, archived by the ledger's account: `FINISH_MOVE` when the ledger says done
   but the archive copy was never linked, else a `DUPLICATE` (the same file came back).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from slopd.core.outcome import Outcome
from slopd.core.targets import Target


class Status(StrEnum):
    RECEIVED = "received"
    QUEUED = "queued"
    EXECUTING = "executing"
    FINISHED = "finished"
    DONE = "done"


class Step(StrEnum):
    NEW = "new"  # decide, then carry the decision out
    REDECIDE = "redecide"  # decide again; replies already written are not written twice
    RUN = "run"  # submit the execution recorded as queued
    ANSWER = "answer"  # answer the recorded outcome, or `interrupted, not retried`
    ARCHIVE = "archive"  # everything is answered: only the move is left
    FINISH_MOVE = "finish-move"  # the ledger recorded the move; make it
    DUPLICATE = "duplicate"  # archive as a duplicate; nothing runs, no reply


_RESUME: dict[Status, Step] = {
    Status.RECEIVED: Step.REDECIDE,
    Status.QUEUED: Step.REDECIDE,
    Status.EXECUTING: Step.ANSWER,
    Status.FINISHED: Step.ANSWER,
    Status.DONE: Step.ARCHIVE,
}


@dataclass(frozen=True, slots=True)
class Row:
    """What the ledger remembers of one input (`shell.ledger` reads it, decoded)."""

    key: str
    id: str | None
    lane: str
    file: str
    sha256: str
    type: str | None
    sender: str | None
    mode: str | None
    decision: str | None
    status: Status
    outcome: Outcome | None
    replies: tuple[str, ...]
    archive: str | None
    received_at: str
    updated_at: str
    target: Target | None


@dataclass(frozen=True, slots=True)
class Seen:
    """What the ledger knows of an input met again."""

    status: Status
    same_input: bool  # the same lane, file name and sha256
    archived: bool  # an archive path is recorded
    queued_execution: bool = False  # decided `execute`, with its target recorded
    archive_present: bool = True  # the recorded archive path exists


def step(seen: Seen | None) -> Step:
    """What to do with an input met again (the rules above)."""
    if seen is None:
        return Step.NEW
    if not seen.same_input:
        return Step.DUPLICATE
    if not seen.archived:
        if seen.status is Status.QUEUED and seen.queued_execution:
            return Step.RUN
        return _RESUME[seen.status]
    if seen.status is Status.DONE and not seen.archive_present:
        return Step.FINISH_MOVE
    return Step.DUPLICATE


class Recovery(StrEnum):
    INTERRUPTED = "interrupted"  # answer `interrupted, not retried`; it never runs again
    OUTCOME = "outcome"  # rewrite the reply from the stored outcome; never re-run
    VANISHED = "vanished"  # the file is gone before it was handled: say so, nothing ran
    SCAN = "scan"  # the file is still there: the scan resumes it


def recovery_step(status: Status, *, has_outcome: bool, file_present: bool, addressable: bool) -> Recovery:
    """What start-up does with an unfinished row (`addressable`: it has an id and a sender)."""
    if status is Status.EXECUTING:
        return Recovery.INTERRUPTED
    if status is Status.FINISHED and has_outcome:
        return Recovery.OUTCOME
    if not file_present and addressable:
        return Recovery.VANISHED
    return Recovery.SCAN
