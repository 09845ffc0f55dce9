"""Writing entries: a new entry from its parts, and putting one into a log in its place. Pure.

Rules (SPEC §10):
1. `entry` builds `## DATE — CONTEXT` (v1) or `## DATE — AGENT | PLATFORM | TYPE` plus the
   Tag line (v2), then the three sections in order; a pending item becomes `- [ ] text`
   unless it is already a task. Sections given as Markdown are used as written.
2. `insert` puts an entry where newest-first wants it — on top, unless the log holds newer
   entries — with the log's own line endings and separator; a missing log is begun with the
   file header.
3. `accepts` is the gate of `slopd handoff new` and the standups: the entry itself lints
   clean (warnings included) and the log gains no error by taking it.
"""

from __future__ import annotations

from dataclasses import dataclass

from slopd.handoff import clock
from slopd.handoff.grammar import FILE_HEADER, Entry, Log, parse
from slopd.handoff.lines import with_lf
from slopd.handoff.lint import ERROR, Finding, lint_log
from slopd.handoff.merge import key

NEW_LOG = f"{FILE_HEADER}\n\nSession handoffs, newest entry first.\n\n---\n\n"
_SEPARATOR = "\n---\n\n"


@dataclass(frozen=True, slots=True)
class Parts:
    date: str
    agent: str
    context: str | None = None  # v1 `machine (branch)`; None: v2
    platform: str | None = None
    session_type: str | None = None
    tag_in: str | None = None
    tag_out: str | None = None
    happened: tuple[str, ...] = ()
    pending: tuple[str, ...] = ()
    watch: tuple[str, ...] = ()
    sections: str | None = None  # the three sections as Markdown, instead of the lists


def entry(parts: Parts) -> str:
    if parts.context is not None:
        heading = f"## {parts.date} — {parts.context}"
    else:
        heading = f"## {parts.date} — {parts.agent} | {parts.platform or ''} | {parts.session_type or ''}"
    lines = [heading]
    if parts.tag_in is not None or parts.tag_out is not None:
        lines.append(f"**Tag-in:** {parts.tag_in or ''} | **Tag-out:** {parts.tag_out or ''}")
    if parts.sections is not None:
        return "\n".join(lines) + "\n\n" + parts.sections.strip("\n") + "\n"
    lines += ["", "### What happened", *(f"- {text}" for text in parts.happened)]
    lines += ["", "### What's pending", *(_task(text) for text in parts.pending)]
    if parts.watch:
        lines += ["", "### Watch out for", *(f"- {text}" for text in parts.watch)]
    return "\n".join(lines) + "\n"


def _task(text: str) -> str:
    stripped = text.strip()
    if stripped.startswith(("[ ] ", "[x] ", "[X] ")):
        return f"- {stripped}"
    return f"- [ ] {stripped}"


def insert(log_text: str | None, entry_text: str) -> str:
    """Rule 2."""
    text = log_text or NEW_LOG
    log = parse(text)
    newline = log.newline if log_text else "\n"
    new_text = with_lf(entry_text).replace("\n", newline)
    fresh = parse(f"{FILE_HEADER}{newline}{newline}" + new_text).entries
    if not fresh:
        return text + new_text
    position = _place(log, fresh[0])
    separator = _separator(log, newline)
    above = [block.text + block.trailer for block in log.blocks[:position]]
    if above and not log.blocks[position - 1].trailer:  # the file's last block: nothing after it
        last = log.blocks[position - 1].text
        above[-1] = (last if last.endswith(("\n", "\r")) else last + newline) + separator
    head = log.preamble + "".join(above)
    if not head.endswith(("\n", "\r")):
        head += newline
    if not with_lf(head[-4:]).endswith("\n\n"):
        head += newline  # a blank line above the heading
    tail = "".join(block.text + block.trailer for block in log.blocks[position:])
    return head + new_text + (separator if tail else "") + tail


def _separator(log: Log, newline: str) -> str:
    trailers = [block.trailer for block in log.blocks[:-1] if block.trailer]
    return trailers[0] if trailers else _SEPARATOR.replace("\n", newline)


def _place(log: Log, new: Entry) -> int:
    """The index of the first block the new entry goes above: below every newer entry and every
    later session of its date (lint compares a Tag-out with all of them), else as high as it can."""
    day = new.header.day
    if day is None or not log.entries:
        return 0
    dated = [(i, b, b.header.day) for i, b in enumerate(log.blocks) if isinstance(b, Entry) and b.header.day]
    moment = clock.instant(new.tag_out)
    floor = -1
    if moment is not None:
        for index, block, other_day in dated:
            other = clock.instant(block.tag_out) if other_day == day else None
            if other is not None and other > moment:
                floor = index
    return next(
        (index for index, _, other_day in dated if index > floor and other_day <= day), len(log.blocks)
    )


def accepts(log_text: str | None, entry_text: str) -> tuple[str, list[Finding]]:
    """Rule 3: the new log text, and what stands in the way of it (nothing: accepted)."""
    lone = parse(f"{FILE_HEADER}\n\n" + with_lf(entry_text))
    problems = [Finding(f.line - 2, f.rule, f.message, f.fix) for f in lint_log(lone)]
    if len(lone.blocks) != 1 or not lone.entries:
        count = len(lone.blocks)
        problems.append(
            Finding(
                1,
                "MEP4",
                f"the text holds {count} '## ' blocks, not one entry",
                "send one entry: one '## YYYY-MM-DD — …' heading and its sections",
            )
        )
    if lone.preamble.strip() != FILE_HEADER:
        problems.append(
            Finding(
                1,
                "MEP4",
                "the entry does not begin with its '## YYYY-MM-DD — …' heading",
                "put the heading on the first line",
            )
        )
    result = insert(log_text, entry_text)
    before = sum(1 for f in lint_log(parse(log_text)) if f.severity == ERROR) if log_text else 0
    after = [f for f in lint_log(parse(result)) if f.severity == ERROR]
    if not problems and len(after) > before:
        problems += after
    return result, problems


def present(log_text: str, entry_text: str) -> bool:
    """Whether the log already holds this very entry (a redone write adds nothing)."""
    fresh = parse(f"{FILE_HEADER}\n\n" + entry_text).entries
    return bool(fresh) and any(key(block) == key(fresh[0]) for block in parse(log_text).blocks)
