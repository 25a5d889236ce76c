"""A request body (a pydantic model, a mapping or nothing) → the request model, or a ProtocolError naming the fields.

Every transport's body and every operation's arguments go through `validate`; `field_path` writes pydantic's
error location as the member's JSONPath an agent reads (`$.line_items[0].quantity`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ValidationError

from bcp_app.protocol.errors import ProtocolError
from bcp_app.protocol.field_errors import error_loc, field_path, field_problems, invalid_fields_content
from bcp_app.protocol.schemas.text import ESCAPE_FREE, EscapeFreeObject

__all__ = ["field_path", "invalid_fields", "validate"]


_ESCAPE_FREE = {ESCAPE_FREE: True}  # an `EscapeFreeObject`'s validation context: no member holds a control character


def validate[M: BaseModel](
    model: type[M], body: M | Mapping[str, Any] | None, *, under: tuple[str | int, ...] = ()
) -> M:
    """`under`: where `body` sits in what the agent sent (A2A's `subscription` member of its data part), so the
    paths name each member from the request's root, as MCP's tool arguments do (BCP-ERR-05)."""
    if isinstance(body, model):
        return body
    if body is None:
        body = {}
    if not isinstance(body, Mapping):
        raise invalid_fields({field_path(under): "deve ser um objeto JSON"})  # pydantic's own text (`model_type`)
    try:
        return model.model_validate(dict(body), context=_ESCAPE_FREE if isinstance(body, EscapeFreeObject) else None)
    except ValidationError as exc:
        # every offending member, as MCP's invalid_params names them (BCP-ERR-05, §5.1 paths)
        problems = field_problems(exc.errors(include_url=False), loc_of=lambda error: (*under, *error_loc(error)))
        raise invalid_fields(problems) from exc


def invalid_fields(problems: dict[str, str]) -> ProtocolError:
    """`invalid_request` naming every offending member: in `content` and, one entry each, in `fields`."""
    return ProtocolError("invalid_request", invalid_fields_content(problems), fields=problems)
