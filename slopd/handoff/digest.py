"""What a standup says to people: the reply to a filed handoff, and `slopd standup`. Pure.

Rules (SPEC §10):
1. The reply to a `handoff` with `project:` names the standup file, says whether the entry is
   in its log, and then lists the Party line and the open tasks by owner — or every finding
   that kept the entry out, with its line in the envelope's body and how to fix it.
2. The text depends only on the standup as it now is, never on whether this very write added
   the entry: a reply redone after a crash is the same reply.
"""

from __future__ import annotations

from typing import Any

from slopd.handoff import standup
from slopd.handoff.lint import Finding
from slopd.handoff.standup import Task

MAX_TASKS = 50


def path(project: str) -> str:
    return f"standups/{project}.md"


def filed(project: str, text: str, findings: tuple[Finding, ...]) -> str:
    if findings:
        lines = [f"Standing Standup `{path(project)}`: the entry was not added; fix and send it again:"]
        lines += [f"- body line {f.line}: {f.rule} {f.message} — {f.fix}" for f in findings]
        return "\n".join(lines) + "\n"
    return f"Standing Standup `{path(project)}`: the entry is in its log.\n\n" + overview(text)


def refused_project(project: object) -> str:
    return (
        f"Standing Standup: `project: {project}` is not a project name (lower-case letters, digits, "
        "`.`, `_`, `-`; up to 64); nothing was added.\n"
    )


def tagged_in(project: str, seat: str, text: str) -> str:
    since = dict(standup.party(text)).get(seat, "?")
    return f"{seat} is tagged in on `{path(project)}` since {since}."


def overview(text: str) -> str:
    lines = [
        "Party line: "
        + (
            ", ".join(f"{seat} (since {since})" for seat, since in standup.party(text))
            or "nobody is tagged in"
        )
    ]
    tasks = standup.open_tasks(text)
    if not tasks:
        return "\n".join([*lines, "Open tasks: none."]) + "\n"
    lines.append("Open tasks by owner:")
    shown = 0
    for owner, owned in tasks.items():
        for task in owned:
            if shown == MAX_TASKS:
                lines.append(f"- … and {sum(map(len, tasks.values())) - MAX_TASKS} more in the file")
                return "\n".join(lines) + "\n"
            lines.append(f"- {owner}: {task.text}" + (f" ({task.date})" if task.date else ""))
            shown += 1
    return "\n".join(lines) + "\n"


def show(project: str, text: str) -> str:
    """`slopd standup PROJECT`: the party line, the latest entry, the open tasks by owner."""
    entries = standup.entries(text)
    parts = [f"# {path(project)}", "", overview(text).rstrip("\n"), ""]
    if entries:
        parts += [
            f"Latest entry (line {entries[0].line + standup.split(text)[0].count(chr(10))}):",
            "",
            entries[0].text.rstrip(),
        ]
    else:
        parts.append("No entry yet.")
    return "\n".join(parts) + "\n"


def as_json(project: str, text: str) -> dict[str, Any]:
    entries = standup.entries(text)
    latest = entries[0] if entries else None
    return {
        "project": project,
        "file": path(project),
        "party_line": [{"seat": seat, "since": since} for seat, since in standup.party(text)],
        "latest": None
        if latest is None
        else {"heading": latest.heading, "date": latest.header.date, "text": latest.text},
        "open_tasks": {
            owner: [_task(task) for task in owned] for owner, owned in standup.open_tasks(text).items()
        },
        "entries": len(entries),
    }


def _task(task: Task) -> dict[str, Any]:
    return {"text": task.text, "date": task.date, "line": task.line}
