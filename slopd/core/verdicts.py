"""The verdict on a signed order: `Valid` or `Invalid` with its reason — a value, never raised."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Valid:
    principal: str
    fingerprint: str
    line: int


@dataclass(frozen=True, slots=True)
class Invalid:
    reason: str


Verification = Valid | Invalid
