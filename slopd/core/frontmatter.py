"""An input's bytes as headers and a body: YAML front matter over Markdown, or one JSON object (SPEC §3).

Rules:
1. Every fault found here is structural (encoding, NUL, front-matter fences, YAML, JSON): it
   stops parsing at once, as an `EnvelopeError` with that one reason (`core.validation` rule 2).
"""

from __future__ import annotations

import json
from typing import Any

from slopd.core import strictyaml
from slopd.core.envelope import EnvelopeError

MAX_DEPTH = 32
MAX_FRONT_MATTER_BYTES = 64 * 1024
_FENCE_TRAIL = " \t\r"  # `--- ` and `---\r\n` are the fence too: Windows editors and phone apps write them


def decode(data: bytes) -> str:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise EnvelopeError([f"not valid UTF-8 (byte offset {error.start})"]) from None
    nul = text.find("\0")
    if nul >= 0:
        raise EnvelopeError([f"contains a NUL byte (character offset {nul})"])
    return text


def split_markdown(text: str) -> tuple[dict[str, Any], str]:
    first, newline, rest = text.partition("\n")
    if first.rstrip(_FENCE_TRAIL) != "---" or not newline:
        raise EnvelopeError(["no front matter: the file must start with a line '---'"])
    position = 0
    while True:
        end = rest.find("\n", position)
        line = rest[position:] if end < 0 else rest[position:end]
        if line.rstrip(_FENCE_TRAIL) == "---":
            front, body = rest[:position], ("" if end < 0 else rest[end + 1 :])
            break
        if end < 0:
            raise EnvelopeError(["front matter has no closing '---' line"])
        position = end + 1
    if len(front.encode("utf-8")) > MAX_FRONT_MATTER_BYTES:
        raise EnvelopeError([f"front matter is over {MAX_FRONT_MATTER_BYTES} bytes"])
    try:
        headers = strictyaml.load(front, max_depth=MAX_DEPTH)
    except strictyaml.StrictYAMLError as error:
        raise EnvelopeError([f"front matter: {error}"]) from None
    if "body" in headers:
        raise EnvelopeError(["front matter: 'body' is reserved for the Markdown body"])
    return headers, body


def split_json(text: str) -> tuple[dict[str, Any], str]:
    try:
        document = json.loads(
            text,
            object_pairs_hook=_no_duplicate_keys,
            parse_constant=_no_constants,
            parse_float=_finite_float,
        )
    except RecursionError:
        raise EnvelopeError([f"JSON nesting deeper than {MAX_DEPTH} levels"]) from None
    except ValueError as error:
        raise EnvelopeError([f"invalid JSON: {error}"]) from None
    if not isinstance(document, dict):
        raise EnvelopeError([f"JSON must be one object, not {type(document).__name__}"])
    if _depth(document) > MAX_DEPTH:
        raise EnvelopeError([f"JSON nesting deeper than {MAX_DEPTH} levels"])
    for text_value in _strings(document):
        if "\0" in text_value:
            raise EnvelopeError(["JSON strings must not contain NUL"])
        try:
            text_value.encode("utf-8")
        except UnicodeEncodeError:
            raise EnvelopeError(["JSON strings must be valid Unicode (no lone surrogates)"]) from None
    body = document.pop("body", "")
    if not isinstance(body, str):
        raise EnvelopeError(["body: must be a string"])
    return document, body


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    document: dict[str, Any] = {}
    for key, value in pairs:
        if key in document:
            raise ValueError(f"duplicate key {key!r}")
        document[key] = value
    return document


def _no_constants(constant: str) -> None:
    raise ValueError(f"{constant} is not allowed")


def _finite_float(text: str) -> float:
    number = float(text)
    if number in (float("inf"), float("-inf")):
        raise ValueError(f"number {text[:20]} is too large")
    return number


def _strings(value: object) -> list[str]:
    """Every key and string value in a parsed JSON document."""
    found, stack = [], [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            found.append(item)
        elif isinstance(item, dict):
            found.extend(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


def _depth(value: object) -> int:
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else ()
        if isinstance(item, dict | list):
            deepest = max(deepest, level)
            stack.extend((child, level + 1) for child in children)
    return deepest
