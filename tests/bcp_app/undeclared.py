"""Which members of a response body its output model does not declare, read from the JSON Schema MCP publishes.

A member counts as declared only when the model's serialization schema (the MCP `outputSchema`) names it in
`properties`, or types it through `additionalProperties` (a keyed map such as `capabilities` or
`buyer.consent`). Members accepted only because the model allows extras, or values typed `Any`, are
undeclared: a platform reading the schema cannot know them (issue 14, one output schema set).
"""

from __future__ import annotations

from functools import cache
from typing import Any

from pydantic import TypeAdapter


@cache
def serialization_schema(model: Any) -> dict[str, Any]:
    return TypeAdapter(model).json_schema(mode="serialization")


def undeclared(body: Any, model: Any) -> list[str]:
    """JSON paths of the members of `body` that `model`'s published schema does not describe."""
    return undeclared_in(body, serialization_schema(model))


def undeclared_in(body: Any, schema: dict[str, Any]) -> list[str]:
    """The same against a schema as published (e.g. a tool's `outputSchema` read by an MCP client)."""
    return _walk(body, schema, schema.get("$defs", {}), "$")


def _resolve(schema: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = {**defs[schema["$ref"].rsplit("/", 1)[-1]], **{k: v for k, v in schema.items() if k != "$ref"}}
    return schema


def _walk(value: Any, schema: dict[str, Any], defs: dict[str, Any], path: str) -> list[str]:
    schema = _resolve(schema, defs)
    branches = schema.get("anyOf") or schema.get("oneOf")
    if branches:
        if value is None:
            return []
        # The best-fitting branch: a union is declared when one of its members declares everything.
        return min(
            (_walk(value, branch, defs, path) for branch in branches if branch.get("type") != "null"),
            key=len,
            default=[path],
        )
    if isinstance(value, dict):
        properties = schema.get("properties", {})
        extra = schema.get("additionalProperties")
        found: list[str] = []
        for key, item in value.items():
            if key in properties:
                found += _walk(item, properties[key], defs, f"{path}.{key}")
            elif isinstance(extra, dict) and extra:
                found += _walk(item, extra, defs, f"{path}.{key}")
            else:
                found.append(f"{path}.{key}")
        return found
    if isinstance(value, list):
        items = schema.get("items", {})
        return [hit for index, item in enumerate(value) for hit in _walk(item, items, defs, f"{path}[{index}]")]
    return []
