"""Notes (SLOP §9): advisory breadcrumbs for the next agent, indexed newest first."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from slopd.core import summary

if TYPE_CHECKING:
    from slopd.core.envelope import Envelope


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


def render_index(notes: list[Note]) -> str:
    """`notes/INDEX.md`: every note, newest first (the order `notes` is given in)."""
    parts = [
        "# Notes\n\nEvery `type: note` this hub has received, newest first. "
        "Written by slopd; edits here are overwritten.\n"
    ]
    for note in notes:
        body = note.body.strip() or "(empty)"
        parts.append(f"## {note.created_at} — {note.sender} — `{note.id}`\n\n{body}\n")
    return "\n".join(parts)
