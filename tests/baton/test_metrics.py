"""The metrics table (`baton.metrics`) over a tree agents wrote: hostile numbers are no metrics."""

from __future__ import annotations

from slopd.baton.metrics import rows


def test_a_number_too_large_for_a_float_or_not_finite_is_no_metric_and_breaks_nothing() -> None:
    """A 400-digit integer (or NaN, or a bool) in fitness_history.json is left out, not a crash."""
    history = [
        {"generation": 1, "confidence": 10**400, "tasks_completed": float("nan"), "handoff_score": True},
        {"generation": 2, "confidence": 0.5, "tasks_completed": 3, "handoff_score": 7.1},
    ]
    table = rows(history, marker=2)
    assert [row["confidence"] for row in table] == [None, 0.5]
    assert (table[0]["tasks_completed"], table[0]["handoff_score"]) == (None, None)
    assert (table[1]["tasks_completed"], table[1]["handoff_score"]) == (3.0, 7.1)
