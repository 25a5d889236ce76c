"""Guards for JSON that arrives from outside: control characters inside decoded values.

Lives in `payments` because it is the leaf every other app may import (`bcp_app → shop → payments`):
the Pix webhook needs it and cannot import the others, so this is the one implementation; the BCP
schemas (`bcp_app/schemas/text.py`) and the ASGI router reuse it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

# Text may keep tab, line feed and carriage return; identifiers keep no C0 control at all.
IN_TEXT = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")
IN_ID = re.compile(r"[\x00-\x1f]")


def _char(found: re.Match[str]) -> str:
    return f"U+{ord(found.group()):04X}"


def control_in(text: str, *, identifier: bool = False) -> str | None:
    """`U+00XX` of the first control character `text` may not hold, or None."""
    found = (IN_ID if identifier else IN_TEXT).search(text)
    return _char(found) if found else None


def find_control_character(
    value: Any, path: str, *, identifier: bool = False, is_id_key: Callable[[str], bool] = lambda key: False
) -> tuple[str, str] | None:
    """(path of the first offending string, `U+00XX`) inside decoded JSON `value`, or None when clean.

    `path` names `value` (`buyer.first_name`); dict members and list items extend it the way error
    messages name fields (`signals.ip`, `codes[0]`); members whose key `is_id_key` are identifiers.
    Iterative, so a deeply nested value cannot exhaust the stack.
    """
    stack: list[tuple[Any, str, bool]] = [(value, path, identifier)]
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
                    return f"{where}.{key_text!r}", char
                stack.append((member, f"{where}.{key_text}" if where else key_text, is_id_key(key_text)))
        elif isinstance(item, list | tuple):
            stack.extend((member, f"{where}[{index}]", strict) for index, member in reversed(list(enumerate(item))))
    return None
