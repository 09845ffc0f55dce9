"""A Standing Standup: one project's live meeting, as text in and text out. Pure.

Rules (SPEC §10):
1. The file is a preamble — `# Standing Standup — PROJECT`, `## Scope`, `## Artifacts`,
   `## Pointers`, `## Party line` — then an ordinary handoff log from its `# Handoff Log` line.
   Everything but the Party line and the log's entries belongs to the humans and is kept as
   it is, byte for byte.
2. Every change is a function of the current text that is idempotent: tagging in a seat that
   is in, tagging out one that is out, or adding an entry the log already holds changes
   nothing — so a write redone after a crash never doubles anything.
3. The Party line lists `- SEAT — in since STAMP`, one line per seat, in the order they came.
4. Open tasks are the `- [ ]` items of every entry, newest entry first, each (owner, text)
   once, grouped by owner (`(unassigned)` for none).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from slopd.handoff import compose
from slopd.handoff.grammar import FILE_HEADER, Entry, log_start, parse
from slopd.handoff.lint import Finding

PROJECT = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")
PARTY_HEADING = "## Party line"
NOBODY = "- (nobody is tagged in)"
UNASSIGNED = "(unassigned)"
_SEAT = re.compile(r"- (?P<seat>\S+) — in since (?P<since>\S+)")


@dataclass(frozen=True, slots=True)
class Task:
    owner: str
    text: str
    date: str | None
    line: int


def create(project: str) -> str:
    return (
        f"# Standing Standup — {project}\n\n"
        "## Scope\n\n(What this project is and is not. Edit by hand; slopd keeps it.)\n\n"
        "## Artifacts\n\n(Repositories, files and documents. Edit by hand.)\n\n"
        "## Pointers\n\n(Public URLs. Edit by hand.)\n\n"
        f"{PARTY_HEADING}\n\n{NOBODY}\n\n"
        f"{FILE_HEADER}\n\nSession handoffs for {project}, newest first; slopd adds each `handoff` "
        f"sent with `project: {project}`.\n\n---\n\n"
    )


def split(text: str) -> tuple[str, str]:
    """(the preamble, the log from its `# Handoff Log` line; empty when there is none)."""
    start = log_start(text)
    return (text, "") if start is None else (text[:start], text[start:])


def party(text: str) -> list[tuple[str, str]]:
    """Rule 3: who is in, since when."""
    head, _ = split(text)
    return [(m.group("seat"), m.group("since")) for m in map(_SEAT.fullmatch, _party_lines(head)) if m]


def _party_lines(head: str) -> list[str]:
    lines = head.splitlines()
    if PARTY_HEADING not in (line.rstrip() for line in lines):
        return []
    start = [line.rstrip() for line in lines].index(PARTY_HEADING) + 1
    end = next((i for i in range(start, len(lines)) if lines[i].startswith("#")), len(lines))
    return [line.rstrip() for line in lines[start:end]]


def _with_party(text: str, seats: list[tuple[str, str]]) -> str:
    head, log = split(text)
    listed = "\n".join(f"- {seat} — in since {since}" for seat, since in seats) or NOBODY
    block = f"{PARTY_HEADING}\n\n{listed}\n\n"
    found = re.search(r"^" + re.escape(PARTY_HEADING) + r"[ \t]*\r?\n", head, re.MULTILINE)
    if found is None:
        return head + ("" if head.endswith("\n\n") or not head else "\n") + block + log
    rest = head[found.end() :]
    following = re.search(r"^#", rest, re.MULTILINE)
    tail = rest[following.start() :] if following else ""
    return head[: found.start()] + block + tail + log


def tag_in(text: str, seat: str, since: str) -> str:
    seats = party(text)
    if any(name == seat for name, _ in seats):
        return text
    return _with_party(text, [*seats, (seat, since)])


def tag_out(text: str, seat: str) -> str:
    seats = party(text)
    if all(name != seat for name, _ in seats):
        return text
    return _with_party(text, [(name, since) for name, since in seats if name != seat])


def file(text: str | None, project: str, seat: str, entry: str) -> tuple[str | None, list[Finding]]:
    """A handoff filed (rule 2): the text with `entry` in its log and `seat` tagged out, or, when
    the entry would not lint, the text unchanged and why. An entry the log holds is not added again."""
    current = text if text is not None else create(project)
    head, log = split(current)
    if log and compose.present(log, entry):
        return tag_out(current, seat), []
    result, problems = compose.accepts(log or None, entry)
    if problems:
        return text, problems
    if not log and head and not head.endswith("\n"):
        head += "\n"
    return tag_out(head + result, seat), []


def entries(text: str) -> tuple[Entry, ...]:
    return parse(split(text)[1]).entries


def open_tasks(text: str) -> dict[str, list[Task]]:
    """Rule 4."""
    offset = split(text)[0].count("\n")
    grouped: dict[str, list[Task]] = {}
    seen: set[tuple[str, str]] = set()
    for entry in entries(text):
        for item in entry.tasks():
            owner = item.owner or UNASSIGNED
            if item.done or item.malformed or (owner, item.body) in seen:
                continue
            seen.add((owner, item.body))
            grouped.setdefault(owner, []).append(
                Task(owner, item.body, entry.header.date, item.line + offset)
            )
    return grouped
