"""What a new generation reads at boot, and what is wrong with the tree. Pure.

Rules (SPEC §11, the seed's boot order):
1. Only `GENERATION` is trusted: L0 is `generations/v{GENERATION}/STATE.json` and
   `HANDOFF.md`, always loaded; then IDENTITY.json, AUTOBIOGRAPHY.md (L1) and the fitness
   history, each only while the budget allows (tokens counted as ⌈characters / 4⌉).
2. Nothing of a generation above GENERATION is presented: its letter and state are never read
   into a boot (`CURRENT/` and `generations/v{N+1}/` are not L0), and the shared files are
   checked by `baton.committed` — an autobiography written for another generation gives way
   to the one rebuilt from the committed generations, fitness records above GENERATION are
   filtered out. Each part left out is named in `left_out`.
3. Warnings tell the truth about the tree: files of a generation above the marker (an
   interrupted handoff), generations missing below it (a gap), a LOW_QUALITY letter, a
   SCORE.json that is not the score of the letter beside it (GENERATION's, and every
   uncommitted generation's: another word count, or another average than the seed's function
   gives, rounding aside), a `CURRENT/` that differs from `generations/v{GENERATION}/`, and L0
   files that are missing.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

from slopd.baton import committed
from slopd.baton.score import score_handoff


@dataclass(frozen=True, slots=True)
class Reading:
    """What the shell read of a vessel's tree."""

    marker: int
    folders: tuple[int, ...]  # the N of every generations/vN/ present
    files: dict[str, bytes | None]  # tree-relative path -> bytes, None when missing
    rebuilt: str | None = None  # the autobiography of the committed generations, when it was read


@dataclass(frozen=True, slots=True)
class Boot:
    generation: int
    loaded: dict[str, str] = field(default_factory=dict)  # path -> text, in boot order
    skipped: tuple[str, ...] = ()  # over the budget
    warnings: tuple[str, ...] = ()
    tokens: int = 0
    left_out: tuple[str, ...] = ()  # rule 2

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
            "left_out": list(self.left_out),
            "tokens": self.tokens,
            "files": self.loaded,
        }


def l0(generation: int) -> tuple[str, str]:
    return (f"generations/v{generation}/STATE.json", f"generations/v{generation}/HANDOFF.md")


OPTIONAL = ("IDENTITY.json", "AUTOBIOGRAPHY.md", "evolution/fitness_history.json")


def tokens(text: str) -> int:
    return math.ceil(len(text) / 4)


def uncommitted(reading: Reading) -> tuple[int, ...]:
    """The generations whose folders are above GENERATION (an interrupted handoff's)."""
    return tuple(sorted(number for number in reading.folders if number > reading.marker))


def plan(reading: Reading, budget: int | None) -> Boot:
    """Rules 1 to 3."""
    generation, files = reading.marker, reading.files
    warnings = _warnings(reading)
    loaded: dict[str, str] = {}
    used = 0
    for path in l0(generation) if generation > 0 else ():
        data = files.get(path)
        if data is not None:
            loaded[path] = data.decode("utf-8", "replace")
            used += tokens(loaded[path])
    shown, left_out = _committed(reading)
    skipped = []
    for path, text in shown.items():
        if budget is not None and used + tokens(text) > budget:
            skipped.append(path)
            continue
        loaded[path] = text
        used += tokens(text)
    return Boot(generation, loaded, tuple(skipped), tuple(warnings), used, tuple(left_out))


def _committed(reading: Reading) -> tuple[dict[str, str], list[str]]:
    """Rule 2: the optional files as boot may present them, and what was left out of them."""
    shown: dict[str, str] = {}
    left_out = []
    for path in OPTIONAL:
        data = reading.files.get(path)
        if data is None:
            continue
        text = data.decode("utf-8", "replace")
        if path == "AUTOBIOGRAPHY.md":
            checked = committed.autobiography(text, reading.marker, reading.rebuilt)
        elif path.startswith("evolution/"):
            checked = committed.records(path, text, reading.marker)
        else:
            checked = committed.Shown(text)
        if checked.left_out is not None:
            left_out.append(checked.left_out)
        if checked.text is not None:
            shown[path] = checked.text
    return shown, left_out


def _warnings(reading: Reading) -> list[str]:
    generation, files = reading.marker, reading.files
    found = []
    above = uncommitted(reading)
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
        state_path, _ = l0(generation)
        for path in l0(generation):
            if files.get(path) is None:
                found.append(f"{path} is missing: generation {generation} cannot be booted from")
        state = _json(files.get(state_path))
        if isinstance(state, dict) and state.get("LOW_QUALITY"):
            found.append(
                f"LOW_QUALITY: generation {generation}'s letter failed the gate and was accepted anyway"
            )
        for name in ("HANDOFF.md", "STATE.json"):
            current, kept = files.get(f"CURRENT/{name}"), files.get(f"generations/v{generation}/{name}")
            if current is not None and kept is None:
                missing_too = f"generations/v{generation}/{name} is not"
                found.append(f"CURRENT/{name} is there but {missing_too}; CURRENT/ is never read")
            elif current is not None and current != kept:
                found.append(
                    f"CURRENT/{name} differs from generations/v{generation}/{name}; the latter is read"
                )
    for number in (generation, *above) if generation > 0 else above:
        found += _score_mismatch(files, number)
    return found


def _score_mismatch(files: dict[str, bytes | None], generation: int) -> list[str]:
    """Rule 3: SCORE.json must be the score of the letter beside it (the real torn tree's is not)."""
    letter, recorded = files.get(letter_path(generation)), _json(files.get(score_path(generation)))
    if letter is None or not isinstance(recorded, dict):
        return []
    text = letter.decode("utf-8", "replace")
    words, actual = len(text.split()), score_handoff(text)["average"]
    counted = _number(recorded.get("words", recorded.get("word_count")))
    average = _number(recorded.get("average"))
    if counted is not None and counted != words:
        of = f" and an average of {recorded['average']}" if average is not None else ""
        return [
            f"{score_path(generation)} is the score of another letter: it counts {counted:g} words{of}; "
            f"{letter_path(generation)} beside it has {words} words and scores {actual:.2f}"
        ]
    if average is None or abs(actual - average) < 1e-9 or round(actual, 1) == average:
        return []
    said = recorded["average"]
    return [f"{score_path(generation)} records {said} but the letter beside it scores {actual:.2f}"]


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def letter_path(generation: int) -> str:
    return f"generations/v{generation}/HANDOFF.md"


def score_path(generation: int) -> str:
    return f"generations/v{generation}/SCORE.json"


def _json(data: bytes | None) -> object:
    if data is None:
        return None
    try:
        return json.loads(data)
    except ValueError:
        return None
