"""Control characters at the protocol boundary: one check for every BCP request model, free-form members and ids.

Postgres refuses U+0000 in text (a `DataError`, i.e. a 500), and the other C0 controls are never part
of a name, address, code or id. Text may carry tab, line feed and carriage return; identifiers (`id`,
`…_id`, `…Id`, `codes`, path ids) carry no control character at all. The scan itself is the shared one
in `kernel.json_limits` (the leaf app; the Pix webhook uses it too).
"""

from __future__ import annotations

import copy
import functools
import re
import typing
from typing import Any

import orjson
from pydantic import BaseModel, GetJsonSchemaHandler, ValidationInfo, field_validator
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import PydanticCustomError, core_schema

from kernel.json_limits import Location, control_in, find_control_location

_ID_KEYS = frozenset({"id", "codes", "sku", "txid"})

# The same rules as `kernel.json_limits.IN_TEXT` / `IN_ID`, said in the OpenAPI and MCP input schemas, so a
# generator (schemathesis, an agent's SDK) that trusts them never sends a string this boundary refuses (ST202).
TEXT_PATTERN = "^[^\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f]*$"
ID_PATTERN = "^[^\\u0000-\\u001f]*$"
# Free-form members (context, signals, attribution, ap2, unknown members) are scanned whole; their schema is
# documented as JSON two levels deep with no control character in any key or string (narrower than what is
# accepted, never wider: a member key is an identifier, and a string under an `…_id` key is too).
_FREE_SCALAR: dict[str, Any] = {"type": ["null", "boolean", "number", "string"], "pattern": ID_PATTERN}
FREE_JSON: dict[str, Any] = {
    "anyOf": [
        _FREE_SCALAR,
        {"type": "array", "items": _FREE_SCALAR, "maxItems": 10},
        {
            "type": "object",
            "propertyNames": {"pattern": ID_PATTERN},
            "additionalProperties": _FREE_SCALAR,
            "maxProperties": 10,
        },
    ]
}


def is_id_key(key: str) -> bool:
    return key in _ID_KEYS or key.endswith(("_id", "_ids", "Id", "Ids"))  # snake_case BCP, camelCase A2A


def find_control_character(value: Any, loc: Location) -> tuple[Location, str] | None:
    """(location, `U+00XX`) of the first control character in `value`, which `loc` locates; None when clean.
    The location is pydantic's `loc` form (`("buyer", "first_name")`), so it becomes the JSONPath every other
    field error names (`field_errors.field_path`)."""
    strict = bool(loc) and isinstance(loc[-1], str) and is_id_key(loc[-1])
    # Most calls are one member of a model (every field of every nested model runs this): a string or a number
    # is answered here, without the walk's stack of containers (issue 34: a few per cent of a request).
    if isinstance(value, str):
        if value.isprintable():  # no control character at all (str.isprintable is False for every Cc): clean
            return None
        char = control_in(value, identifier=strict)
        return (loc, char) if char else None
    if value is None or isinstance(value, int | float):
        return None
    if isinstance(value, dict | list) and _escape_free(value):
        return None
    return find_control_location(value, loc, identifier=strict, is_id_key=is_id_key)


def _escape_free(value: dict[Any, Any] | list[Any]) -> bool:
    """No key or string anywhere in `value` holds a control character, nor a quote or a backslash: its JSON
    text, which escapes exactly those (`ensure_ascii=False`), has no backslash. One C-speed pass instead of the
    walk, which a nested member paid once per level of models above it (issue 34: the outer model scans a member
    whole, so that its message names the full path, and each nested model scans its own part again); anything
    else (an escape, a value JSON cannot say) goes to the walk, which finds and names the character."""
    try:
        # orjson escapes exactly what `json.dumps(ensure_ascii=False)` does (quote, backslash, U+0000-U+001F) and
        # costs a fraction of its call; what it refuses (a key that is not a str, an integer past 64 bits) walks
        return b"\\" not in orjson.dumps(value)
    except (TypeError, ValueError, RecursionError):
        return False


# A transport that decoded the request's JSON text itself and found no escape in it that could spell a control
# character (`control_escape_free`) sets this attribute to True on the request it passes as the validation context's
# `request` (django-ninja passes `{"request": request}`), or validates with this key True in the context
# (`EscapeFreeObject`): then no member of any model can hold one, and the scan of every member of every nested model
# is skipped (issue 34: a few per cent of a checkout update).
ESCAPE_FREE = "bcp_escape_free"


class EscapeFreeObject(dict[str, Any]):
    """A JSON object decoded from a text in which `control_escape_free` found no escape of a control character:
    `validation.validate` validates it with `ESCAPE_FREE` in the context, so no member is scanned for one."""


# The only ways a decoded JSON string (or key) holds a C0 control character: the short escapes of the five that have
# one, or `\u0000`-`\u001F` (the decoder refuses one written raw). An escaped backslash followed by such letters
# matches too, and only costs the scan.
_CONTROL_ESCAPE = re.compile(rb"\\(?:[bfnrt]|u00[01])")


def control_escape_free(raw: bytes) -> bool:
    """Whether no string of the JSON text `raw` can hold a control character once decoded (strictly, as
    `kernel.json_limits.loads_bounded` decodes): UTF-8 (a text in UTF-16 or -32 has NUL bytes, and goes to the
    scan) and no escape of a control character in it. Accents escaped as `\\u00e3` (Python's `json.dumps`) pass."""
    return b"\x00" not in raw and _CONTROL_ESCAPE.search(raw) is None


def control_character_message(path: str, char: str) -> str:
    return f"caractere de controle {char} não é permitido em {path}"


# The text of a control character in a request member; the transport names the member before it, as the
# JSONPath of every other field error (`Campo inválido $.buyer.first_name: …`).
CONTROL_CHARACTER = "caractere de controle {char} não é permitido"


class NoControlCharacters(BaseModel):
    """Base of every model a platform sends: a string with a control character is invalid, naming its member.

    Runs before type validation on each field, so free-form `dict[str, Any]` members (context, signals,
    attribution) are covered as well as typed strings; the outermost model reports the full path.
    """

    @field_validator("*", mode="before")
    @classmethod
    def _reject_control_characters(cls, value: Any, info: ValidationInfo) -> Any:
        if isinstance(value, float) and value.is_integer() and info.field_name in _integer_fields(cls):
            value = int(value)  # JSON Schema's `integer` includes 2.0 (the OpenAPI says integer; accept what it says)
        context = info.context
        if context is not None and (context.get(ESCAPE_FREE) or getattr(context.get("request"), ESCAPE_FREE, False)):
            return value  # the JSON text had no escape, so no string in it holds a control character
        found = find_control_character(value, (info.field_name or "",))
        if found is not None:
            where, char = found
            # pydantic's `loc` stops at this field (by its alias); `below` locates the string inside it, so that
            # `field_errors.error_loc` names the string itself
            raise PydanticCustomError("control_character", CONTROL_CHARACTER, {"char": char, "below": where[1:]})
        return value

    @classmethod
    def __get_pydantic_json_schema__(
        cls, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        json_schema = handler(schema)
        document_control_characters(handler.resolve_ref_schema(json_schema))
        return json_schema


@functools.cache
def _integer_fields(model: type[BaseModel]) -> frozenset[str]:
    """Members of `model` typed `int` (or `int | None`): strict pydantic refuses 2.0 there, JSON Schema does not."""
    return frozenset(name for name, field in model.model_fields.items() if _is_int(field.annotation))


def _is_int(annotation: Any) -> bool:
    if typing.get_origin(annotation) is typing.Annotated:
        return _is_int(typing.get_args(annotation)[0])
    return annotation is int or any(_is_int(arg) for arg in typing.get_args(annotation) if arg is not type(None))


def document_control_characters(model_schema: dict[str, Any]) -> None:
    """Add to a request model's JSON Schema what `_reject_control_characters` enforces: a `pattern` on every
    string (identifiers stricter than text), and free-form members and unknown members (schemas are open,
    BCP §1) limited to `FREE_JSON`. Nested models are `$ref`s and document themselves."""
    for name, member in model_schema.get("properties", {}).items():
        _document(member, identifier=is_id_key(name))
    if model_schema.get("additionalProperties") is not False:
        model_schema["propertyNames"] = {"pattern": ID_PATTERN}
        model_schema["additionalProperties"] = copy.deepcopy(FREE_JSON)


def _document(schema: Any, *, identifier: bool) -> None:
    if not isinstance(schema, dict) or "$ref" in schema:
        return
    for key in ("anyOf", "oneOf", "allOf", "prefixItems"):
        for option in schema.get(key, ()):
            _document(option, identifier=identifier)
    kind = schema.get("type")
    if kind == "string":
        schema.setdefault("pattern", ID_PATTERN if identifier else TEXT_PATTERN)
    elif kind == "array":
        _document(schema.get("items"), identifier=identifier)
    elif kind == "object" and "properties" not in schema:
        schema["propertyNames"] = {"pattern": ID_PATTERN}
        extra = schema.get("additionalProperties", True)
        if isinstance(extra, dict) and extra:
            _document(extra, identifier=True)  # a member's strictness depends on its key: assume the strict one
        else:
            schema["additionalProperties"] = copy.deepcopy(FREE_JSON)
    elif kind is None and not any(key in schema for key in ("anyOf", "oneOf", "allOf", "enum", "const")):
        schema.update(copy.deepcopy(FREE_JSON))  # `Any`: any JSON value


def identifier_problem(value: str, *, field: str) -> str | None:
    """Why a path or tool id is unusable (a control character), or None when it is fine."""
    char = control_in(value, identifier=True)
    return control_character_message(field, char) if char else None
