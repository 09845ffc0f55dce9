"""Tag-in/Tag-out times: every spelling of a clock time, read to one instant. Pure.

Rules (SPEC §10, "Parity with MEP's checker"):
1. A time is `H:MM` or `HH:MM`, maybe `~` before it (approximate: read as written), maybe
   `am`/`pm` after it (any case, dots allowed, a space or none), then a zone (a space or none):
   - none: UTC, as MEP's checker reads a bare `09:00`;
   - an abbreviation of `ZONES`, any case (`Z`, `UTC`, `ET`, `CEST`, `JST` …);
   - an offset `+02:00`, `+0200`, `+2`, `−5`, maybe after `UTC` or `GMT` (`UTC+2`).
2. MEP's own zones mean what MEP's checker (schema 1.2) makes them mean, so that slopd puts
   entries in the order MEP's CI checks: `ET`, `CT`, `MT`, `PT` are UTC−4, −5, −6, −7 the whole
   year (their daylight offsets); `EST`, `CST` … are the standard ones.
3. An instant is minutes after midnight UTC of the entry's date, the local time being on that
   date; `[active]` or `active` (any case: a session still open) is +inf, later than any time.
4. A time whose hour or minute does not exist (`25:00 UTC`, `14:75`, `13:00 pm`) is
   `impossible` — MEP's checker stops with a traceback on one — and has no instant; neither has
   anything else that is not a time (`EOL`, `(open)`, an unknown zone).
"""

from __future__ import annotations

import re
from functools import lru_cache

ACTIVE = float("inf")
MEP_ZONES = {
    "UTC": 0, "GMT": 0, "Z": 0, "ET": -240, "EST": -300, "EDT": -240, "CT": -300, "CST": -360,
    "CDT": -300, "MT": -360, "MST": -420, "MDT": -360, "PT": -420, "PST": -480, "PDT": -420,
}  # fmt: skip
ZONES = {
    **MEP_ZONES,
    "UT": 0, "WET": 0, "WEST": 60, "BST": 60, "CET": 60, "CEST": 120, "MET": 60, "MEST": 120,
    "EET": 120, "EEST": 180, "MSK": 180, "GST": 240, "PKT": 300, "IST": 330, "NPT": 345,
    "ICT": 420, "WIB": 420, "SGT": 480, "HKT": 480, "AWST": 480, "JST": 540, "KST": 540,
    "ACST": 570, "ACDT": 630, "AEST": 600, "AEDT": 660, "NZST": 720, "NZDT": 780, "AST": -240,
    "ADT": -180, "NST": -210, "NDT": -150, "BRT": -180, "ART": -180, "AKT": -480, "AKST": -540,
    "AKDT": -480, "HST": -600,
}  # fmt: skip
_NAMES = "|".join(sorted(ZONES, key=len, reverse=True))
_CLOCK = re.compile(
    r"~?\s*(?P<hour>\d{1,2}):(?P<minute>\d{2})"
    r"(?:\s*(?P<half>[ap])\.?m\.?)?"
    rf"\s*(?:(?P<name>{_NAMES})|(?:UTC|GMT)?\s*(?P<sign>[+\-\u2212])\s*(?P<hours>\d{{1,2}})(?::?(?P<minutes>\d{{2}}))?)?",
    re.IGNORECASE,
)


def instant(value: str | None) -> float | None:
    """Rule 3: the instant of a Tag-out as written, or None when it cannot be compared."""
    if value is None:
        return None
    text = value.strip()
    if text.lower() in ("[active]", "active"):
        return ACTIVE
    read = _read(text)
    return None if read is None or read[1] else float(read[0])


def impossible(value: str | None) -> bool:
    """Rule 4: a clock time with a zone slopd reads (or none) whose hour or minute does not exist."""
    read = _read(value.strip()) if value is not None else None
    return read is not None and read[1]


@lru_cache(maxsize=4096)  # a log repeats its Tag-outs; lint asks for each one more than once
def _read(text: str) -> tuple[int, bool] | None:
    """(minutes after midnight UTC, impossible) of a time, or None when `text` is not one."""
    matched = _CLOCK.fullmatch(text)
    if matched is None:
        return None
    offset = _offset(matched)
    if offset is None:
        return None
    hour, minute, half = int(matched["hour"]), int(matched["minute"]), matched["half"]
    if half is not None:
        if not 1 <= hour <= 12:
            return 0, True
        hour = hour % 12 + (12 if half.lower() == "p" else 0)
    if hour > 23 or minute > 59:
        return 0, True
    return hour * 60 + minute - offset, False


def _offset(matched: re.Match[str]) -> int | None:
    """The zone's minutes east of UTC (rule 1), or None for an offset beyond a day."""
    if matched["name"] is not None:
        return ZONES[matched["name"].upper()]
    if matched["sign"] is None:
        return 0
    hours, minutes = int(matched["hours"]), int(matched["minutes"] or 0)
    if hours > 23 or minutes > 59:
        return None
    return -(hours * 60 + minutes) if matched["sign"] in "-\u2212" else hours * 60 + minutes
