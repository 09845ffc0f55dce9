"""Strict YAML for front matter: a mapping of plain data, nothing implicit, nothing dangerous.

Rules:
1. A streaming pre-scan runs first and never builds a tree, so no nesting depth can crash the
   process (PyYAML's C composer recurses in C and segfaults on deep input). It rejects anchors,
   aliases, explicit tags, more than one document, nesting deeper than the limit and too many
   events.
2. Only then is the text composed, with a loader that resolves nothing but null: `on`, `no`,
   `0755`, `12:30` and timestamps all stay the exact strings written.
3. Mapping keys are strings and appear once; the document is a mapping.

`load` raises only `StrictYAMLError`.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

_CLoader = getattr(yaml, "CSafeLoader", None)
_BaseLoader: type[Any] = _CLoader if _CLoader is not None else yaml.SafeLoader

MAX_EVENTS = 10_000
_NULL = re.compile(r"^(?:~|null|Null|NULL|)$")
_MAP_TAG = "tag:yaml.org,2002:map"


class StrictYAMLError(ValueError):
    """The text is not a strict YAML mapping; the message says why."""


class _NullOnlyLoader(_BaseLoader):  # type: ignore[misc]  # a PyYAML loader class; untyped
    yaml_implicit_resolvers: dict[str, list[tuple[str, re.Pattern[str]]]] = {}  # noqa: RUF012


_NullOnlyLoader.add_implicit_resolver("tag:yaml.org,2002:null", _NULL, ["~", "n", "N", ""])


def _construct_mapping(loader: Any, node: yaml.MappingNode) -> dict[str, Any]:
    mapping: dict[str, Any] = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        if not isinstance(key, str):
            raise StrictYAMLError(f"line {key_node.start_mark.line + 1}: keys must be strings")
        if key in mapping:
            raise StrictYAMLError(f"line {key_node.start_mark.line + 1}: duplicate key {key!r}")
        mapping[key] = loader.construct_object(value_node, deep=True)
    return mapping


_NullOnlyLoader.add_constructor(_MAP_TAG, _construct_mapping)


def prescan(text: str, *, max_depth: int) -> None:
    """Walk the event stream and reject what must never be composed."""
    depth = documents = 0
    for events, event in enumerate(yaml.parse(text, Loader=_BaseLoader), start=1):
        if events > MAX_EVENTS:
            raise StrictYAMLError(f"more than {MAX_EVENTS} YAML events")
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
            raise StrictYAMLError("anchors and aliases are not allowed")
        tag = getattr(event, "tag", None)
        if tag not in (None, "!"):
            raise StrictYAMLError(f"explicit tag {tag!r} is not allowed")
        if isinstance(event, yaml.DocumentStartEvent):
            documents += 1
            if documents > 1:
                raise StrictYAMLError("more than one YAML document")
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > max_depth:
                raise StrictYAMLError(f"nesting deeper than {max_depth} levels")
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1


def load(text: str, *, max_depth: int) -> dict[str, Any]:
    """Parse `text` as one YAML mapping of plain strings, nulls, lists and mappings."""
    try:
        prescan(text, max_depth=max_depth)
        document = yaml.load(text, Loader=_NullOnlyLoader)  # noqa: S506  # strict loader above
    except StrictYAMLError:
        raise
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark
        where = f"line {mark.line + 1}: " if mark is not None else ""
        raise StrictYAMLError(f"{where}{error.problem or error.context}") from None
    except (yaml.YAMLError, ValueError, TypeError, RecursionError) as error:
        raise StrictYAMLError(f"invalid YAML: {type(error).__name__}") from None
    if not isinstance(document, dict):
        kind = "empty" if document is None else type(document).__name__
        raise StrictYAMLError(f"must be a mapping of keys to values, not {kind}")
    return document


class _Dumper(yaml.SafeDumper):
    """Double-quotes strings holding YAML line breaks, which plain and single quotes would fold."""


_LINE_BREAKS = frozenset("\x85\u2028\u2029")


def _represent_str(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
    if _LINE_BREAKS.intersection(data):
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style='"')
    return dumper.represent_str(data)


_Dumper.add_representer(str, _represent_str)


def dump(mapping: dict[str, Any]) -> str:
    """Block YAML that `load` reads back to the same mapping (strings quoted where needed)."""
    return yaml.dump(
        mapping,
        Dumper=_Dumper,
        sort_keys=False,
        allow_unicode=True,
        default_flow_style=False,
        width=1 << 30,
    )
