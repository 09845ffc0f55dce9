"""A committed generation as an MEP entry (SPEC §11), pure: it always lints clean."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from slopd.baton.projection import entry
from slopd.handoff.compose import accepts

LETTER = (
    "## Who I Was\nGen 2.\n\n"
    "## Where Things Stand\nThe parser is half done;\nthe lexer is not.\n- one more\n\n"
    "## What I'd Do Next\n1. Fix the lexer.\n2) Rerun the vectors.\n\n"
    "## What I'm Uncertain About\nThe grammar.\n"
)


def test_the_sections_map_onto_an_mep_entry() -> None:
    """Where Things Stand → What happened (wrapped prose joined), steps → tasks, uncertainty → watch."""
    made = entry("oracle", 2, LETTER, date="2026-12-01", path="batons/oracle/generations/v2/HANDOFF.md")
    assert made == (
        "## 2026-12-01 — oracle (generation 2)\n\n### What happened\n"
        "- The parser is half done; the lexer is not.\n- one more\n"
        "- Full letter: `batons/oracle/generations/v2/HANDOFF.md`\n\n"
        "### What's pending\n- [ ] Fix the lexer.\n- [ ] Rerun the vectors.\n\n"
        "### Watch out for\n- The grammar.\n"
    )


@settings(max_examples=150)
@given(st.text(max_size=400))
def test_any_letter_projects_to_an_entry_that_lints_clean(text: str) -> None:
    """Whatever the letter holds — headings, fences, task-like lines — the entry is accepted."""
    letter = f"## Where Things Stand\n{text}\n## What I'd Do Next\n{text}\n"
    made = entry("oracle", 7, letter, date="2026-12-01", path="p")
    _, problems = accepts(None, made)
    assert problems == [], (made, problems)
