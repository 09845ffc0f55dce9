"""The seed's conformance test as lint rules (SPEC §10): one small log per rule MEP1–MEP11 that
triggers that rule alone, a clean log that triggers none, and totality over arbitrary bytes."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from slopd.handoff.grammar import parse, render
from slopd.handoff.lint import ERROR, WARNING, Report, lint, lint_log
from tests.handoff import strategies

SETTINGS = settings(deadline=None, max_examples=200, suppress_health_check=[HealthCheck.too_slow])
HEAD = "# Handoff Log\nSession handoffs, newest first.\n\n"
GROK = "## 2026-04-13 — Grok | Grok (X) | brainstorm"
SKIPPY = "## 2026-04-13 — Skippy | Claude (Hot Rod) | code"


def entry(
    heading: str = "## 2026-04-03 — Hot Rod (main)",
    tags: str | None = None,
    happened: str | None = "- Built `/iterate` skill",
    pending: str | None = "- [ ] **[Pierre]** Post Reddit drafts",
    watch: str | None = None,
) -> str:
    """An entry: heading, optional Tag line, then the sections given (None: left out)."""
    lines = [heading, *([tags] if tags else []), ""]
    for title, body in (("What happened", happened), ("What's pending", pending), ("Watch out for", watch)):
        if body is not None:
            lines += [f"### {title}", *([body] if body else []), ""]
    return "\n".join(lines)


def log(*entries: str, head: str = HEAD) -> str:
    return head + "\n---\n\n".join(entries)


CLEAN = log(
    entry(GROK, "**Tag-in:** 01:00 ET | **Tag-out:** [active]"),
    entry(SKIPPY, "**Tag-in:** 14:30 ET | **Tag-out:** 16:45 ET", watch="- CI cache is stale"),
    entry("## 2026-04-13 — Pierre | Human | review", "**Tag-in:** 08:00 ET | **Tag-out:** 08:15 ET"),
    entry("## 2026-04-03 — Hot Rod (main)", pending="- [x] Wire Piper\n- a plain bullet is allowed"),
    entry("## 2026-04-01 — Mac (Nagatha/worktree)"),
)


def found(text: str | bytes) -> list[tuple[str, int]]:
    data = text.encode() if isinstance(text, str) else text
    return [(finding.rule, finding.line) for finding in lint(data).findings]


def test_a_conformant_log_has_no_finding() -> None:
    """A log that keeps every rule (v1 and v2, [active], same-day Tag-outs in order) has no finding."""
    report = lint(CLEAN.encode())

    assert report.findings == ()
    assert report.conformant
    assert report.clean(strict=True)


def test_a_conformant_log_with_crlf_endings_has_no_finding() -> None:
    """CRLF line endings change nothing."""
    assert found(CLEAN.replace("\n", "\r\n")) == []


# Each row: a rule, a log that breaks that rule alone, and the line the finding names.
RULES = [
    ("MEP1", log(entry(happened="- café with the team")).encode().replace("é".encode(), b"\xe9"), 7),
    ("MEP1", log(entry(happened="- a NUL \0 byte")).encode(), 7),
    ("MEP2", log(entry("## 2026-04-02 — Mac"), entry("## 2026-04-03 — Hot Rod")), 14),
    (
        "MEP2",
        log(entry("## 2026-04-03 — Mac"), entry("## 2026-04-01 — Mac"), entry("## 2026-04-02 — Mac")),
        24,
    ),
    (
        "MEP2",
        log(
            entry(GROK, "**Tag-in:** 01:00 ET | **Tag-out:** 04:00 ET"),
            entry(SKIPPY, "**Tag-in:** 14:30 ET | **Tag-out:** 16:45 ET"),
        ),
        15,
    ),
    (
        "MEP2",
        log(
            entry(SKIPPY, "**Tag-in:** 14:30 ET | **Tag-out:** 23:00 UTC"),
            entry(GROK, "**Tag-in:** 01:00 ET | **Tag-out:** [active]"),
        ),
        15,
    ),
    (
        "MEP2",  # 16:45 ET in April is 20:45 UTC: later than 18:00 UTC, so it belongs on top
        log(
            entry(GROK, "**Tag-in:** 01:00 UTC | **Tag-out:** 18:00 UTC"),
            entry(SKIPPY, "**Tag-in:** 14:30 ET | **Tag-out:** 16:45 ET"),
        ),
        15,
    ),
    ("MEP3", log(entry(pending=None)), 4),
    ("MEP3", log(entry(happened=None)), 4),
    ("MEP3", log(entry(happened=None, pending=None, watch="- only a warning")), 4),
    ("MEP4", log(entry("## 2026-02-30 — Mac")), 4),
    ("MEP4", log(entry(), entry("## Friday — Mac")), 14),
    ("MEP4", HEAD + "Nothing logged yet.\n", 1),
    ("MEP5", log(entry(pending="-[ ] Fix it")), 10),
    ("MEP5", log(entry(pending="- [] Fix it")), 10),
    ("MEP5", log(entry(pending="* [ ] Fix it")), 10),
    ("MEP5", log(entry(pending="1. [ ] Fix it")), 10),
    ("MEP5", log(entry(pending="- [ x] Fix it")), 10),
    ("MEP6", log(entry(), head="# Handoffs\nSession handoffs.\n\n"), 1),
    ("MEP6", log(entry(), head="Session handoffs.\n\n"), 1),
    ("MEP7", log(entry(SKIPPY)), 4),
    ("MEP7", log(entry(SKIPPY, "**Tag-in:** 14:30 ET")), 5),
    ("MEP7", log(entry(SKIPPY, "**Tag-out:** 16:45 ET | **Tag-in:** 14:30 ET")), 5),
    ("MEP8", log(entry(pending="")), 9),
    ("MEP8", log(entry(happened="")), 6),
    ("MEP9", log(entry("## 2026-04-03 - Hot Rod (main)")), 4),
    ("MEP9", log(entry("## 2026-04-03 -- Hot Rod (main)")), 4),
    ("MEP9", log(entry("## 2026-04-03 – Hot Rod (main)")), 4),
    ("MEP9", log(entry("## 2026-04-03 â€” Hot Rod (main)")), 4),
    ("MEP9", log(entry("## 2026-04-03")), 4),
    ("MEP10", log("## 2026-04-03 — Mac\n\n### What's pending\n- [ ] a\n\n### What happened\n- b\n"), 4),
    (
        "MEP10",
        log(entry(watch=None, pending=None) + "### Watch out for\n- c\n\n### What's pending\n- [ ] a\n"),
        4,
    ),
    ("MEP11", log(entry("## 2026-04-03 — Mac"), entry("## 2026-04-03 — Hot Rod")), 4),
    (
        "MEP11",
        log(
            entry(GROK, "**Tag-in:** 01:00 ET | **Tag-out:** 04:00 ET"),
            entry(SKIPPY, "**Tag-in:** 14:30 ET | **Tag-out:** late afternoon"),
        ),
        15,
    ),
]


@pytest.mark.parametrize(
    ("rule", "data", "line"), RULES, ids=[f"{rule}-{index}" for index, (rule, _, _) in enumerate(RULES)]
)
def test_each_rule_is_triggered_alone_by_its_own_mistake(rule: str, data: str | bytes, line: int) -> None:
    """The log breaks exactly one rule: that rule is the only finding, at the line it names."""
    report = lint(data.encode() if isinstance(data, str) else data)

    findings = [(finding.rule, finding.line) for finding in report.findings]
    assert findings[:1] == [(rule, line)]
    assert {rule_ for rule_, _ in findings} == {rule}, findings
    severity = ERROR if int(rule[3:]) <= 6 else WARNING
    assert all(finding.severity == severity for finding in report.findings)
    assert report.conformant is (severity == WARNING)
    assert report.clean(strict=True) is False
    assert all(finding.message and finding.fix for finding in report.findings)


def test_every_rule_from_mep1_to_mep11_has_a_row() -> None:
    """The table above covers all eleven rules."""
    assert {rule for rule, _, _ in RULES} == {f"MEP{number}" for number in range(1, 12)}


def test_same_day_entries_without_comparable_tag_outs_each_get_mep11() -> None:
    """Every entry of a date shared without comparable Tag-outs is named, not just the first."""
    assert found(log(entry("## 2026-04-03 — Mac"), entry("## 2026-04-03 — Hot Rod"))) == [
        ("MEP11", 4),
        ("MEP11", 14),
    ]


def test_malformed_task_lines_outside_whats_pending_are_not_mep5() -> None:
    """MEP5 checks What's pending only: a `-[ ]` under What happened is just text."""
    assert found(log(entry(happened="- did it\n-[ ] stray box"))) == []


def test_a_markdown_link_bullet_under_whats_pending_is_not_mep5() -> None:
    """`- [text](url)` is a bullet, not a malformed task."""
    assert found(log(entry(pending="- [the PR](https://example.com/pr/12)"))) == []


def test_a_curly_apostrophe_in_whats_pending_is_accepted() -> None:
    """`### What’s pending` (U+2019) is the pending section."""
    assert found(log(entry().replace("What's pending", "What’s pending"))) == []


def test_a_misspelt_section_is_named_in_the_mep3_message() -> None:
    """`### What Happened` is not the schema's spelling; the finding says where it is."""
    report = lint(log(entry().replace("What happened", "What Happened")).encode())

    assert [(finding.rule, finding.line) for finding in report.findings] == [("MEP3", 4)]
    assert "'### What Happened' at line 6" in report.findings[0].message


def test_every_finding_of_a_log_with_many_mistakes_is_reported_in_line_order() -> None:
    """Lint reports all findings, not the first, sorted by line."""
    text = log(
        entry("## 2026-04-02 - Mac", pending="-[ ] a"),
        entry("## 2026-04-03 — Hot Rod", happened=None),
        head="# Handoffs\nLog.\n\n",
    )

    assert found(text) == [("MEP6", 1), ("MEP9", 4), ("MEP5", 10), ("MEP2", 14), ("MEP3", 14)]


def test_a_fenced_or_commented_heading_is_not_linted() -> None:
    """A malformed heading inside a code fence or an HTML comment gives no finding."""
    text = log(entry(happened="- example:\n```\n## 2099/99/99 - bad\n```\n<!--\n## 1999-01-01\n-->"))

    assert found(text) == []


@pytest.mark.parametrize(
    "hidden",
    [
        "```\n## 2026-04-02 — Mac (example)\n```",
        "<!--\n## 2026-04-02 - Mac\n-->",
        "~~~\n##\t2026-04-02 – x\n~~~",
    ],
)
def test_a_fenced_heading_that_meps_checker_reads_as_an_entry_is_mep4(hidden: str) -> None:
    """A dated heading MEP's checker takes for an entry, hidden from slopd in a fence or a
    comment, is MEP4 at its line: MEP's checker would cut the entry above it there."""
    assert found(log(entry(happened="- example:\n" + hidden))) == [("MEP4", 9)]


def test_lint_log_over_a_parsed_log_gives_the_text_findings_without_mep1() -> None:
    """`lint_log` checks a parsed log; only decoding (MEP1) is `lint`'s own."""
    text = log(entry("## 2026-02-30 — Mac", pending="- [] x"))

    assert [(finding.rule, finding.line) for finding in lint_log(parse(text))] == [("MEP4", 4), ("MEP5", 10)]


def test_the_first_invalid_byte_is_reported_and_the_rest_is_still_linted() -> None:
    """Bytes that are not UTF-8 give MEP1 at their line; the other rules still run on the text."""
    data = log(entry("## 2026-04-03 - Mac")).encode() + b"\n- \xff\xfe\n"

    assert found(data) == [("MEP9", 4), ("MEP1", 12)]


# -- totality ------------------------------------------------------------------------------------

BYTE_FRAGMENTS = st.sampled_from(
    [
        b"# Handoff Log",
        b"## 2026-04-03 \xe2\x80\x94 Mac",
        b"## 2026-04-13 \xe2\x80\x94 a | b | c",
        b"## 2026-02-30 - x",
        b"**Tag-in:** 1:00 UTC | **Tag-out:** 2:00 ET",
        b"**Tag-out:** [active]",
        b"### What happened",
        b"### What's pending",
        b"- [ ] a",
        b"1. [ ] b",
        b"```",
        b"<!--",
        b"-->",
        b"---",
        b"",
        b"\xff",
        b"\x00",
        b"\xc3",
        b"\xef\xbb\xbf",
        b"\xed\xa0\x80",
    ]
)
STRUCTURED_BYTES = st.lists(
    st.tuples(BYTE_FRAGMENTS, st.sampled_from([b"\n", b"\r\n", b"\r", b""])), max_size=20
).map(lambda pairs: b"".join(line + ending for line, ending in pairs))


def check_report(data: bytes, report: Report) -> None:
    text = data.decode("utf-8", "surrogateescape")
    lines = max(1, len(text.splitlines()))
    assert report.head + render(report.log) == text  # a standup: its preamble, then the log linted
    assert list(report.findings) == sorted(report.findings, key=lambda finding: (finding.line, finding.rule))
    for finding in report.findings:
        assert 1 <= finding.line <= lines, (finding, lines)
        assert finding.rule in {f"MEP{number}" for number in range(1, 12)}
        assert finding.message
        assert finding.fix
        assert finding.as_dict()["severity"] in (ERROR, WARNING)
    assert report.conformant is not any(finding.severity == ERROR for finding in report.findings)


@SETTINGS
@given(st.binary(max_size=2048))
def test_lint_never_raises_on_arbitrary_bytes(data: bytes) -> None:
    """Any bytes give a Report whose findings name lines of the file, sorted, with a message and a fix."""
    check_report(data, lint(data))


@SETTINGS
@given(STRUCTURED_BYTES)
def test_lint_never_raises_on_log_shaped_bytes_with_bad_encodings(data: bytes) -> None:
    """Headings, sections and fences mixed with invalid UTF-8, NULs and BOMs still give a sound Report."""
    check_report(data, lint(data))


@settings(deadline=None, max_examples=100, suppress_health_check=[HealthCheck.too_slow])
@given(strategies.clean_logs())
def test_a_generated_clean_log_is_conformant_and_strictly_clean(text: str) -> None:
    """The strategies' clean logs pass lint with no finding, errors and warnings alike."""
    report = lint(text.encode())

    assert report.findings == ()
    assert report.clean(strict=True)
