"""Control characters at the protocol boundary: one check for every BCP request model, free-form members and ids.

Postgres refuses U+0000 in text (a `DataError`, i.e. a 500), and the other C0 controls are never part
of a name, address, code or id. Text may carry tab, line feed and carriage return; identifiers (`id`,
`…_id`, `…Id`, `codes`, path ids) carry no control character at all. The scan itself is the shared one
in `kernel.json_limits` (the leaf app; the Pix webhook uses it too).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from kernel.json_limits import control_in
from kernel.json_limits import find_control_character as _find

_ID_KEYS = frozenset({"id", "codes", "sku", "txid"})


def is_id_key(key: str) -> bool:
    return key in _ID_KEYS or key.endswith(("_id", "_ids", "Id", "Ids"))  # snake_case BCP, camelCase A2A


def find_control_character(value: Any, path: str) -> tuple[str, str] | None:
    """(path, `U+00XX`) of the first control character in `value`, named from `path`; None when clean."""
    return _find(value, path, identifier=is_id_key(path.rsplit(".", 1)[-1]), is_id_key=is_id_key)


def control_character_message(path: str, char: str) -> str:
    return f"caractere de controle {char} não é permitido em {path}"


class NoControlCharacters(BaseModel):
    """Base of every model a platform sends: a string with a control character is invalid, naming its member.

    Runs before type validation on each field, so free-form `dict[str, Any]` members (context, signals,
    attribution) are covered as well as typed strings; the outermost model reports the full path.
    """

    @field_validator("*", mode="before")
    @classmethod
    def _reject_control_characters(cls, value: Any, info: ValidationInfo) -> Any:
        found = find_control_character(value, info.field_name or "")
        if found is not None:
            where, char = found
            raise PydanticCustomError(
                "control_character",
                "caractere de controle {char} não é permitido em {path}",
                {"char": char, "path": where},
            )
        return value


def identifier_problem(value: str, *, field: str) -> str | None:
    """Why a path or tool id is unusable (a control character), or None when it is fine."""
    char = control_in(value, identifier=True)
    return control_character_message(field, char) if char else None
