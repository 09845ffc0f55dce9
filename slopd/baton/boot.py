"""What a new generation reads at boot, and what is wrong with the tree. Pure.

Rules (SPEC §11, the seed's boot order):
1. Only `GENERATION` is trusted: L0 is `generations/v{GENERATION}/STATE.json` and
   `HANDOFF.md`, always loaded; then IDENTITY.json, AUTOBIOGRAPHY.md (L1) and the fitness
   history, each only while the budget allows (tokens counted as ⌈characters / 4⌉).
2. Warnings tell the truth about the tree: files of a generation above the marker (an
   interrupted handoff), generations missing below it (a gap), a LOW_QUALITY letter, a
   SCORE.json that is not the score of the letter beside it, a `CURRENT/` that differs from
   `generations/v{GENERATION}/`, and L0 files that are missing.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

from slopd.baton.score import score_handoff


@dataclass(frozen=True, slots=True)
class Reading:
    """What the shell read of a vessel's tree."""

    marker: int
    folders: tuple[int, ...]  # the N of every generations/vN/ present
    files: dict[str, bytes | None]  # tree-relative path -> bytes, None when missing


@dataclass(frozen=True, slots=True)
class Boot:
    generation: int
    loaded: dict[str, str] = field(default_factory=dict)  # path -> text, in boot order
    skipped: tuple[str, ...] = ()  # over the budget
    warnings: tuple[str, ...] = ()
    tokens: int = 0

    @property
    def bootable(self) -> bool:
        """Generation 0, or generation N with its STATE.json and HANDOFF.md."""
        return self.generation == 0 or all(path in self.loaded for path in l0(self.generation))

    def as_json(self) -> dict[str, Any]:
        return {
            "generation": self.generation,
            "bootable": self.bootable,
            "loaded": list(self.loaded),
            "skipped": list(self.skipped),
            "warnings": list(self.warnings),
            "tokens": self.tokens,
            "files": self.loaded,
        }


def l0(generation: int) -> tuple[str, str]:
    return (f"generations/v{generation}/STATE.json", f"generations/v{generation}/HANDOFF.md")


OPTIONAL = ("IDENTITY.json", "AUTOBIOGRAPHY.md", "evolution/fitness_history.json")


def tokens(text: str) -> int:
    return math.ceil(len(text) / 4)


def plan(reading: Reading, budget: int | None) -> Boot:
    """Rules 1 and 2."""
    generation, files = reading.marker, reading.files
    warnings = _warnings(reading)
    loaded: dict[str, str] = {}
    used = 0
    for path in l0(generation) if generation > 0 else ():
        data = files.get(path)
        if data is not None:
            loaded[path] = data.decode("utf-8", "replace")
            used += tokens(loaded[path])
    skipped = []
    for path in OPTIONAL:
        data = files.get(path)
        if data is None:
            continue
        text = data.decode("utf-8", "replace")
        if budget is not None and used + tokens(text) > budget:
            skipped.append(path)
            continue
        loaded[path] = text
        used += tokens(text)
    return Boot(generation, loaded, tuple(skipped), tuple(warnings), used)


def _warnings(reading: Reading) -> list[str]:
    generation, files = reading.marker, reading.files
    found = []
    above = sorted(n for n in reading.folders if n > generation)
    if above:
        found.append(
            f"interrupted handoff: generations/v{above[0]}/ exists but GENERATION is {generation}; "
            "it was never committed and is not read"
        )
    missing = [n for n in range(1, generation + 1) if n not in reading.folders]
    if missing:
        names = ", ".join(f"v{n}" for n in missing)
        found.append(f"gap in the generations: {names} missing below GENERATION {generation}")
    if generation > 0:
        state_path, letter_path = l0(generation)
        for path in (state_path, letter_path):
            if files.get(path) is None:
                found.append(f"{path} is missing: generation {generation} cannot be booted from")
        found += _score_mismatch(files, generation)
        state = _json(files.get(state_path))
        if isinstance(state, dict) and state.get("LOW_QUALITY"):
            found.append(
                f"LOW_QUALITY: generation {generation}'s letter failed the gate and was accepted anyway"
            )
        for name in ("HANDOFF.md", "STATE.json"):
            current, committed = files.get(f"CURRENT/{name}"), files.get(f"generations/v{generation}/{name}")
            if current is not None and committed is None:
                missing_too = f"generations/v{generation}/{name} is not"
                found.append(f"CURRENT/{name} is there but {missing_too}; CURRENT/ is never read")
            elif current is not None and current != committed:
                found.append(
                    f"CURRENT/{name} differs from generations/v{generation}/{name}; the latter is read"
                )
    return found


def _score_mismatch(files: dict[str, bytes | None], generation: int) -> list[str]:
    """SCORE.json must be the score of the letter beside it (the real torn tree's was another's)."""
    letter, recorded = (
        files.get(f"generations/v{generation}/HANDOFF.md"),
        _json(files.get(score_path(generation))),
    )
    if (
        letter is None
        or not isinstance(recorded, dict)
        or not isinstance(recorded.get("average"), int | float)
    ):
        return []
    actual = score_handoff(letter.decode("utf-8", "replace"))["average"]
    if abs(actual - float(recorded["average"])) < 1e-9:
        return []
    return [
        f"{score_path(generation)} records {recorded['average']} but the letter beside it scores {actual:.2f}"
    ]


def score_path(generation: int) -> str:
    return f"generations/v{generation}/SCORE.json"


def _json(data: bytes | None) -> object:
    if data is None:
        return None
    try:
        return json.loads(data)
    except ValueError:
        return None
