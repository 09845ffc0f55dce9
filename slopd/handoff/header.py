"""An entry's date header and its Tag-in/Tag-out line. Pure.

Rules (SPEC §10):
1. `## DATE SEP CONTEXT`: SEP is an em dash; ` - `, ` -- `, an en dash and the mis-encoded em
   dash `â€”` (UTF-8 read as cp1252 and written again) are read too, and flagged by lint.
2. CONTEXT with exactly three ` | `-separated fields is v2 `agent | platform | session-type`;
   anything else is v1 `machine (branch)` — `|` or `→` inside a v1 context are just text.
3. A Tag line is `**Tag-in:** TIME | **Tag-out:** TIME` (bold optional). A Tag-out is
   comparable when it is `[active]` (a session still open: later than any time) or `HH:MM`
   (optionally `~` approximate, `am`/`pm`) with a zone; US zones (`ET`, `CT`, `MT`, `PT`)
   follow US daylight-saving rules on the entry's date, so no clock or tz database is needed.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from functools import cache

SEPARATORS = (" \u2014 ", " \u00e2\u20ac\u201d ", " \u2013 ", " -- ", " - ")
EM_DASH = " \u2014 "
_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})")
_TAGS = re.compile(
    r"(?P<b1>(?:\*\*)?)Tag-in:(?P=b1)\s*(?P<tag_in>.*?)\s*\|\s*(?P<b2>(?:\*\*)?)Tag-out:(?P=b2)\s*(?P<tag_out>.*?)\s*"
)
_TAG_LIKE = re.compile(r"\**\s*Tag-(?:in|out)\b", re.IGNORECASE)
_TIME = re.compile(
    r"~?(\d{1,2}):(\d{2})(?:\s*([ap])\.?m\.?)?\s+([A-Za-z]{1,5}|[+-]\d{2}:?\d{2}|UTC[+-]\d{1,2}(?::?\d{2})?)"
)
_FIXED = {
    "UTC": 0, "GMT": 0, "Z": 0, "WET": 0, "BST": 60, "CET": 60, "CEST": 120, "EET": 120, "EEST": 180,
    "IST": 330, "JST": 540, "KST": 540, "AEST": 600, "AEDT": 660, "NZST": 720, "NZDT": 780,
    "EST": -300, "EDT": -240, "CST": -360, "CDT": -300, "MST": -420, "MDT": -360, "PST": -480, "PDT": -420,
    "AKST": -540, "AKDT": -480, "HST": -600,
}  # fmt: skip
_US = {"ET": -300, "CT": -360, "MT": -420, "PT": -480, "AKT": -540}
ACTIVE = "[active]"


@dataclass(frozen=True, slots=True)
class Header:
    date: str | None  # the date as written, when the heading starts with YYYY-MM-DD
    day: dt.date | None  # that date, when it is a real calendar date
    separator: str | None
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
    rest = heading[3:] if heading.startswith("## ") else heading
    rest = rest.strip()
    written, separator, context = rest, None, ""
    for candidate in SEPARATORS:
        before, found, after = rest.partition(candidate)
        if found and " " not in before.strip():
            written, separator, context = before.strip(), candidate, after.strip()
            break
    else:
        leading = _DATE.match(rest)
        written = leading.group(0) if leading else (rest.split(" ", 1)[0] if rest else "")
        context = rest[len(written) :].strip()
    matched = _DATE.fullmatch(written)
    day = _calendar(matched) if matched else None
    parts = tuple(part.strip() for part in context.split(" | "))
    fields = parts if len(parts) == 3 and all(parts) else ((context,) if context else ())
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


def instant(value: str | None, day: dt.date | None) -> float | None:
    """Rule 3: a Tag-out as minutes after midnight UTC of the entry's date (`inf`: active),
    or None when it cannot be compared."""
    if value is None:
        return None
    if value.strip().lower() == ACTIVE:
        return float("inf")
    matched = _TIME.fullmatch(value.strip())
    if matched is None:
        return None
    hour, minute, half, zone = (
        int(matched.group(1)),
        int(matched.group(2)),
        matched.group(3),
        matched.group(4),
    )
    if half is not None:
        if not 1 <= hour <= 12:
            return None
        hour = hour % 12 + (12 if half.lower() == "p" else 0)
    if hour > 23 or minute > 59:
        return None
    offset = _offset(zone, day)
    return None if offset is None else float(hour * 60 + minute - offset)


def _offset(zone: str, day: dt.date | None) -> int | None:
    upper = zone.upper()
    if upper in _FIXED:
        return _FIXED[upper]
    if upper in _US:
        return None if day is None else _US[upper] + (60 if _us_summer(day) else 0)
    signed = re.fullmatch(r"(?:UTC)?([+-])(\d{1,2}):?(\d{2})?", upper)
    if signed is None:
        return None
    minutes = int(signed.group(2)) * 60 + int(signed.group(3) or 0)
    return minutes if signed.group(1) == "+" else -minutes


def _us_summer(day: dt.date) -> bool:
    """US daylight-saving time: from the second Sunday of March to the first Sunday of November
    (the hour of the switch is below the resolution of a date)."""
    start = _nth_sunday(day.year, 3, 2)
    end = _nth_sunday(day.year, 11, 1)
    return start <= day < end


@cache
def _nth_sunday(year: int, month: int, n: int) -> dt.date:
    first = dt.date(year, month, 1)
    return first + dt.timedelta(days=(6 - first.weekday()) % 7 + 7 * (n - 1))
