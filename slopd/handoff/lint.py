"""The seed's conformance test as lint rules over a parsed log, with the verdict of MEP's own
checker (schema 1.2) wherever SPEC §10 does not say otherwise. Pure.

Rules (SPEC §10): MEP1–MEP6 are errors, MEP7–MEP11 warnings. Every finding names its line,
its rule, what is wrong and how to fix it; `lint` never raises, whatever bytes it is given,
and reports every finding, not the first.
1. A standup file (`# Standing Standup — …`) is linted from its `# Handoff Log` line on, with
   the file's line numbers; a standup with no entry yet has no finding for that.
2. A heading MEP's checker reads as an entry but slopd cannot (it sits inside a code fence or
   an HTML comment) is MEP4: MEP's checker would cut the entry above it there.
3. The order rules (MEP2, MEP11) are `handoff.order`'s.
"""

from __future__ import annotations

from dataclasses import dataclass

from slopd.handoff import header as headers
from slopd.handoff.findings import ERROR, WARNING, Finding
from slopd.handoff.grammar import Entry, Log, collector_paused, parse, split_standup
from slopd.handoff.order import order
from slopd.handoff.sections import SECTION_NAMES

__all__ = ["ERROR", "WARNING", "Finding", "Report", "decode", "lint", "lint_log"]
_ORDER = {"happened": 0, "pending": 1, "watch": 2}


@dataclass(frozen=True, slots=True)
class Report:
    log: Log
    findings: tuple[Finding, ...]
    head: str = ""  # a standup's preamble, above the log (rule 1)

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
        line = _line_of(text, len(data[: error.start].decode("utf-8", "surrogateescape")))
        found.append(
            Finding(line, "MEP1", f"byte {error.start} is not valid UTF-8", "save the file as UTF-8")
        )
    if "\0" in text:
        found.append(
            Finding(
                _line_of(text, text.index("\0")),
                "MEP1",
                "the file holds a NUL byte: it is not plain text",
                "remove the NUL bytes",
            )
        )
    return text, found


def _line_of(text: str, offset: int) -> int:
    """The 1-based line of `offset` in `text`, lines ending at LF, CRLF or a lone CR."""
    before = text[:offset]
    return before.count("\n") + before.count("\r") - before.count("\r\n") + 1


def lint(data: bytes) -> Report:
    text, found = decode(data)
    parts = split_standup(text)
    head, body = ("", text) if parts is None or not parts[1] else parts
    with collector_paused():  # the sections and items read by the rules are many small objects too
        log = parse(body)
        below = _line_of(head, len(head)) - 1
        found += [finding.moved(below) for finding in lint_log(log, standup=bool(head))]
    return Report(log, tuple(sorted(found, key=lambda finding: (finding.line, finding.rule))), head)


def lint_log(log: Log, *, standup: bool = False) -> list[Finding]:
    found: list[Finding] = []
    if not log.has_file_header:
        first = next((line.strip() for line in log.preamble.splitlines() if line.strip()), "")
        what = f"starts with {first[:60]!r}" if first else "has no '# Handoff Log' line"
        found.append(
            Finding(
                1,
                "MEP6",
                f"the file {what}, not '# Handoff Log'",
                "make the first line '# Handoff Log', then one line saying what the log is",
            )
        )
    entries = log.entries
    if not entries and not standup:
        found.append(
            Finding(
                1,
                "MEP4",
                "no entry: the log has no '## YYYY-MM-DD — CONTEXT' heading",
                "add an entry: '## 2026-04-03 — machine (branch)' with What happened and What's pending",
            )
        )
    found += [
        Finding(
            line,
            "MEP4",
            "this heading is inside a code fence or an HTML comment, yet MEP's checker reads it as an entry",
            "indent it by a space, or write it without the leading '## '",
        )
        for line in log.hidden
    ]
    for entry in entries:
        found += _entry(entry)
    found += order(entries)
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
