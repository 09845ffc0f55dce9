"""Newest first: the order rules of a log (MEP2, MEP11) as MEP's schema-1.2 checker has them. Pure.

Rules (SPEC §10):
1. No entry is dated later than the dated entry above it (an entry whose date is not a real
   date takes no part: MEP4 names it).
2. On one date, an entry whose Tag-out (`header` rule 4, read by `handoff.clock`) is later than
   the Tag-out of any entry above it on that date is MEP2 — MEP's checker compares each with
   the one directly above; comparing with all of them also catches a fault hidden behind a
   Tag-out that cannot be read.
3. A Tag-out whose hour or minute does not exist (`25:00 UTC`) is MEP2 wherever it is: MEP's
   checker stops with a traceback on it, so its CI is red.
4. An entry sharing its date with another whose Tag-out cannot be compared is MEP11 (warning).
"""

from __future__ import annotations

from datetime import date
from itertools import pairwise

from slopd.handoff import clock
from slopd.handoff.findings import Finding
from slopd.handoff.grammar import Entry


def order(entries: tuple[Entry, ...]) -> list[Finding]:
    found = [_impossible(entry) for entry in entries if clock.impossible(entry.tag_out)]
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


def _impossible(entry: Entry) -> Finding:
    return Finding(
        entry.line,
        "MEP2",
        f"Tag-out {entry.tag_out!r} is not a time of day: the entry's order cannot be checked"
        " (MEP's checker stops on it)",
        "write the Tag-out as 'HH:MM ZONE' with an hour 00-23 and a minute 00-59, or '[active]'",
    )


def _same_day(group: list[Entry]) -> list[Finding]:
    found: list[Finding] = []
    timed: list[tuple[Entry, str, float]] = []
    for entry in group:
        written = entry.tag_out
        moment = clock.instant(written)
        if written is None or moment is None:
            if clock.impossible(written):
                continue  # rule 3 named it already
            what = f"Tag-out {written!r} is not a time" if written else "entry has no Tag-out"
            shared = f"{len(group)} entries share {entry.header.date}"
            found.append(
                Finding(
                    entry.line,
                    "MEP11",
                    f"{shared} and this {what}: their order cannot be checked",
                    "write the Tag-out as 'HH:MM ZONE' (17:00 UTC, 16:45 ET) or '[active]'",
                )
            )
            continue
        earlier = next(((other, out) for other, out, seen in timed if seen < moment), None)
        if earlier is not None:
            other, out = earlier
            above = f"{out} of the entry above it (line {other.line})"
            found.append(
                Finding(
                    entry.line,
                    "MEP2",
                    f"Tag-out {written} on {entry.header.date} is later than {above}",
                    f"move this entry above line {other.line}: a later session goes on top",
                )
            )
        timed.append((entry, written, moment))
    return found
