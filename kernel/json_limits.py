"""Guards for JSON that arrives from outside: size and nesting depth before parsing, control characters after.

`json.loads` recurses once per nesting level, so `[[[[…]]]]` ×100k raises `RecursionError` (a 500)
in whatever parses it; `nesting_depth` measures the depth of raw bytes without parsing (regex + C-level
accumulate, no Python loop per byte), so every entry point can refuse such a body first.

Lives in `payments` because it is the leaf every other app may import (`bcp_app → shop → payments`):
the Pix webhook needs it and cannot import the others, so this is the one implementation; the BCP
schemas (`bcp_app/protocol/schemas/text.py`) and the ASGI router reuse it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from itertools import accumulate
from typing import Any

MAX_DEPTH = 64  # no document we accept (BCP bodies, profiles, PSP callbacks) comes near this
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_BRACKETS = b"[]{}"
_NOT_BRACKETS = bytes(b for b in range(256) if b not in _BRACKETS)
_STEPS = bytes.maketrans(b"[{]}", b"\x02\x02\x00\x00")  # opening +1, closing -1 (after subtracting 1)


class JsonLimitError(ValueError):
    """`kind`: too_large, too_deep or not_json; the message names no parser internals."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


def nesting_depth(raw: bytes) -> int:
    """Deepest `[`/`{` nesting of the JSON text `raw`, ignoring brackets inside strings."""
    brackets = _STRING.sub(b"", raw).translate(None, _NOT_BRACKETS).translate(_STEPS)
    return max(accumulate(step - 1 for step in brackets), default=0)


def _no_constant(name: str) -> Any:
    """`NaN`, `Infinity` and `-Infinity`, which Python's json reads by default, are not JSON (RFC 8259 §6): a body
    holding one is refused like any other bad JSON (BCP-ERR-05), not read as a float no schema expects."""
    raise JsonLimitError("not_json", f"{name} is not a JSON value")


def loads_bounded(raw: bytes | str, *, max_bytes: int, max_depth: int = MAX_DEPTH) -> Any:
    """`json.loads(raw)` after refusing bodies larger than `max_bytes` or nested deeper than `max_depth`."""
    data = raw.encode() if isinstance(raw, str) else bytes(raw)
    if len(data) > max_bytes:
        raise JsonLimitError("too_large", f"body larger than {max_bytes} bytes")
    if nesting_depth(data) > max_depth:
        raise JsonLimitError("too_deep", f"JSON nested deeper than {max_depth} levels")
    try:
        return json.loads(data, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:  # says where the syntax breaks, nothing about the parser itself
        raise JsonLimitError("not_json", str(exc)) from exc
    except JsonLimitError:
        raise
    except (ValueError, RecursionError) as exc:  # codec errors and the like: no internals in the message
        raise JsonLimitError("not_json", "not valid UTF-8 JSON") from exc


# Text may keep tab, line feed and carriage return; identifiers keep no C0 control at all.
IN_TEXT = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")
IN_ID = re.compile(r"[\x00-\x1f]")


def _char(found: re.Match[str]) -> str:
    return f"U+{ord(found.group()):04X}"


def control_in(text: str, *, identifier: bool = False) -> str | None:
    """`U+00XX` of the first control character `text` may not hold, or None."""
    found = (IN_ID if identifier else IN_TEXT).search(text)
    return _char(found) if found else None


type Location = tuple[str | int, ...]


def find_control_location(
    value: Any, loc: Location = (), *, identifier: bool = False, is_id_key: Callable[[str], bool] = lambda key: False
) -> tuple[Location, str] | None:
    """(location of the first offending string, `U+00XX`) inside decoded JSON `value`, or None when clean.

    `loc` locates `value` (`("buyer", "first_name")`); dict members and list items extend it by their key or index
    (a pydantic-style `loc`, which each caller writes in its own form); a key holding a control character is the
    location itself. Members whose key `is_id_key` are identifiers. Iterative, so a deeply nested value cannot
    exhaust the stack.
    """
    stack: list[tuple[Any, Location, bool]] = [(value, loc, identifier)]
    while stack:
        item, where, strict = stack.pop()
        if isinstance(item, str):
            char = control_in(item, identifier=strict)
            if char:
                return where, char
        elif isinstance(item, dict):
            for key, member in reversed(list(item.items())):
                key_text = str(key)
                char = control_in(key_text, identifier=True)
                if char:
                    return (*where, key_text), char
                stack.append((member, (*where, key_text), is_id_key(key_text)))
        elif isinstance(item, list | tuple):
            stack.extend((member, (*where, index), strict) for index, member in reversed(list(enumerate(item))))
    return None


def find_control_character(value: Any, path: str) -> tuple[str, str] | None:
    """(dotted path of the first offending string, `U+00XX`) inside decoded JSON `value`, or None when clean:
    `pix[0].infoPagador` below `path`, a key with a control character written as its `repr`."""
    found = find_control_location(value)
    if found is None:
        return None
    where = path
    for part in found[0]:
        if isinstance(part, int):
            where += f"[{part}]"
        else:
            name = repr(part) if control_in(part, identifier=True) else part
            where = f"{where}.{name}" if where else name
    return where, found[1]


def loads_notice(raw: bytes | str, *, max_bytes: int) -> Any:
    """A provider's notice (PSP, gateway webhook): `loads_bounded`, then refused (ValueError) when any string holds a
    control character, because Postgres refuses U+0000 and no provider sends them."""
    body = loads_bounded(raw, max_bytes=max_bytes)
    found = find_control_character(body, "")
    if found is not None:
        raise ValueError(f"control character {found[1]} in {found[0] or 'body'}")
    return body
