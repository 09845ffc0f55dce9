"""JSON Schema, said in a few words: the types of tool arguments, results and HTTP bodies."""

from __future__ import annotations

from typing import Any


def kind(schema: dict[str, Any]) -> str:
    """`string`, `integer (≥ 1, ≤ 50)`, `` `a` \\| `b` ``, `array of Reply`, `Receipt`…"""
    if "$ref" in schema:
        return str(schema["$ref"]).rsplit("/", 1)[-1]
    if "const" in schema:
        return f"`{schema['const']}`"
    if "enum" in schema:
        return " \\| ".join(f"`{value}`" for value in schema["enum"])
    for combined in ("anyOf", "oneOf"):
        if combined in schema:
            options = [kind(option) for option in schema[combined] if option.get("type") != "null"]
            nullable = any(option.get("type") == "null" for option in schema[combined])
            return " \\| ".join(options) + (" or null" if nullable else "")
    if "allOf" in schema and len(schema["allOf"]) == 1:
        return kind(schema["allOf"][0])
    found = schema.get("type", "any")
    if isinstance(found, list):
        found = " or ".join(str(item) for item in found)
    if found == "array" and "items" in schema:
        found = f"array of {kind(schema['items'])}"
    bounds = [
        f"{sign} {schema[key]:g}" for key, sign in (("minimum", "≥"), ("maximum", "≤")) if key in schema
    ]
    bounds += [
        f"{sign} {schema[key]} chars"
        for key, sign in (("minLength", "≥"), ("maxLength", "≤"))
        if key in schema
    ]
    return str(found) + (f" ({', '.join(bounds)})" if bounds else "")
