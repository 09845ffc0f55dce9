"""The notes' pages and bounds (`core.notes`), pure: which page a note is on, INDEX.md and a page
as agents read them, a text cut at its bound and saying so, and one page of a read."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from slopd.core import notes
from slopd.core.notes import Note


def note(number: int, body: str = "") -> Note:
    return Note(
        f"n-{number}",
        "grok",
        f"2026-07-04T07:{number % 60:02d}:00Z",
        f"Note {number}",
        body or f"Body {number}.",
    )


@given(st.integers(1, 10**7))
def test_every_note_is_on_exactly_one_page_and_pages_are_consecutive(seq: int) -> None:
    page = notes.page_of(seq)
    first, last = notes.page_span(page)
    assert first <= seq <= last
    assert last - first + 1 == notes.PAGE_NOTES
    assert notes.page_span(page + 1)[0] == last + 1


def test_page_names_sort_in_page_order() -> None:
    names = [notes.page_name(number) for number in (1, 2, 10, 100, 9999)]
    assert names == sorted(names)
    assert names[0] == "page-0001.md"


@given(st.text(), st.integers(0, 50))
def test_a_clipped_text_is_its_prefix_and_says_whether_it_was_cut(text: str, bound: int) -> None:
    shown, cut = notes.clip(text, bound)
    assert text.startswith(shown)
    assert len(shown) == min(len(text), bound)
    assert cut == (len(text) > bound)
    assert notes.clip(text, None) == (text, False)


def test_the_index_holds_every_note_while_there_are_few() -> None:
    text = notes.render_index([note(3), note(2), note(1)], 3)
    assert "Every `type: note` this hub has received (3), newest first." in text
    assert text.index("`n-3`") < text.index("`n-2`") < text.index("`n-1`")
    assert "Body 2." in text
    assert "`page-0001.md`." in text


def test_past_its_bound_the_index_says_how_many_there_are_and_where_the_rest_are() -> None:
    newest = [note(number) for number in range(250, 200, -1)]
    text = notes.render_index(newest, 250)
    assert "The 50 newest of the 250 `type: note`s this hub has received, newest first." in text
    assert "`page-0001.md` (the first) to `page-0003.md`" in text
    assert "`n-200`" not in text


def test_a_long_text_is_cut_in_the_files_and_says_how_to_read_it_whole() -> None:
    long = "x" * (notes.FILE_CHARS + 10)
    text = notes.render_page(2, [note(101, long)])
    assert "x" * notes.FILE_CHARS in text
    assert "x" * (notes.FILE_CHARS + 1) not in text
    assert f"(… cut at 4,000 of {notes.FILE_CHARS + 10:,} characters: `slopd notes --search n-101" in text
    assert "Notes 101 to 200 in the order slopd indexed them, newest first." in text
    assert "`page-0001.md` holds older ones" in text


def test_a_page_of_a_read_carries_each_text_bounded_and_the_next_offset() -> None:
    found = [note(9, "a" * 30), note(8, "short")]
    page = notes.page(found, total=5, offset=2, max_chars=10)
    assert [item["id"] for item in page["notes"]] == ["n-9", "n-8"]
    assert page["notes"][0] | {"text": "a" * 10, "total_chars": 30, "truncated": True} == page["notes"][0]
    assert (page["notes"][1]["text"], page["notes"][1]["truncated"]) == ("short", False)
    assert page["notes"][0]["from"] == "grok"
    assert (page["total"], page["offset"], page["next_offset"]) == (5, 2, 4)
    assert notes.page(found, total=4, offset=2, max_chars=None)["next_offset"] is None
