"""BCP protocol errors (§5.2/§5.4) and the Error Response business outcome (§5.3).

A `ProtocolError` aborts an operation with nothing changed; each transport renders it: REST as the
HTTP status + `{"code", "content"}`, MCP as a JSON-RPC error with `data{code, content}`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from bcp_app.protocol.names import PROTOCOL_VERSION
from bcp_app.protocol.schemas.common import ErrorResponse, ProtocolErrorBody

# code -> (HTTP status, JSON-RPC code)
PROTOCOL_ERRORS: dict[str, tuple[int, int]] = {
    "invalid_profile_url": (400, -32001),
    "profile_unreachable": (424, -32001),
    "profile_malformed": (422, -32001),
    "version_unsupported": (422, -32001),
    "profile_not_trusted": (403, -32000),
    "signature_missing": (401, -32000),
    "signature_invalid": (401, -32000),
    "key_not_found": (401, -32000),
    "digest_mismatch": (400, -32600),
    "algorithm_unsupported": (400, -32600),
    "unauthenticated": (401, -32000),
    "forbidden": (403, -32000),
    "invalid_request": (400, -32602),
    "request_too_large": (400, -32602),
    "idempotency_key_required": (400, -32602),
    "idempotency_conflict": (409, -32000),
    "idempotency_in_progress": (409, -32000),
    "rate_limited": (429, -32000),
    "unavailable": (503, -32000),
    "internal_error": (500, -32603),
}


@dataclass
class ProtocolError(Exception):
    code: str
    content: str
    continue_url: str | None = None
    retry_after: int | None = None
    headers: dict[str, str] = field(default_factory=dict)
    # `invalid_request` of a body: {JSONPath: problema} of every offending member (as MCP's `data.fields`)
    fields: dict[str, str] | None = None

    def __post_init__(self) -> None:
        super().__init__(f"{self.code}: {self.content}")
        if self.code not in PROTOCOL_ERRORS:
            raise ValueError(f"unknown protocol error code {self.code!r}")

    @property
    def http_status(self) -> int:
        return PROTOCOL_ERRORS[self.code][0]

    @property
    def jsonrpc_code(self) -> int:
        return PROTOCOL_ERRORS[self.code][1]

    def body(self) -> dict[str, Any]:
        """REST body; also MCP `error.data` (which adds `retry_after`)."""
        body: dict[str, Any] = {"code": self.code, "content": self.content}
        if self.continue_url:
            body["continue_url"] = self.continue_url
        if self.fields:
            body["fields"] = self.fields
        return ProtocolErrorBody.produce(body)  # the §5.4 output model (one schema set)

    def jsonrpc_data(self) -> dict[str, Any]:
        data = self.body()
        if self.retry_after is not None:
            data["retry_after"] = self.retry_after
        return data

    def http_headers(self) -> dict[str, str]:
        headers = dict(self.headers)
        if self.retry_after is not None:
            headers["Retry-After"] = str(self.retry_after)
        if self.http_status == 401 and self.code == "unauthenticated":
            headers.setdefault("WWW-Authenticate", 'Bearer realm="bcp"')
        return headers


def error_message(code: str, content: str, *, severity: str = "unrecoverable", path: str | None = None) -> dict:
    message: dict[str, Any] = {"type": "error", "code": code, "severity": severity}
    if path:
        message["path"] = path
    message["content"] = content
    return message


def error_response(
    code: str,
    content: str,
    *,
    capabilities: dict[str, list[dict[str, str]]] | None = None,
    continue_url: str | None = None,
    severity: str = "unrecoverable",
    messages: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """The §5.3 Error Response: `ucp{version, status:error, capabilities?}`, messages, continue_url?, produced
    by the `ErrorResponse` model. `messages` replaces the single `{code, content}` error message."""
    ucp: dict[str, Any] = {"version": PROTOCOL_VERSION, "status": "error"}
    if capabilities:
        ucp["capabilities"] = capabilities
    body: dict[str, Any] = {
        "ucp": ucp,
        "messages": messages or [{"type": "error", "code": code, "severity": severity, "content": content}],
    }
    if continue_url:
        body["continue_url"] = continue_url
    return ErrorResponse.produce(body)
