"""A committed generation as an MEP entry, for the hub's inbox (SPEC §11 "Projection"). Pure.

Rules:
1. The entry is v1 — `## DATE — VESSEL (generation N)` — so it needs no Tag line, and it lints
   clean whatever the letter holds: Where Things Stand becomes What happened (plus the path of
   the full letter), the numbered steps of What I'd Do Next become `- [ ]` tasks of What's
   pending (`- none` without any), What I'm Uncertain About becomes Watch out for.
2. Lines are taken as written — list markers and numbers stripped, a wrapped paragraph joined
   into one bullet — at most 20 per section; a heading-like line (`#…`) is never copied, so the
   letter cannot add a section or an entry.
"""

from __future__ import annotations

import re

MAX_LINES = 20
_STEP = re.compile(r"\s*(?:\d+[.)]|[-*+])\s+(?:\[[ xX]\]\s+)?(.*)")


def _section(letter: str, title: str) -> list[str]:
    found = re.search(
        r"^#{1,6}\s*" + re.escape(title) + r"\b[^\n]*\n(.*?)(?=^#{1,6}\s|\Z)",
        letter,
        re.IGNORECASE | re.MULTILINE | re.DOTALL,
    )
    if found is None:
        return []
    lines: list[str] = []
    prose = False  # the last line was prose: a wrapped line continues it
    for raw in found.group(1).splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            prose = False
            continue
        step = _STEP.fullmatch(line)
        if step is None and prose and lines:
            lines[-1] += " " + line
            continue
        lines.append((step.group(1) if step else line).strip())
        prose = step is None
    return [line for line in lines if line][:MAX_LINES]


def _steps(letter: str) -> list[str]:
    found = re.search(
        r"^#{1,6}\s*What I.d Do Next\b[^\n]*\n(.*?)(?=^#{1,6}\s|\Z)",
        letter,
        re.IGNORECASE | re.MULTILINE | re.DOTALL,
    )
    if found is None:
        return []
    steps = [
        m.group(1).strip()
        for m in map(_STEP.fullmatch, found.group(1).splitlines())
        if m and m.group(1).strip()
    ]
    return steps[:MAX_LINES]


def entry(vessel: str, generation: int, letter: str, *, date: str, path: str) -> str:
    """Rule 1 (`date`: YYYY-MM-DD of the commit; `path`: the full letter, hub-relative)."""
    happened = [*_section(letter, "Where Things Stand"), f"Full letter: `{path}`"]
    pending = [f"- [ ] {step}" for step in _steps(letter)] or ["- none"]
    watch = _section(letter, "What I'm Uncertain About") or _section(letter, "What I’m Uncertain About")
    lines = [f"## {date} — {vessel} (generation {generation})", "", "### What happened"]
    lines += [f"- {line}" for line in happened]
    lines += ["", "### What's pending", *pending]
    if watch:
        lines += ["", "### Watch out for", *(f"- {line}" for line in watch)]
    return "\n".join(lines) + "\n"
