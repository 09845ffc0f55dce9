"""An oracle for the differential tests: the verdict of MEP's own checker (NukaSoft/mep-protocol
`scripts/check-handoff.py`, schema 1.2, commit 98311e0), re-stated from its rules as listed in
docs/handoff.md ("MEP's checker, rule by rule"). It is written for these tests and imports
nothing of slopd; MEP's script itself is not in this repository and is never run here.

The rules, as the oracle applies them:
- R0 The bytes are read as UTF-8 (anything else: the checker stops, CI red) with universal
  newlines (CRLF and a lone CR become LF), then split into lines as `str.splitlines` does.
- R1 The text, leading whitespace aside, starts with `# Handoff Log` (else an error).
- R2 An entry starts at a line `##`, whitespace, `YYYY-MM-DD`, whitespace, one of `—`, `–`,
  `-`, whitespace and at least one more character; it runs to the next such line. None: error.
- R3 Each entry must contain the text `### What happened` and the text `### What's pending`
  anywhere in it (an error for each missing one).
- R4 The date goes through `date.fromisoformat` (an impossible date stops the checker).
- R5 The Tag-out is taken from the first `**Tag-in:** X | **Tag-out:** Y` in the entry (bold,
  any case); `[active]`/`active` is the latest time; `H:MM`/`HH:MM` with an optional zone of
  2-4 letters from MEP's table (none: UTC) is a time; a time of such a shape with an hour or
  minute out of range stops the checker; anything else is not comparable (a warning).
- R6 Each entry is compared with the one directly above it: a later date is an error; on the
  same date, when both Tag-outs are comparable, a later Tag-out below is an error.

`check(..., read_time=…, compare_all_above=True)` applies the two deliberate differences of
slopd that the differential generator exercises (docs/handoff.md, "Deliberate differences"):
slopd reads more Tag-out spellings, and compares a Tag-out with every comparable one above it
on its date, not only the one directly above.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from dataclasses import dataclass

IMPOSSIBLE = "impossible"
ACTIVE = float("inf")
# minutes east of UTC, as MEP's checker's table has them (whole hours there)
MEP_TABLE = {
    "UTC": 0, "GMT": 0, "Z": 0, "ET": -4, "EST": -5, "EDT": -4, "CT": -5, "CST": -6, "CDT": -5,
    "MT": -6, "MST": -7, "MDT": -6, "PT": -7, "PST": -8, "PDT": -7,
}  # fmt: skip
ENTRY_LINE = re.compile(r"##\s+(\d{4}-\d{2}-\d{2})\s+[—–-]\s+.+")
TAG_PAIR = re.compile(
    r"\*\*tag-in:\*\*\s*[^\n|]+?\s*\|\s*\*\*tag-out:\*\*\s*([^\n]+?)\s*$", re.IGNORECASE | re.MULTILINE
)
CLOCK = re.compile(r"(\d{1,2}):(\d{2})(?:\s*([A-Za-z]{2,4}))?")

TimeReading = float | str | None  # minutes after midnight UTC, ACTIVE, IMPOSSIBLE, or None


@dataclass(frozen=True)
class Verdict:
    conformant: bool
    errors: tuple[str, ...]
    stopped: bool = False  # the checker would stop with a traceback (CI red)


def mep_time(raw: str) -> TimeReading:
    """R5, MEP's way."""
    text = raw.strip()
    if text.lower() in ("[active]", "active"):
        return ACTIVE
    shape = CLOCK.fullmatch(text)
    if shape is None:
        return None
    hours = MEP_TABLE.get((shape.group(3) or "UTC").upper())
    if hours is None:
        return None
    hour, minute = int(shape.group(1)), int(shape.group(2))
    if hour > 23 or minute > 59:
        return IMPOSSIBLE
    return float(hour * 60 + minute - hours * 60)


def check(
    data: bytes, *, read_time: Callable[[str], TimeReading] = mep_time, compare_all_above: bool = False
) -> Verdict:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return Verdict(False, ("R0: not UTF-8",), stopped=True)
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    errors: list[str] = []
    if not text.lstrip().startswith("# Handoff Log"):
        errors.append("R1: no '# Handoff Log' at the start")
    lines = text.splitlines()
    starts = [number for number, line in enumerate(lines) if ENTRY_LINE.match(line)]
    if not starts:
        return Verdict(False, (*errors, "R2: no entry"))
    rows: list[tuple[int, dt.date, TimeReading]] = []
    for start, end in zip(starts, [*starts[1:], len(lines)], strict=True):
        body = "\n".join(lines[start:end]).strip() + "\n"
        heading = ENTRY_LINE.match(body.splitlines()[0])
        if heading is None:
            errors.append(f"line {start + 1}: R2 the heading no longer reads once stripped")
            continue
        try:
            day = dt.date.fromisoformat(heading.group(1))
        except ValueError:
            return Verdict(False, (*errors, f"line {start + 1}: R4 impossible date"), stopped=True)
        for name in ("### What happened", "### What's pending"):
            if name not in body:
                errors.append(f"line {start + 1}: R3 no {name!r}")
        pair = TAG_PAIR.search(body)
        stamp = read_time(pair.group(1)) if pair else None
        if stamp == IMPOSSIBLE:
            return Verdict(False, (*errors, f"line {start + 1}: R5 impossible time"), stopped=True)
        rows.append((start + 1, day, stamp))
    errors += _order(rows, compare_all_above)
    return Verdict(not errors, tuple(errors))


def _order(rows: list[tuple[int, dt.date, TimeReading]], all_above: bool) -> list[str]:
    """R6 (and, with `all_above`, slopd's comparison with every entry above on the date)."""
    errors: list[str] = []
    for index in range(1, len(rows)):
        line, day, stamp = rows[index]
        _, day_above, _ = rows[index - 1]
        if day > day_above:
            errors.append(f"line {line}: R6 {day} below {day_above}")
            continue
        above = rows[:index] if all_above else rows[index - 1 : index]
        for _, other_day, other in above:
            if other_day == day and isinstance(stamp, float) and isinstance(other, float) and stamp > other:
                errors.append(f"line {line}: R6 same day, Tag-out later than one above")
                break
    return errors
