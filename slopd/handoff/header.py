"""An entry's date header and its Tag-in/Tag-out line. Pure.

Rules (SPEC §10):
1. `## DATE SEP CONTEXT`: `##` then any whitespace (a space, a tab: MEP's checker takes both).
   SEP is an em dash between whitespace; an en dash or a hyphen there (MEP's checker reads
   both), ` -- ` and the mis-encoded em dash `â€”` (UTF-8 read as cp1252 and written again) are
   read too, and flagged by lint. DATE is `YYYY-MM-DD` in ASCII digits.
2. CONTEXT with exactly three ` | `-separated fields is v2 `agent | platform | session-type`;
   anything else is v1 `machine (branch)` — `|` or `→` inside a v1 context are just text.
3. A Tag line is `**Tag-in:** TIME | **Tag-out:** TIME` (bold optional, any case): the first
   line of the entry's header block (before its first section) that starts like one.
4. The Tag-out an entry is ordered by is MEP's checker's: the first `**Tag-in:** … |
   **Tag-out:** …` anywhere in the entry (bold, any case; its times may even sit on the next
   line); without one, the Tag line's. Times are read by `handoff.clock`.
5. `MEP_HEADING` is the heading MEP's checker reads as an entry: lint uses it to find the
   headings MEP's checker sees where slopd sees none (inside a code fence or a comment).
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

EM_DASH = "\u2014"
MOJIBAKE_DASH = "\u00e2\u20ac\u201d"
HEADING = re.compile(r"##\s")
MEP_HEADING = re.compile(r"##\s+\d{4}-\d{2}-\d{2}\s+[\u2014\u2013-]\s+.+")
_SEPARATOR = re.compile(rf"(?P<written>\S+)\s+(?P<dash>[\u2014\u2013-]|--|{MOJIBAKE_DASH})\s+(?P<context>.*)")
_DATE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})")
_TAGS = re.compile(
    r"(?P<b1>(?:\*\*)?)Tag-in:(?P=b1)\s*(?P<tag_in>.*?)\s*\|\s*(?P<b2>(?:\*\*)?)Tag-out:(?P=b2)\s*(?P<tag_out>.*?)\s*",
    re.IGNORECASE,
)
_TAG_LIKE = re.compile(r"\**\s*Tag-(?:in|out)\b", re.IGNORECASE)
_MEP_TAGS = re.compile(
    r"\*\*Tag-in:\*\*\s*[^\n|]+?\s*\|\s*\*\*Tag-out:\*\*\s*(?P<tag_out>[^\n]+?)\s*$",
    re.IGNORECASE | re.MULTILINE,
)


@dataclass(frozen=True, slots=True)
class Header:
    date: str | None  # the date as written, when the heading starts with YYYY-MM-DD
    day: dt.date | None  # that date, when it is a real calendar date
    separator: str | None  # the dash between date and context: "—", "–", "-", "--", "â€”"
    context: str
    fields: tuple[str, ...]  # v2: (agent, platform, session-type); v1: (machine,)

    @property
    def v2(self) -> bool:
        return len(self.fields) == 3

    @property
    def agent(self) -> str:
        return self.fields[0] if self.fields else ""


@dataclass(frozen=True, slots=True)
class Tags:
    line: int
    text: str
    tag_in: str | None  # None: the line is not well formed
    tag_out: str | None

    @property
    def well_formed(self) -> bool:
        return self.tag_in is not None


def read_header(heading: str) -> Header:
    rest = heading[2:].strip() if HEADING.match(heading) else heading.strip()
    parts = _SEPARATOR.fullmatch(rest)
    if parts is not None:
        written, separator, context = parts["written"], parts["dash"], parts["context"].strip()
    else:
        leading = _DATE.match(rest)
        written = leading.group(0) if leading else (rest.split(" ", 1)[0] if rest else "")
        separator, context = None, rest[len(written) :].strip()
    matched = _DATE.fullmatch(written)
    day = _calendar(matched) if matched else None
    fields = tuple(part.strip() for part in context.split(" | "))
    fields = fields if len(fields) == 3 and all(fields) else ((context,) if context else ())
    return Header(written if matched else None, day, separator, context, fields)


def _calendar(matched: re.Match[str]) -> dt.date | None:
    try:
        return dt.date(int(matched.group(1)), int(matched.group(2)), int(matched.group(3)))
    except ValueError:
        return None


def read_tags(line: str, number: int) -> Tags | None:
    """The Tag line `line` (None: it does not look like one)."""
    if not _TAG_LIKE.match(line.lstrip()):
        return None
    matched = _TAGS.fullmatch(line.strip())
    if matched is None or not matched.group("tag_in") or not matched.group("tag_out"):
        return Tags(number, line, None, None)
    return Tags(number, line, matched.group("tag_in"), matched.group("tag_out"))


def mep_tag_out(text: str) -> str | None:
    """Rule 4: the Tag-out of the first bold Tag pair in `text` (lines broken at `\\n`)."""
    found = _MEP_TAGS.search(text)
    return found["tag_out"] if found else None
