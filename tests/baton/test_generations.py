"""A generation's records (SPEC §11), pure: the autobiography's bound, the EVOLVE records, boot's plan."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from slopd.baton import boot, generations
from slopd.baton.generations import Past


def past(number: int, low: bool = False) -> Past:
    letter = (
        f"## Who I Was\nI was generation {number}, the careful one. More.\n"
        f"## Where Things Stand\nThe build of gen {number} is green! Then more.\n"
    )
    return Past(number, f"2026-12-{number % 28 + 1:02d}T10:00:00Z", 6.25, low, letter)


def test_each_generation_gets_a_paragraph_newest_first() -> None:
    """Number, date, score, LOW_QUALITY, and the first sentence of two sections."""
    text = generations.autobiography("oracle", [past(1), past(2, low=True)])
    assert text.startswith("# Autobiography — oracle (through generation 2)\n\n")
    assert text.index("**Gen-2 ") < text.index("**Gen-1 ")
    assert "**Gen-2 (2026-12-03, score 6.2)**. LOW_QUALITY. I was generation 2, the careful one." in text
    assert "The build of gen 2 is green!" in text
    assert "More." not in text
    assert text == generations.autobiography("oracle", [past(2, low=True), past(1)])  # deterministic


def test_the_autobiography_is_bounded_folding_the_oldest_first() -> None:
    """Past the limit, old generations become one line each; past that, a count of what is left out."""
    many = [past(number) for number in range(1, 61)]
    text = generations.autobiography("oracle", many, limit=1500)
    assert len(text) <= 1500
    assert "**Gen-60 " in text
    assert "- Gen-1 (" in text or "older generations not shown" in text
    assert "**Gen-60 (" in text  # the newest keeps its paragraph
    tiny = generations.autobiography("oracle", many, limit=400)
    assert len(tiny) <= 400
    assert "**Gen-60 (" in tiny
    assert "older generations not shown" in tiny


def test_fitness_and_mutation_records() -> None:
    """The metrics of the seed's table, and what changed since the previous generation."""
    before = {"skills": {"a": 0.5, "b": 0.2}, "trust": {"x": 0.5}, "confidence": 0.4}
    state = {
        "skills": {"a": 0.7, "c": 0.1},
        "trust": {"x": 0.9, "y": 0.5},
        "confidence": 0.65,
        "tasks_completed": 4,
        "energy": {"budget": 100, "remaining": 20},
    }
    record = generations.fitness(state, {"average": 6.0, "passes": True}, 3)
    assert record["trust_density"] == 0.7
    assert record["energy_per_task"] == 20.0
    assert record["skills"] == 2
    change = generations.mutation(before, state, 3)
    assert change["skills_added"] == ["c"]
    assert change["skills_removed"] == ["b"]
    assert change["skills_changed"] == {"a": 0.2}
    assert change["trust_changed"] == {"x": 0.4, "y": 0.5}
    assert change["confidence_delta"] == 0.25
    assert generations.fitness({}, {"average": 1.0, "passes": False}, 1)["energy_per_task"] is None


def test_boot_plan_keeps_to_the_budget_but_always_loads_l0() -> None:
    """L0 is loaded even over the budget; optional files only while they fit (⌈chars/4⌉ tokens)."""
    files: dict[str, bytes | None] = {
        "generations/v2/STATE.json": b"{}" * 200,
        "generations/v2/HANDOFF.md": b"letter",
        "IDENTITY.json": b"x" * 8,
        "AUTOBIOGRAPHY.md": ("# Autobiography — oracle (through generation 2)\n" + "y" * 3952).encode(),
        "evolution/fitness_history.json": b"[]",
    }
    planned = boot.plan(boot.Reading(2, (1, 2), files), budget=205)
    assert list(planned.loaded) == [
        "generations/v2/STATE.json",
        "generations/v2/HANDOFF.md",
        "IDENTITY.json",
        "evolution/fitness_history.json",
    ]
    assert planned.skipped == ("AUTOBIOGRAPHY.md",)
    assert planned.tokens == 100 + 2 + 2 + 1
    assert planned.warnings == ()
    assert planned.bootable


def test_a_summarizers_paragraphs_are_kept_whole_and_bounded_with_a_count() -> None:
    """Rule 5: whole paragraphs until the limit, then how many were left out."""
    text = "\n\n".join(f"Paragraph {number}: " + "word " * 30 for number in range(40))
    told = generations.summarized("oracle", text, 7, limit=1000)
    assert told.startswith("# Autobiography — oracle (through generation 7)\n\n")
    assert len(told) <= 1000
    kept = [line for line in told.split("\n\n")[1:] if line.startswith("Paragraph")]
    assert kept == [f"Paragraph {number}: " + ("word " * 30).strip() for number in range(len(kept))]
    assert f"(… {40 - len(kept)} more paragraphs not shown)" in told
    short = generations.summarized("oracle", "One.\n\n\n\nTwo.\n", 3)
    assert short == "# Autobiography — oracle (through generation 3)\n\nOne.\n\nTwo.\n"


@given(st.text(), st.integers(60, 5000))
def test_a_summary_never_exceeds_its_bound(text: str, limit: int) -> None:
    assert len(generations.summarized("v", text, 1, limit=limit)) <= limit


def test_the_summarizer_reads_every_generation_newest_first_as_json() -> None:
    sent = json.loads(generations.summary_input("oracle", [past(1), past(3), past(2)]))
    assert sent["vessel"] == "oracle"
    assert [item["generation"] for item in sent["generations"]] == [3, 2, 1]
    assert sent["generations"][0]["letter"] == past(3).letter
