"""Notes (SLOP §9): advisory breadcrumbs for the next agent, indexed newest first. Pure.

Rules (SPEC §2, §13):
1. A note is its envelope's id, sender, `created_at` (the time slopd first saw it when absent),
   title and text (the body). Newest first means by `created_at`, then by indexing order.
2. The hub's files are a paged index, so that indexing a note costs the same with 10 notes as
   with 10,000: `notes/INDEX.md`, the digest agents read first, holds the `INDEX_NOTES` newest
   notes, newest first; and every note is on a page, `notes/page-NNNN.md`, `PAGE_NOTES` to a
   page in the order slopd indexed them (page 1 holds the first), each page newest first.
   Indexing a note rewrites INDEX.md and that note's page only: two bounded files.
3. In those files each note's text is bounded to `FILE_CHARS`; a longer one is cut there and
   says how long it is and how to read it whole.
4. Reading notes (`slopd notes`, the MCP tool `slop_notes`) is paged: `limit` notes from
   `offset`, newest first, each with its text bounded to `max_chars` (`clip`), its whole length
   and whether it was cut, and the page with `total` and `next_offset` (`page`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from slopd.core import summary

if TYPE_CHECKING:
    from slopd.core.envelope import Envelope

INDEX = "INDEX.md"
INDEX_NOTES = 50
PAGE_NOTES = 100
FILE_CHARS = 4000
READ_LIMIT = 20  # notes per read, by default
READ_CHARS = 4000  # characters of each note's text per read, by default


@dataclass(frozen=True, slots=True)
class Note:
    id: str
    sender: str
    created_at: str
    title: str
    body: str


def from_envelope(envelope: Envelope, *, seen_at: str) -> Note:
    """The note of `envelope`; without a `created_at`, the time slopd first saw it stands in."""
    return Note(
        id=envelope.id,
        sender=envelope.sender,
        created_at=envelope.created_at or seen_at,
        title=summary.title(envelope.body) or envelope.id,
        body=envelope.body,
    )


def clip(text: str, max_chars: int | None) -> tuple[str, bool]:
    """Rule 4: the first `max_chars` characters of `text` (None: all), and whether any were cut."""
    if max_chars is None:
        return text, False
    return text[:max_chars], len(text) > max_chars


def page(found: list[Note], total: int, offset: int, max_chars: int | None) -> dict[str, Any]:
    """Rule 4: one page of notes as `slop_notes` and `slopd notes --json` answer it."""
    listed = []
    for note in found:
        text, cut = clip(note.body, max_chars)
        listed.append(
            {
                "id": note.id,
                "from": note.sender,
                "created_at": note.created_at,
                "title": note.title,
                "text": text,
                "total_chars": len(note.body),
                "truncated": cut,
            }
        )
    end = offset + len(found)
    return {"notes": listed, "total": total, "offset": offset, "next_offset": end if end < total else None}


def page_of(seq: int) -> int:
    """The page of the `seq`-th note indexed (1-based)."""
    return (seq - 1) // PAGE_NOTES + 1


def page_span(number: int) -> tuple[int, int]:
    """The first and last `seq` page `number` holds."""
    return (number - 1) * PAGE_NOTES + 1, number * PAGE_NOTES


def page_name(number: int) -> str:
    return f"page-{number:04d}.md"


def _entry(note: Note) -> str:
    text = note.body.strip() or "(empty)"
    shown, cut = clip(text, FILE_CHARS)
    if cut:
        shown += (
            f"\n\n(… cut at {FILE_CHARS:,} of {len(text):,} characters: "
            f"`slopd notes --search {note.id} --max-chars 0` shows it whole)"
        )
    return f"## {note.created_at} — {note.sender} — `{note.id}`\n\n{shown}\n"


def render_index(newest: list[Note], total: int) -> str:
    """Rule 2: `notes/INDEX.md`, from the newest notes (newest first) and how many there are."""
    if total <= len(newest):
        said = f"Every `type: note` this hub has received ({total}), newest first."
    else:
        said = f"The {len(newest)} newest of the {total:,} `type: note`s this hub has received, newest first."
    pages = page_of(total) if total else 1
    where = f"`{page_name(1)}`" if pages == 1 else f"`{page_name(1)}` (the first) to `{page_name(pages)}`"
    head = (
        f"# Notes\n\n{said} Every note is also on a page of {PAGE_NOTES}, in the order slopd indexed "
        f"them: {where}. `slopd notes --search WORD` (or the MCP tool `slop_notes`) searches their "
        "text. Written by slopd; edits here are overwritten.\n"
    )
    return "\n".join([head, *(_entry(note) for note in newest)])


def render_page(number: int, notes: list[Note]) -> str:
    """Rule 2: one page, its notes newest first."""
    first, last = page_span(number)
    older = f"`{page_name(number - 1)}` holds older ones; " if number > 1 else ""
    head = (
        f"# Notes, page {number}\n\n"
        f"Notes {first:,} to {last:,} in the order slopd indexed them, newest first. "
        f"{older}`{page_name(number + 1)}` newer ones, once there are; `{INDEX}` the newest. "
        "Written by slopd; edits here are overwritten.\n"
    )
    return "\n".join([head, *(_entry(note) for note in notes)])
