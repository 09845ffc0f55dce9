"""The tables in docs/ that are generated from the code are current (`python -m tests.docs_tables`)."""

from __future__ import annotations

import pytest

from tests.docs_tables import ROOT, TABLES, pages, rendered


@pytest.mark.parametrize("page", pages())
def test_every_generated_table_is_what_the_code_makes_now(page: str) -> None:
    """A change to the code without regenerating fails here; `python -m tests.docs_tables` mends it."""
    text = (ROOT / page).read_text(encoding="utf-8")
    for name, (where, _) in TABLES.items():
        if where == page:
            assert f"<!-- generated: {name} -->" in text, name
    assert text == rendered(page), "stale: run python -m tests.docs_tables"
