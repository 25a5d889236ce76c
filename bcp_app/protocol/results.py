"""`OperationResult`, the one result type of every BCP operation (see `bcp_app/service/operations/__init__.py`)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import orjson


def body_bytes(body: dict[str, Any]) -> bytes:
    """The one wire encoding of a BCP body: compact UTF-8 JSON (REST body, MCP text block), by orjson (the same
    bytes as `json.dumps(ensure_ascii=False, separators=(",", ":"))` for what we send, at a fraction of its CPU).
    What orjson refuses (an integer past 64 bits) goes through `json` as before."""
    try:
        return orjson.dumps(body, option=orjson.OPT_NON_STR_KEYS)
    except TypeError:  # orjson.JSONEncodeError is one
        return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()


@dataclass(frozen=True)
class OperationResult:
    status_code: int  # REST status of the business outcome: 200, or 201 for a created checkout
    body: dict[str, Any]  # the BCP response object (checkout, order, catalog, or §5.3 Error Response)
    headers: dict[str, str] = field(default_factory=dict)  # extra response headers (rarely used)
    replayed: bool = False  # True when served from the idempotency store (BCP §12)
    raw: bytes | None = None  # a replay's stored bytes, sent verbatim (BCP-IDEM-04: "stored response verbatim")

    @property
    def encoded(self) -> bytes:
        return self.raw if self.raw is not None else body_bytes(self.body)

    @property
    def is_error_response(self) -> bool:
        return self.body.get("ucp", {}).get("status") == "error"


class EncodedResult(OperationResult):
    """A 200 result known by its wire bytes (a remembered order body): REST sends the bytes as they are, so
    `body` is decoded only when something reads it (MCP's structured content), a dict of this result's own."""

    def __init__(self, raw: bytes, status_code: int = 200) -> None:
        for name, value in (("status_code", status_code), ("headers", {}), ("replayed", False), ("raw", raw)):
            object.__setattr__(self, name, value)

    @cached_property
    def body(self) -> dict[str, Any]:
        return orjson.loads(self.raw or b"{}")
