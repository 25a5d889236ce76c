"""One log line per request, for every transport (Django pages, REST, MCP, A2A).

`AccessLog` wraps the whole ASGI application: it gives each request an id (the caller's
`X-Request-ID`/`Request-Id` when sane, else a new one, echoed in `X-Request-ID`), times it, and logs
`request_id, method, path, status, duration_ms` plus what the protocol layer learnt on the way
(`platform`, `operation`, `transport`), which it adds with `annotate()` through a context variable.
In production the line is JSON (settings.LOGGING).

Some paths carry a bearer secret: the buyer's order permalink, the "Minha conta" sign-in link, the DANFE link.
Whoever reads a log must not be able to open them (BCP-SEC-04, LGPD): `redacted_path` keeps the first four
characters of such a segment (enough to tell two requests apart) and `RedactSecretPaths` does the same to
Django's own request lines ("Not Found: /orders/…", and the request it attaches). The prefixes are
`settings.LOG_SECRET_PATH_PREFIXES`: the URL layout is the project's, not the kernel's.
"""

from __future__ import annotations

import contextvars
import logging
import re
import time
import uuid
from collections.abc import Awaitable, Callable, MutableMapping
from functools import cache
from typing import Any

from django.conf import settings

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

logger = logging.getLogger("shop.access")
_current: contextvars.ContextVar[dict[str, Any] | None] = contextvars.ContextVar("shop_access_log", default=None)
_SANE_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")
# Probes would drown the log at one line every few seconds per container.
QUIET_PATHS = frozenset({"/healthz", "/readyz"})


@cache
def _secret_segments(prefixes: tuple[str, ...]) -> re.Pattern[str] | None:
    if not prefixes:
        return None
    # Not after a word character or a slash: "/bcp/v1/orders/ord_…" (a public id) is not the permalink.
    alternatives = "|".join(re.escape(prefix) for prefix in prefixes)
    return re.compile(rf"(?<![\w/.-])({alternatives})([^/?#\s'\"<>]{{4}})[^/?#\s'\"<>]+")


def redacted_path(text: str) -> str:
    """`text` with the secret segment of every secret path in it cut to its first four characters and "…"."""
    pattern = _secret_segments(tuple(getattr(settings, "LOG_SECRET_PATH_PREFIXES", ())))
    return text if pattern is None else pattern.sub(r"\1\2…", text)


class RedactSecretPaths(logging.Filter):
    """For Django's request loggers: their message names the path, and the JSON formatter writes the attached
    `request` (whose repr names it too)."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        redacted = redacted_path(message)
        if redacted != message:
            record.msg, record.args = redacted, ()
        request = getattr(record, "request", None)
        if request is not None and not isinstance(request, str):
            record.request = redacted_path(f"{getattr(request, 'method', '')} {getattr(request, 'path', '')}")
        return True


def annotate(**fields: Any) -> None:
    """Add fields (platform, operation, …) to the current request's log line; no-op outside one."""
    record = _current.get()
    if record is not None:
        record.update({key: value for key, value in fields.items() if value is not None})


def current_request_id() -> str | None:
    record = _current.get()
    return record.get("request_id") if record else None


def current_client_ip() -> str | None:
    """The client address of the current HTTP request (after uvicorn's trusted proxy headers)."""
    record = _current.get()
    return record.get("client") if record else None


def _incoming_request_id(scope: Scope) -> str | None:
    for name, value in scope.get("headers", []):
        if name in (b"x-request-id", b"request-id"):
            text = value.decode("latin-1").strip()
            if _SANE_REQUEST_ID.match(text):
                return text
    return None


class AccessLog:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = _incoming_request_id(scope) or uuid.uuid4().hex
        record: dict[str, Any] = {
            "request_id": request_id,
            "method": scope.get("method", ""),
            "path": redacted_path(scope.get("path", "")),
            "status": 500,  # stays 500 if the app dies before answering
            "client": (scope.get("client") or (None, None))[0],
        }
        token = _current.set(record)
        started = time.perf_counter()

        async def send_with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                record["status"] = message["status"]
                headers = list(message.get("headers", []))
                headers.append((b"x-request-id", request_id.encode("latin-1")))
                message = {**message, "headers": headers}
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            _current.reset(token)
            record["duration_ms"] = round((time.perf_counter() - started) * 1000, 1)
            # No formatting when the level is off (the line is built for every request otherwise).
            if (record["path"] not in QUIET_PATHS or record["status"] >= 500) and logger.isEnabledFor(logging.INFO):
                message = "{method} {path} {status}".format(**record)
                logger.info(message, extra={"event": "request", **record})
