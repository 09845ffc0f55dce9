"""MEP handoff logs: text in, a frozen `Log` out, and back to the very same text. Pure.

Rules (SPEC §10, the seed's BNF read leniently):
1. `render(parse(text)) == text` for every string: blocks keep their raw text, line endings
   (CRLF, LF, CR alone, none at the end) included. Nothing is ever normalised on the way through.
2. The log is a preamble — the file header and anything before the first entry, `## `
   headings such as a standup's `## Scope` included — then blocks, each starting at a `##`
   line at column 0 (then a space or a tab) outside a code fence or an HTML comment (the
   lines and which of them are structure: `handoff.lines`).
3. A block is an entry when its heading starts like a date (`2026-04-03`, `YYYY-MM-DD`,
   `2026/4/3`) or, after the first entry, when it holds a `### What happened` or `### What's
   pending` section; any other block (`## Media Channel`) is kept verbatim as `Other`.
4. An entry's text ends at its last line that is neither blank nor a `---` rule; those
   trailing lines are its `trailer`, the layout between it and the next block.
5. Headers and Tag-in/Tag-out lines are read by `handoff.header`, sections (and their list
   items) by `handoff.sections`; an entry's sections are read when first asked for.
6. The file header is there when the text, leading whitespace and a BOM aside, begins with
   `# Handoff Log` — MEP's checker's own test. A standup file (`# Standing Standup — …`) is a
   preamble for humans, then its log from the `# Handoff Log` line on (`split_standup`).
"""

from __future__ import annotations

import gc
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property

from slopd.handoff import lines
from slopd.handoff.header import MEP_HEADING, Header, Tags, mep_tag_out, read_header, read_tags
from slopd.handoff.items import Item
from slopd.handoff.sections import SECTION_HEADING, Section, read_sections, section_kind

FILE_HEADER = "# Handoff Log"
STANDUP_HEADER = "# Standing Standup"
_DATE_LIKE = re.compile(r"##\s+(?:\d{4}\D\d{1,2}\D\d{1,2}|\d{1,2}/\d{1,2}/\d{4}|[Yy]{4}-)")
_LOG_LINE = re.compile(r"(?<![^\r\n])" + re.escape(FILE_HEADER) + r"[ \t]*(?![^\r\n])")
_RULE = re.compile(r" {0,3}(?:-{3,}|\*{3,}|_{3,})\s*")


@dataclass(frozen=True)
class Entry:
    """An entry; its sections are read when first asked for (a merge needs only the header)."""

    line: int  # 1-based line number of its `## ` heading in the file
    text: str  # from the heading to its last content line, endings kept
    trailer: str
    heading: str
    header: Header
    tags: Tags | None
    _body: tuple[str, ...] = field(repr=False, compare=False)  # its lines, without endings
    _marks: tuple[bool, ...] = field(repr=False, compare=False)  # outside fences and comments

    @cached_property
    def sections(self) -> tuple[Section, ...]:
        return read_sections(self._body, self._marks, self.line - 1)

    def section(self, kind: str) -> Section | None:
        """The first section of `kind` ("happened", "pending", "watch")."""
        return self._kinds.get(kind)

    @cached_property
    def _kinds(self) -> dict[str, Section]:
        found: dict[str, Section] = {}
        for section in self.sections:
            if section.kind is not None:
                found.setdefault(section.kind, section)
        return found

    def tasks(self) -> tuple[Item, ...]:
        pending = self.section("pending")
        return tuple(item for item in pending.items if item.task) if pending else ()

    @cached_property
    def tag_out(self) -> str | None:
        """The Tag-out the entry is ordered by (`header` rule 4)."""
        text = lines.with_lf(self.text)
        found = mep_tag_out(text) if "**" in text else None
        return found if found is not None else (self.tags.tag_out if self.tags else None)


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
    hidden: tuple[int, ...] = ()  # lines in a code fence or comment that MEP's checker reads as entries

    @property
    def entries(self) -> tuple[Entry, ...]:
        return tuple(block for block in self.blocks if isinstance(block, Entry))

    @property
    def has_file_header(self) -> bool:
        """Rule 6."""
        return self.preamble.removeprefix("\ufeff").lstrip().startswith(FILE_HEADER)


def split_standup(text: str) -> tuple[str, str] | None:
    """Rule 6: a standup file's (preamble, log from its `# Handoff Log` line; "" when it has
    none), or None when `text` is not a standup file."""
    if not text.removeprefix("\ufeff").lstrip().startswith(STANDUP_HEADER):
        return None
    start = log_start(text)
    return (text, "") if start is None else (text[:start], text[start:])


def log_start(text: str) -> int | None:
    """Where the first `# Handoff Log` line (nothing after it but spaces) begins, if any."""
    found = _LOG_LINE.search(text)
    return None if found is None else found.start()


def parse(text: str) -> Log:
    with collector_paused():
        return _parse(text)


@contextmanager
def collector_paused() -> Iterator[None]:
    """Parsing makes many small objects and no cycles: the cyclic collector's passes over a
    growing heap would cost a fifth of a long log's parse, for nothing."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _parse(text: str) -> Log:
    bare, offsets = lines.split(text)
    marks = lines.marks(text, bare)
    starts = _block_starts(bare, marks)
    preamble = text[: offsets[starts[0] if starts else len(bare)]]
    ends = [*starts[1:], len(bare)]
    blocks = tuple(
        _block(text, offsets, bare, marks, start, end) for start, end in zip(starts, ends, strict=False)
    )
    hidden = (
        ()
        if all(marks)
        else tuple(i + 1 for i, line in enumerate(bare) if not marks[i] and MEP_HEADING.match(line))
    )
    return Log(preamble, blocks, lines.newline(text), hidden)


def render(log: Log) -> str:
    return log.preamble + "".join(block.text + block.trailer for block in log.blocks)


def _block_starts(bare: list[str], marks: list[bool]) -> list[int]:
    """Rule 3: where entries (and, once entries began, other `## ` blocks) start."""
    headings = [
        i for i, line in enumerate(bare) if line.startswith("##") and line[2:3].isspace() and marks[i]
    ]
    for position, index in enumerate(headings):
        end = headings[position + 1] if position + 1 < len(headings) else len(bare)
        if _DATE_LIKE.match(bare[index]) or _names_a_section(bare, marks, index + 1, end):
            return headings[position:]
    return []


def _names_a_section(bare: list[str], marks: list[bool], start: int, end: int) -> bool:
    return any(
        "### " in bare[i] and marks[i] and section_kind(bare[i]) in ("happened", "pending")
        for i in range(start, end)
    )


def _block(text: str, offsets: list[int], bare: list[str], marks: list[bool], start: int, end: int) -> Block:
    content_end = end
    while content_end > start + 1 and (
        not bare[content_end - 1].strip() or _RULE.fullmatch(bare[content_end - 1])
    ):
        content_end -= 1
    body, trailer = text[offsets[start] : offsets[content_end]], text[offsets[content_end] : offsets[end]]
    heading = bare[start]
    if not _DATE_LIKE.match(heading) and not _names_a_section(bare, marks, start + 1, content_end):
        return Other(start + 1, body, trailer, heading)
    return Entry(
        line=start + 1,
        text=body,
        trailer=trailer,
        heading=heading,
        header=read_header(heading),
        tags=_tags(bare, marks, start, content_end),
        _body=tuple(bare[start:content_end]),
        _marks=tuple(marks[start:content_end]),
    )


def _tags(bare: list[str], marks: list[bool], start: int, end: int) -> Tags | None:
    """`header` rule 3: the first line of the header block that starts like a Tag line."""
    for index in range(start + 1, end):
        line = bare[index]
        if marks[index] and line.startswith(SECTION_HEADING):
            return None
        if marks[index] and (tags := read_tags(line, index + 1)) is not None:
            return tags
    return None
