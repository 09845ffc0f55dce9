"""The built-in discuss-mode summary: deterministic, no model involved.

A summary is the title (the first Markdown heading, else the first line), the first two
sentences of the first paragraph of prose, and the MEP "What's pending" items when the body
has such a section.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from slopd.core.envelope import Envelope

_HEADING = re.compile(r"#{1,6}\s+(.*)")
_PENDING = re.compile(r"#{1,6}\s+what[’']?s pending\s*", re.IGNORECASE)
_ITEM = re.compile(r"\s*[-*+]\s+(?:\[[ xX]\]\s+)?(.*)")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_PARAGRAPH_BREAK = re.compile(r"\n\s*\n")
MAX_SENTENCES_CHARS = 600
MAX_PENDING_ITEMS = 20


def title(body: str) -> str:
    """The first heading's text, else the first non-empty line, else an empty string."""
    first = ""
    for raw in body.splitlines():
        line = raw.strip()
        heading = _HEADING.fullmatch(line)
        if heading:
            return heading.group(1).strip()
        first = first or line
    return first


def first_sentences(body: str, count: int = 2) -> str:
    """The first `count` sentences of the first paragraph that is prose (not a heading or list)."""
    for paragraph in _PARAGRAPH_BREAK.split(body):
        lines = [line.strip() for line in paragraph.splitlines() if line.strip()]
        prose = [line for line in lines if not _HEADING.fullmatch(line) and not _ITEM.fullmatch(line)]
        if prose:
            sentences = _SENTENCE_END.split(" ".join(prose))
            text = " ".join(sentences[:count])
            return text if len(text) <= MAX_SENTENCES_CHARS else text[: MAX_SENTENCES_CHARS - 1] + "…"
    return ""


def pending_items(body: str) -> list[str]:
    """The items listed under every `### What's pending` heading, in order."""
    items: list[str] = []
    inside = False
    for line in body.splitlines():
        stripped = line.strip()
        if _HEADING.fullmatch(stripped):
            inside = _PENDING.fullmatch(stripped) is not None
            continue
        item = _ITEM.fullmatch(line) if inside else None
        if item and item.group(1).strip():
            items.append(item.group(1).strip())
    return items[:MAX_PENDING_ITEMS]


def summarize(envelope: Envelope) -> str:
    """The Markdown body of a discuss-mode `result`."""
    parts = [f"Summary of {envelope.type} `{envelope.id}` from {envelope.sender}."]
    heading = title(envelope.body)
    if heading:
        parts.append(f"**{heading}**")
    sentences = first_sentences(envelope.body)
    if sentences and sentences != heading:
        parts.append(sentences)
    pending = pending_items(envelope.body)
    if pending:
        parts.append("What's pending:\n" + "\n".join(f"- [ ] {item}" for item in pending))
    if len(parts) == 1:
        parts.append("(The message has no body.)")
    return "\n\n".join(parts) + "\n"
