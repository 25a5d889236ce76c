"""What the ASGI router does for every mounted app (`/bcp/mcp`, `/bcp/a2a`, the agent card) before it runs.

Django's own pages get these from Django (`DATA_UPLOAD_MAX_MEMORY_SIZE`, `SecurityMiddleware`); the
mounted protocol apps do not pass through Django, so the router applies the same rules once, here:

- the request body cap is Django's `DATA_UPLOAD_MAX_MEMORY_SIZE`, so REST, MCP and A2A share one limit
  (HTTP 413 with a JSON-RPC error when a body is larger, checked while reading, before any parsing);
- a body that is not UTF-8 or is nested deeper than `kernel.json_limits.MAX_DEPTH` is a JSON-RPC
  parse error / invalid request with a plain message: no parser internals ("maximum recursion
  depth", codec errors) ever reach the caller; the JSON parsed for that check is handed to the app in the scope
  (`parsed_body`), so MCP and A2A do not parse the same bytes again;
- SecurityMiddleware's headers from the same settings (HSTS on secure requests, nosniff, referrer and
  cross-origin-opener policy) and its HTTPS rule: with `SECURE_SSL_REDIRECT` a plain-HTTP GET is
  redirected, any other plain-HTTP request is refused (a redirect would drop a POST body), except on
  paths matching `SECURE_REDIRECT_EXEMPT` (searched in the path without its leading "/", as Django does).
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from django.conf import settings

from kernel.json_limits import MAX_DEPTH, nesting_depth

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


async def json_rpc_error(
    send: Send, status: int, code: int, message: str, headers: list[tuple[bytes, bytes]], *, bcp_code: str
) -> None:
    # `data` as BCP §5.4 has it for the protocol's errors: its code and the same Portuguese text
    error = {"code": code, "message": message, "data": {"code": bcp_code, "content": message}}
    body = json.dumps({"jsonrpc": "2.0", "id": None, "error": error}, ensure_ascii=False).encode()
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


def is_secure(scope: Scope) -> bool:
    """Django's `request.is_secure()` for an ASGI scope, honouring `SECURE_PROXY_SSL_HEADER`."""
    proxy = getattr(settings, "SECURE_PROXY_SSL_HEADER", None)
    if proxy:
        header, expected = proxy
        name = header.removeprefix("HTTP_").replace("_", "-").lower().encode()
        value = dict(scope.get("headers") or []).get(name)
        if value is not None:
            return value.decode("latin-1").split(",", 1)[0].strip() == expected
    return scope.get("scheme") == "https"


def redirect_exempt(path: str) -> bool:
    """`SECURE_REDIRECT_EXEMPT` as SecurityMiddleware applies it (regexes searched in the path sans "/")."""
    patterns = getattr(settings, "SECURE_REDIRECT_EXEMPT", None) or ()
    bare = path.lstrip("/")
    return any(re.search(pattern, bare) for pattern in patterns)


def security_headers(secure: bool) -> list[tuple[bytes, bytes]]:
    """The headers `django.middleware.security.SecurityMiddleware` would add, from the same settings."""
    headers: list[tuple[bytes, bytes]] = []
    seconds = getattr(settings, "SECURE_HSTS_SECONDS", 0)
    if secure and seconds:
        value = f"max-age={seconds}"
        if getattr(settings, "SECURE_HSTS_INCLUDE_SUBDOMAINS", False):
            value += "; includeSubDomains"
        if getattr(settings, "SECURE_HSTS_PRELOAD", False):
            value += "; preload"
        headers.append((b"strict-transport-security", value.encode()))
    if getattr(settings, "SECURE_CONTENT_TYPE_NOSNIFF", True):
        headers.append((b"x-content-type-options", b"nosniff"))
    referrer = getattr(settings, "SECURE_REFERRER_POLICY", None)
    if referrer:
        value = referrer if isinstance(referrer, str) else ",".join(referrer)
        headers.append((b"referrer-policy", value.encode()))
    coop = getattr(settings, "SECURE_CROSS_ORIGIN_OPENER_POLICY", None)
    if coop:
        headers.append((b"cross-origin-opener-policy", coop.encode()))
    return headers


def _with_headers(send: Send, extra: list[tuple[bytes, bytes]]) -> Send:
    names = {name for name, _ in extra}

    async def wrapped(message: Message) -> None:
        if message["type"] == "http.response.start":
            kept = [(k, v) for k, v in message.get("headers") or [] if k.lower() not in names]
            message = {**message, "headers": [*kept, *extra]}
        await send(message)

    return wrapped


async def _insecure(scope: Scope, send: Send, headers: list[tuple[bytes, bytes]]) -> None:
    if scope.get("method") in ("GET", "HEAD"):
        host = dict(scope.get("headers") or []).get(b"host", b"").decode("latin-1")
        target = getattr(settings, "SECURE_SSL_HOST", None) or host
        query = scope.get("query_string", b"").decode("latin-1")
        location = f"https://{target}{scope.get('raw_path', b'').decode('latin-1') or scope['path']}"
        location += f"?{query}" if query else ""
        await send(
            {
                "type": "http.response.start",
                "status": 301,
                "headers": [(b"location", location.encode("latin-1")), (b"content-length", b"0"), *headers],
            }
        )
        await send({"type": "http.response.body", "body": b"", "more_body": False})
        return
    await json_rpc_error(send, 403, -32600, "Invalid Request: use HTTPS.", headers, bcp_code="invalid_request")


# Scope key under which `guarded` hands the app the body it parsed, as (body bytes, their JSON): a mounted app that
# would parse the same bytes again takes it with `parsed_body` instead (issue 34).
PARSED_BODY = "kernel.asgi_guard.parsed_body"
NOT_PARSED: Any = object()  # `parsed_body`'s answer when the guard did not parse these bytes


def body_problem(body: bytes) -> tuple[int, str] | None:
    """(JSON-RPC code, message) when `body` must not reach a JSON parser, else None."""
    return _checked(body)[0]


def _checked(body: bytes) -> tuple[tuple[int, str] | None, Any]:
    """`body_problem`'s answer, and the body's JSON when it parsed it (else `NOT_PARSED`)."""
    if not body:
        return None, NOT_PARSED
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        return (-32700, "Parse error: o corpo não é JSON UTF-8 válido."), NOT_PARSED
    if nesting_depth(body) > MAX_DEPTH:
        return (-32600, f"Invalid Request: JSON aninhado demais (máximo {MAX_DEPTH} níveis)."), NOT_PARSED
    try:
        parsed = json.loads(body)
    except ValueError as exc:  # said here in Portuguese, not as the SDK's parser words it ("EOF while parsing…")
        where = f" (linha {exc.lineno}, coluna {exc.colno})" if isinstance(exc, json.JSONDecodeError) else ""
        return (-32700, f"Parse error: o corpo não é JSON válido{where}."), NOT_PARSED
    return None, parsed


def parsed_body(scope: Scope, body: bytes) -> Any:
    """The JSON `guarded` parsed from exactly these `body` bytes (`json.loads`, as the app would), taken off the
    scope so that it is handed out once (the caller may change it); `NOT_PARSED` if the guard did not parse them."""
    handed = scope.pop(PARSED_BODY, None)
    if handed is None or not (handed[0] is body or handed[0] == body):
        return NOT_PARSED
    return handed[1]


async def guarded(app: ASGIApp, scope: Scope, receive: Receive, send: Send) -> None:
    """Run a mounted `app` behind the HTTPS rule, the security headers and the body checks."""
    if scope["type"] != "http":
        await app(scope, receive, send)
        return
    secure = is_secure(scope)
    headers = security_headers(secure)
    if getattr(settings, "SECURE_SSL_REDIRECT", False) and not secure and not redirect_exempt(scope.get("path", "")):
        await _insecure(scope, send, headers)
        return
    send = _with_headers(send, headers)
    if scope.get("method") in ("GET", "HEAD", "OPTIONS", "DELETE"):
        await app(scope, receive, send)
        return
    limit = int(settings.DATA_UPLOAD_MAX_MEMORY_SIZE or 2_621_440)
    declared = dict(scope.get("headers") or []).get(b"content-length", b"")
    too_large = f"Invalid Request: o corpo passa do limite de {limit} bytes."
    if declared.isdigit() and int(declared) > limit:
        await json_rpc_error(send, 413, -32600, too_large, headers, bcp_code="request_too_large")
        return
    try:
        body = await _read_body(receive, limit)
    except _TooLarge:
        await json_rpc_error(send, 413, -32600, too_large, headers, bcp_code="request_too_large")
        return
    except ConnectionAbortedError:
        return
    problem, parsed = _checked(body)
    if problem is not None:
        await json_rpc_error(send, 400, *problem, headers, bcp_code="invalid_request")
        return
    if parsed is not NOT_PARSED:
        scope[PARSED_BODY] = (body, parsed)
    await app(scope, replaying(body, receive), send)


def replaying(body: bytes, receive: Receive) -> Receive:
    """A `receive` that hands the app the body already read, once, then the real channel (the disconnect)."""
    replayed = False

    async def replay() -> Message:
        nonlocal replayed
        if not replayed:
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay
