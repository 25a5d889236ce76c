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
from dataclasses import dataclass
from typing import Any

import mcp_types as types
from asgiref.sync import ThreadSensitiveContext
from django.conf import settings
from mcp.server.lowlevel.server import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import MCPError

from bcp_app.protocol.errors import PROTOCOL_ERRORS, ProtocolError
from bcp_app.transports.mcp.tools import CallInfo, McpTool, protocol_error_to_mcp, run_tool
from bcp_app.transports.mcp.tools import all_tools as _all
from kernel.ops.asgi_guard import replaying

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


def build_server(
    tools: list[McpTool] | None = None,
    *,
    stdio_headers: dict[str, str] | None = None,
    title: str = "BCP",
    instructions: str = INSTRUCTIONS,
) -> Server[Any]:
    """A low-level MCP server listing `tools` and dispatching `tools/call` to them.

    `stdio_headers` stand in for HTTP headers on stdio (e.g. the operator's API key and language).
    """
    registry = {tool.name: tool for tool in (tools if tools is not None else all_tools())}
    listed = [tool.as_tool() for tool in registry.values()]

    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listed)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        tool = registry.get(params.name)
        if tool is None:
            raise protocol_error_to_mcp(ProtocolError("invalid_request", f"Ferramenta desconhecida: {params.name}."))
        call = await _call_info(ctx, params, stdio_headers or {})
        return await run_tool(tool, call)

    return Server(
        SERVER_NAME,
        version=SERVER_VERSION,
        title=f"{settings.SHOP_NAME} ({title})",
        instructions=instructions,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        # Lets the 2026-07-28 transport check Mcp-Param-* headers without re-running tools/list per call.
        get_tool_input_schema=lambda name: registry[name].input_schema if name in registry else None,
    )


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
    body = await request.body()  # already read by the transport; Starlette caches it
    return CallInfo(
        name=params.name,
        arguments=arguments,
        transport="http",
        method=request.method,
        authority=request.headers.get("host", ""),
        path=request.url.path,
        query=request.url.query or None,
        headers={key.lower(): value for key, value in request.headers.items()},
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


def _bad_request_id(body: bytes) -> str | None:
    """Why a request's `id` is unusable, or None. MCP: a request id is a string or an integer, never null.

    The SDK treats a message with an id of another type as a notification and answers an empty 202.
    """
    try:
        message = json.loads(body)
    except ValueError:
        return None  # the SDK answers the parse error itself
    for item in message if isinstance(message, list) else [message]:
        if isinstance(item, dict) and "method" in item and "id" in item:
            request_id = item["id"]
            if isinstance(request_id, bool) or not isinstance(request_id, str | int):
                kind = _JSON_KINDS.get(type(request_id), "null" if request_id is None else "booleano")
                return f"Invalid Request: o id de uma requisição MCP é texto ou inteiro (recebido: {kind})."
    return None


@dataclass
class _Running:
    manager: StreamableHTTPSessionManager
    runner: asyncio.Task[None]
    stop: asyncio.Event


class McpAsgiApp:
    """An MCP ASGI app (`/bcp/mcp`; `/ucp/mcp` with UCP's server). `startup()`/`shutdown()` run the SDK session
    manager (lifespan).

    The manager's task group lives in the event loop that started it, so a manager is kept per
    running loop: several servers in one process (e.g. test servers in threads) never share one.
    """

    def __init__(self, build: Callable[[], Server[Any]] = lambda: build_server()) -> None:
        self._build = build
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
        self._running[loop] = _Running(manager, runner, stop)

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
        bad_id = _bad_request_id(body)
        if bad_id is not None:
            await _send_json(send, 400, _error(None, -32600, bad_id), [])
            return
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


asgi_app = McpAsgiApp()

__all__ = ["MCPError", "McpAsgiApp", "asgi_app", "build_server", "error_status", "security_settings"]
