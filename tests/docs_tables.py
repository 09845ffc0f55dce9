"""Tables in `docs/` and the README that are generated from the code, and the tool that rewrites them.

Each table sits in its page between `<!-- generated: NAME -->` and `<!-- end generated -->`;
`tests/test_docs_tables.py` fails when a page's table differs from what the code makes now, and
`python -m tests.docs_tables` rewrites them.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio

from slopd.core import admission
from slopd.core.admission import Examined, Refusal, Refused
from slopd.transport.mcp.server import build
from slopd.transport.problems import TITLES
from slopd.transport.server.intake import refusal as http_refusal
from tests.conftest import envelope_text

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
_BLOCK = re.compile(
    r"(<!-- generated: (?P<name>[^>]+?) -->\n)(?P<body>.*?)(<!-- end generated -->)", re.DOTALL
)

_FOLDER = {
    Refusal.INVALID: "`error` reply listing every reason; archived",
    Refusal.WRONG_SEAT: "— (a file has no seat)",
    Refusal.CONFLICT: "`error` reply; archived; nothing runs",
    Refusal.ACTION: "`error` reply; archived",
}
_MCP = {
    Refusal.INVALID: "tool error listing every reason",
    Refusal.WRONG_SEAT: "— (the seat is fixed: no tool takes `from`)",
    Refusal.CONFLICT: "tool error",
    Refusal.ACTION: "tool error (`action` is no `slop_send` argument)",
}


def _sample(refusal: Refusal) -> Refused:
    """A real refusal of each kind, made by the code itself."""

    def examined(**fields: str) -> Examined:
        found = admission.examine(
            envelope_text(id="ID", **fields).encode(), name="x.md", lane="inbox", max_bytes=1 << 20
        )
        assert isinstance(found, Examined)
        return found

    made: object
    match refusal:
        case Refusal.INVALID:
            made = admission.examine(
                envelope_text(to="bad to!").encode(), name="x.md", lane="inbox", max_bytes=1 << 20
            )
        case Refusal.WRONG_SEAT:
            made = admission.examine(
                envelope_text(from_="bob").encode(),
                name="x.md",
                lane="inbox",
                max_bytes=1 << 20,
                seat="alice",
            )
        case Refusal.CONFLICT:
            made = admission.judge(examined(), "0" * 64)
        case Refusal.ACTION:
            made = admission.judge(examined(type="instigate", action="deploy"), None)
    assert isinstance(made, Refused), made
    return made


def _schema_type(schema: dict[str, Any]) -> str:
    if "enum" in schema:
        return " \\| ".join(f"`{value}`" for value in schema["enum"])
    if "anyOf" in schema:
        return " \\| ".join(
            _schema_type(option) for option in schema["anyOf"] if option.get("type") != "null"
        )
    kind = schema.get("type", "any")
    bounds = [f"≥ {schema['minimum']:g}" for _ in [0] if "minimum" in schema]
    bounds += [f"≤ {schema['maximum']:g}" for _ in [0] if "maximum" in schema]
    return str(kind) + (f" ({', '.join(bounds)})" if bounds else "")


def mcp_tools() -> str:
    """Every MCP tool with its arguments (required first, `?` optional, with its default), from
    the schemas the server lists."""

    def no_seat(_context: object) -> Any:
        raise AssertionError("listing tools needs no seat")

    tools = anyio.run(build(no_seat, lambda: "").list_tools)
    rows = ["| tool | arguments | does |", "|---|---|---|"]
    for tool in tools:
        schema = tool.input_schema
        required = set(schema.get("required", []))
        arguments = []
        for name, prop in schema.get("properties", {}).items():
            optional = "" if name in required else f"? = `{json.dumps(prop.get('default'))}`"
            arguments.append(f"`{name}`{optional}: {_schema_type(prop)}")
        does = " ".join((tool.description or "").split()).split(". ")[0].rstrip(".")
        rows.append(f"| `{tool.name}` | {'<br>'.join(arguments) or '—'} | {does}. |")
    return "\n".join(rows) + "\n"


def admission_refusals() -> str:
    rows = ["| refusal | reason (an example) | folder | HTTP | MCP |", "|---|---|---|---|---|"]
    for refusal in Refusal:
        sample = _sample(refusal)
        problem = http_refusal(sample)
        status = TITLES[problem.kind][0]
        reason = sample.reasons[0].replace(sample.sha256, "SHA256")
        rows.append(
            f"| `{refusal}` | `{reason}` | {_FOLDER[refusal]} | {status} `{problem.kind}` | {_MCP[refusal]} |"
        )
    return "\n".join(rows) + "\n"


TABLES: dict[str, tuple[str, Callable[[], str]]] = {  # name: (page, relative to the repository)
    "admission refusals": ("docs/admission.md", admission_refusals),
    "mcp tools": ("README.md", mcp_tools),
}


def rendered(page: str) -> str:
    """`page` (a path in the repository) with every generated table made anew."""
    text = (ROOT / page).read_text(encoding="utf-8")

    def fill(match: re.Match[str]) -> str:
        name = match["name"]
        return match[1] + TABLES[name][1]() + match[4]

    return _BLOCK.sub(fill, text)


def pages() -> list[str]:
    return sorted({page for page, _ in TABLES.values()})


if __name__ == "__main__":
    for page in pages():
        (ROOT / page).write_text(rendered(page), encoding="utf-8")
        print(page, file=sys.stderr)
