"""Transport-level pieces of the MCP binding shared by HTTP and stdio: the tool type, the call envelope,
and the bridge from the async MCP server into Django's synchronous ORM.

A tool is a plain synchronous function `run(call) -> ToolOutcome` that runs on the event loop's bounded
default executor (`sync_to_async(thread_sensitive=False)`: calls run side by side instead of queueing on
one thread-sensitive thread, and no thread is started per call), with the database connection handed
back to the pool afterwards so no connection outlives the call.
Protocol failures are raised as `bcp_app.protocol.errors.ProtocolError` and rendered as JSON-RPC errors
with `data{code, content}`; any other exception becomes a bare -32603 (no internals leaked).
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import mcp_types as types
from asgiref.sync import sync_to_async
from django.db import close_old_connections, connections
from jsonschema.validators import validator_for
from mcp.shared.exceptions import MCPError

from bcp_app.protocol.errors import ProtocolError
from bcp_app.service import ratelimit
from kernel.ops import request_cache
from kernel.ops.request_cache import request_scope

logger = logging.getLogger("bcp_app.transports.mcp.server")


@dataclass(frozen=True)
class CallInfo:
    """One `tools/call`: the tool name, raw arguments and, over HTTP, what identifies the caller."""

    name: str
    arguments: dict[str, Any]
    transport: str = "http"  # "http" | "stdio"
    method: str = "POST"
    authority: str = ""
    path: str = "/bcp/mcp"
    query: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)  # lower-case names
    body: bytes = b""
    protocol_version: str = ""
    client: str = ""  # client IP over HTTP
    # A BCP tool's rate-limit window (bcp_app.service.ratelimit.Window), counted when it resolves its caller
    counted: Any = None


@dataclass(frozen=True)
class ToolOutcome:
    """`structuredContent` and the text of the single `content` block (its JSON unless said otherwise)."""

    structured: dict[str, Any]
    text: str | None = None

    def as_result(self) -> types.CallToolResult:
        text = self.text if self.text is not None else compact_json(self.structured)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text)], structured_content=self.structured
        )


@dataclass(frozen=True)
class McpTool:
    name: str
    description: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None
    run: Callable[[CallInfo], ToolOutcome]
    read_only: bool = False
    # Typed tools answer a rate limit in the seed's envelope; BCP tools raise the §5.4 protocol error.
    on_rate_limited: Callable[[int], ToolOutcome] | None = None

    def as_tool(self) -> types.Tool:
        return types.Tool(
            name=self.name,
            description=self.description,
            input_schema=self.input_schema,
            output_schema=self.output_schema,
            annotations=types.ToolAnnotations(read_only_hint=self.read_only, destructive_hint=False),
        )


class OutputContractError(Exception):
    """Our own output broke its published `outputSchema`: a bug, logged and answered as -32603."""


VALIDATED_MEMO_SIZE = 1024  # distinct outputs remembered as valid per tool and process


def output_validator(name: str, schema: dict[str, Any] | None) -> Callable[..., None]:
    """Validate a result against the exact `outputSchema` clients check it with, before it leaves.

    Outputs already found valid are remembered by a digest of their wire bytes (`encoded`, else their
    compact JSON): the same order read again is the same JSON, and validating it again was most of a
    `get_order`'s CPU. A new or changed output is always validated in full.
    """
    if schema is None:
        return lambda value, encoded=None: None

    validator_cls = validator_for(schema)
    validator_cls.check_schema(schema)
    validator = validator_cls(schema)
    valid: set[bytes] = set()

    def validate(value: dict[str, Any], encoded: bytes | None = None) -> None:
        raw = encoded if encoded is not None else compact_json(value).encode()
        digest = hashlib.blake2b(raw, digest_size=16).digest()
        if digest in valid:
            return
        error = next(iter(validator.iter_errors(value)), None)
        if error is not None:
            raise OutputContractError(f"{name}: output violates outputSchema at {error.json_path}: {error.message}")
        if len(valid) >= VALIDATED_MEMO_SIZE:
            valid.clear()  # bounded; forgetting only costs a re-validation
        valid.add(digest)

    return validate


def compact_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _rate_window(call: CallInfo, tool: McpTool) -> Any:
    """The caller's window for this tool's class (bcp_app/service/ratelimit.py): read-only tools count as `read`, the
    others as `write`; stdio has a single local caller: no limit (None)."""
    if call.transport != "http":
        return None
    caller, authenticated = ratelimit.caller_from_headers(call.headers, call.client or None)
    return ratelimit.call_window(op_class="read" if tool.read_only else "write", caller=caller,
                                 authenticated=authenticated)


def _run_in_django(tool: McpTool, call: CallInfo) -> ToolOutcome:
    close_old_connections()
    try:
        window = _rate_window(call, tool)
        with request_scope():  # read-mostly cache entries once per call, as per HTTP request
            if tool.on_rate_limited is None:
                # A BCP tool: counted, and refused when over, in its identity's cache round trip
                # (bcp_app.service.context.resolve_context), before anything else is looked up.
                return tool.run(replace(call, counted=window))
            retry_after = window.retry_after(request_cache.count(window.key, window.timeout)) if window else None
            if retry_after is not None:
                return tool.on_rate_limited(retry_after)
            return tool.run(call)
    finally:
        # The executor thread is reused by other calls: hand its connection back to the pool now.
        connections.close_all()


def protocol_error_to_mcp(exc: ProtocolError) -> MCPError:
    return MCPError(exc.jsonrpc_code, exc.content, exc.jsonrpc_data())


async def run_tool(tool: McpTool, call: CallInfo) -> types.CallToolResult:
    try:
        outcome = await sync_to_async(_run_in_django, thread_sensitive=False)(tool, call)
    except ProtocolError as exc:
        raise protocol_error_to_mcp(exc) from None
    except MCPError:
        raise
    except Exception:
        logger.exception("MCP tool %s failed", call.name)
        error = ProtocolError("internal_error", "Erro interno; nada foi alterado. Tente novamente.")
        raise protocol_error_to_mcp(error) from None
    return outcome.as_result()


def api_key_from(call: CallInfo) -> str | None:
    """`Authorization: Bearer <key>` or `X-API-Key: <key>`; None when neither is sent."""
    authorization = call.headers.get("authorization", "").strip()
    if authorization:
        scheme, _, token = authorization.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise ProtocolError("unauthenticated", "Use Authorization: Bearer <chave de API>.")
        return token.strip()
    api_key = call.headers.get("x-api-key", "").strip()
    return api_key or None
