"""MEP handoff logs: text in, a frozen `Log` out, and back to the very same text. Pure.

Rules (SPEC §10, the seed's BNF read leniently):
1. `render(parse(text)) == text` for every string: blocks keep their raw text, line endings
   (CRLF, LF, none at the end) included. Nothing is ever normalised on the way through.
2. The log is a preamble — the file header and anything before the first entry, `## `
   headings such as a standup's `## Scope` included — then blocks, each starting at a `## `
   line at column 0 outside a code fence or an HTML comment.
3. A block is an entry when its heading starts like a date (`2026-04-03`, `YYYY-MM-DD`,
   `2026/4/3`) or, after the first entry, when it holds a `### What happened` or `### What's
   pending` section; any other block (`## Media Channel`) is kept verbatim as `Other`.
4. An entry's text ends at its last line that is neither blank nor a `---` rule; those
   trailing lines are its `trailer`, the layout between it and the next block.
5. Headers and Tag-in/Tag-out lines are read by `handoff.header`, list items by `handoff.items`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from slopd.handoff.header import Header, Tags, read_header, read_tags
from slopd.handoff.items import Item, read_item

FILE_HEADER = "# Handoff Log"
_DATE_LIKE = re.compile(r"## +(?:\d{4}\D\d{1,2}\D\d{1,2}|\d{1,2}/\d{1,2}/\d{4}|[Yy]{4}-)")
_FENCE = re.compile(r" {0,3}(```|~~~)")
_RULE = re.compile(r" {0,3}(?:-{3,}|\*{3,}|_{3,})\s*")
SECTION_NAMES = {"happened": "What happened", "pending": "What's pending", "watch": "Watch out for"}


@dataclass(frozen=True, slots=True)
class Section:
    """A `### ` heading and the lines under it, up to the next `### ` heading."""

    line: int
    heading: str
    kind: str | None  # "happened" | "pending" | "watch" | None: a section MEP does not name
    lines: tuple[str, ...]  # without line endings
    items: tuple[Item, ...]

    @property
    def empty(self) -> bool:
        return not any(text.strip() for text in self.lines)


@dataclass(frozen=True, slots=True)
class Entry:
    line: int  # 1-based line number of its `## ` heading in the file
    text: str  # from the heading to its last content line, endings kept
    trailer: str
    heading: str
    header: Header
    tags: Tags | None
    sections: tuple[Section, ...]

    def section(self, kind: str) -> Section | None:
        return next((section for section in self.sections if section.kind == kind), None)

    def tasks(self) -> tuple[Item, ...]:
        pending = self.section("pending")
        return tuple(item for item in pending.items if item.task) if pending else ()


@dataclass(frozen=True, slots=True)
class Other:
    """A `## ` block that is not an entry, kept as it was."""

    line: int
    text: str
    trailer: str
    heading: str


Block = Entry | Other


@dataclass(frozen=True, slots=True)
class Log:
    preamble: str
    blocks: tuple[Block, ...]
    newline: str  # the file's first line ending ("\n" when it has none)

    @property
    def entries(self) -> tuple[Entry, ...]:
        return tuple(block for block in self.blocks if isinstance(block, Entry))

    @property
    def has_file_header(self) -> bool:
        first = self.preamble.lstrip("\ufeff").split("\n", 1)[0].rstrip("\r")
        return re.fullmatch(re.escape(FILE_HEADER) + r"(?:\s.*|[^\w].*)?", first) is not None


def parse(text: str) -> Log:
    lines = text.splitlines(keepends=True)
    starts = _block_starts(lines)
    first = starts[0] if starts else len(lines)
    preamble = "".join(lines[:first])
    ends = [*starts[1:], len(lines)]
    blocks = tuple(_block(lines, start, end) for start, end in zip(starts, ends, strict=False))
    return Log(preamble, blocks, _newline(text))


def render(log: Log) -> str:
    return log.preamble + "".join(block.text + block.trailer for block in log.blocks)


def _newline(text: str) -> str:
    end = text.find("\n")
    return "\r\n" if end > 0 and text[end - 1] == "\r" else "\n"


def _bare(line: str) -> str:
    return line.rstrip("\r\n")


def _structural(lines: list[str]) -> list[bool]:
    """Which lines are outside code fences and HTML comments (rule 2)."""
    marks, fence, comment = [], None, False
    for line in lines:
        bare = _bare(line)
        if comment:
            marks.append(False)
            comment = "-->" not in bare
            continue
        opened = _FENCE.match(bare)
        if fence is not None:
            marks.append(False)
            if opened and opened.group(1) == fence:
                fence = None
            continue
        if opened:
            fence = opened.group(1)
            marks.append(False)
            continue
        if bare.lstrip().startswith("<!--") and "-->" not in bare:
            comment = True
            marks.append(False)
            continue
        marks.append(True)
    return marks


def _block_starts(lines: list[str]) -> list[int]:
    """Rule 3: where entries (and, once entries began, other `## ` blocks) start."""
    marks = _structural(lines)
    headings = [i for i, line in enumerate(lines) if marks[i] and line.startswith("## ")]
    starts: list[int] = []
    for position, index in enumerate(headings):
        if starts:
            starts.append(index)
            continue
        end = headings[position + 1] if position + 1 < len(headings) else len(lines)
        if _DATE_LIKE.match(lines[index]) or _names_a_section(lines[index + 1 : end], marks[index + 1 : end]):
            starts.append(index)
    return starts


def _names_a_section(lines: list[str], marks: list[bool]) -> bool:
    return any(
        mark and _section_kind(_bare(line)) in ("happened", "pending")
        for line, mark in zip(lines, marks, strict=True)
    )


def _section_kind(heading: str) -> str | None:
    if not heading.startswith("### "):
        return None
    title = heading[4:].strip().replace("\u2019", "'")
    for kind, name in SECTION_NAMES.items():
        if title == name or (title.startswith(name) and not title[len(name)].isalnum()):
            return kind
    return None


def _block(lines: list[str], start: int, end: int) -> Block:
    content_end = end
    while content_end > start + 1 and (
        not _bare(lines[content_end - 1]).strip() or _RULE.fullmatch(_bare(lines[content_end - 1]))
    ):
        content_end -= 1
    body = lines[start:content_end]
    text, trailer, heading = "".join(body), "".join(lines[content_end:end]), _bare(lines[start])
    marks = _structural(body)
    if not _DATE_LIKE.match(lines[start]) and not _names_a_section(body[1:], marks[1:]):
        return Other(start + 1, text, trailer, heading)
    return Entry(
        line=start + 1,
        text=text,
        trailer=trailer,
        heading=heading,
        header=read_header(heading),
        tags=_tags(body, start),
        sections=_sections(body, marks, start),
    )


def _tags(body: list[str], start: int) -> Tags | None:
    for offset, line in enumerate(body[1:], start=1):
        bare = _bare(line)
        if bare.startswith("###"):
            return None
        if bare.strip():
            return read_tags(bare, start + offset + 1)
    return None


def _sections(body: list[str], marks: list[bool], start: int) -> tuple[Section, ...]:
    found: list[Section] = []
    heading_at = [i for i, line in enumerate(body) if marks[i] and line.startswith("### ")]
    for position, index in enumerate(heading_at):
        end = heading_at[position + 1] if position + 1 < len(heading_at) else len(body)
        heading = _bare(body[index])
        content = tuple(_bare(line) for line in body[index + 1 : end])
        items = tuple(
            item
            for offset, text in enumerate(content)
            if marks[index + 1 + offset] and (item := read_item(text, start + index + offset + 2)) is not None
        )
        found.append(Section(start + index + 1, heading, _section_kind(heading), content, items))
    return tuple(found)
