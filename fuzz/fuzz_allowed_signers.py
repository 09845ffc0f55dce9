#!/usr/bin/env python3
"""Coverage-guided fuzzing of the allowed_signers parser with atheris (libFuzzer).

Invariants (slopd/core/allowed_signers.py rule 3, slopd/core/authorizing.py rule 1), for any text:
- `allowed_signers.parse` returns entries or raises `AllowedSignersError` naming a line of the
  text (1 ≤ line ≤ number of lines) and a non-empty reason, in UTC and in local zones west
  (with daylight saving time) and east of it;
- `authorize` is total: for every parsed entry it returns `Authorized` or `Refused`.
The bytes are decoded as UTF-8 with surrogate escapes, so undecodable bytes reach the parser as
the lone surrogates a `str` can hold.

    python fuzz/fuzz_allowed_signers.py -runs=100000     # seed corpus fuzz/corpus/allowed_signers
"""

from __future__ import annotations

import sys
from datetime import UTC, datetime, timedelta, timezone, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import atheris
from common import libfuzzer_argv

with atheris.instrument_imports(include=["slopd"]):
    from slopd.core import allowed_signers, authorizing


def zones() -> tuple[tzinfo, ...]:
    """UTC, a zone west of it with daylight saving time, and one east of it (far from year 1 and 9999)."""
    found: list[tzinfo] = [UTC]
    for name, hours in (("America/New_York", -5), ("Asia/Tokyo", 9)):
        try:
            found.append(ZoneInfo(name))
        except ZoneInfoNotFoundError:  # no tz database: a fixed offset still exercises local times
            found.append(timezone(timedelta(hours=hours)))
    return tuple(found)


ZONES = zones()
NOW = datetime(2026, 7, 4, 8, 0, tzinfo=UTC)


def test_one_input(data: bytes) -> None:
    text = data.decode("utf-8", "surrogateescape")
    lines = text.count("\n") + 1
    for zone in ZONES:
        try:
            entries = allowed_signers.parse(text, local_zone=zone)
        except allowed_signers.AllowedSignersError as error:
            if not 1 <= error.line <= lines or not error.reason:
                raise AssertionError(f"bad error: line {error.line} of {lines}: {error.reason!r}") from None
            continue
        for entry in entries:
            for principal in (entry.principals, entry.principals.split(",")[0], "mallory@example.com"):
                verdict = authorizing.authorize(
                    entries, public_key=entry.public_key, principal=principal, namespace="slop", now=NOW
                )
                if not isinstance(verdict, authorizing.Authorized | authorizing.Refused):
                    raise AssertionError(f"authorize returned {verdict!r}")


def main() -> None:
    atheris.Setup(libfuzzer_argv(sys.argv, "allowed_signers"), test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
