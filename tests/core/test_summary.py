"""The built-in discuss summary (SPEC §4) and the notes index: deterministic text from a body."""

from __future__ import annotations

import pytest

from slopd.core import notes, summary
from slopd.core.envelope import Envelope

MEP_HANDOFF = """\
## 2026-04-03 — Hot Rod (main)

### What happened

- I started the session and read the handoff file
- Then I thought about what to do

The parser now rejects duplicate keys. Tests cover the YAML traps! Nothing else changed? Yes.

### What's pending

Required. Tasks and open items for the next session.

- [ ] **[Pierre]** Post Reddit drafts — 5 posts ready
- [x] Wire Piper PR monitor
- Fix Pip-Boy frame consistency
* Star bullet item
+ Plus bullet item
  - nested item

### Watch out for

- `~/.leo/` still exists as backup

## 2026-04-02 — Skippy (dev)

### What’s pending
- [ ] Older pending item

#### Whats Pending
- [ ] Heading-level-four item
"""


def make(body: str, kind: str = "handoff") -> Envelope:
    return Envelope(
        protocol="slop.v1",
        id="20260704t072000z-handoff-parser",
        type=kind,
        sender="claude-code",
        to="watcher",
        created_at="2026-07-04T07:20:00Z",
        body=body,
    )


def test_title_is_the_first_heading() -> None:
    """The title is the first Markdown heading's text, whatever its level."""
    assert summary.title("intro line\n\n### Deep heading\n\n# Top\n") == "Deep heading"
    assert summary.title(MEP_HANDOFF) == "2026-04-03 — Hot Rod (main)"


def test_title_without_heading_is_the_first_line() -> None:
    """With no heading, the title is the first non-empty line, stripped."""
    assert summary.title("\n\n   First real line.  \nSecond.\n") == "First real line."


def test_title_of_empty_body_is_empty() -> None:
    """An empty or blank body has an empty title."""
    assert summary.title("") == ""
    assert summary.title(" \n\t\n") == ""


def test_hash_without_space_is_not_a_heading() -> None:
    """`#hashtag` is not a heading; the first real heading after it is the title."""
    assert summary.title("#hashtag line\n## Real\n") == "Real"
    assert summary.title("#hashtag line\n") == "#hashtag line"


def test_first_two_sentences_of_the_first_prose_paragraph() -> None:
    """Headings and list paragraphs are skipped; the first two sentences of prose are kept."""
    assert (
        summary.first_sentences(MEP_HANDOFF)
        == "The parser now rejects duplicate keys. Tests cover the YAML traps!"
    )


def test_sentences_join_wrapped_lines() -> None:
    """A paragraph wrapped over several lines reads as one text."""
    body = "First sentence\nwraps here. Second one?\nThird.\n"
    assert summary.first_sentences(body) == "First sentence wraps here. Second one?"


def test_sentence_count_is_a_parameter() -> None:
    """`count` picks how many sentences are kept."""
    assert summary.first_sentences("A. B. C. D.", count=3) == "A. B. C."
    assert summary.first_sentences("Only one sentence without end") == "Only one sentence without end"


def test_long_sentences_are_cut() -> None:
    """The sentences are cut to 600 characters with an ellipsis."""
    text = summary.first_sentences("word " * 400)
    assert len(text) == 600
    assert text.endswith("…")


def test_no_prose_gives_no_sentences() -> None:
    """A body of only headings and lists has no first sentences."""
    assert summary.first_sentences("# Title\n\n- a\n- b\n") == ""
    assert summary.first_sentences("") == ""


def test_pending_items_from_every_section_in_order() -> None:
    """Checkbox and plain bullets under every "What's pending" heading are collected in order."""
    assert summary.pending_items(MEP_HANDOFF) == [
        "**[Pierre]** Post Reddit drafts — 5 posts ready",
        "Wire Piper PR monitor",
        "Fix Pip-Boy frame consistency",
        "Star bullet item",
        "Plus bullet item",
        "nested item",
        "Older pending item",
        "Heading-level-four item",
    ]


def test_pending_items_stop_at_the_next_heading() -> None:
    """Bullets after the pending section's next heading are not pending items."""
    body = "### What's pending\n- [ ] one\n### Watch out for\n- not pending\n"
    assert summary.pending_items(body) == ["one"]


def test_no_pending_section_gives_no_items() -> None:
    """Bullets outside a "What's pending" section are not pending items."""
    assert summary.pending_items("### What happened\n- a\n- b\n") == []
    assert summary.pending_items("What's pending\n- not under a heading\n") == []


def test_empty_checkboxes_are_skipped() -> None:
    """A bullet with no text is not an item."""
    assert summary.pending_items("### What's pending\n- [ ] \n-   \n- real\n") == ["real"]


def test_pending_items_are_capped() -> None:
    """At most 20 pending items are kept."""
    body = "### What's pending\n" + "".join(f"- [ ] item {n}\n" for n in range(30))
    items = summary.pending_items(body)
    assert items == [f"item {n}" for n in range(20)]


def test_summarize_an_mep_handoff() -> None:
    """The summary has the header line, the bold title, the sentences and the pending checklist."""
    text = summary.summarize(make(MEP_HANDOFF))
    parts = text.split("\n\n")
    assert parts[0] == "Summary of handoff `20260704t072000z-handoff-parser` from claude-code."
    assert parts[1] == "**2026-04-03 — Hot Rod (main)**"
    assert parts[2] == "The parser now rejects duplicate keys. Tests cover the YAML traps!"
    assert parts[3].splitlines()[0] == "What's pending:"
    assert "- [ ] Wire Piper PR monitor" in parts[3].splitlines()
    assert "- [ ] Heading-level-four item" in parts[3].splitlines()
    assert "still exists as backup" not in text
    assert text.endswith("\n")


def test_summarize_empty_body() -> None:
    """An empty body summarizes to the header line and a note that there was no body."""
    assert summary.summarize(make("", kind="query")) == (
        "Summary of query `20260704t072000z-handoff-parser` from claude-code.\n\n(The message has no body.)\n"
    )


def test_summarize_single_line_does_not_repeat_it() -> None:
    """A one-line body is its own title and is not repeated as the sentences."""
    text = summary.summarize(make("Can you check the limits?\n", kind="query"))
    assert text.count("Can you check the limits?") == 1
    assert "**Can you check the limits?**" in text


def test_summarize_is_deterministic() -> None:
    """The same envelope always gives the same summary."""
    assert summary.summarize(make(MEP_HANDOFF)) == summary.summarize(make(MEP_HANDOFF))


# --- notes ---


def note(id: str, created_at: str, body: str) -> notes.Note:
    return notes.Note(id=id, sender="claude-code", created_at=created_at, title=id, body=body)


def test_render_index_keeps_the_given_order() -> None:
    """The index lists notes in the order given (the caller sorts newest first), not re-sorted."""
    given = [
        note("n-old", "2026-07-01T00:00:00Z", "Old."),
        note("n-new", "2026-07-04T00:00:00Z", "New."),
        note("n-mid", "2026-07-02T00:00:00Z", "Mid."),
    ]
    index = notes.render_index(given, len(given))
    positions = [index.index(f"`{item.id}`") for item in given]
    assert positions == sorted(positions)
    assert index.startswith("# Notes\n")
    assert "## 2026-07-04T00:00:00Z — claude-code — `n-new`\n\nNew.\n" in index


def test_render_index_of_an_empty_note_and_no_notes() -> None:
    """An empty note shows `(empty)`; no notes gives just the header."""
    assert "(empty)" in notes.render_index([note("n1", "2026-07-04T00:00:00Z", "  \n")], 1)
    assert "## " not in notes.render_index([], 0)


@pytest.mark.parametrize(
    ("body", "title"),
    [("# Backoff\n\nUse jitter.\n", "Backoff"), ("Use jitter.\n", "Use jitter."), ("", "n-7")],
)
def test_note_from_envelope(body: str, title: str) -> None:
    """A note takes its title from the body, falling back to the id, and keeps the envelope's fields."""
    envelope = Envelope(
        protocol="slop.v1",
        id="n-7",
        type="note",
        sender="grok",
        to="watcher",
        created_at="2026-07-04T07:35:00+00:00",
        body=body,
    )
    made = notes.from_envelope(envelope, seen_at="2026-07-05T00:00:00Z")
    assert made == notes.Note(
        id="n-7", sender="grok", created_at="2026-07-04T07:35:00+00:00", title=title, body=body
    )
