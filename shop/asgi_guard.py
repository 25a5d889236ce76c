"""What the ASGI router does for every mounted app (`/bcp/mcp`, `/bcp/a2a`, the agent card) before it runs.

Django's own pages get these from Django (`DATA_UPLOAD_MAX_MEMORY_SIZE`, `SecurityMiddleware`); the
mounted protocol apps do not pass through Django, so the router applies the same rules once, here:

- the request body cap is Django's `DATA_UPLOAD_MAX_MEMORY_SIZE`, so REST, MCP and A2A share one limit
  (HTTP 413 with a JSON-RPC error when a body is larger, checked while reading, before any parsing);
- a body that is not UTF-8 or is nested deeper than `payments.json_limits.MAX_DEPTH` is a JSON-RPC
  parse error / invalid request with a plain message: no parser internals ("maximum recursion
  depth", codec errors) ever reach the caller.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from django.conf import settings

from payments.json_limits import MAX_DEPTH, nesting_depth

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


async def json_rpc_error(send: Send, status: int, code: int, message: str, headers: list[tuple[bytes, bytes]]) -> None:
    body = json.dumps(
        {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}}, ensure_ascii=False
    ).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()), *headers],
        }
    )
    await send({"type": "http.response.body", "body": body, "more_body": False})


class _TooLarge(Exception):
    pass


async def _read_body(receive: Receive, limit: int) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ConnectionAbortedError
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise _TooLarge
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def body_problem(body: bytes) -> tuple[int, str] | None:
    """(JSON-RPC code, message) when `body` must not reach a JSON parser, else None."""
    if not body:
        return None
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        return -32700, "Parse error: o corpo não é JSON UTF-8 válido."
    if nesting_depth(body) > MAX_DEPTH:
        return -32600, f"Invalid Request: JSON aninhado demais (máximo {MAX_DEPTH} níveis)."
    return None


async def guarded(app: ASGIApp, scope: Scope, receive: Receive, send: Send, headers: list[tuple[bytes, bytes]]) -> None:
    """Run `app` with its body read and checked first; `headers` go on the refusals too."""
    if scope["type"] != "http" or scope.get("method") in ("GET", "HEAD", "OPTIONS", "DELETE"):
        await app(scope, receive, send)
        return
    limit = int(settings.DATA_UPLOAD_MAX_MEMORY_SIZE or 2_621_440)
    declared = dict(scope.get("headers") or []).get(b"content-length", b"")
    too_large = f"Invalid Request: o corpo passa do limite de {limit} bytes."
    if declared.isdigit() and int(declared) > limit:
        await json_rpc_error(send, 413, -32600, too_large, headers)
        return
    try:
        body = await _read_body(receive, limit)
    except _TooLarge:
        await json_rpc_error(send, 413, -32600, too_large, headers)
        return
    except ConnectionAbortedError:
        return
    problem = body_problem(body)
    if problem is not None:
        await json_rpc_error(send, 400, *problem, headers)
        return
    replayed = False

    async def replay() -> Message:
        nonlocal replayed
        if not replayed:
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()  # after the body: the disconnect, when it comes

    await app(scope, replay, send)
