"""MCP binding of BCP (§13.2) plus the typed catalogue tools (seed 002), on the official `mcp` SDK.

Mounted by `config/asgi.py` at `/bcp/mcp` (`settings.ASGI_MOUNTS`): streamable HTTP, stateless, JSON
responses, serving both the 2026-07-28 per-request revision and the earlier initialize-handshake
revisions. Host/Origin are checked against `BCP_MCP_ALLOWED_HOSTS` / `BCP_MCP_ALLOWED_ORIGINS`.
JSON-RPC errors leave with the HTTP status BCP §5.4 gives their `data.code`. The same tools are
served over stdio by `manage.py mcp_stdio`. Nothing is kept in memory between requests.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, replace
from typing import Any

import mcp_types as types
import orjson
from asgiref.sync import ThreadSensitiveContext
from django.conf import settings
from django.db import DatabaseError, close_old_connections, connections
from mcp.server.connection import Connection
from mcp.server.lowlevel.server import Server
from mcp.server.runner import ServerRunner, modern_error_data
from mcp.server.streamable_http import check_accept_headers
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from mcp.shared.exceptions import MCPError
from mcp.shared.inbound import (
    ERROR_CODE_HTTP_STATUS,
    MCP_PROTOCOL_VERSION_HEADER,
    X_MCP_HEADER_KEY,
    InboundModernRoute,
    classify_inbound_request,
    find_duplicated_routing_header,
    validate_mcp_param_headers,
)
from mcp_types import JSONRPCError, JSONRPCResponse
from mcp_types import methods as mcp_methods
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import Response

from bcp_app.protocol.errors import PROTOCOL_ERRORS, ProtocolError
from bcp_app.service.discovery import store_trade_name
from bcp_app.transports.mcp.tools import CallInfo, McpTool, ToolOutcome, protocol_error_to_mcp, run_tool
from bcp_app.transports.mcp.tools import all_tools as _all
from bcp_app.transports.scope import path_and_query
from kernel import threads
from kernel.ops.asgi_guard import NOT_PARSED, parsed_body, replaying

logger = logging.getLogger("bcp_app.transports.mcp.server")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

SERVER_NAME = "loja-bcp"
SERVER_VERSION = "2026-07-28"
# JSON-RPC codes without a BCP `data.code`: the status the MCP 2026-07-28 transport table gives them.
_JSONRPC_STATUS = {-32700: 400, -32600: 400, -32602: 400, -32601: 404, -32603: 500}


def all_tools() -> list[McpTool]:
    # Imported late: the tool modules pull in the ORM-backed operations.
    return _all()


INSTRUCTIONS = (
    "Loja brasileira com BCP. Ferramentas BCP (create_checkout, get_order, …) exigem "
    "arguments.meta['ucp-agent'].profile; as ferramentas tipadas (catalogue.list, product.detail, "
    "inventory.check, order.intent, order.status) não. Valores em centavos de real."
)


class StoreNamedServer(Server[Any]):
    """The SDK's server whose `title` ("<store> (BCP)") and `instructions` ("<store>: …") name the store as the
    merchant set it in "Dados da loja", not the project's SHOP_NAME.

    The name (`store_name`) is the one the process's store settings hold now (`store_trade_name`: kept under
    their version token, so a save reaches every process): each tool call notes it in its own thread after it
    ran (the BCP context has prefetched the token, so it costs nothing), and `McpAsgiApp` reads it in a thread
    before any other request (initialize, tools/list, server/discover). The SDK's `serverInfo` stamp is
    remembered per name instead of once per server."""

    def __init__(self, *args: Any, label: str, instructions: str, **kwargs: Any) -> None:
        self.store_name = str(settings.SHOP_NAME)  # until the first read (no query at start-up, in the loop)
        self._label = label
        self._instructions = instructions
        self._stamp: tuple[str, dict[str, Any]] | None = None
        self.bcp_tools: dict[str, McpTool] = {}  # by name, as `tools/call` runs them
        super().__init__(*args, **kwargs)

    @property  # type: ignore[override]
    def title(self) -> str:
        return f"{self.store_name or 'Loja'} ({self._label})"

    @title.setter
    def title(self, value: str | None) -> None:  # the SDK's __init__ assigns it: ours is `label`
        pass

    @property  # type: ignore[override]
    def instructions(self) -> str:
        return f"{self.store_name or 'Loja'}: {self._instructions}"

    @instructions.setter
    def instructions(self, value: str | None) -> None:  # as `title`
        pass

    @property  # type: ignore[override]
    def _server_info_stamp_source(self) -> dict[str, Any]:
        stamp = self._stamp
        if stamp is None or stamp[0] != self.store_name:
            stamp = self._stamp = (
                self.store_name,
                self.server_info.model_dump(by_alias=True, mode="json", exclude_none=True),
            )
        return stamp[1]

    def note_store_name(self) -> None:
        """In a worker thread (ORM): the store's name now."""
        self.store_name = store_trade_name()


def _note_store_name(server: StoreNamedServer) -> None:
    close_old_connections()
    try:
        server.note_store_name()
    except DatabaseError:  # the database away: initialize still answers, with the name last read
        logger.warning("MCP: the store's name could not be read; the last one read stands", exc_info=True)
    finally:
        connections.close_all()  # the executor thread is reused by other calls: its connection back to the pool


def _naming(server: StoreNamedServer, tool: McpTool) -> McpTool:
    """`tool` whose run, in its thread and request scope, then notes the store's name on `server` (for the
    `serverInfo` stamp of its own answer)."""
    run = tool.run

    def named_run(call: CallInfo) -> ToolOutcome:
        outcome = run(call)
        server.note_store_name()
        return outcome

    return replace(tool, run=named_run)


def build_server(
    tools: list[McpTool] | None = None,
    *,
    stdio_headers: dict[str, str] | None = None,
    title: str = "BCP",
    instructions: str = INSTRUCTIONS,
) -> StoreNamedServer:
    """A low-level MCP server listing `tools` and dispatching `tools/call` to them.

    `stdio_headers` stand in for HTTP headers on stdio (e.g. the operator's API key and language).
    """
    served = tools if tools is not None else all_tools()
    registry: dict[str, McpTool] = {}
    listed = [tool.as_tool() for tool in served]

    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listed)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        tool = registry.get(params.name)
        if tool is None:
            raise protocol_error_to_mcp(ProtocolError("invalid_request", f"Ferramenta desconhecida: {params.name}."))
        call = await _call_info(ctx, params, stdio_headers or {})
        return await run_tool(tool, call)

    server = StoreNamedServer(
        SERVER_NAME,
        version=SERVER_VERSION,
        label=title,
        instructions=instructions,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        # Lets the 2026-07-28 transport check Mcp-Param-* headers without re-running tools/list per call.
        get_tool_input_schema=lambda name: registry[name].input_schema if name in registry else None,
    )
    registry.update({tool.name: _naming(server, tool) for tool in served})
    server.bcp_tools = registry  # the fast path (`McpAsgiApp`) runs the same, naming, tools
    return server


async def _call_info(ctx: Any, params: types.CallToolRequestParams, stdio_headers: dict[str, str]) -> CallInfo:
    arguments = params.arguments or {}
    meta = params.meta if isinstance(params.meta, dict) else {}
    request = getattr(ctx, "request", None)
    if request is None or not hasattr(request, "headers"):
        return CallInfo(
            name=params.name,
            arguments=arguments,
            transport="stdio",
            headers=stdio_headers,
            protocol_version=ctx.protocol_version,
            meta=meta,
        )
    # the fast path's own read of the body (`_FastContext`), else the transport's (Starlette caches it)
    body = getattr(ctx, "body", None)
    if body is None:
        body = await request.body()
    # Starlette's `request.headers.items()` and `request.url`, read off the scope (issue 34)
    headers = {key.decode("latin-1").lower(): value.decode("latin-1") for key, value in request.scope["headers"]}
    path, query = path_and_query(request.scope)
    return CallInfo(
        name=params.name,
        arguments=arguments,
        transport="http",
        method=request.method,
        authority=request.headers.get("host", ""),
        path=path,
        query=query,
        headers=headers,
        body=body,
        protocol_version=ctx.protocol_version,
        client=request.client.host if request.client else "",
        meta=meta,
    )


def security_settings() -> TransportSecuritySettings:
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=list(settings.BCP_MCP_ALLOWED_HOSTS),
        allowed_origins=list(settings.BCP_MCP_ALLOWED_ORIGINS),
    )


def error_status(body: bytes) -> tuple[int | None, dict[str, str]] | None:
    """HTTP status (and headers) for a JSON-RPC error body, per BCP §5.4; None if it is not an error.

    The status is None for codes this table does not know: the SDK's own choice then stands.
    """
    if b'"error"' not in body:  # a result (most answers): not parsed again only to find no error in it
        return None
    try:
        message = json.loads(body)
    except ValueError:
        return None
    error = message.get("error") if isinstance(message, dict) else None
    if not isinstance(error, dict):
        return None
    data = error.get("data") if isinstance(error.get("data"), dict) else {}
    headers: dict[str, str] = {}
    if isinstance(data.get("retry_after"), int):
        headers["retry-after"] = str(data["retry_after"])
    if data.get("code") in PROTOCOL_ERRORS:
        status = PROTOCOL_ERRORS[data["code"]][0]
        if data["code"] == "unauthenticated":
            headers["www-authenticate"] = 'Bearer realm="bcp"'
        return status, headers
    code = error.get("code")
    return (_JSONRPC_STATUS.get(code) if isinstance(code, int) else None), headers


class _StatusFromError:
    """Wraps `send`: a JSON body holding a JSON-RPC error leaves with its BCP §5.4 HTTP status."""

    def __init__(self, send: Send) -> None:
        self.send = send
        self.start: Message | None = None
        self.chunks: list[bytes] = []

    async def __call__(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            content_type = dict(message.get("headers") or []).get(b"content-type", b"")
            if content_type.startswith(b"application/json"):
                self.start = message
                return
            await self.send(message)
            return
        if message["type"] == "http.response.body" and self.start is not None:
            self.chunks.append(message.get("body", b""))
            if message.get("more_body", False):
                return
            body = b"".join(self.chunks)
            start, self.start = self.start, None
            mapped = error_status(body)
            if mapped is not None:
                status, extra = mapped
                headers = [(k, v) for k, v in start.get("headers", []) if k.decode().lower() not in extra]
                headers += [(k.encode(), v.encode()) for k, v in extra.items()]
                start = {**start, "status": status or start["status"], "headers": headers}
            await self.send(start)
            await self.send({"type": "http.response.body", "body": body, "more_body": False})
            return
        await self.send(message)


def _error(request_id: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


async def _send_json(send: Send, status: int, body: dict[str, Any], headers: list[tuple[bytes, bytes]]) -> None:
    raw = json.dumps(body, ensure_ascii=False).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(raw)).encode()), *headers],
        }
    )
    await send({"type": "http.response.body", "body": raw, "more_body": False})


async def _buffered(receive: Receive) -> tuple[bytes, Receive]:
    """The whole request body (already capped by the ASGI router) and a `receive` that replays it."""
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            break
    body = b"".join(chunks)
    return body, replaying(body, receive)


_JSON_KINDS = {float: "número decimal", dict: "objeto", list: "lista"}
_UNPARSED = object()  # a body that is not JSON: the SDK answers the parse error itself


def _decoded(body: bytes) -> Any:
    """The request body's JSON, parsed once for `_bad_request_id` and the fast path when the router's guard did not
    hand it on (`parsed_body`); `_UNPARSED` if it is not JSON (the guard already refused one nested too deep)."""
    try:
        return json.loads(body)
    except (ValueError, RecursionError):
        return _UNPARSED


def _bad_request_id(message: Any) -> str | None:
    """Why a request's `id` is unusable, or None. MCP: a request id is a string or an integer, never null.

    The SDK treats a message with an id of another type as a notification and answers an empty 202.
    """
    if message is _UNPARSED:
        return None
    for item in message if isinstance(message, list) else [message]:
        if isinstance(item, dict) and "method" in item and "id" in item:
            request_id = item["id"]
            if isinstance(request_id, bool) or not isinstance(request_id, str | int):
                kind = _JSON_KINDS.get(type(request_id), "null" if request_id is None else "booleano")
                return f"Invalid Request: o id de uma requisição MCP é texto ou inteiro (recebido: {kind})."
    return None


def _malformed(scope: Scope, message: Any) -> tuple[Any, int, str] | None:
    """(id, JSON-RPC code, Portuguese message) for what the SDK would refuse in English or as plain text, or None.

    Agent QA walk: a wrong Content-Type got a plain-text 400 "Invalid Content-Type header"; a batch, or `params` as
    a list, a pydantic dump ("4 validation errors for union[JSONRPCRequest, …]"); `tools/call` with `arguments` not an
    object or `name` not a string, "Invalid request parameters". Each now names the member and why."""
    content_type = next((v for k, v in scope.get("headers") or () if k == b"content-type"), b"")
    if content_type.split(b";", 1)[0].strip().lower() != b"application/json":
        return None, -32600, "Invalid Request: o Content-Type de uma requisição MCP é application/json."
    if message is _UNPARSED:
        return None  # the SDK's parse error (-32700) already says where the JSON breaks
    if isinstance(message, list):
        return None, -32600, "Invalid Request: envie uma mensagem JSON-RPC por POST (o MCP não aceita lotes)."
    if not isinstance(message, dict):
        return None, -32600, "Invalid Request: a mensagem JSON-RPC é um objeto."
    request_id, params = message.get("id"), message.get("params")
    if "params" in message and not isinstance(params, dict):
        return request_id, -32602, "Invalid params: params deve ser um objeto."
    if message.get("method") == "tools/call" and isinstance(params, dict):
        if not isinstance(params.get("name"), str):
            return request_id, -32602, "Invalid params: params.name deve ser o nome da ferramenta (texto)."
        if "arguments" in params and not isinstance(params["arguments"], dict):
            return request_id, -32602, "Invalid params: params.arguments deve ser um objeto."
    return None


@dataclass
class _Running:
    manager: StreamableHTTPSessionManager
    runner: asyncio.Task[None]
    stop: asyncio.Event
    fast: dict[str, McpTool]  # the tools `_fast_call` answers, by name
    # the fast tools whose input schema names an `x-mcp-header` anywhere: only their Mcp-Param-* headers can
    # disagree with the body (`validate_mcp_param_headers` finds no annotated property in the others)
    param_headers: frozenset[str]


def _param_headers(tools: dict[str, McpTool]) -> frozenset[str]:
    return frozenset(name for name, tool in tools.items() if X_MCP_HEADER_KEY in json.dumps(tool.input_schema))


# Issue 34: the read tools answered without the SDK's per-request machinery (see `_fast_call`).
FAST_TOOLS = frozenset({"get_order"})
_VERSION_HEADER = MCP_PROTOCOL_VERSION_HEADER.lower().encode()
FAST_MEMO_SIZE = 512  # distinct tool results remembered per process as the SDK's wire bytes (a few MB at most)
_wire_results: dict[bytes, bytes] = {}


async def _fast_request(
    running: _Running, scope: Scope, body: bytes, decoded: Any
) -> tuple[dict[str, Any], str] | None:
    """(the JSON-RPC request, its protocol version) when it is a 2026-07-28 `tools/call` of a fast tool that every
    check of the SDK's own entry (`mcp/server/_streamable_http_modern.py`) passes, run in the same order with the
    SDK's own functions; None otherwise, and the SDK serves it (and answers any rejection itself)."""
    if scope.get("method") != "POST" or b'"tools/call"' not in body:
        return None
    raw_headers = scope.get("headers") or []
    versions = [value for name, value in raw_headers if name == _VERSION_HEADER]
    if len(versions) != 1 or versions[0].decode("latin-1") not in MODERN_PROTOCOL_VERSIONS:
        return None
    manager = running.manager
    limit = getattr(manager.asgi_app, "max_body_size", None)
    if limit is None or len(body) > limit:
        return None
    request = Request(scope)
    headers = request.headers
    # Starlette's `headers.items()` and `dict(headers)` (each name's first value), decoded once off the scope
    # (issue 34: `dict(headers)` looked every name up again in the list, decoding it again)
    pairs = [(name.decode("latin-1"), value.decode("latin-1")) for name, value in raw_headers]
    first: dict[str, str] = {}
    for name, value in pairs:
        first.setdefault(name, value)
    length = first.get("content-length")
    if length is not None and (not length.isdigit() or int(length) > limit):
        return None
    if await TransportSecurityMiddleware(manager.security_settings).validate_request(request, is_post=True) is not None:
        return None
    if not check_accept_headers(request)[0] or not manager.json_response:
        return None
    if not isinstance(decoded, dict) or decoded.get("jsonrpc") != "2.0" or decoded.get("method") != "tools/call":
        return None
    request_id, params = decoded.get("id"), decoded.get("params")
    if isinstance(request_id, bool) or not isinstance(request_id, str | int) or not isinstance(params, dict):
        return None
    if set(decoded) - {"jsonrpc", "id", "method", "params"} or params.get("name") not in running.fast:
        return None
    if find_duplicated_routing_header(pairs) is not None:
        return None
    verdict = classify_inbound_request(decoded, headers=first)
    if not isinstance(verdict, InboundModernRoute):
        return None
    tool = running.fast[params["name"]]
    arguments = params.get("arguments")
    if arguments is not None and not isinstance(arguments, dict):
        return None
    checked = tool.name in running.param_headers
    if checked and validate_mcp_param_headers(tool.input_schema, arguments or {}, headers) is not None:
        return None
    if not _surface_valid(verdict.protocol_version, params):
        return None
    return decoded, verdict.protocol_version


_valid_surfaces: set[tuple[str, bytes]] = set()


def _surface_valid(version: str, params: dict[str, Any]) -> bool:
    """The SDK's surface check of a `tools/call`'s params (`validate_client_request`), remembered per process by
    the params' bytes: an agent reading its orders sends the same params again and again, and validation is a
    pure function of them (issue 34: the params were validated twice per call, this full frame and then the
    `CallToolRequestParams` `_fast_call` hands the tool, which is still built fresh for every call). Only a pass
    is remembered: params the SDK refuses go to the SDK each time, which answers the refusal itself."""
    try:
        key = (version, orjson.dumps(params))
    except orjson.JSONEncodeError:  # e.g. a lone surrogate: not remembered, checked as before
        key = None
    if key is not None and key in _valid_surfaces:
        return True
    try:
        mcp_methods.validate_client_request("tools/call", version, params)
    except (KeyError, ValueError):  # pydantic's ValidationError is a ValueError
        return False
    if key is not None:
        if len(_valid_surfaces) >= FAST_MEMO_SIZE:
            _valid_surfaces.clear()  # bounded; forgetting only costs a validation
        _valid_surfaces.add(key)
    return True


async def _fast_call(running: _Running, scope: Scope, receive: Receive, send: Send, body: bytes, decoded: Any) -> bool:
    """Answer a read tool's `tools/call` as the SDK would, byte for byte, without its per-request machinery;
    False (nothing sent) when the request is not one (`_fast_request`).

    Issue 34: in the SDK, a `get_order` spent more CPU in the per-request connection, runner, middleware chain
    and the pydantic dump and `json.dumps` of the whole result than in our tool. What is bypassed, and why that
    is safe: the checks are the SDK's own functions, in its order, and anything they would refuse goes to the SDK;
    the tool receives the `CallToolRequestParams` the SDK would validate and the `CallInfo` `_call_info` builds
    from them; the result is shaped once per distinct output by the SDK's own `ServerRunner._serialize` and
    `JSONRPCResponse` dump (remembered by content, as `output_validator` does), so the bytes are the SDK's
    (tests/bcp_app/test_mcp_fast_path.py compares them). Not run: the SDK's OpenTelemetry span for the call
    (no tracer is configured in the shop) and a fresh `Connection` per call (nothing of it is read here).

    A result leaves as it is: `_StatusFromError` finds no top-level `error` in it (`error_status` is None), so
    only an error is sent through it, for its BCP §5.4 status."""
    found = await _fast_request(running, scope, body, decoded)
    if found is None:
        return False
    decoded, version = found
    request_id, params = decoded["id"], decoded["params"]
    typed = _typed_params(params)
    if typed is None:
        return False
    tool = running.fast[typed.name]
    server = running.manager.app
    fake = _FastContext(Request(scope, replaying(body, receive)), version, body)
    try:
        result = await run_tool(tool, await _call_info(fake, typed, {}))
        wire = _wire_result(server, version, result)
    except Exception as exc:  # as the SDK's `_to_jsonrpc_response`: the error the SDK would send for it
        error = JSONRPCError(jsonrpc="2.0", id=request_id, error=modern_error_data(exc))
        status = ERROR_CODE_HTTP_STATUS.get(error.error.code, 200)
        raw = json.dumps(error.model_dump(mode="json", by_alias=True, exclude_none=True), separators=(",", ":"))
        await Response(raw, status_code=status, media_type="application/json")(scope, receive, _StatusFromError(send))
        return True
    if type(request_id) is int:  # the usual id: json.dumps' bytes, written directly
        head = b'{"jsonrpc":"2.0","id":%d}' % request_id
    else:
        head = json.dumps({"jsonrpc": "2.0", "id": request_id}, separators=(",", ":")).encode()
    raw_body = head[:-1] + b',"result":' + wire + b"}"
    await Response(raw_body, status_code=200, media_type="application/json")(scope, receive, send)
    return True


_typed: dict[bytes, types.CallToolRequestParams] = {}


def _typed_params(params: dict[str, Any]) -> types.CallToolRequestParams | None:
    """The `CallToolRequestParams` the SDK would hand the tool, None when it refuses them; remembered per process by
    the params' bytes, as `_surface_valid` remembers their surface check (issue 34): the same params give the same
    model, which the tool only reads."""
    try:
        key: bytes | None = orjson.dumps(params)
    except orjson.JSONEncodeError:
        key = None
    typed = _typed.get(key) if key is not None else None
    if typed is None:
        try:
            typed = types.CallToolRequestParams.model_validate(params, by_name=False)
        except ValidationError:
            return None
        if key is not None:
            if len(_typed) >= FAST_MEMO_SIZE:
                _typed.clear()  # bounded; forgetting only costs a validation
            _typed[key] = typed
    return typed


@dataclass
class _FastContext:
    """What `_call_info` reads of the SDK's request context."""

    request: Request
    protocol_version: str
    body: bytes  # the request's body, already read (`_buffered`)


def _wire_result(server: Server[Any], version: str, result: types.CallToolResult) -> bytes:
    """The `result` member of the SDK's response to `result`, as its bytes, remembered by content: keyed by the
    content's own bytes, which the dict hashes once (issue 34: a blake2b digest of them, the reference C
    implementation, cost about 100 k instructions per Get Order, more than the dict's hash and one compare)."""
    content = [block.model_dump(mode="json", by_alias=True) for block in result.content]
    # the title too: the `serverInfo` stamp names the store, which a save in the admin renames
    key = orjson.dumps([version, server.title, content, result.structured_content, result.is_error, result.meta])
    wire = _wire_results.get(key)
    if wire is None:
        connection = Connection.from_envelope(version, None, {})
        dumped = ServerRunner(server, connection, None)._serialize("tools/call", version, result)
        envelope = JSONRPCResponse(jsonrpc="2.0", id=0, result=dumped).model_dump(
            mode="json", by_alias=True, exclude_none=True
        )
        full = json.dumps(envelope, separators=(",", ":")).encode()
        prefix = b'{"jsonrpc":"2.0","id":0,"result":'
        if not full.startswith(prefix) or not full.endswith(b"}"):
            raise RuntimeError("MCP: unexpected JSON-RPC envelope from the SDK")
        wire = full[len(prefix) : -1]
        if len(_wire_results) >= FAST_MEMO_SIZE:
            _wire_results.clear()  # bounded; forgetting only costs a dump
        _wire_results[key] = wire
    return wire


class McpAsgiApp:
    """An MCP ASGI app (`/bcp/mcp`; `/ucp/mcp` with UCP's server). `startup()`/`shutdown()` run the SDK session
    manager (lifespan).

    The manager's task group lives in the event loop that started it, so a manager is kept per
    running loop: several servers in one process (e.g. test servers in threads) never share one.
    """

    def __init__(
        self, build: Callable[[], Server[Any]] = lambda: build_server(), fast_tools: frozenset[str] = frozenset()
    ) -> None:
        self._build = build
        self._fast_tools = fast_tools
        self._running: dict[asyncio.AbstractEventLoop, _Running] = {}

    async def startup(self) -> None:
        loop = asyncio.get_running_loop()
        if loop in self._running:
            return
        # A session manager runs only once, so every lifespan gets a fresh one.
        manager = StreamableHTTPSessionManager(
            app=self._build(), json_response=True, stateless=True, security_settings=security_settings()
        )
        started = asyncio.Event()
        stop = asyncio.Event()

        async def run() -> None:
            async with manager.run():
                started.set()
                await stop.wait()

        runner = loop.create_task(run())
        started_task = asyncio.ensure_future(started.wait())
        done, _ = await asyncio.wait({started_task, runner}, return_when=asyncio.FIRST_COMPLETED)
        if runner in done:
            started_task.cancel()
            runner.result()  # re-raise the start-up failure
        served = getattr(manager.app, "bcp_tools", None) or {tool.name: tool for tool in all_tools()}
        fast = {name: tool for name, tool in served.items() if name in self._fast_tools}
        self._running[loop] = _Running(manager, runner, stop, fast, _param_headers(fast))

    async def shutdown(self) -> None:
        running = self._running.pop(asyncio.get_running_loop(), None)
        if running is not None:
            running.stop.set()
            await running.runner

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        running = self._running.get(asyncio.get_running_loop())
        if running is None:
            body = b'{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"MCP server not started"}}'
            await send(
                {
                    "type": "http.response.start",
                    "status": 503,
                    "headers": [(b"content-type", b"application/json"), (b"retry-after", b"5")],
                }
            )
            await send({"type": "http.response.body", "body": body})
            return
        if scope.get("method") in ("GET", "DELETE"):
            # Stateless: there is no session whose SSE stream a GET could open or a DELETE could end
            # (the SDK would keep an idle GET stream open for ever).
            await _send_json(
                send,
                405,
                _error(None, -32600, "Method Not Allowed: use POST (stateless server)."),
                [(b"allow", b"POST")],
            )
            return
        body, receive = await _buffered(receive)
        decoded = parsed_body(scope, body)  # the router's guard parsed these bytes already (issue 34)
        if decoded is NOT_PARSED:  # served without the guard, or a body it did not parse (empty)
            decoded = _decoded(body)
        bad_id = _bad_request_id(decoded)
        if bad_id is not None:
            await _send_json(send, 400, _error(None, -32600, bad_id), [])
            return
        malformed = _malformed(scope, decoded)
        if malformed is not None:
            request_id, code, why = malformed
            await _send_json(send, 400, _error(request_id, code, why), [])
            return
        if running.fast and await _fast_call(running, scope, receive, send, body, decoded):
            return
        server = running.manager.app
        if isinstance(server, StoreNamedServer) and not (
            isinstance(decoded, dict) and decoded.get("method") == "tools/call"
        ):
            # initialize, tools/list, server/discover: they name the store (a tool call notes it in its thread)
            await threads.in_thread(_note_store_name, server)
        # One executor thread per request for the ORM work (as Django's own ASGI handler does).
        async with ThreadSensitiveContext():
            await running.manager.handle_request(scope, receive, _StatusFromError(send))

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        # Used only when this app is served on its own (the shop's router calls startup/shutdown itself).
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                try:
                    await self.startup()
                except Exception as exc:  # the server must hear about it, not hang
                    await send({"type": "lifespan.startup.failed", "message": str(exc)})
                    return
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.shutdown()
                await send({"type": "lifespan.shutdown.complete"})
                return


asgi_app = McpAsgiApp(fast_tools=FAST_TOOLS)

__all__ = ["MCPError", "McpAsgiApp", "asgi_app", "build_server", "error_status", "security_settings"]
