"""An entry's sections: its `### ` headings, which of them MEP names, and their list items. Pure.

Rules (SPEC §10):
1. A section starts at a `### ` heading (up to three spaces of indent); it is one MEP names
   when its title begins with the name, written exactly (a curly apostrophe allowed).
2. A section's list items are read by `handoff.items`, when first asked for.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from slopd.handoff.items import Item, read_item

SECTION_HEADING = ("### ", " ### ", "  ### ", "   ### ")  # rule 1: a `### ` heading, up to three spaces in
SECTION_NAMES = {"happened": "What happened", "pending": "What's pending", "watch": "Watch out for"}
_ITEM_START = frozenset("-*+ \t0123456789")


@dataclass(frozen=True)
class Section:
    """A `### ` heading and the lines under it, up to the next `### ` heading; its list items
    are read when first asked for."""

    line: int
    heading: str
    kind: str | None  # "happened" | "pending" | "watch" | None: a section MEP does not name
    lines: tuple[str, ...]  # without line endings
    _marks: tuple[bool, ...] = field(repr=False, compare=False)  # of `lines`: outside fences, comments

    @cached_property
    def items(self) -> tuple[Item, ...]:
        first = self.line + 1
        return tuple(
            item
            for offset, text in enumerate(self.lines)
            if self._marks[offset] and text[:1] in _ITEM_START and (item := read_item(text, first + offset))
        )

    @property
    def empty(self) -> bool:
        return not any(text.strip() for text in self.lines)


def section_kind(heading: str) -> str | None:
    """Rule 1."""
    if not heading.startswith(SECTION_HEADING):
        return None
    title = heading.lstrip(" ")[4:].replace("\u2019", "'")
    for kind, name in SECTION_NAMES.items():
        if title.startswith(name):
            return kind
    return None


def read_sections(body: tuple[str, ...], marks: tuple[bool, ...], start: int) -> tuple[Section, ...]:
    """The sections of an entry whose heading is line `start` (0-based) of the file."""
    found: list[Section] = []
    heading_at = [i for i in range(1, len(body)) if marks[i] and body[i].startswith(SECTION_HEADING)]
    for position, index in enumerate(heading_at):
        stop = heading_at[position + 1] if position + 1 < len(heading_at) else len(body)
        heading = body[index]
        kind = section_kind(heading)
        found.append(
            Section(start + index + 1, heading, kind, body[index + 1 : stop], marks[index + 1 : stop])
        )
    return tuple(found)
