"""Which generated part goes on which page, and the rewriting of a page's generated parts.

A page holds each of its parts between `<!-- generated: NAME -->` and `<!-- end generated -->`
(the package's rule 1); `rendered` gives the page with every part made anew, and `stale` lists
the pages that differ from it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from docgen import admission, cli, config, events, http, mcp, modules

ROOT = Path(__file__).resolve().parent.parent
REGENERATE = "make docs-refs"  # the one command that rewrites them (python -m docgen)
BLOCKS: dict[str, tuple[str, Callable[[], str]]] = {  # name: (page, relative to the repository; maker)
    "admission refusals": ("docs/admission.md", admission.refusals),
    "cli": ("docs/reference/cli.md", cli.reference),
    "config": ("docs/reference/config.md", config.reference),
    "mcp tools": ("docs/reference/mcp.md", mcp.tools_table),
    "mcp": ("docs/reference/mcp.md", mcp.reference),
    "readme mcp tools": ("README.md", mcp.signatures),
    "http endpoints": ("docs/reference/http.md", http.endpoints),
    "http": ("docs/reference/http.md", http.reference),
    "log events": ("docs/reference/log-events.md", events.reference),
    "contracts": ("docs/design.md", modules.contract_list),
    "module map": ("docs/design.md", modules.module_map),
}
_BLOCK = re.compile(
    r"(<!-- generated: (?P<name>[^>]+?) -->\n)(?P<body>.*?)(<!-- end generated -->)", re.DOTALL
)


class PageError(Exception):
    """A page and `BLOCKS` disagree: a part is missing from its page, or a page names an unknown part."""


def pages() -> list[str]:
    return sorted({page for page, _ in BLOCKS.values()})


def rendered(page: str) -> str:
    """`page` with every generated part made anew from the code."""
    text = (ROOT / page).read_text(encoding="utf-8")
    names = [match["name"] for match in _BLOCK.finditer(text)]
    expected = [name for name, (where, _) in BLOCKS.items() if where == page]
    if sorted(names) != sorted(expected):
        raise PageError(f"{page} holds the generated parts {names}; BLOCKS puts {expected} there")

    def fill(match: re.Match[str]) -> str:
        return match[1] + "\n" + BLOCKS[match["name"]][1]().strip("\n") + "\n\n" + match[4]

    return _BLOCK.sub(fill, text)


def stale() -> list[str]:
    """The pages whose generated parts are not what the code makes now."""
    return [page for page in pages() if (ROOT / page).read_text(encoding="utf-8") != rendered(page)]


def write() -> list[str]:
    """Rewrite every page whose parts are stale; return those pages."""
    changed = stale()
    for page in changed:
        (ROOT / page).write_text(rendered(page), encoding="utf-8")
    return changed
