"""The log reference: every event name slopd logs, collected from the log calls in `slopd/`.

A log call is `LOGGER.LEVEL("noun.verbed", field=…)`: LEVEL a level of `slopd.shell.log.Logger`,
its first argument an event name (lower-case words joined by dots). Rules:
1. The event is the call's first argument, a string literal.
2. An event handed to another function to be logged later is that function's string argument
   that follows a logger argument (`commits.move(batch, move, input.log, "envelope.archived")`).
3. A log call whose event is not a literal (its logger's expression names a log: `log`,
   `self.log`, `logger`, `bound`, `hub.log.bind(…)`) is allowed only where `FORWARDERS` says which
   calls feed it (rule 2); any other stops the generator, naming the file and line: its events
   could not be listed.
4. An event the handler plans as data (`core.plans`): `log("LEVEL", "noun.verbed", field=…)`,
   logged by the interpreter at that level; `Move(…, "noun.verbed", (("field", …), …))`, logged
   once the move is made, with those fields.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from docgen.markdown import code, table

ROOT = Path(__file__).resolve().parent.parent / "slopd"
LEVELS = ("debug", "info", "warning", "error", "exception")
FORWARDERS = {"daemon/batch.py": "said.event"}  # GroupCommit.move's event, logged once moved
_EVENT = re.compile(r"[a-z][a-z0-9_]*(\.[a-z0-9_]+)*")


class EventError(Exception):
    """A log call whose event name cannot be read from the code."""


@dataclass
class Event:
    name: str
    levels: set[str] = field(default_factory=set)
    fields: set[str] = field(default_factory=set)
    modules: set[str] = field(default_factory=set)


def _names_a_log(node: ast.expr) -> bool:
    text = re.sub(r"\.bind\(.*\)$", "", ast.unparse(node))
    return text.rsplit(".", 1)[-1] in {"log", "logger", "bound"}


def _event(node: ast.expr | None) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and _EVENT.fullmatch(node.value):
        return node.value
    return None


def _keywords(node: ast.Call) -> set[str]:
    return {keyword.arg for keyword in node.keywords if keyword.arg}


def _pairs(node: ast.expr | None) -> set[str]:
    """The field names of a `(("field", value), …)` literal."""
    if not isinstance(node, ast.Tuple):
        return set()
    return {
        pair.elts[0].value
        for pair in node.elts
        if isinstance(pair, ast.Tuple) and pair.elts and isinstance(pair.elts[0], ast.Constant)
        if isinstance(pair.elts[0].value, str)
    }


def _planned(node: ast.Call) -> tuple[str, str, set[str]] | None:
    """Rule 4: (level, event, fields) of an event planned as data, or None."""
    func, args = node.func, node.args
    if isinstance(func, ast.Name) and func.id == "log" and len(args) >= 2:
        level, event = args[0], _event(args[1])
        if isinstance(level, ast.Constant) and level.value in LEVELS and event is not None:
            return str(level.value), event, _keywords(node)
    if isinstance(func, ast.Name) and func.id == "Move" and len(args) >= 4 and (event := _event(args[3])):
        return "info", event, _pairs(args[4] if len(args) > 4 else None)
    return None


def _calls(path: Path) -> Iterator[tuple[str, str | None, ast.Call, set[str]]]:
    """(level, event or None, call, fields) for each log call, each forwarded event and each
    planned one in `path`."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        planned = _planned(node)
        if planned is not None:
            level, event, fields = planned
            yield level, event, node, fields
            continue
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in LEVELS and node.args:
            found = _event(node.args[0])
            if found is not None or _names_a_log(func.value):
                yield func.attr, found, node, _keywords(node)
                continue
        for before, after in zip(node.args, node.args[1:], strict=False):
            if _names_a_log(before) and (found := _event(after)) is not None:
                yield "info", found, node, _keywords(node)


def collect(root: Path = ROOT) -> dict[str, Event]:
    """Every event in the package at `root`, with the levels, fields and modules it is logged
    with (rules 1-3)."""
    events: dict[str, Event] = {}
    for path in sorted(root.rglob("*.py")):
        module = str(path.relative_to(root))
        for level, name, call, fields in _calls(path):
            if name is None:
                forwarded = FORWARDERS.get(module)
                if forwarded is not None and ast.unparse(call.args[0]) == forwarded:
                    continue
                raise EventError(
                    f"slopd/{module}:{call.lineno}: a log call whose event is not a literal "
                    f"({ast.unparse(call)[:80]}); name the event, or list it in docgen/events.py FORWARDERS"
                )
            event = events.setdefault(name, Event(name))
            event.levels.add(level)
            event.modules.add(f"slopd/{module}")
            event.fields.update(fields)
    return events


def reference() -> str:
    """One row per event, sorted by name: its levels, the fields its calls pass, where it is logged."""
    order = {level: index for index, level in enumerate(LEVELS)}
    rows = [
        (
            code(event.name),
            ", ".join(sorted(event.levels, key=order.__getitem__)),
            ", ".join(code(name) for name in sorted(event.fields)) or "—",
            ", ".join(code(module) for module in sorted(event.modules)),
        )
        for event in sorted(collect().values(), key=lambda event: event.name)
    ]
    return table(("event", "level", "fields (besides the bound ones)", "logged in"), rows)
