"""The lines of a handoff log, and which of them are structure. Pure.

Rules (SPEC §10):
1. Lines end at LF, CRLF or a lone CR — Markdown's line endings, and the ones MEP's checker
   reads (universal newlines); a form feed, NEL or U+2028 is a character of its line.
2. A line inside a code fence (```` ``` ````, `~~~`, up to three spaces in, closed by the same
   marker) or an HTML comment (from a line starting `<!--` to the line holding `-->`) is not
   structure: no heading, section or item starts there.
"""

from __future__ import annotations

import re
from itertools import accumulate

_BREAK = re.compile(r"(\r\n|\r|\n)")
_FENCE = re.compile(r" {0,3}(```|~~~)")


def split(text: str) -> tuple[list[str], list[int]]:
    """The lines as Markdown has them — broken at LF, CRLF or a lone CR only (`str.splitlines`
    breaks at `\x0c`, `\x85`, `\u2028` … too) — without their endings, and where each starts
    in `text` (one more offset at the end: the text's length)."""
    if "\r" not in text:
        parts = text.split("\n")
        if not parts[-1]:
            parts.pop()
        offsets = [0, *accumulate(len(part) + 1 for part in parts)]
        offsets[-1] = min(offsets[-1], len(text))
        return parts, offsets
    pieces = _BREAK.split(text)  # line, ending, line, ending, …, last line
    lines = pieces[0::2]
    widths = [len(line) + len(ending) for line, ending in zip(lines, [*pieces[1::2], ""], strict=True)]
    if not lines[-1]:
        lines.pop()
        widths.pop()
    return lines, [0, *accumulate(widths)]


def newline(text: str) -> str:
    """The text's first line ending (LF when it has none): the one new text written into it takes."""
    found = _BREAK.search(text)
    return found.group(1) if found else "\n"


def with_lf(text: str) -> str:
    """`text` with every line ending written LF."""
    return text if "\r" not in text else _BREAK.sub("\n", text)


def _structural(bare: list[str]) -> list[bool]:
    """Which lines are outside code fences and HTML comments (rule 2)."""
    marks, fence, comment = [], None, False
    for line in bare:
        if comment:
            marks.append(False)
            comment = "-->" not in line
            continue
        opened = _FENCE.match(line) if line[:1] in " `~" else None
        if fence is not None:
            marks.append(False)
            if opened and opened.group(1) == fence:
                fence = None
            continue
        if opened:
            fence = opened.group(1)
            marks.append(False)
            continue
        if "<!--" in line and line.lstrip().startswith("<!--") and "-->" not in line:
            comment = True
            marks.append(False)
            continue
        marks.append(True)
    return marks


def marks(text: str, bare: list[str]) -> list[bool]:
    if "```" not in text and "~~~" not in text and "<!--" not in text:
        return [True] * len(bare)  # the usual log: nothing to hide
    return _structural(bare)
