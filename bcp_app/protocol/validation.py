"""A request body (a pydantic model, a mapping or nothing) → the request model, or a ProtocolError naming the field.

Every transport's body and every operation's arguments go through `validate`; `field_path` writes pydantic's
error location as the member's JSONPath an agent reads (`$.line_items[0].quantity`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ValidationError

from bcp_app.protocol.errors import ProtocolError
from bcp_app.protocol.field_errors import error_loc, error_text, field_path

__all__ = ["field_path", "validate"]


def validate[M: BaseModel](model: type[M], body: M | Mapping[str, Any] | None) -> M:
    if isinstance(body, model):
        return body
    if body is None:
        body = {}
    if not isinstance(body, Mapping):
        raise ProtocolError("invalid_request", "O corpo deve ser um objeto JSON.")
    try:
        return model.model_validate(dict(body))
    except ValidationError as exc:
        first = exc.errors()[0]
        where = field_path(error_loc(first))
        raise ProtocolError("invalid_request", f"Campo inválido {where}: {error_text(first)}") from exc
