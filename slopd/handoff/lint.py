"""The seed's conformance test as lint rules over a parsed log. Pure.

Rules (SPEC §10): MEP1–MEP6 are errors, MEP7–MEP11 warnings. Every finding names its line,
its rule, what is wrong and how to fix it; `lint` never raises, whatever bytes it is given,
and reports every finding, not the first.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from itertools import pairwise

from slopd.handoff import header as headers
from slopd.handoff.grammar import SECTION_NAMES, Entry, Log, collector_paused, parse

ERROR, WARNING = "error", "warning"
_ORDER = {"happened": 0, "pending": 1, "watch": 2}


@dataclass(frozen=True, slots=True)
class Finding:
    line: int
    rule: str
    message: str
    fix: str

    @property
    def severity(self) -> str:
        return ERROR if int(self.rule[3:]) <= 6 else WARNING

    def as_dict(self) -> dict[str, object]:
        return {
            "line": self.line,
            "rule": self.rule,
            "severity": self.severity,
            "message": self.message,
            "fix": self.fix,
        }


@dataclass(frozen=True, slots=True)
class Report:
    log: Log
    findings: tuple[Finding, ...]

    @property
    def conformant(self) -> bool:
        return not any(finding.severity == ERROR for finding in self.findings)

    def clean(self, *, strict: bool = False) -> bool:
        return not self.findings if strict else self.conformant


def decode(data: bytes) -> tuple[str, list[Finding]]:
    """MEP1: the text (undecodable bytes kept as surrogates, so nothing is lost) and its findings."""
    found: list[Finding] = []
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        text = data.decode("utf-8", "surrogateescape")
        line = data[: error.start].count(b"\n") + 1
        found.append(
            Finding(line, "MEP1", f"byte {error.start} is not valid UTF-8", "save the file as UTF-8")
        )
    if "\0" in text:
        line = text[: text.index("\0")].count("\n") + 1
        found.append(
            Finding(line, "MEP1", "the file holds a NUL byte: it is not plain text", "remove the NUL bytes")
        )
    return text, found


def lint(data: bytes) -> Report:
    text, found = decode(data)
    with collector_paused():  # the sections and items read by the rules are many small objects too
        log = parse(text)
        found += lint_log(log)
    return Report(log, tuple(sorted(found, key=lambda finding: (finding.line, finding.rule))))


def lint_log(log: Log) -> list[Finding]:
    found: list[Finding] = []
    if not log.has_file_header:
        first = log.preamble.split("\n", 1)[0].strip() or "(an empty line)"
        found.append(
            Finding(
                1,
                "MEP6",
                f"the file starts with {first!r}, not '# Handoff Log'",
                "make the first line '# Handoff Log', then one line saying what the log is",
            )
        )
    entries = log.entries
    if not entries:
        found.append(
            Finding(
                1,
                "MEP4",
                "no entry: the log has no '## YYYY-MM-DD — CONTEXT' heading",
                "add an entry: '## 2026-04-03 — machine (branch)' with What happened and What's pending",
            )
        )
    for entry in entries:
        found += _entry(entry)
    found += _order(entries)
    return found


def _entry(entry: Entry) -> list[Finding]:
    found: list[Finding] = []
    line, head = entry.line, entry.header
    if head.date is None:
        found.append(
            Finding(
                line,
                "MEP4",
                f"the heading {entry.heading!r} does not start with a YYYY-MM-DD date",
                "begin the heading with the session's date: '## 2026-04-03 — …'",
            )
        )
    elif head.day is None:
        found.append(
            Finding(
                line,
                "MEP4",
                f"{head.date} is not a real calendar date",
                "write the date the session took place",
            )
        )
    if head.separator is None:
        found.append(
            Finding(
                line,
                "MEP9",
                "the date is not followed by ' — CONTEXT'",
                "add ' — machine (branch)' or ' — agent | platform | session-type'",
            )
        )
    elif head.separator != headers.EM_DASH:
        found.append(
            Finding(
                line,
                "MEP9",
                f"the date is followed by {head.separator.strip()!r}, not an em dash",
                "write ' — ' (U+2014) between the date and the context",
            )
        )
    found += _tags(entry)
    kinds = [section.kind for section in entry.sections if section.kind is not None]
    for kind in ("happened", "pending"):
        section = entry.section(kind)
        if section is None:
            found.append(
                Finding(
                    line,
                    "MEP3",
                    f"the entry has no '### {SECTION_NAMES[kind]}' section" + _near(entry, kind),
                    f"add '### {SECTION_NAMES[kind]}' with one '- ' line at least",
                )
            )
        elif section.empty:
            found.append(
                Finding(
                    section.line,
                    "MEP8",
                    f"'### {SECTION_NAMES[kind]}' is empty",
                    "write one '- ' line at least (or '- none')",
                )
            )
    if kinds != sorted(kinds, key=_ORDER.__getitem__):
        written = ", ".join(SECTION_NAMES[kind] for kind in kinds)
        found.append(
            Finding(
                line,
                "MEP10",
                f"the sections are in the order {written}",
                "order them What happened, What's pending, Watch out for",
            )
        )
    pending = entry.section("pending")
    for item in pending.items if pending else ():
        if item.malformed:
            found.append(
                Finding(
                    item.line,
                    "MEP5",
                    f"{item.text.strip()!r} is not a task item",
                    "write a task as '- [ ] text' (done: '- [x] text')",
                )
            )
    return found


def _near(entry: Entry, kind: str) -> str:
    """A hint when a section is there under another spelling ('### What Happened', '### Pending')."""
    wanted = SECTION_NAMES[kind].lower().replace("what's ", "")
    for section in entry.sections:
        if section.kind is None and wanted in section.heading.lower().replace("\u2019", "'"):
            return f" ({section.heading!r} at line {section.line} is not spelled as the schema's)"
    return ""


def _tags(entry: Entry) -> list[Finding]:
    tags = entry.tags
    if tags is not None and not tags.well_formed:
        return [
            Finding(
                tags.line,
                "MEP7",
                f"{tags.text.strip()!r} is not a Tag line",
                "write '**Tag-in:** 14:30 ET | **Tag-out:** 16:45 ET'",
            )
        ]
    if tags is None and entry.header.v2:
        return [
            Finding(
                entry.line,
                "MEP7",
                "a v2 entry (agent | platform | session-type) has no Tag line",
                "add '**Tag-in:** HH:MM ZONE | **Tag-out:** HH:MM ZONE' under the heading",
            )
        ]
    return []


def _order(entries: tuple[Entry, ...]) -> list[Finding]:
    """MEP2 (newest first, same-day by Tag-out) and MEP11 (same-day order not checkable)."""
    found: list[Finding] = []
    dated = [(entry, entry.header.day) for entry in entries if entry.header.day is not None]
    for (above, day_above), (below, day_below) in pairwise(dated):
        if day_below > day_above:
            message = f"{below.header.date} is below the older {above.header.date} (line {above.line})"
            found.append(
                Finding(
                    below.line,
                    "MEP2",
                    message + ": entries go newest first",
                    f"move this entry above line {above.line}",
                )
            )
    days: dict[date, list[Entry]] = {}
    for entry, day in dated:
        days.setdefault(day, []).append(entry)
    for group in days.values():
        if len(group) > 1:
            found += _same_day(group)
    return found


def _same_day(group: list[Entry]) -> list[Finding]:
    found: list[Finding] = []
    timed: list[tuple[Entry, str, float]] = []
    for entry in group:
        written = entry.tags.tag_out if entry.tags else None
        moment = headers.instant(written, entry.header.day)
        if written is None or moment is None:
            what = f"Tag-out {written!r} is not a time with a zone" if written else "entry has no Tag-out"
            shared = f"{len(group)} entries share {entry.header.date}"
            message = f"{shared} and this {what}: their order cannot be checked"
            found.append(
                Finding(
                    entry.line,
                    "MEP11",
                    message,
                    "write the Tag-out as 'HH:MM ZONE' (17:00 UTC, 16:45 ET) or '[active]'",
                )
            )
            continue
        earlier = next(((other, out) for other, out, seen in timed if seen < moment), None)
        if earlier is not None:
            other, out = earlier
            above = f"{out} of the entry above it (line {other.line})"
            message = f"Tag-out {written} on {entry.header.date} is later than {above}"
            found.append(
                Finding(
                    entry.line,
                    "MEP2",
                    message,
                    f"move this entry above line {other.line}: a later session goes on top",
                )
            )
        timed.append((entry, written, moment))
    return found
