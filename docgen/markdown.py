"""Small Markdown helpers the references share: table cells, code spans, TOML-ish values."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence


def cell(text: str) -> str:
    """`text` as one table cell: on one line, its pipes escaped."""
    return " ".join(text.split()).replace("|", "\\|")


def code(text: str) -> str:
    """`text` as a code span (a longer fence when it holds backticks)."""
    fence = "``" if "`" in text else "`"
    pad = " " if fence == "``" else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    """A Markdown table; cells are taken as written (use `cell` for prose)."""
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def first_sentence(text: str) -> str:
    """The first sentence of `text`, on one line (a full stop followed by a space ends it)."""
    flat = " ".join(text.split())
    return re.split(r"(?<=[.!?])\s", flat, maxsplit=1)[0]


def value(data: object) -> str:
    """A default as TOML or JSON writes it: `true`, `30`, `0.3`, `"slop"`, `["a", "b"]`."""
    if isinstance(data, float) and data.is_integer():
        return str(int(data))
    if isinstance(data, tuple):
        data = list(data)
    return json.dumps(data, ensure_ascii=False, default=str)


def anchor(text: str) -> str:
    """The id MkDocs gives a heading (`toc`'s default slugify), for links within a page."""
    slug = re.sub(r"[^\w\s-]", "", text.lower()).strip()
    return re.sub(r"[-\s]+", "-", slug)
