"""`slopd handoff lint` against MEP's own checker (SPEC §10, "Parity with MEP's checker"): the same
verdict on every log except where docs/handoff.md lists a deliberate difference.

The expected verdicts come from `mep_rules`, this suite's re-statement of MEP's checker (schema
1.2), never from slopd's parser. Three parts: the misses the issue found, a differential
generator of logs and mutations (fast: a few seconds), and one row per deliberate difference
showing both verdicts.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from slopd.handoff.lint import lint
from tests import ROOT
from tests.handoff import mep_rules

HEAD = "# Handoff Log\nSession handoffs, newest first.\n\n"


def entry(
    heading: str, tag_out: str | None = None, *, tags: str | None = None, body: str | None = None
) -> str:
    """An entry: heading, a Tag line (from `tag_out`, or `tags` as written), then both sections."""
    tag_line = (
        tags if tags is not None else (f"**Tag-in:** 08:00 UTC | **Tag-out:** {tag_out}" if tag_out else None)
    )
    sections = body if body is not None else "### What happened\n- did it\n\n### What's pending\n- [ ] next\n"
    return "\n".join([heading, *([tag_line] if tag_line else []), "", sections])


def both(text: str) -> tuple[bool, bool]:
    """(slopd's verdict, MEP's checker's verdict) on `text`."""
    data = text.encode("utf-8")
    return lint(data).conformant, mep_rules.check(data).conformant


A = "## 2026-04-13 — Grok | Grok (X) | brainstorm"
B = "## 2026-04-13 — Skippy | Claude (Hot Rod) | code"

# -- the misses found in issue 25 ------------------------------------------------------------------

MISSES = {
    "Tag-out 14:30ET": HEAD + entry(A, "14:30ET") + "\n" + entry(B, "16:45 ET"),
    "a bare 09:00 is UTC": HEAD + entry(A, "09:00") + "\n" + entry(B, "12:00 UTC"),
    "**tag-out:** in lower case": HEAD
    + entry(A, tags="**tag-in:** 01:00 UTC | **tag-out:** 02:00 UTC")
    + "\n"
    + entry(B, "03:00 UTC"),
    "a Tag line not directly under the heading": HEAD
    + entry(A, tags="> from the phone\n**Tag-in:** 01:00 UTC | **Tag-out:** 02:00 UTC")
    + "\n"
    + entry(B, "03:00 UTC"),
    "a `##\\t` heading is an entry": HEAD
    + entry("##\t2026-04-02 — Mac")
    + "\n"
    + entry("## 2026-04-03 — Mac"),
    "a `##\\t` entry needs its sections": HEAD
    + entry("## 2026-04-03 — Mac")
    + "\n"
    + entry("##\t2026-04-02 — Mac", body="### What happened\n- x\n"),
    "bare `active` is the latest": HEAD + entry(A, "17:00 UTC") + "\n" + entry(B, "active"),
    "an impossible Tag-out stops MEP's checker": HEAD + entry(A, "25:00 UTC"),
    "a blank line before # Handoff Log": "\n\n" + HEAD + entry(A, "17:00 UTC"),
    "# Handoff Logbook starts with # Handoff Log": "# Handoff Logbook\n\n" + entry(A, "17:00 UTC"),
    "CR-only line endings": (HEAD + entry(A, "17:00 UTC") + "\n" + entry(B, "09:00 UTC")).replace("\n", "\r"),
    "CR-only endings, out of order": (HEAD + entry(B, "09:00 UTC") + "\n" + entry(A, "17:00 UTC")).replace(
        "\n", "\r"
    ),
    "a suffix glued to a section name": HEAD
    + entry(A, body="### What happenedness\n- x\n\n### What's pending\n- [ ] y\n"),
    "an indented section heading": HEAD
    + entry(A, body="  ### What happened\n- x\n\n ### What's pending\n- y\n"),
    "a date in non-ASCII digits stops MEP's checker": HEAD + entry("## ２０２６-04-13 — Mac"),
    "two spaces after ### is no section": HEAD
    + entry(A, body="###  What happened\n- x\n\n### What's pending\n"),
}


@pytest.mark.parametrize("name", sorted(MISSES))
def test_the_misses_of_issue_25_now_get_meps_verdict(name: str) -> None:
    """Each case where slopd's lint once disagreed with MEP's checker now gets MEP's verdict."""
    slopd_verdict, mep_verdict = both(MISSES[name])

    assert slopd_verdict == mep_verdict


def test_the_misses_hold_both_verdicts() -> None:
    """The table is not one-sided: MEP's checker passes some of these logs and refuses others."""
    assert {both(text)[1] for text in MISSES.values()} == {True, False}


# -- the differential generator ------------------------------------------------------------------

DAY = dt.date(2026, 4, 13)
ET, CEST, JST = -240, 120, 540  # minutes east of UTC (ET as MEP's checker has it: UTC−4)


@dataclass(frozen=True)
class Spelled:
    text: str
    reading: mep_rules.TimeReading  # what slopd must read it as (the generator knows the instant)


def _clock(minutes: int) -> tuple[int, int]:
    return divmod(minutes, 60)


@st.composite
def tag_outs(draw: st.DrawFn) -> Spelled:
    """A Tag-out in one of the spellings SPEC §10 lists, or not a time, or an impossible one."""
    kind = draw(st.sampled_from(["time"] * 12 + ["active", "active", "text", "text", "impossible"]))
    if kind == "active":
        return Spelled(draw(st.sampled_from(["[active]", "active", "[ACTIVE]"])), mep_rules.ACTIVE)
    if kind == "text":
        return Spelled(draw(st.sampled_from(["EOL", "(open)", "late afternoon", "14:30 XYZ"])), None)
    if kind == "impossible":
        return Spelled(
            draw(st.sampled_from(["25:00 UTC", "24:00", "14:75 ET", "13:00 pm UTC"])), "impossible"
        )
    moment = draw(st.integers(10 * 60, 14 * 60 + 59))  # a UTC time on the date in every zone below
    hour, minute = _clock(moment)
    et_hour, et_minute = _clock(moment + ET)
    cest_hour, cest_minute = _clock(moment + CEST)
    half = "pm" if hour >= 12 else "am"
    et_half = "pm" if et_hour >= 12 else "am"
    text = draw(
        st.sampled_from(
            [
                f"{hour:02d}:{minute:02d} UTC",
                f"{hour:02d}:{minute:02d}",
                f"{hour:02d}:{minute:02d} utc",
                f"{et_hour:02d}:{et_minute:02d} ET",
                f"{et_hour:02d}:{et_minute:02d}ET",
                f"{et_hour}:{et_minute:02d} EDT",
                f"{hour - 7}:{minute:02d} PT",
                f"{hour % 12 or 12}:{minute:02d} {half.upper()} UTC",
                f"{et_hour % 12 or 12}:{et_minute:02d}{et_half} ET",
                f"{hour:02d}:{minute:02d}Z",
                f"{hour:02d}:{minute:02d} Z",
                f"{cest_hour:02d}:{cest_minute:02d} +02:00",
                f"{cest_hour:02d}:{cest_minute:02d} CEST",
                f"~{et_hour:02d}:{et_minute:02d} ET",
            ]
        )
    )
    return Spelled(text, float(moment))


@dataclass(frozen=True)
class EntryCase:
    day: dt.date
    start: str  # "## ", "##\t" …
    dash: str
    context: str
    tag_out: Spelled | None
    label_case: str  # "Tag" | "tag" | "TAG"
    tag_place: str  # "top" | "blank" | "quote" | "bottom" | "happened"
    happened: str  # "ok" | "missing" | "misspelt" | "suffix" | "indented"
    pending: str
    extra: str  # "none" | "h3-date" | "indented-heading" | "fence"

    def lines(self) -> list[str]:
        heading = f"{self.start}{self.day.isoformat()}{self.dash}{self.context}"
        tag = None
        if self.tag_out is not None:
            label = self.label_case
            tag = f"**{label}-in:** 09:00 UTC | **{label}-out:** {self.tag_out.text}"
        lines = [heading]
        if tag and self.tag_place in ("top", "blank", "quote"):
            lines += {"top": [], "blank": [""], "quote": ["> written from the phone"]}[self.tag_place] + [tag]
        lines.append("")
        if self.extra == "h3-date":
            lines += ["### 2026-01-01 — an old H3 heading, not an entry to either", "- kept", ""]
        lines += _section("What happened", self.happened, "- shipped it")
        if tag and self.tag_place == "happened":
            lines.insert(-1, f"- {tag}")
        if self.extra == "indented-heading":
            lines += [" ## 2026-12-31 — indented: text to both", ""]
        if self.extra == "fence":
            lines += ["```", "echo done", "```", ""]
        lines += _section("What's pending", self.pending, "- [ ] **[Pierre]** review it\n- a plain bullet")
        if tag and self.tag_place == "bottom":
            lines += [tag, ""]
        return lines


def _section(name: str, how: str, body: str) -> list[str]:
    if how == "missing":
        return []
    title = {
        "ok": f"### {name}",
        "misspelt": f"### {name.title()}",
        "suffix": f"### {name} (for the next session)",
        "indented": f"  ### {name}",
    }[how]
    return [title, *body.split("\n"), ""]


_SECTION_STATES = st.sampled_from(
    ["ok"] * 24 + ["missing", "misspelt", "suffix", "suffix", "indented", "indented"]
)


@st.composite
def entry_cases(draw: st.DrawFn, day: dt.date) -> EntryCase:
    v2 = draw(st.integers(0, 3)) > 0
    return EntryCase(
        day=day,
        start=draw(st.sampled_from(["## "] * 6 + ["##\t", "##  "])),
        dash=draw(st.sampled_from([" — "] * 6 + [" – ", " - ", "\t—\t", "  —  "])),
        context=draw(st.sampled_from(["Skippy | Claude (Hot Rod) | code", "Grok | Grok (X) | brainstorm"]))
        if v2
        else draw(st.sampled_from(["Hot Rod (main)", "Mac (Nagatha/worktree)", "ci | release → main"])),
        tag_out=draw(tag_outs()) if v2 and draw(st.integers(0, 5)) else None,
        label_case=draw(st.sampled_from(["Tag"] * 4 + ["tag", "TAG"])),
        tag_place=draw(st.sampled_from(["top"] * 4 + ["blank", "quote", "bottom", "happened"])),
        happened=draw(_SECTION_STATES),
        pending=draw(_SECTION_STATES),
        extra=draw(st.sampled_from(["none"] * 5 + ["h3-date", "indented-heading", "fence"])),
    )


@dataclass(frozen=True)
class LogCase:
    lead: str  # before the file header: "", "\n", "  \n\n"
    title: str  # "# Handoff Log", "# Handoffs" …
    log_heading: bool  # a `## Log` heading before the first entry
    entries: tuple[EntryCase, ...]
    separator: str
    notes: bool
    ending: str  # "\n" | "\r\n" | "\r" | "mixed"
    final_newline: bool

    def text(self) -> str:
        lines = [self.lead + self.title, "Session handoffs, newest first.", ""]
        lines += ["## Log", ""] if self.log_heading else []
        blocks = ["\n".join(case.lines()) for case in self.entries]
        if self.notes:
            blocks.append("## Notes\n\n- archive the old entries\n")
        text = "\n".join(lines) + "\n" + self.separator.join(blocks)
        if not self.final_newline:
            text = text.rstrip("\n")
        *ended, last = text.split("\n")
        endings = ("\r\n", "\n", "\r") if self.ending == "mixed" else (self.ending,)
        return "".join(line + endings[index % len(endings)] for index, line in enumerate(ended)) + last

    def readings(self) -> dict[str, mep_rules.TimeReading]:
        return {case.tag_out.text: case.tag_out.reading for case in self.entries if case.tag_out is not None}


@st.composite
def log_cases(draw: st.DrawFn) -> LogCase:
    count = draw(st.integers(1, 5))
    days = sorted((DAY - dt.timedelta(days=draw(st.integers(0, 1))) for _ in range(count)), reverse=True)
    entries = [draw(entry_cases(day)) for day in days]
    mutation = draw(st.sampled_from(["none", "none", "swap", "reverse", "by-tag-out", "by-tag-out"]))
    if mutation == "swap" and count > 1:
        at = draw(st.integers(0, count - 2))
        entries[at], entries[at + 1] = entries[at + 1], entries[at]
    elif mutation == "reverse":
        entries.reverse()
    elif mutation == "by-tag-out":  # same-day entries in the right order, where they can be
        entries.sort(key=lambda case: (case.day, _reading(case)), reverse=True)
    return LogCase(
        lead=draw(st.sampled_from([""] * 4 + ["\n", "  \n\n"])),
        title=draw(
            st.sampled_from(["# Handoff Log"] * 12 + ["# Handoff Log — demo", "# Handoffs", "Handoff Log"])
        ),
        log_heading=draw(st.booleans()),
        entries=tuple(entries),
        separator=draw(st.sampled_from(["\n---\n\n", "\n"])),
        notes=draw(st.booleans()),
        ending=draw(st.sampled_from(["\n", "\r\n", "\r", "mixed"])),
        final_newline=draw(st.booleans()),
    )


def _reading(case: EntryCase) -> float:
    reading = case.tag_out.reading if case.tag_out else None
    return reading if isinstance(reading, float) else -1.0


def _as_slopd_reads(log: LogCase) -> mep_rules.Verdict:
    """The verdict MEP's rules give with slopd's two deliberate differences applied."""
    readings = log.readings()

    def read(raw: str) -> mep_rules.TimeReading:
        return readings.get(raw.strip(), mep_rules.mep_time(raw))

    return mep_rules.check(log.text().encode(), read_time=read, compare_all_above=True)


@settings(deadline=None, max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(log_cases())
def test_slopd_gives_meps_verdict_on_generated_logs(log: LogCase) -> None:
    """On generated logs and mutations, slopd's verdict is the oracle's; where MEP's checker's own
    differs, it is only because slopd reads more Tag-out spellings or compares with every entry
    above on a date — and then slopd is the stricter one."""
    data = log.text().encode()
    report = lint(data)
    expected = _as_slopd_reads(log)
    mep = mep_rules.check(data)

    assert report.conformant == expected.conformant, (log.text(), expected.errors, report.findings)
    if mep.conformant != expected.conformant:
        assert mep.conformant, (log.text(), mep.errors)
        more_spellings = any(mep_rules.mep_time(text) != read for text, read in log.readings().items())
        every_entry_above = not mep_rules.check(data, compare_all_above=True).conformant
        assert more_spellings or every_entry_above, (log.text(), expected.errors)


# -- the deliberate differences ------------------------------------------------------------------

C = "## 2026-04-13 — ChatGPT | ChatGPT | research"
STANDUP = (
    "# Standing Standup — demo\n\n## Scope\n\n(edit by hand)\n\n## Party line\n\n- (nobody is tagged in)\n\n"
)
FENCED_EXAMPLE = (
    "- the format:\n\n```\n## 2026-04-01 — Machine (branch)\n### What happened\n- …\n"
    "### What's pending\n- [ ] …\n```\n"
)

# name (as docs/handoff.md lists it) -> (log, MEP's checker's verdict, slopd's verdict)
DIFFERENCES: dict[str, tuple[str, bool, bool]] = {
    "a BOM": ("\ufeff" + HEAD + entry(A, "17:00 UTC"), False, True),
    "a curly apostrophe": (HEAD + entry(A, "17:00 UTC").replace("What's", "What’s"), False, True),
    "a separator MEP's pattern misses (lone entry)": (HEAD + entry("## 2026-04-13—Mac"), False, True),
    "a separator MEP's pattern misses (mis-encoded)": (HEAD + entry("## 2026-04-13 â€” Mac"), False, True),
    "a separator MEP's pattern misses (order)": (
        HEAD + entry("## 2026-04-12 -- Mac") + "\n" + entry("## 2026-04-13 — Mac"),
        True,
        False,
    ),
    "a standup file": (STANDUP + HEAD + entry(A, "17:00 UTC"), False, True),
    "a Tag line in a block that is not an entry": (
        HEAD
        + entry(A)
        + "\n## Notes\n**Tag-in:** 01:00 UTC | **Tag-out:** 02:00 UTC\n\n"
        + entry(B, "03:00 UTC"),
        False,
        True,
    ),
    "line breaks other than LF, CR and CRLF": (
        HEAD
        + entry(A, "17:00 UTC", body="### What happened\n- x\u2028## 2026-04-14 — y\n\n### What's pending\n"),
        False,
        True,
    ),
    "malformed task lines (MEP5)": (
        HEAD + entry(A, body="### What happened\n- x\n\n### What's pending\n-[ ] y\n"),
        True,
        False,
    ),
    "a NUL byte": (
        HEAD + entry(A, body="### What happened\n- x\0\n\n### What's pending\n- [ ] y\n"),
        True,
        False,
    ),
    "a heading that starts like a date but is not YYYY-MM-DD": (
        HEAD + entry("## 2026-04-13 — Mac") + "\n## 2026/4/3 — notes\n\n- kept\n",
        True,
        False,
    ),
    "sections inside a code fence or a comment": (
        HEAD + entry(A, body="### What happened\n- x\n\n```\n### What's pending\n```\n"),
        True,
        False,
    ),
    "a section named only in passing": (
        HEAD + entry(A, body="### What happened\n- x\n\n#### What's pending\n- [ ] y\n"),
        True,
        False,
    ),
    "a `## ` block without a date that holds the sections": (
        HEAD + entry(A, body="### What happened\n- x\n") + "\n## Next\n\n### What's pending\n- [ ] y\n",
        True,
        False,
    ),
    "a dated heading inside a code fence or a comment": (
        HEAD + entry(A, body="### What happened\n- x\n\n### What's pending\n" + FENCED_EXAMPLE),
        True,
        False,
    ),
    "Tag-out spellings MEP's checker cannot read": (
        HEAD + entry(A, "1:00 pm UTC") + "\n" + entry(B, "14:00Z"),
        True,
        False,
    ),
    "every entry above on the date": (
        HEAD + entry(A, "17:00 UTC") + "\n" + entry(B, "EOL") + "\n" + entry(C, "18:00 UTC"),
        True,
        False,
    ),
    "an impossible Tag-out MEP's checker does not stop on": (HEAD + entry(A, "13:00 pm UTC"), True, False),
    "a Tag line without bold": (
        HEAD + entry(A, "10:00 UTC") + "\n" + entry(B, tags="Tag-in: 10:30 UTC | Tag-out: 11:00 UTC"),
        True,
        False,
    ),
}


@pytest.mark.parametrize("name", sorted(DIFFERENCES))
def test_each_deliberate_difference_gives_the_documented_verdicts(name: str) -> None:
    """On its example, MEP's checker (as re-stated) and slopd give the verdicts docs/handoff.md
    records — and they differ, so the difference is real."""
    text, mep_verdict, slopd_verdict = DIFFERENCES[name]

    assert both(text) == (slopd_verdict, mep_verdict)
    assert mep_verdict != slopd_verdict


def test_every_deliberate_difference_is_listed_in_the_docs() -> None:
    """docs/handoff.md names each difference tested here (the part before any parenthesis)."""
    docs = (ROOT / "docs" / "handoff.md").read_text(encoding="utf-8")
    section = docs.split("## Deliberate differences from MEP's checker", 1)[1].split("\n## ", 1)[0]

    assert [name for name in DIFFERENCES if name.split(" (")[0] not in section] == []


def test_an_impossible_date_is_refused_by_both_for_different_reasons() -> None:
    """`2026-02-30` stops MEP's checker (its CI goes red) and is MEP4 here: the same verdict."""
    report = lint((HEAD + entry("## 2026-02-30 — Mac")).encode())

    assert mep_rules.check((HEAD + entry("## 2026-02-30 — Mac")).encode()).stopped
    assert [finding.rule for finding in report.findings] == ["MEP4"]
