"""What an execution runs (SPEC §4, §6): the executor, a seat's command, or a signed order's action.

A target is a value; the ledger stores it as two columns and the log and the ledger's
decision label name it by `label` (`executor`, the seat's name, `action:NAME`).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class TargetKind(StrEnum):
    """What an execution runs: the executor, a seat's command, or a signed order's action."""

    EXECUTOR = "executor"
    SEAT = "seat"
    ACTION = "action"


@dataclass(frozen=True, slots=True)
class Target:
    """The command an `Execute` runs: its kind and, for a seat or an action, its name."""

    kind: TargetKind
    name: str = ""

    @classmethod
    def stored(cls, kind: str, name: str | None) -> Target:
        return cls(TargetKind(kind), name or "")

    @property
    def label(self) -> str:
        """`executor`, the seat's name, or `action:NAME` (the ledger's and the log's word)."""
        match self.kind:
            case TargetKind.EXECUTOR:
                return "executor"
            case TargetKind.SEAT:
                return self.name
            case TargetKind.ACTION:
                return f"action:{self.name}"

    @property
    def description(self) -> str:
        """`the executor`, `seat NAME` or `action NAME`, for an ack's text."""
        return "the executor" if self.kind is TargetKind.EXECUTOR else f"{self.kind} {self.name}"


EXECUTOR = Target(TargetKind.EXECUTOR)
