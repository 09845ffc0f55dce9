"""The MEP handoff grammar (SPEC §10): byte-exact parse → render, date headers, Tag lines, items,
fences and comments, line endings. (Tag-out times: test_clock.py.)"""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from slopd.handoff import header
from slopd.handoff.grammar import Entry, Other, parse, render
from slopd.handoff.items import read_item
from slopd.handoff.lint import lint
from slopd.handoff.merge import key
from tests.handoff import strategies

SETTINGS = settings(deadline=None, max_examples=200, suppress_health_check=[HealthCheck.too_slow])
GENERATED = settings(deadline=None, max_examples=100, suppress_health_check=[HealthCheck.too_slow])
EM = "\u2014"

# Lines that steer the parser (headings, sections, fences, comments, rules, endings), so that
# joined at random they reach the structure far more often than plain `st.text()` does.
FRAGMENTS = st.sampled_from(
    [
        "# Handoff Log",
        "## 2026-04-03 — Hot Rod (main)",
        "## 2026-04-13 — Skippy | Claude (Hot Rod) | code",
        "**Tag-in:** 14:30 ET | **Tag-out:** 16:45 ET",
        "## Notes",
        "## 2026/4/3",
        "### What happened",
        "### What’s pending",
        "### Watch out for",
        "- [ ] **[Pierre]** task",
        "-[ ] bad",
        "- bullet",
        "```",
        "~~~",
        "<!--",
        "-->",
        "<!-- one line -->",
        "---",
        "",
        "   ",
        "\ufeff# Handoff Log",
        "text",
    ]
)
ENDINGS = st.sampled_from(["\n", "\r\n", "\r", ""])
STRUCTURED = st.lists(st.tuples(FRAGMENTS, ENDINGS), max_size=24).map(
    lambda pairs: "".join(line + ending for line, ending in pairs)
)


def log(*entries: str, preamble: str = "# Handoff Log\nSession handoffs.\n\n") -> str:
    return preamble + "\n---\n\n".join(entries)


def entry(heading: str = "## 2026-04-03 — Hot Rod (main)", *lines: str) -> str:
    body = lines or ("### What happened", "- Built it", "", "### What's pending", "- [ ] Ship it")
    return "\n".join([heading, "", *body]) + "\n"


# -- parse → render ----------------------------------------------------------------------------


@SETTINGS
@given(st.text())
def test_any_text_renders_back_to_the_same_string(text: str) -> None:
    """render(parse(t)) == t for any string at all."""
    assert render(parse(text)) == text


@SETTINGS
@given(STRUCTURED)
def test_text_made_of_structural_lines_renders_back_exactly(text: str) -> None:
    """Headings, sections, fences, comments and rules with any line endings round-trip exactly."""
    assert render(parse(text)) == text


@GENERATED
@given(strategies.clean_log_specs())
def test_a_generated_log_round_trips_and_parses_into_its_entries(spec: strategies.LogSpec) -> None:
    """A realistic log renders back byte for byte, and its blocks are the entries it was built from."""
    text = spec.text()
    parsed = parse(text)

    assert render(parsed) == text
    assert [key(block) for block in parsed.blocks] == spec.keys()
    assert [entry.header.day for entry in parsed.entries] == [entry.day for entry in spec.entries]
    assert [entry.header.v2 for entry in parsed.entries] == [" | " in e.context for e in spec.entries]
    assert parsed.newline == spec.newline
    assert parsed.has_file_header


@GENERATED
@given(strategies.clean_log_specs())
def test_a_generated_log_reads_its_tag_lines_and_tasks(spec: strategies.LogSpec) -> None:
    """Each entry's Tag line and What's pending tasks are read as written."""
    for parsed, made in zip(parse(spec.text()).entries, spec.entries, strict=True):
        assert (parsed.tags.tag_in, parsed.tags.tag_out) == made.tags if parsed.tags else made.tags is None
        tasks = [task for task in made.pending if not task.plain]
        assert [(item.done, item.owner, item.body) for item in parsed.tasks()] == [
            (task.done, task.owner, task.text) for task in tasks
        ]


def test_a_log_splits_into_preamble_entries_and_other_blocks() -> None:
    """The file header is the preamble; each `## ` line after it starts a block; `## Notes` is Other."""
    text = log(entry(), entry("## 2026-04-02 — Mac (dev)"), "## Notes\n\n- keep it short\n")

    parsed = parse(text)

    assert parsed.preamble == "# Handoff Log\nSession handoffs.\n\n"
    assert [type(block) for block in parsed.blocks] == [Entry, Entry, Other]
    assert [block.line for block in parsed.blocks] == [4, 14, 24]
    assert parsed.blocks[0].trailer == "\n---\n\n"
    assert parsed.blocks[0].text.endswith("- [ ] Ship it\n")
    assert parsed.blocks[2].trailer == ""


def test_headings_before_the_first_entry_belong_to_the_preamble() -> None:
    """A standup's `## Scope` above the log is part of the preamble, not a block."""
    preamble = "# Standing Standup — slopd\n\n## Scope\n\n- the daemon\n\n# Handoff Log\nLog.\n\n"

    parsed = parse(preamble + entry())

    assert parsed.preamble == preamble
    assert [block.heading for block in parsed.blocks] == ["## 2026-04-03 — Hot Rod (main)"]


def test_a_dateless_block_with_a_happened_section_after_an_entry_is_an_entry() -> None:
    """After the first entry, a `## ` block holding What happened is an entry (for MEP4 to flag)."""
    parsed = parse(log(entry(), entry("## Friday session")))

    assert [type(block) for block in parsed.blocks] == [Entry, Entry]
    assert parsed.entries[1].header.date is None


def test_a_slashed_date_heading_starts_an_entry() -> None:
    """`## 2026/4/3` starts an entry even without sections (so MEP4 can name its date)."""
    parsed = parse("# Handoff Log\nLog.\n\n## 2026/4/3 — Mac\n\n- notes\n")

    assert len(parsed.entries) == 1
    assert parsed.entries[0].header.date is None


def test_a_file_without_a_final_newline_keeps_its_last_line_in_the_last_entry() -> None:
    """The last entry's text ends at the file's last byte when there is no final newline."""
    text = log(entry()).removesuffix("\n")

    parsed = parse(text)

    assert parsed.entries[0].text.endswith("- [ ] Ship it")
    assert render(parsed) == text


@pytest.mark.parametrize(
    ("first", "expected"),
    [
        ("# Handoff Log", True),
        ("\ufeff# Handoff Log", True),
        ("# Handoff Log — slopd", True),
        ("# Handoff Log\r", True),
        ("\n\n# Handoff Log", True),  # blank lines first: MEP's checker strips them
        ("  # Handoff Log", True),
        ("\ufeff\n# Handoff Log", True),
        ("# Handoff Logs", True),  # MEP's checker tests the text's start, nothing more
        ("# handoff log", False),
        ("Handoff Log", False),
        ("## Handoff Log", False),
        ("Intro\n# Handoff Log", False),
        ("", False),
    ],
)
def test_the_file_header_is_where_meps_checker_looks_for_it(first: str, expected: bool) -> None:
    """`has_file_header`: the text begins with `# Handoff Log` once a BOM and whitespace are set aside."""
    assert parse(first + "\nLog.\n\n" + entry()).has_file_header is expected


# -- date headers --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("heading", "separator"),
    [
        ("## 2026-04-03 — Hot Rod (main)", "—"),
        ("## 2026-04-03 - Hot Rod (main)", "-"),
        ("## 2026-04-03 -- Hot Rod (main)", "--"),
        ("## 2026-04-03 – Hot Rod (main)", "–"),
        ("## 2026-04-03 â€” Hot Rod (main)", "â€”"),
        ("##\t2026-04-03\t—\tHot Rod (main)", "—"),
        ("##  2026-04-03  —  Hot Rod (main) ", "—"),
    ],
)
def test_a_date_header_reads_every_separator_mep_files_use(heading: str, separator: str) -> None:
    """Em dash, ` - `, ` -- `, an en dash and the mis-encoded `â€”`, between any whitespace, all
    give the date and context."""
    read = header.read_header(heading)

    assert (read.date, read.day, read.separator) == ("2026-04-03", dt.date(2026, 4, 3), separator)
    assert read.context == "Hot Rod (main)"
    assert read.fields == ("Hot Rod (main)",)
    assert not read.v2


def test_a_dash_inside_the_context_is_not_taken_for_the_separator() -> None:
    """The first separator after the date splits; later dashes are context text."""
    read = header.read_header("## 2026-04-03 - Mac - feature - x")

    assert (read.separator, read.context) == ("-", "Mac - feature - x")


@pytest.mark.parametrize(
    ("context", "fields"),
    [
        ("Skippy | Claude (Hot Rod) | code", ("Skippy", "Claude (Hot Rod)", "code")),
        ("Pierre | Human | review", ("Pierre", "Human", "review")),
        ("Grok  |  Grok (X)  |  brainstorm", ("Grok", "Grok (X)", "brainstorm")),
    ],
)
def test_a_context_of_three_pipe_separated_fields_is_v2(context: str, fields: tuple[str, ...]) -> None:
    """`agent | platform | session-type` is a v2 header with those three fields."""
    read = header.read_header(f"## 2026-04-13 — {context}")

    assert read.v2
    assert read.fields == fields
    assert read.agent == fields[0]


@pytest.mark.parametrize(
    "context",
    [
        "Mac (Nagatha/worktree)",
        "Mac (feature|fix|docs)",  # pipes without spaces are text
        "Mac | main | dev | docs",  # ` | ` three times: four fields
        "Mac |  | main",  # ` | ` twice, but one field is empty
        "Mac → Hot Rod (main)",
        "Hot Rod | main",
    ],
)
def test_a_context_that_is_not_three_non_empty_fields_is_v1(context: str) -> None:
    """Anything but exactly three non-empty ` | ` fields is a v1 `machine (branch)` context."""
    read = header.read_header(f"## 2026-04-03 — {context}")

    assert not read.v2
    assert read.fields == (context,)


@pytest.mark.parametrize(
    ("heading", "date", "day"),
    [
        ("## 2026-02-30 — Mac", "2026-02-30", None),
        ("## 2026-13-01 — Mac", "2026-13-01", None),
        ("## 2024-02-29 — Mac", "2024-02-29", dt.date(2024, 2, 29)),
        ("## 2026-4-3 — Mac", None, None),
        ("## Notes", None, None),
    ],
)
def test_a_date_is_read_as_written_and_as_a_calendar_day_when_real(
    heading: str, date: str | None, day: dt.date | None
) -> None:
    """`date` keeps a YYYY-MM-DD as written; `day` is set only for a real calendar date."""
    read = header.read_header(heading)

    assert (read.date, read.day) == (date, day)


def test_a_heading_with_only_a_date_has_no_separator_and_no_context() -> None:
    """`## 2026-04-03` alone is dated, with no separator, context or fields."""
    read = header.read_header("## 2026-04-03")

    assert (read.date, read.separator, read.context, read.fields) == ("2026-04-03", None, "", ())


# -- Tag lines -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "tag_in", "tag_out"),
    [
        ("**Tag-in:** 14:30 ET | **Tag-out:** 16:45 ET", "14:30 ET", "16:45 ET"),
        ("**Tag-in:** 14:30 ET | **Tag-out:** [active]", "14:30 ET", "[active]"),
        ("**Tag-in:**14:30 UTC|**Tag-out:**17:00 UTC", "14:30 UTC", "17:00 UTC"),
        ("  **Tag-in:** ~02:50 ET | **Tag-out:** 2:30 pm ET  ", "~02:50 ET", "2:30 pm ET"),
    ],
)
def test_a_bold_tag_line_gives_its_tag_in_and_tag_out(line: str, tag_in: str, tag_out: str) -> None:
    """`**Tag-in:** T | **Tag-out:** T` is well formed; the times are kept as written."""
    tags = header.read_tags(line, 5)

    assert tags is not None
    assert tags.well_formed
    assert (tags.line, tags.tag_in, tags.tag_out) == (5, tag_in, tag_out)


def test_a_tag_line_without_bold_is_well_formed() -> None:
    """`Tag-in: 14:30 ET | Tag-out: 16:45 ET` (no bold) is read like the bold form."""
    tags = header.read_tags("Tag-in: 14:30 ET | Tag-out: 16:45 ET", 5)

    assert tags is not None
    assert (tags.tag_in, tags.tag_out) == ("14:30 ET", "16:45 ET")


@pytest.mark.parametrize(
    "line",
    [
        "**Tag-in:** 14:30 ET",
        "**Tag-in:** 14:30 ET | **Tag-out:**",
        "**Tag-in:**  | **Tag-out:** 16:45 ET",
        "**Tag-out:** 16:45 ET | **Tag-in:** 14:30 ET",
        "Tag-in: 14:30 Tag-out: 16:45",
        "**Tag-in:** 14:30 ET | Tag-out 16:45 ET",
    ],
)
def test_a_line_that_looks_like_a_tag_line_but_is_not_one_is_malformed(line: str) -> None:
    """A Tag-like line missing a half, a time, or the `Tag-in: … | Tag-out: …` shape is not well formed."""
    tags = header.read_tags(line, 2)

    assert tags is not None
    assert not tags.well_formed
    assert (tags.tag_in, tags.tag_out, tags.text) == (None, None, line)


@pytest.mark.parametrize("line", ["- Tagged the release", "Tags: v1", "", "### What happened"])
def test_a_line_that_does_not_start_like_a_tag_line_is_no_tag_line(line: str) -> None:
    """Only a line starting with Tag-in/Tag-out (bold or not) is read as a Tag line."""
    assert header.read_tags(line, 2) is None


def test_an_entry_reads_the_tag_line_under_its_heading() -> None:
    """The first non-blank line under the heading, before any section, is the entry's Tag line."""
    text = log(
        "## 2026-04-13 — Grok | Grok (X) | brainstorm\n**Tag-in:** 01:00 ET | **Tag-out:** 04:00 ET\n\n"
        "### What happened\n- Mapped it\n\n### What's pending\n- [ ] Build it\n"
    )

    parsed = parse(text).entries[0]

    assert parsed.tags is not None
    assert (parsed.tags.line, parsed.tags.tag_out) == (5, "04:00 ET")


def test_a_tag_line_below_the_first_section_is_not_the_entrys() -> None:
    """A Tag-like line inside What happened is body text: the entry has no Tag line."""
    text = log(
        entry("## 2026-04-03 — Mac", "### What happened", "**Tag-in:** 1:00 UTC | **Tag-out:** 2:00 UTC")
    )

    assert parse(text).entries[0].tags is None


# -- items ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "task", "done", "owner", "body"),
    [
        ("- [ ] Wire Piper PR monitor", True, False, None, "Wire Piper PR monitor"),
        ("- [x] Fix Pip-Boy frame", True, True, None, "Fix Pip-Boy frame"),
        ("- [X] Fix Pip-Boy frame", True, True, None, "Fix Pip-Boy frame"),
        ("- [ ] **[Pierre]** Post Reddit drafts", True, False, "Pierre", "Post Reddit drafts"),
        ("- [x] **[Skippy]** Fork gbrain", True, True, "Skippy", "Fork gbrain"),
        ("  - [ ] nested task", True, False, None, "nested task"),
        ("- plain bullet", False, False, None, "plain bullet"),
        ("* star bullet", False, False, None, "star bullet"),
        ("- [text](https://example.com)", False, False, None, "[text](https://example.com)"),
        ("- [x](https://example.com) link", False, False, None, "[x](https://example.com) link"),
        ("- **[Pierre]** not a task", False, False, None, "**[Pierre]** not a task"),
    ],
)
def test_an_item_is_a_task_done_or_open_with_its_owner_or_a_bullet(
    line: str, task: bool, done: bool, owner: str | None, body: str
) -> None:
    """`- [ ]`/`- [x]` are tasks (owner from a leading `**[Name]**`); other `- ` lines are bullets."""
    item = read_item(line, 7)

    assert item is not None
    assert (item.line, item.task, item.done, item.owner, item.body, item.malformed) == (
        7,
        task,
        done,
        owner,
        body,
        False,
    )


@pytest.mark.parametrize(
    "line",
    [
        "-[ ] no space",
        "- [] empty box",
        "* [ ] star",
        "1. [ ] numbered",
        "1) [ ] numbered",
        "- [ x] spaced",
        "- [ ]",
    ],
)
def test_a_task_like_line_not_written_as_a_task_is_malformed(line: str) -> None:
    """`-[ ]`, `- []`, `* [ ]`, `1. [ ]`, `- [ x]` and an empty `- [ ]` are malformed tasks (MEP5)."""
    item = read_item(line, 3)

    assert item is not None
    assert item.task
    assert item.malformed


@pytest.mark.parametrize("line", ["", "plain text", "### What happened", "-no space", "**Tag-in:** 1:00 UTC"])
def test_a_line_that_begins_no_item_gives_none(line: str) -> None:
    """Text, headings and `-word` begin no item."""
    assert read_item(line, 1) is None


def test_entry_tasks_are_the_tasks_of_whats_pending_only() -> None:
    """`Entry.tasks()` lists What's pending's tasks, not its bullets nor other sections' checkboxes."""
    text = log(
        entry(
            "## 2026-04-03 — Mac",
            "### What happened",
            "- [x] shipped (a checkbox outside pending)",
            "",
            "### What’s pending",
            "- [ ] **[Pierre]** Review",
            "- a note",
            "- [x] Done already",
        )
    )

    tasks = parse(text).entries[0].tasks()

    assert [(task.body, task.done, task.owner) for task in tasks] == [
        ("Review", False, "Pierre"),
        ("Done already", True, None),
    ]


# -- fences and comments ------------------------------------------------------------------------


def test_a_heading_inside_a_code_fence_or_an_html_comment_starts_no_block() -> None:
    """`## ` lines in ``` and ~~~ fences and in multi-line `<!-- -->` comments are text."""
    text = (
        "# Handoff Log\nLog.\n\n```\n## 2026-04-05 — fenced\n```\n\n<!--\n## 2026-04-06 — commented\n-->\n\n"
        + entry(
            "## 2026-04-03 — Mac",
            "### What happened",
            "~~~",
            "## 2026-04-02 — in a fence",
            "### What's pending",
            "- [ ] fenced task",
            "~~~",
            "<!-- ## 2026-04-01 — one-line comment -->",
            "",
            "### What's pending",
            "- [ ] real task",
        )
    )

    parsed = parse(text)

    assert [block.heading for block in parsed.blocks] == ["## 2026-04-03 — Mac"]
    only = parsed.entries[0]
    assert [section.heading for section in only.sections] == ["### What happened", "### What's pending"]
    assert [task.body for task in only.tasks()] == ["real task"]
    assert render(parsed) == text


def test_a_fence_closes_only_with_its_own_marker() -> None:
    """A ``` fence is not closed by ~~~: the heading after the ~~~ is still fenced."""
    text = "# Handoff Log\nLog.\n\n" + entry() + "```\n~~~\n## 2026-04-02 — still fenced\n```\n"

    assert len(parse(text).blocks) == 1


def test_an_unclosed_comment_hides_the_rest_of_the_file() -> None:
    """After an unclosed `<!--`, no `## ` line starts a block."""
    text = "# Handoff Log\nLog.\n\n" + entry() + "<!--\n" + entry("## 2026-04-02 — hidden")

    assert [block.heading for block in parse(text).blocks] == ["## 2026-04-03 — Hot Rod (main)"]


def test_a_section_heading_after_the_last_content_keeps_trailing_rules_in_the_trailer() -> None:
    """Trailing blank lines and `---` rules after an entry's last line are its trailer."""
    text = log(entry() + "\n---\n\n***\n\n", entry("## 2026-04-02 — Mac"))

    first = parse(text).blocks[0]

    assert first.trailer == "\n---\n\n***\n\n\n---\n\n"
    assert first.text.endswith("- [ ] Ship it\n")


@pytest.mark.parametrize("separator", ["\u2028", "\x85", "\x0c", "\x1c"])
def test_a_unicode_line_separator_inside_a_line_is_not_a_line_break(separator: str) -> None:
    """A heading-like text after U+2028, NEL or a form feed inside a bullet starts no entry."""
    text = log(
        entry(
            "## 2026-04-03 — Mac",
            "### What happened",
            f"- pasted from the web{separator}## 2026-04-09 — not a heading",
            "",
            "### What's pending",
            "- [ ] y",
        )
    )

    assert len(parse(text).blocks) == 1
    assert lint(text.encode()).findings == ()
