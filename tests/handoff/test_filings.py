"""Every file slopd writes lints clean with slopd's own linter (SPEC §10): a standup after any
sequence of tag-ins, filed handoffs and tag-outs, and a log after any sequence of `handoff new`
runs, whatever the Tag-out spellings, dates and line endings. (Merges of generated sides:
test_merge_properties.) The functions are the ones the daemon, the CLI and MCP call."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from slopd.handoff import compose, standup
from slopd.handoff.lint import Report, lint
from tests.handoff import strategies
from tests.handoff.strategies import EntrySpec

SETTINGS = settings(deadline=None, max_examples=60, suppress_health_check=[HealthCheck.too_slow])
SEATS = ("claude", "grok", "gemini")


def clean(report: Report) -> None:
    """Conformant, and no warning but MEP11 (same-day entries whose order cannot be known)."""
    assert report.conformant, report.findings
    assert {finding.rule for finding in report.findings} <= {"MEP11"}, report.findings


@st.composite
def filings(draw: st.DrawFn) -> list[tuple[str, str, EntrySpec | None]]:
    """Steps of a meeting: ("in", seat, None) or ("file", seat, entry), entries in any date order."""
    steps: list[tuple[str, str, EntrySpec | None]] = []
    for uid in range(draw(st.integers(1, 6))):
        seat = draw(st.sampled_from(SEATS))
        if draw(st.booleans()):
            steps.append(("in", seat, None))
        day = draw(st.dates(strategies.FIRST_DAY, strategies.FIRST_DAY.replace(day=4)))
        minutes = draw(st.none() | st.integers(480, 1140))  # None: v1 or v2, timed or not
        steps.append(("file", seat, draw(strategies.entries(day, uid, utc_minutes=minutes))))
    return steps


@SETTINGS
@given(filings())
def test_a_standup_lints_clean_after_every_step(steps: list[tuple[str, str, EntrySpec | None]]) -> None:
    """From its creation on, after each tag-in and each filed entry, the standup file lints
    clean, and every filed entry is in its log."""
    text = standup.create("demo")
    clean(lint(text.encode()))
    for kind, seat, spec in steps:
        if spec is None:
            text = standup.tag_in(text, seat, "20261101T090000Z")
        else:
            filed, problems = standup.file(text, "demo", seat, spec.text())
            assert problems == [], (spec.text(), problems)
            assert filed is not None
            text = filed
            assert spec.key() in {entry.text.strip() for entry in standup.entries(text)}
        clean(lint(text.encode()))
        assert kind in ("in", "file")


def test_an_empty_standup_is_clean_and_its_findings_name_the_files_lines() -> None:
    """A new standup (no entry yet) has no finding; a broken entry in it is named at its line in
    the file, not in the log part."""
    text = standup.create("demo")
    broken = text + "## 2026-11-02 — Mac\n\n### What happened\n- x\n"

    assert lint(text.encode()).findings == ()
    line = broken.splitlines().index("## 2026-11-02 — Mac") + 1
    assert [(finding.rule, finding.line) for finding in lint(broken.encode()).findings] == [("MEP3", line)]


@dataclass(frozen=True)
class Run:
    start: str | None  # the file before the first run (None: missing)
    specs: tuple[EntrySpec, ...]


def _parts(spec: EntrySpec) -> compose.Parts:
    """`slopd handoff new`'s arguments for the entry `spec` describes."""
    fields = spec.context.split(" | ")
    v2 = len(fields) == 3
    return compose.Parts(
        date=spec.day.isoformat(),
        agent=fields[0],
        context=None if v2 else spec.context,
        platform=fields[1] if v2 else None,
        session_type=fields[2] if v2 else None,
        tag_in=spec.tags[0] if spec.tags else None,
        tag_out=spec.tags[1] if spec.tags else None,
        happened=spec.happened,
        pending=tuple(task.line()[2:] for task in spec.pending),
        watch=spec.watch,
    )


@st.composite
def runs(draw: st.DrawFn) -> Run:
    start = draw(st.none() | strategies.clean_logs(max_entries=4))
    if start is not None and draw(st.booleans()):
        start = start.replace("\r\n", "\n").replace("\n", "\r")  # CR-only line endings
    specs = []
    for uid in range(draw(st.integers(1, 5))):
        day = draw(st.dates(strategies.LAST_DAY.replace(day=28), strategies.LAST_DAY))
        minutes = draw(st.none() | st.integers(480, 1140))
        specs.append(draw(strategies.entries(day, 900 + uid, utc_minutes=minutes)))
    return Run(start, tuple(specs))


@SETTINGS
@given(runs())
def test_handoff_new_runs_leave_a_log_that_lints_clean(run: Run) -> None:
    """`handoff new` into a missing file or a clean log (LF, CRLF or CR), entries in any date
    order: each run is accepted and the log lints clean after it."""
    text = run.start
    for spec in run.specs:
        result, problems = compose.accepts(text, compose.entry(_parts(spec)))
        assert problems == [], problems
        text = result
        clean(lint(text.encode()))


@pytest.mark.parametrize(
    "tag_out",
    ["14:30ET", "09:00", "9:00 AM ET", "9:00am ET", "09:00Z", "09:00 Z", "11:00 +02:00", "09:00 JST"],
)
def test_handoff_new_accepts_every_spelling_and_files_it_by_its_instant(tag_out: str) -> None:
    """An entry whose Tag-out is written in any listed spelling is accepted and goes above an
    earlier session of its date (08:00 UTC is earlier than each of these), below a later one
    (23:59 UTC is later)."""
    log = None
    for agent, out in (("Early", "08:00 UTC"), ("Late", "23:59 UTC")):
        log, _ = compose.accepts(log, compose.entry(_v2("2026-11-02", agent, out)))
    text, problems = compose.accepts(log, compose.entry(_v2("2026-11-02", "New", tag_out)))

    assert problems == []
    agents = [line.split(" — ")[1].split(" |")[0] for line in text.splitlines() if line.startswith("## 2026")]
    assert agents == (["Late", "New", "Early"] if tag_out != "09:00 JST" else ["Late", "Early", "New"])
    clean(lint(text.encode()))


def _v2(day: str, agent: str, tag_out: str) -> compose.Parts:
    return compose.Parts(
        date=day,
        agent=agent,
        platform="Claude",
        session_type="code",
        tag_in="00:00 UTC",
        tag_out=tag_out,
        happened=("did it",),
        pending=("next",),
    )
