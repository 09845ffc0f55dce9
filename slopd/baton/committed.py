"""What boot may present of the files every generation shares: only what GENERATION committed. Pure.

Rules (SPEC §11: boot presents nothing of a generation above GENERATION, and says what it left out):
1. `AUTOBIOGRAPHY.md` and `evolution/` are written before GENERATION, so after a crash they may
   already describe generation N+1. The autobiography's first line names the generation it was
   written for (`# Autobiography — VESSEL (through generation N)`, rule 6 of
   `baton.generations`). Boot presents it only when N is GENERATION; otherwise — N above it,
   below it, or no such line (a tree written by flux-baton or by an older slopd) — it is left
   out, and the deterministic autobiography rebuilt from the committed generations' own files
   (`generations/v1/` … `v{GENERATION}/`) stands in for it.
2. An evolution record is kept when its `generation` is a whole number from 1 to GENERATION; a
   record above GENERATION, or without a generation, is left out and counted. When nothing is
   left out the file is presented as written; otherwise the kept records, as JSON. A file that
   is not a JSON list is left out whole.
3. Every part left out is named in one sentence saying what it was and what stands in for it.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass

_THROUGH = re.compile(r"# Autobiography — .*\(through generation (0|[1-9][0-9]{0,8})\)[ \t]*")


@dataclass(frozen=True, slots=True)
class Shown:
    """What boot presents of one file (None: nothing), and what it left out (None: nothing)."""

    text: str | None
    left_out: str | None = None


def through(text: str) -> int | None:
    """Rule 1: the generation an autobiography says it was written for, or None."""
    first = text.split("\n", 1)[0]
    found = _THROUGH.fullmatch(first.rstrip("\r"))
    return int(found.group(1)) if found else None


def autobiography(text: str, marker: int, rebuilt: str | None) -> Shown:
    """Rule 1 (`rebuilt`: the autobiography of the committed generations; None if not read)."""
    written_for = through(text)
    if written_for == marker:
        return Shown(text)
    if written_for is None:
        why = "does not say which generation it was written for"
    elif written_for > marker:
        why = f"was written for generation {written_for}, above GENERATION {marker} (never committed)"
    else:
        why = f"was written for generation {written_for}, below GENERATION {marker}"
    span = "none yet" if marker == 0 else "v1" if marker == 1 else f"v1 to v{marker}"
    instead = "not presented"
    if rebuilt is not None:
        instead = f"rebuilt from the committed generations ({span}) instead"
    return Shown(rebuilt, f"AUTOBIOGRAPHY.md {why}: {instead}")


def records(path: str, text: str, marker: int) -> Shown:
    """Rule 2, for `evolution/fitness_history.json` or `evolution/mutations.json`."""
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    if not isinstance(value, list):
        return Shown(None, f"{path} is not a JSON list of records: not presented")
    kept, above, unnumbered = [], Counter[int](), 0
    for record in value:
        number = record.get("generation") if isinstance(record, dict) else None
        if not isinstance(number, int) or isinstance(number, bool) or number < 1:
            unnumbered += 1
        elif number > marker:
            above[number] += 1
        else:
            kept.append(record)
    if not above and not unnumbered:
        return Shown(text)
    parts = [f"{_records(count)} of generation {number}" for number, count in sorted(above.items())]
    parts += [f"{_records(unnumbered)} without a generation number"] if unnumbered else []
    why = f"GENERATION is {marker}: nothing above it was committed"
    said = f"{path}: {', '.join(parts)} not presented ({why})"
    return Shown(json.dumps(kept, indent=2, ensure_ascii=False) + "\n", said)


def _records(count: int) -> str:
    return f"{count} record" + ("" if count == 1 else "s")
