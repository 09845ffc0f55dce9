"""The three-way merge of handoff logs (SPEC §10, slopd/handoff/merge.py rules 1-6): properties over
generated (base, ours, theirs) triples, and one table test per rule.

The triples (tests/handoff/strategies.py) know from their model what each side did to each base
entry, so what the merge must keep and in which order is computed without the merge's own code.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace

import pytest
from hypothesis import HealthCheck, assume, given, settings

from slopd.handoff.grammar import Other, parse
from slopd.handoff.lint import ERROR, lint
from slopd.handoff.merge import Merged, key, merge
from tests import ROOT
from tests.handoff import strategies
from tests.handoff.strategies import Triple

SETTINGS = settings(deadline=None, max_examples=80, suppress_health_check=[HealthCheck.too_slow])
HEAD = "# Handoff Log\nSession handoffs, newest first.\n\n---\n\n"


def keys(text: str) -> list[str]:
    return [key(block) for block in parse(text).blocks]


def entry_keys(text: str) -> list[str]:
    return [key(block) for block in parse(text).entries]


def errors(text: str) -> list[str]:
    return [finding.rule for finding in lint(text.encode()).findings if finding.severity == ERROR]


TRIPLES = strategies.triples()


@dataclass(frozen=True)
class Case:
    triple: Triple
    text: str
    conflicts: int


def merged(triple: Triple) -> Case:
    result = merge(triple.base, triple.ours, triple.theirs)
    return Case(triple, result.text, result.conflicts)


# -- properties --------------------------------------------------------------------------------


@SETTINGS
@given(TRIPLES)
def test_every_entry_of_either_side_is_kept_once_unless_the_rules_drop_it(triple: Triple) -> None:
    """The result holds each side's new and changed entries and the base entries both kept, once each;
    only an entry one side deleted and the other left as in base, or a side's unchanged copy of an
    entry the other side changed, is gone."""
    case = merged(triple)

    found = keys(case.text)
    assert len(found) == len(set(found)), "an entry appears twice"
    assert set(found) == triple.expected_keys()
    kept_from_a_side = set(keys(triple.ours)) | set(keys(triple.theirs))
    assert set(found) <= kept_from_a_side, "the merge made up an entry"


@SETTINGS
@given(TRIPLES)
def test_the_merge_is_newest_first_with_the_later_tag_out_on_top(triple: Triple) -> None:
    """Entries come newest date first, a later Tag-out first on a shared date, ours' version of an
    entry both changed before theirs; lint finds no MEP2 in the result."""
    case = merged(triple)

    assert entry_keys(case.text) == triple.expected_entry_order()
    assert "MEP2" not in errors(case.text)


@SETTINGS
@given(TRIPLES)
def test_merging_two_clean_logs_gives_a_log_without_errors(triple: Triple) -> None:
    """Both sides lint without errors, so the result does too (unless it kept no entry at all)."""
    assert errors(triple.ours) == errors(triple.theirs) == []
    case = merged(triple)
    assume(parse(case.text).entries)

    assert errors(case.text) == []


@SETTINGS
@given(TRIPLES)
def test_the_merge_is_idempotent(triple: Triple) -> None:
    """Merging theirs into the result again changes nothing, nor does merging the result into ours;
    a side merged with itself is itself."""
    case = merged(triple)
    assume(parse(case.text).entries)  # a header alone is not a log: see test_a_merge_that_keeps_no_entry…

    assert merge(triple.base, case.text, triple.theirs).text == case.text
    assert merge(triple.base, triple.ours, case.text).text == case.text
    for side in (triple.ours, triple.theirs, case.text):
        assert merge(triple.base, side, side) == Merged(side, 0)


@SETTINGS
@given(TRIPLES)
def test_no_conflict_when_the_file_headers_agree(triple: Triple) -> None:
    """With at most one side changing the file header there is no conflict, and that change is kept."""
    case = merged(triple)

    assert case.conflicts == 0
    assert "<<<<<<<" not in case.text
    changed = {parse(side).preamble for side in (triple.ours, triple.theirs)} - {parse(triple.base).preamble}
    assert parse(case.text).preamble == (changed.pop() if changed else parse(triple.base).preamble)


@SETTINGS
@given(TRIPLES)
def test_file_headers_changed_differently_give_one_conflict_and_the_same_entries(triple: Triple) -> None:
    """Both sides changing the file header differently is one conflict, above the very blocks the
    merge gives when the headers agree."""
    ours = replace(triple.ours_spec, description="Ours' handoffs.")
    theirs = replace(triple.theirs_spec, description="Theirs' handoffs.")
    agreed = replace(theirs, description=ours.description)

    conflicted = merge(triple.base, ours.text(), theirs.text())

    assert conflicted.conflicts == 1
    assert conflicted.text.startswith("<<<<<<< ours")
    assert keys(conflicted.text) == keys(merge(triple.base, ours.text(), agreed.text()).text)


@SETTINGS
@given(TRIPLES)
def test_crlf_sides_merge_to_crlf_and_lf_sides_to_lf(triple: Triple) -> None:
    """The result has the sides' line endings and no bare LF in a CRLF merge."""
    case = merged(triple)

    if triple.base_spec.newline == "\r\n":
        assert "\n" not in case.text.replace("\r\n", "")
    else:
        assert "\r" not in case.text


# -- table tests: the rules one by one ------------------------------------------------------------


def entry(
    date: str,
    context: str = "Hot Rod (main)",
    tags: str | None = None,
    happened: str = "- Built it",
    pending: str = "- [ ] Ship it",
) -> str:
    tag_line = [tags] if tags else []
    lines = [f"## {date} — {context}", *tag_line, "", "### What happened", happened, "", "### What's pending"]
    return "\n".join([*lines, pending]) + "\n"


def log(*entries: str, head: str = HEAD) -> str:
    return head + "\n---\n\n".join(entries)


OLD = entry("2026-04-01", happened="- Old work")
MID = entry("2026-04-02", "Mac (dev)", happened="- Middle work")
BASE = log(MID, OLD)
OURS_NEW = entry("2026-04-05", "Mac (ours)", happened="- Ours' new work")
THEIRS_NEW = entry("2026-04-06", "Hot Rod (theirs)", happened="- Theirs' new work")


def ticked(text: str) -> str:
    return text.replace("- [ ] Ship it", "- [x] Ship it")


def noted(text: str, note: str) -> str:
    return text.replace("\n\n### What's pending", f"\n- {note}\n\n### What's pending")


def test_identical_sides_or_a_side_equal_to_the_base_give_the_other_sides_bytes() -> None:
    """Rule 1: the merge returns the other side's text byte for byte, with no conflict."""
    ours = log(OURS_NEW, MID, OLD).replace("\n", "\r\n")

    assert merge(BASE, ours, ours).text == ours
    assert merge(BASE, ours, BASE).text == ours
    assert merge(BASE, BASE, ours).text == ours
    assert merge(BASE, ours, BASE).conflicts == 0


def test_entries_both_sides_added_are_all_kept_newest_first() -> None:
    """New entries of both sides are kept, newest date on top, above the base's entries."""
    result = merge(BASE, log(OURS_NEW, MID, OLD), log(THEIRS_NEW, MID, OLD))

    assert result.conflicts == 0
    assert keys(result.text) == [key_(THEIRS_NEW), key_(OURS_NEW), key_(MID), key_(OLD)]
    assert result.text == log(THEIRS_NEW, OURS_NEW, MID, OLD)


def key_(text: str) -> str:
    return text.strip()


def test_an_entry_only_theirs_changed_takes_the_change() -> None:
    """Rule 4: theirs changed an entry ours left as in base: the change wins."""
    result = merge(BASE, log(OURS_NEW, MID, OLD), log(MID, ticked(OLD)))

    assert keys(result.text) == [key_(OURS_NEW), key_(MID), key_(ticked(OLD))]


def test_an_entry_only_ours_changed_takes_the_change() -> None:
    """Rule 4: ours changed an entry theirs left as in base: the change wins, the old text is gone."""
    result = merge(BASE, log(MID, ticked(OLD)), log(THEIRS_NEW, MID, OLD))

    assert keys(result.text) == [key_(THEIRS_NEW), key_(MID), key_(ticked(OLD))]


def test_an_entry_both_changed_differently_is_kept_in_both_versions_ours_first() -> None:
    """Rule 4: two different changes are both kept, ours' version above theirs'."""
    ours, theirs = noted(OLD, "ours' note"), ticked(OLD)

    result = merge(BASE, log(MID, ours), log(MID, theirs))

    assert result.conflicts == 0
    assert keys(result.text) == [key_(MID), key_(ours), key_(theirs)]


def test_an_entry_both_changed_the_same_way_is_kept_once() -> None:
    """The same change on both sides is one entry."""
    result = merge(BASE, log(OURS_NEW, MID, ticked(OLD)), log(MID, ticked(OLD)))

    assert keys(result.text) == [key_(OURS_NEW), key_(MID), key_(ticked(OLD))]


@pytest.mark.parametrize("deleting", ["ours", "theirs"])
def test_an_entry_one_side_deleted_and_the_other_left_alone_is_deleted(deleting: str) -> None:
    """Rule 4: a deletion facing an unchanged entry removes it."""
    deleted, kept = log(OURS_NEW, MID), log(THEIRS_NEW, MID, OLD)
    ours, theirs = (deleted, kept) if deleting == "ours" else (kept, deleted)

    result = merge(BASE, ours, theirs)

    assert key_(OLD) not in keys(result.text)
    assert set(keys(result.text)) == {key_(OURS_NEW), key_(THEIRS_NEW), key_(MID)}


@pytest.mark.parametrize("deleting", ["ours", "theirs"])
def test_an_entry_one_side_deleted_and_the_other_changed_keeps_the_change(deleting: str) -> None:
    """Rule 4: a deletion facing a change keeps the changed entry (nothing written is lost)."""
    deleted, changed = log(OURS_NEW, MID), log(THEIRS_NEW, MID, ticked(OLD))
    ours, theirs = (deleted, changed) if deleting == "ours" else (changed, deleted)

    result = merge(BASE, ours, theirs)

    assert keys(result.text)[-2:] == [key_(MID), key_(ticked(OLD))]
    assert key_(OLD) not in keys(result.text)


def test_an_entry_both_sides_deleted_is_gone() -> None:
    """An entry neither side kept is not in the result."""
    result = merge(BASE, log(OURS_NEW, MID), log(THEIRS_NEW, MID))

    assert keys(result.text) == [key_(THEIRS_NEW), key_(OURS_NEW), key_(MID)]


def test_entries_are_the_same_whatever_their_line_endings_and_trailing_spaces() -> None:
    """Rule 3: an entry re-saved with CRLF and trailing spaces is the same entry, kept once."""
    resaved = OLD.replace("\n", "  \r\n")
    theirs = (HEAD + THEIRS_NEW + "\n---\n\n" + MID).replace("\n", "\r\n") + "\r\n---\r\n\r\n" + resaved

    result = merge(BASE, log(OURS_NEW, MID, OLD), theirs)

    assert keys(result.text) == [key_(THEIRS_NEW), key_(OURS_NEW), key_(MID), key_(OLD)]


def test_same_date_entries_without_comparable_tag_outs_keep_ours_before_theirs() -> None:
    """Rule 5: on one date, with no Tag-outs to compare, ours' entry comes above theirs'."""
    ours_entry = entry("2026-04-05", "Mac (ours)", happened="- ours")
    theirs_entry = entry("2026-04-05", "Hot Rod (theirs)", happened="- theirs")

    result = merge(BASE, log(ours_entry, MID, OLD), log(theirs_entry, MID, OLD))

    assert keys(result.text)[:2] == [key_(ours_entry), key_(theirs_entry)]


@pytest.mark.parametrize(
    ("ours_out", "theirs_out", "theirs_first"),
    [
        ("16:30 UTC", "17:00 UTC", True),
        ("17:00 UTC", "16:30 UTC", False),
        ("14:30 ET", "17:00 UTC", False),  # 14:30 EDT is 18:30 UTC
        ("12:30 ET", "17:00 UTC", True),  # 12:30 EDT is 16:30 UTC
        ("[active]", "23:59 UTC", False),
        ("23:59 UTC", "[active]", True),
        ("1:00 pm ET", "5:30 pm UTC", True),  # 17:00 UTC against 17:30 UTC
    ],
)
def test_same_date_entries_are_ordered_by_tag_out_across_sides_and_zones(
    ours_out: str, theirs_out: str, theirs_first: bool
) -> None:
    """Rule 5: on one date the later Tag-out (its zone applied; [active] latest) is on top."""
    ours_entry = entry(
        "2026-07-05", "Skippy | Claude | code", f"**Tag-in:** 09:00 UTC | **Tag-out:** {ours_out}"
    )
    theirs_entry = entry(
        "2026-07-05", "Grok | Grok (X) | chat", f"**Tag-in:** 09:00 UTC | **Tag-out:** {theirs_out}"
    )

    result = merge(BASE, log(ours_entry, MID, OLD), log(theirs_entry, MID, OLD))

    expected = [theirs_entry, ours_entry] if theirs_first else [ours_entry, theirs_entry]
    assert keys(result.text)[:2] == [key_(text) for text in expected]
    assert "MEP2" not in errors(result.text)


@pytest.mark.parametrize("ours_changes", [False, True])
def test_a_file_header_changed_on_one_side_or_alike_on_both_is_taken_without_conflict(
    ours_changes: bool,
) -> None:
    """Rule 6: one side's new description line, or the same one on both sides, wins with no markers."""
    changed = HEAD.replace("newest first", "newest on top")
    ours = log(OURS_NEW, MID, OLD, head=changed if ours_changes else HEAD)

    result = merge(BASE, ours, log(THEIRS_NEW, MID, OLD, head=changed))

    assert result.conflicts == 0
    assert parse(result.text).preamble == changed


def test_a_file_header_both_sides_changed_differently_is_the_one_conflict_with_its_marker_size() -> None:
    """Rule 6: the preamble is written as ours/base/theirs between markers of the size asked for;
    the entries below are merged as usual."""
    ours_head, theirs_head = HEAD.replace("first", "on top"), HEAD.replace("Session", "Agent")

    result = merge(
        BASE,
        log(OURS_NEW, MID, OLD, head=ours_head),
        log(THEIRS_NEW, MID, OLD, head=theirs_head),
        marker_size=10,
    )

    assert result.conflicts == 1
    head = (
        "<<<<<<<<<< ours\n"
        + ours_head
        + "|||||||||| base\n"
        + HEAD
        + "==========\n"
        + theirs_head
        + ">>>>>>>>>> theirs\n"
    )
    assert result.text.startswith(head)
    assert "<<<<<<< ours" not in result.text.replace("<<<<<<<<<< ours", "")
    assert parse(result.text.removeprefix(head)).preamble == ""
    assert keys(result.text.removeprefix(head)) == [key_(THEIRS_NEW), key_(OURS_NEW), key_(MID), key_(OLD)]


@pytest.mark.parametrize("side", ["ours", "theirs"])
def test_a_side_that_is_not_a_log_gives_a_whole_file_diff3_conflict(side: str) -> None:
    """Rule 2: text with no entry is not a log: the whole file becomes one conflict, nothing dropped."""
    notes = "Shopping list:\n- milk\n- eggs\n"
    ours, theirs = (notes, log(THEIRS_NEW, MID, OLD)) if side == "ours" else (log(OURS_NEW, MID, OLD), notes)

    result = merge(BASE, ours, theirs)

    assert result.conflicts == 1
    assert result.text == f"<<<<<<< ours\n{ours}||||||| base\n{BASE}=======\n{theirs}>>>>>>> theirs\n"


def test_a_whole_file_conflict_ends_each_part_with_a_newline() -> None:
    """Rule 2: a part without a final newline gets one, so every marker starts its own line."""
    result = merge(BASE, "no log here", log(THEIRS_NEW, MID, OLD).removesuffix("\n"), marker_size=3)

    assert result.text.startswith("<<< ours\nno log here\n||| base\n")
    assert "\n===\n" in result.text
    assert result.text.endswith("\n>>> theirs\n")


def test_crlf_sides_merge_with_crlf_endings_only() -> None:
    """Sides with CRLF endings give a CRLF result, separators included: no bare LF."""
    crlf = str.maketrans({"\n": "\r\n"})

    result = merge(
        BASE.translate(crlf),
        log(OURS_NEW, MID, OLD).translate(crlf),
        log(THEIRS_NEW, MID, OLD).translate(crlf),
    )

    assert result.text == log(THEIRS_NEW, OURS_NEW, MID, OLD).translate(crlf)


def test_a_crlf_side_merged_with_an_lf_side_loses_no_entry() -> None:
    """Line endings differing between the sides change no entry's identity."""
    theirs = log(THEIRS_NEW, MID, OLD).replace("\n", "\r\n")

    result = merge(BASE, log(OURS_NEW, MID, OLD), theirs)

    assert keys(result.text) == [key_(THEIRS_NEW), key_(OURS_NEW), key_(MID), key_(OLD)]


NOTES = "## Notes\n\n- Archive entries older than a month\n"


def test_a_trailing_dateless_block_stays_last_when_entries_are_added() -> None:
    """Rule 5: `## Notes` after the oldest entry stays there, below every new entry."""
    result = merge(log(MID, OLD, NOTES), log(OURS_NEW, MID, OLD, NOTES), log(THEIRS_NEW, MID, OLD, NOTES))

    parsed = parse(result.text)
    assert isinstance(parsed.blocks[-1], Other)
    assert keys(result.text) == [key_(THEIRS_NEW), key_(OURS_NEW), key_(MID), key_(OLD), key_(NOTES)]


def test_a_dateless_block_stays_below_the_entries_when_the_entry_above_it_is_deleted() -> None:
    """`## Notes` below an entry theirs deleted stays below the remaining entries, not above them."""
    base = log(OLD, NOTES)
    ours = log(OLD, NOTES, head=HEAD.replace("newest first", "newest on top"))

    result = merge(base, ours, log(THEIRS_NEW, NOTES))

    assert keys(result.text) == [key_(THEIRS_NEW), key_(NOTES)]


def test_a_dateless_block_stays_below_both_versions_of_an_entry_both_sides_changed() -> None:
    """`## Notes` after the oldest entry stays last when both sides changed that entry."""
    ours, theirs = noted(OLD, "ours' note"), ticked(OLD)

    result = merge(log(MID, OLD, NOTES), log(MID, ours, NOTES), log(MID, theirs, NOTES))

    assert keys(result.text) == [key_(MID), key_(ours), key_(theirs), key_(NOTES)]


def test_a_log_without_a_final_newline_stays_without_one() -> None:
    """When base, ours and theirs all end without a newline, so does the merge (the last entry
    here is theirs' change of an entry ours did not touch)."""
    sides = (BASE, log(OURS_NEW, MID), log(MID, ticked(OLD)))
    base, ours, theirs = (text.removesuffix("\n") for text in sides)

    result = merge(base, ours, theirs)

    assert result.text == log(OURS_NEW, MID, ticked(OLD)).removesuffix("\n")


def test_a_merge_that_keeps_no_entry_can_be_merged_again() -> None:
    """The file header a merge leaves when every entry was deleted merges again without conflict."""
    first = merge(BASE, log(OLD), log(MID))
    assert first.text == HEAD
    assert first.conflicts == 0

    again = merge(BASE, first.text, log(MID))

    assert (again.text, again.conflicts) == (HEAD, 0)


def test_two_sessions_with_one_heading_are_matched_by_their_own_text() -> None:
    """Both sides changed the 10:00 session (theirs also deleted the 17:00 one): ours' version first."""
    heading = "2026-04-13"
    late = entry(
        heading, "Grok | Grok (X) | brainstorm", "**Tag-in:** 15:00 UTC | **Tag-out:** 17:00 UTC", "- Late"
    )
    early = entry(
        heading, "Grok | Grok (X) | brainstorm", "**Tag-in:** 09:00 UTC | **Tag-out:** 10:00 UTC", "- Early"
    )
    ours, theirs = noted(early, "ours' note"), ticked(early)

    result = merge(log(late, early, OLD), log(late, ours, OLD), log(theirs, OLD))

    assert keys(result.text) == [key_(ours), key_(theirs), key_(OLD)]


def test_a_trailing_section_stays_last_so_a_merge_merged_again_is_unchanged() -> None:
    """The triple hypothesis found on CI (a trailing `## Notes`, no final newline, theirs deleting
    the base entry): merged again with its result, the merge moved the Notes between entries."""
    case = json.loads((ROOT / "tests" / "fixtures" / "handoff" / "merge-trailing-notes.json").read_text())
    result = merge(case["base"], case["ours"], case["theirs"]).text
    assert result.rstrip().endswith("archive older entries to handoff-archive.md")
    assert merge(case["base"], case["ours"], result).text == result
    assert merge(case["base"], result, case["theirs"]).text == result
