"""What boot may present of the shared files (SPEC §11), pure: an autobiography only when written
for GENERATION, evolution records only up to GENERATION, and a sentence for each part left out."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from slopd.baton import boot, committed, generations
from slopd.baton.generations import Past

FITNESS = "evolution/fitness_history.json"


def past(number: int) -> Past:
    letter = f"## Who I Was\nI was gen {number}.\n## Where Things Stand\nThe words of gen {number} here.\n"
    return Past(number, f"2026-12-0{number}T10:00:00Z", 6.0, False, letter)


@pytest.mark.parametrize(
    ("first_line", "generation"),
    [
        ("# Autobiography — oracle (through generation 3)", 3),
        ("# Autobiography — oracle (through generation 0)", 0),
        ("# Autobiography — a (b) (through generation 12)  ", 12),
        ("# Autobiography — oracle (through generation 3)\r", 3),
        ("# Autobiography — oracle", None),  # an older slopd's
        ("# Autobiography", None),  # flux-baton's
        ("## Gen-2 (score: 7.1)", None),
        ("# Autobiography — oracle (through generation 03)", None),
        ("# Autobiography — oracle (through generation -1)", None),
        ("", None),
    ],
)
def test_the_generation_an_autobiography_was_written_for_is_read_from_its_first_line(
    first_line: str, generation: int | None
) -> None:
    assert committed.through(first_line + "\nbody (through generation 9)\n") == generation


def test_the_heading_slopd_writes_is_the_one_boot_reads() -> None:
    """Deterministic and summarized autobiographies both name the generation they are written for."""
    assert committed.through(generations.autobiography("oracle", [past(1), past(2)])) == 2
    assert committed.through(generations.autobiography("oracle", [])) == 0
    assert committed.through(generations.summarized("oracle", "Paragraph.", 5)) == 5


@pytest.mark.parametrize(
    ("written_for", "shown", "said"),
    [
        (2, "as written", None),
        (3, "rebuilt", "AUTOBIOGRAPHY.md was written for generation 3, above GENERATION 2 (never committed)"),
        (1, "rebuilt", "AUTOBIOGRAPHY.md was written for generation 1, below GENERATION 2"),
        (None, "rebuilt", "AUTOBIOGRAPHY.md does not say which generation it was written for"),
    ],
)
def test_an_autobiography_is_presented_only_when_written_for_generation(
    written_for: int | None, shown: str, said: str | None
) -> None:
    text = "# Autobiography\n\nGen-3 was here.\n"
    if written_for is not None:
        text = generations.heading("oracle", written_for) + "Gen-3 was here.\n"
    rebuilt = generations.autobiography("oracle", [past(1), past(2)], through=2)
    result = committed.autobiography(text, 2, rebuilt)
    assert result.text == (text if shown == "as written" else rebuilt)
    if said is None:
        assert result.left_out is None
    else:
        assert result.left_out == f"{said}: rebuilt from the committed generations (v1 to v2) instead"


def test_without_a_rebuilt_autobiography_nothing_is_presented() -> None:
    result = committed.autobiography("# Autobiography\n\n## Gen-2\n", 1, None)
    assert result.text is None
    assert (
        result.left_out == "AUTOBIOGRAPHY.md does not say which generation it was written for: not presented"
    )


def test_evolution_records_above_generation_or_unnumbered_are_left_out_and_counted() -> None:
    text = json.dumps(
        [
            {"generation": 1},
            {"generation": 2},
            {"generation": 3},
            {"generation": 3},
            {"x": 1},
            7,
            {"generation": True},
        ]
    )
    result = committed.records(FITNESS, text, 1)
    assert result.text is not None
    assert json.loads(result.text) == [{"generation": 1}]
    assert result.left_out == (
        f"{FITNESS}: 1 record of generation 2, 2 records of generation 3, 3 records without a generation "
        "number not presented (GENERATION is 1: nothing above it was committed)"
    )


def test_evolution_records_all_committed_are_presented_as_written() -> None:
    text = '[\n  {"generation": 1},\n  {"generation": 2}\n]\n'
    assert committed.records(FITNESS, text, 2) == committed.Shown(text)


@pytest.mark.parametrize("text", ["{not json", '{"generation": 1}', "null"])
def test_evolution_records_that_are_not_a_json_list_are_left_out_whole(text: str) -> None:
    assert committed.records(FITNESS, text, 1) == committed.Shown(
        None, f"{FITNESS} is not a JSON list of records: not presented"
    )


@given(
    st.integers(0, 6),
    st.lists(st.integers(-1, 9), max_size=12),
    st.integers(0, 9),
)
def test_boot_never_presents_a_record_or_paragraph_above_generation(
    marker: int, numbers: list[int], written_for: int
) -> None:
    """Whatever the shared files hold, every record and paragraph boot presents is ≤ GENERATION."""
    pasts = [past(number) for number in range(1, 10)]
    files: dict[str, bytes | None] = {
        FITNESS: json.dumps([{"generation": number} for number in numbers]).encode(),
        "AUTOBIOGRAPHY.md": generations.autobiography(
            "oracle", pasts[:written_for], through=written_for
        ).encode(),
    }
    rebuilt = generations.autobiography("oracle", pasts[:marker], through=marker)
    planned = boot.plan(boot.Reading(marker, tuple(range(1, 10)), files, rebuilt), budget=None)
    shown = json.loads(planned.loaded[FITNESS])
    assert all(1 <= record["generation"] <= marker for record in shown)
    assert sum(1 for number in numbers if 1 <= number <= marker) == len(shown)
    for number in range(marker + 1, 10):
        assert f"Gen-{number} " not in planned.loaded["AUTOBIOGRAPHY.md"]
        assert f"gen {number}." not in planned.loaded["AUTOBIOGRAPHY.md"]
    assert (planned.left_out == ()) == (written_for == marker and all(1 <= n <= marker for n in numbers))
