"""Strict YAML for front matter: a mapping of plain data, nothing implicit, nothing dangerous.

Rules:
1. A streaming pre-scan runs first and never builds a tree, so no nesting depth can crash the
   process (PyYAML's C composer recurses in C and segfaults on deep input). It rejects anchors,
   aliases, explicit tags, more than one document, nesting deeper than the limit and too many
   events.
2. The mapping is built from those same checked events, iteratively, resolving nothing but
   null: `on`, `no`, `0755`, `12:30` and timestamps all stay the exact strings written.
3. Mapping keys are strings and appear once; the document is a mapping.

`load` raises only `StrictYAMLError`.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from typing import Any

import yaml

_CLoader = getattr(yaml, "CSafeLoader", None)
_BaseLoader: type[Any] = _CLoader if _CLoader is not None else yaml.SafeLoader

MAX_EVENTS = 10_000
_NULL = re.compile(r"(?:~|null|Null|NULL|)")
_MISSING = object()


class StrictYAMLError(ValueError):
    """The text is not a strict YAML mapping; the message says why."""


def _check(event: yaml.Event, count: int, depth: int, documents: int, max_depth: int) -> None:
    if count > MAX_EVENTS:
        raise StrictYAMLError(f"more than {MAX_EVENTS} YAML events")
    if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
        raise StrictYAMLError("anchors and aliases are not allowed")
    tag = getattr(event, "tag", None)
    if tag not in (None, "!"):
        raise StrictYAMLError(f"explicit tag {tag!r} is not allowed")
    if documents > 1:
        raise StrictYAMLError("more than one YAML document")
    if depth > max_depth:
        raise StrictYAMLError(f"nesting deeper than {max_depth} levels")


def _events(text: str, max_depth: int) -> Iterator[yaml.Event]:
    """The event stream, checked as it goes; it never builds a tree on its own."""
    depth = documents = 0
    try:
        for count, event in enumerate(yaml.parse(text, Loader=_BaseLoader), start=1):
            if isinstance(event, yaml.DocumentStartEvent):
                documents += 1
            elif isinstance(event, yaml.CollectionStartEvent):
                depth += 1
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
            _check(event, count, depth, documents, max_depth)
            yield event
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark
        where = f"line {mark.line + 1}: " if mark is not None else ""
        raise StrictYAMLError(f"{where}{error.problem or error.context}") from None
    except (yaml.YAMLError, ValueError, RecursionError) as error:
        if isinstance(error, StrictYAMLError):
            raise
        raise StrictYAMLError(f"invalid YAML: {type(error).__name__}") from None


def prescan(text: str, *, max_depth: int) -> None:
    """Check the event stream without building anything."""
    for _event in _events(text, max_depth):
        pass


def load(text: str, *, max_depth: int) -> dict[str, Any]:
    """Parse `text` as one YAML mapping of plain strings, nulls, lists and mappings.

    Built in one pass over the checked events, iteratively: only plain `null`, `~` or nothing
    becomes None; every other scalar is the exact string written.
    """
    root: Any = _MISSING
    stack: list[list[Any]] = []  # [container, pending mapping key]

    def add(value: Any, event: yaml.Event) -> None:
        nonlocal root
        if not stack:
            root = value
            return
        frame = stack[-1]
        container = frame[0]
        if isinstance(container, list):
            container.append(value)
        elif frame[1] is _MISSING:
            mark = event.start_mark
            line = mark.line + 1 if mark is not None else 0
            if not isinstance(value, str):
                raise StrictYAMLError(f"line {line}: keys must be strings")
            if value in container:
                raise StrictYAMLError(f"line {line}: duplicate key {value!r}")
            frame[1] = value
        else:
            container[frame[1]] = value
            frame[1] = _MISSING

    for event in _events(text, max_depth):
        if isinstance(event, yaml.ScalarEvent):
            plain = not event.style and event.implicit[0]  # the C parser says '' for plain
            add(None if plain and _NULL.fullmatch(event.value) else event.value, event)
        elif isinstance(event, yaml.MappingStartEvent | yaml.SequenceStartEvent):
            container: Any = {} if isinstance(event, yaml.MappingStartEvent) else []
            add(container, event)
            stack.append([container, _MISSING])
        elif isinstance(event, yaml.CollectionEndEvent):
            stack.pop()
    if not isinstance(root, dict):
        kind = "empty" if root is _MISSING or root is None else type(root).__name__
        raise StrictYAMLError(f"must be a mapping of keys to values, not {kind}")
    return root


class _Dumper(yaml.SafeDumper):
    """Double-quotes strings holding YAML line breaks, which plain and single quotes would fold."""


_LINE_BREAKS = frozenset("\x85\u2028\u2029")


def _represent_str(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
    if _LINE_BREAKS.intersection(data):
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style='"')
    return dumper.represent_str(data)


_Dumper.add_representer(str, _represent_str)
_PLAIN = re.compile(r"[A-Za-z0-9_./(][A-Za-z0-9 _./()@+:-]*(?<![ :])")
_NOT_PLAIN = re.compile(r": | #")
_RESOLVER = yaml.resolver.Resolver()
_STR_TAG = "tag:yaml.org,2002:str"
_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\t": "\\t", "\r": "\\r"}


def _quote(text: str) -> str:
    """A YAML double-quoted scalar: printable characters as they are, the rest escaped."""
    out = []
    for char in text:
        if char in _ESCAPES:
            out.append(_ESCAPES[char])
        elif char.isprintable() and char not in _LINE_BREAKS and char != "\ufeff":
            out.append(char)
        elif ord(char) <= 0xFF:
            out.append(f"\\x{ord(char):02x}")
        elif ord(char) <= 0xFFFF:
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(f"\\U{ord(char):08x}")
    return '"' + "".join(out) + '"'


@functools.lru_cache(maxsize=512)  # keys and most values repeat from reply to reply
def _scalar(text: str) -> str:
    """Plain when every YAML reader takes it as this very string, else double-quoted."""
    plain = (
        _PLAIN.fullmatch(text)
        and not _NOT_PLAIN.search(text)
        and _RESOLVER.resolve(yaml.ScalarNode, text, (True, False)) == _STR_TAG  # type: ignore[no-untyped-call]
    )
    return text if plain else _quote(text)


def dump(mapping: dict[str, Any]) -> str:
    """Block YAML that `load` reads back to the same mapping (strings quoted where needed)."""
    if not mapping:
        return "{}\n"
    lines = []
    for key, value in mapping.items():
        # Implicit keys are limited to 1024 characters; long ones use the explicit `? ` form.
        head = f"{_scalar(key)}: " if len(key) <= 128 else f"? {_scalar(key)}\n: "
        if isinstance(value, str):
            lines.append(f"{head}{_scalar(value)}\n")
        elif value is None:
            lines.append(f"{head}null\n")
        else:
            lines.append(
                yaml.dump(
                    {key: value},
                    Dumper=_Dumper,
                    sort_keys=False,
                    allow_unicode=True,
                    default_flow_style=False,
                    width=1 << 30,
                )
            )
    return "".join(lines)
