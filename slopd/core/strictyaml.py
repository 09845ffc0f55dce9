"""Strict YAML for front matter: a mapping of plain data, nothing implicit, nothing dangerous.

Rules:
1. The value is built from libyaml's event stream in one iterative pass, never by PyYAML's
   composer (which recurses in C and segfaults on deep input). Each event is checked before it
   is used: anchors, aliases, explicit tags, more than one document, nesting deeper than the
   limit and too many events are refused.
2. Nothing is resolved but null: `on`, `no`, `0755`, `12:30` and timestamps all stay the exact
   strings written.
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
_COLLECTION_STARTS = (yaml.MappingStartEvent, yaml.SequenceStartEvent)
_COLLECTION_ENDS = (yaml.MappingEndEvent, yaml.SequenceEndEvent)


class StrictYAMLError(ValueError):
    """The text is not a strict YAML mapping; the message says why."""


def _build(events: Iterator[Any], max_depth: int) -> Any:  # noqa: PLR0912  # a branch per event type
    """The value of the checked event stream, built in one pass, iteratively (rules 1-3).

    Dispatching on the event's exact type keeps this loop cheap: it runs for every input.
    """
    root: Any = _MISSING
    stack: list[list[Any]] = []  # [container, pending mapping key]
    depth = documents = 0
    for count, event in enumerate(events, start=1):
        if count > MAX_EVENTS:
            raise StrictYAMLError(f"more than {MAX_EVENTS} YAML events")
        kind = type(event)
        if kind is yaml.ScalarEvent or kind in _COLLECTION_STARTS:
            if event.anchor:
                raise StrictYAMLError("anchors and aliases are not allowed")
            if event.tag not in (None, "!"):
                raise StrictYAMLError(f"explicit tag {event.tag!r} is not allowed")
            if kind is yaml.ScalarEvent:
                plain = not event.style and event.implicit[0]  # the C parser says '' for plain
                value = None if plain and _NULL.fullmatch(event.value) else event.value
            else:
                depth += 1
                if depth > max_depth:
                    raise StrictYAMLError(f"nesting deeper than {max_depth} levels")
                value = {} if kind is yaml.MappingStartEvent else []
        elif kind in _COLLECTION_ENDS:
            depth -= 1
            stack.pop()
            continue
        elif kind is yaml.AliasEvent:
            raise StrictYAMLError("anchors and aliases are not allowed")
        else:
            if kind is yaml.DocumentStartEvent:
                documents += 1
                if documents > 1:
                    raise StrictYAMLError("more than one YAML document")
            continue
        if not stack:
            root = value
        else:
            frame = stack[-1]
            container = frame[0]
            if type(container) is list:
                container.append(value)
            elif frame[1] is _MISSING:
                if not isinstance(value, str):
                    raise StrictYAMLError(f"line {_line(event)}: keys must be strings")
                if value in container:
                    raise StrictYAMLError(f"line {_line(event)}: duplicate key {value!r}")
                frame[1] = value
            else:
                container[frame[1]] = value
                frame[1] = _MISSING
        if kind is not yaml.ScalarEvent:
            stack.append([value, _MISSING])
    return root


def _line(event: Any) -> int:
    return event.start_mark.line + 1 if event.start_mark is not None else 0


def load(text: str, *, max_depth: int) -> dict[str, Any]:
    """Parse `text` as one YAML mapping of plain strings, nulls, lists and mappings.

    Only plain `null`, `~` or nothing becomes None; every other scalar is the exact string
    written.
    """
    try:
        root = _build(yaml.parse(text, Loader=_BaseLoader), max_depth)
    except StrictYAMLError:
        raise
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark
        where = f"line {mark.line + 1}: " if mark is not None else ""
        raise StrictYAMLError(f"{where}{error.problem or error.context}") from None
    except (yaml.YAMLError, ValueError, RecursionError) as error:
        raise StrictYAMLError(f"invalid YAML: {type(error).__name__}") from None
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
