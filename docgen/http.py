"""The HTTP reference: every endpoint of `slopd run --http`, from the OpenAPI document it serves.

The document is the package's `openapi.json` (served with this installation's version); the
reference lists each operation with who may call it, its parameters, its body and its answers,
then the schemas the answers use.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

from docgen.markdown import anchor, cell, code, first_sentence, table
from docgen.schema import kind

_METHODS = ("get", "head", "post", "put", "patch", "delete")


def document() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(
        resources.files("slopd.transport.server").joinpath("openapi.json").read_bytes()
    )
    return data


def _resolve(doc: dict[str, Any], item: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in item:
        node: Any = doc
        for part in str(item["$ref"]).removeprefix("#/").split("/"):
            node = node[part]
        item = node
    return item


def _operations(doc: dict[str, Any]) -> list[tuple[str, str, str, dict[str, Any]]]:
    """(tag, METHOD, path, operation), grouped by the document's tags in their order."""
    order = [tag["name"] for tag in doc.get("tags", [])]
    found = [
        (operation.get("tags", [""])[0], method.upper(), path, operation)
        for path, item in doc["paths"].items()
        for method in _METHODS
        if (operation := item.get(method)) is not None
    ]
    return sorted(found, key=lambda entry: order.index(entry[0]) if entry[0] in order else len(order))


def _token(doc: dict[str, Any], operation: dict[str, Any]) -> str:
    security = operation.get("security", doc.get("security", []))
    return "a seat's bearer token" if security else "no token"


def _body(doc: dict[str, Any], media: dict[str, Any]) -> str:
    return ", ".join(f"{code(name)} ({kind(entry.get('schema', {}))})" for name, entry in media.items())


def endpoints() -> str:
    """The summary table: one row per operation."""
    doc = document()
    rows = [
        (
            f"[{code(f'{method} {path}')}](#{anchor(f'{method} {path}')})",
            cell(operation.get("summary", "")),
            _token(doc, operation),
        )
        for _tag, method, path, operation in _operations(doc)
    ]
    return table(("endpoint", "what it does", "needs"), rows)


def reference() -> str:
    """Each operation by tag, then the schemas."""
    doc = document()
    parts: list[str] = []
    tags = {tag["name"]: tag.get("description", "") for tag in doc.get("tags", [])}
    current = None
    for tag, method, path, operation in _operations(doc):
        if tag != current:
            current = tag
            parts.append(f"## {tag.capitalize()}\n")
            if tags.get(tag):
                parts.append(tags[tag] + "\n")
        parts.append(f"### {method} {path}\n")
        parts.append(f"**{operation.get('summary', '')}** — needs {_token(doc, operation)}.\n")
        if operation.get("description"):
            parts.append(operation["description"].strip() + "\n")
        parameters = [_resolve(doc, parameter) for parameter in operation.get("parameters", [])]
        if parameters:
            rows = [
                (
                    code(parameter["name"]),
                    parameter["in"],
                    kind(parameter.get("schema", {})),
                    "required" if parameter.get("required") else "optional",
                    cell(parameter.get("description", "")),
                )
                for parameter in parameters
            ]
            parts.append(table(("parameter", "in", "type", "required?", "what it is"), rows))
        if "requestBody" in operation:
            body = _resolve(doc, operation["requestBody"])
            said = cell(body.get("description", ""))
            parts.append(f"Body: {_body(doc, body.get('content', {}))}. {said}\n".replace(". \n", ".\n"))
        answers: list[tuple[str, str, str]] = []
        for status, given in operation.get("responses", {}).items():
            answer = _resolve(doc, given)
            answers.append(
                (
                    f"**{status}**",
                    cell(first_sentence(answer.get("description", ""))),
                    _body(doc, answer.get("content", {})) or "—",
                )
            )
        parts.append(table(("status", "meaning", "body"), answers))
    parts.append("## Schemas\n")
    for name, schema in doc.get("components", {}).get("schemas", {}).items():
        parts.append(f"### {name}\n")
        if schema.get("description"):
            parts.append(" ".join(schema["description"].split()) + "\n")
        properties = schema.get("properties", {})
        if properties:
            required = set(schema.get("required", []))
            fields = [
                (
                    code(key),
                    kind(prop),
                    "required" if key in required else "optional",
                    cell(prop.get("description", "")),
                )
                for key, prop in properties.items()
            ]
            parts.append(table(("field", "type", "required?", "what it is"), fields))
        else:
            parts.append(f"Type: {kind(schema)}.\n")
    return "\n".join(parts)
