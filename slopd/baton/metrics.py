"""The seed's metrics table, one row per generation, from `evolution/fitness_history.json`. Pure.

Rules (SPEC §11; the seed's "Metric / Source" table):
1. A row per committed generation (the last record of each, in generation order, only up to
   GENERATION): confidence and its delta from the row before, tasks completed, the handoff
   score, skills and their growth, trust density, energy per task.
2. A value the records do not hold is `None` (shown as `-`); nothing is invented.
"""

from __future__ import annotations

import math
from typing import Any

COLUMNS = (
    ("generation", "gen"),
    ("confidence", "confidence"),
    ("confidence_delta", "Δconf"),
    ("tasks_completed", "tasks"),
    ("handoff_score", "score"),
    ("skills", "skills"),
    ("skills_growth", "Δskills"),
    ("trust_density", "trust"),
    ("energy_per_task", "energy/task"),
)


def _number(value: object) -> float | None:
    """A finite number, or None: the tree is agents' writing, and a 400-digit integer is no metric."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def rows(history: object, marker: int) -> list[dict[str, Any]]:
    """Rule 1."""
    latest: dict[int, dict[str, Any]] = {}
    for record in history if isinstance(history, list) else []:
        if (
            isinstance(record, dict)
            and isinstance(record.get("generation"), int)
            and 0 < record["generation"] <= marker
        ):
            latest[record["generation"]] = record
    table: list[dict[str, Any]] = []
    for generation in sorted(latest):
        record, before = latest[generation], table[-1] if table else {}
        confidence, skills = _number(record.get("confidence")), _number(record.get("skills"))
        table.append(
            {
                "generation": generation,
                "confidence": confidence,
                "confidence_delta": _delta(confidence, before.get("confidence")),
                "tasks_completed": _number(record.get("tasks_completed")),
                "handoff_score": _number(record.get("handoff_score")),
                "skills": skills,
                "skills_growth": _delta(skills, before.get("skills")),
                "trust_density": _number(record.get("trust_density")),
                "energy_per_task": _number(record.get("energy_per_task")),
            }
        )
    return table


def _delta(now: float | None, before: float | None) -> float | None:
    return None if now is None or before is None else round(now - before, 6)


def render(table: list[dict[str, Any]], marker: int) -> str:
    """The table as text, then `generation_count` (the seed's last metric: GENERATION)."""
    cells = [[label for _, label in COLUMNS]]
    cells += [[_cell(row[key]) for key, _ in COLUMNS] for row in table]
    widths = [max(len(line[index]) for line in cells) for index in range(len(COLUMNS))]
    lines = ["  ".join(cell.rjust(width) for cell, width in zip(line, widths, strict=True)) for line in cells]
    return "\n".join([*lines, f"generation_count {marker}"]) + "\n"


def _cell(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:g}" if value == int(value) else f"{value:.3f}".rstrip("0")
    return str(value)
