"""ASGI entry point: a small path router in front of Django.

`/bcp/mcp` and `/bcp/a2a` (+ the A2A agent card) are served by the protocol transports, mounted by
dotted path from `settings.ASGI_MOUNTS` so the project package never imports the protocol app;
`settings.ASGI_API_PREFIXES` (`/bcp/v1`) go to a second Django handler without the page-only middleware;
everything else goes to Django. Lifespan events are forwarded to every mounted app. Mounted apps
get Django's body cap, a JSON depth/UTF-8 check and SecurityMiddleware's headers and HTTPS rule
(`kernel.ops.asgi_guard`).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing
from typing import Any

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
# The a2a-sdk opens an OpenTelemetry span around each of a dozen steps of every A2A call; the shop configures no
# tracer, so each one went through OTel's proxy to its no-op tracer (about 8% of an A2A Get Order's CPU, issue 34).
# Off unless the deployment asks for it; read when the SDK is imported, hence here, before Django loads the mounts.
os.environ.setdefault("OTEL_INSTRUMENTATION_A2A_SDK_ENABLED", "false")

import django

django.setup(set_prefix=False)

from django.conf import settings  # noqa: E402
from django.core import signals  # noqa: E402
from django.core.exceptions import RequestAborted  # noqa: E402
from django.core.handlers.asgi import ASGIHandler, get_script_prefix  # noqa: E402
from django.http.response import HttpResponseBase  # noqa: E402
from django.urls import set_script_prefix  # noqa: E402
from django.utils.module_loading import import_string  # noqa: E402

from config.api_urls import ApiPatternsFirst  # noqa: E402
from config.scheduler import start_if_enabled  # noqa: E402
from kernel import threads  # noqa: E402
from kernel.ops.access_log import AccessLog  # noqa: E402
from kernel.ops.asgi_guard import guarded  # noqa: E402
from kernel.ops.redis_cache import share_backends_per_process  # noqa: E402

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def size_default_executor() -> None:
    """The site, the API, MCP and A2A run their sync work on the event loop's default executor, one thread per
    call in flight: `settings.WEB_THREADS` of them (Python's default is min(32, cores + 4)). More than the
    database pool has connections, since a call waiting on the network holds none (settings say why)."""
    executor = ThreadPoolExecutor(max_workers=settings.WEB_THREADS, thread_name_prefix="django")
    asyncio.get_running_loop().set_default_executor(executor)


class PathRouter:
    def __init__(self, default: ASGIApp, mounts: dict[str, ASGIApp]) -> None:
        self.default = default
        # Longest prefix first so `/bcp/a2a` never shadows a more specific mount.
        self.mounts = sorted(mounts.items(), key=lambda item: len(item[0]), reverse=True)

    def resolve(self, path: str) -> ASGIApp:
        for prefix, app in self.mounts:
            if path == prefix or path.startswith(prefix.rstrip("/") + "/"):
                return app
        return self.default

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(scope, receive, send)
            return
        app = self.resolve(scope.get("path", ""))
        if isinstance(app, ASGIHandler):  # the site or the API handler (/bcp/v1)
            await app(scope, receive, send)  # Django applies its own body cap and security headers
            return
        await guarded(app, scope, receive, send)

    async def _lifespan(self, scope: Scope, receive: Receive, send: Send) -> None:
        hooks = [getattr(app, "startup", None) for _, app in self.mounts]
        shutdowns = [getattr(app, "shutdown", None) for _, app in self.mounts]
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                try:
                    size_default_executor()
                    for hook in hooks:
                        if hook is not None:
                            await hook()
                except Exception as exc:  # startup failure must be reported to the server
                    await send({"type": "lifespan.startup.failed", "message": str(exc)})
                    return
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                for hook in shutdowns:
                    if hook is not None:
                        await hook()
                await send({"type": "lifespan.shutdown.complete"})
                return


class OneHopHandler(ASGIHandler):
    """Django with every request served start to finish in one thread of the event loop's bounded default
    executor; `skipped_middleware` are left out of its chain.

    The shop's middleware and views are all sync. Django's handler hops into a thread three times per
    request (`request_started`, the chain, `response.close()` with `request_finished`), more when a sync-only
    middleware (WhiteNoise, `MethodNotAllowedPage`) sits in its async chain, each hop copying every context
    variable there and back, and it starts a new thread per request (its `ThreadSensitiveContext`). Here the
    body is read on the loop, then one call runs the signals, the sync chain (built as under WSGI) and the
    close, which hands the database connection back to the pool in the thread that used it; only the answer
    is sent from the loop. The executor is the one MCP and A2A calls run on (`size_default_executor`).
    Issue 11: this halved a GET order's CPU.

    The hop is `kernel.threads.in_thread`, not asgiref's `sync_to_async`: that one builds its wrapper per call
    and copies the thread's context variables back into the request's task, which ends with the request
    (issue 34).
    """

    def skipped_middleware(self) -> frozenset[str]:
        return frozenset()

    def load_middleware(self, is_async: bool = False) -> None:
        full = settings.MIDDLEWARE
        skipped = self.skipped_middleware()
        settings.MIDDLEWARE = [m for m in full if m not in skipped]
        try:
            super().load_middleware(is_async=False)
        finally:
            settings.MIDDLEWARE = full

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            raise ValueError(f"Django can only handle ASGI/HTTP connections, not {scope['type']}.")
        try:
            body_file = await self.read_body(receive)
        except RequestAborted:
            return
        response, closed = await threads.in_thread(self._serve, scope, body_file)
        await self.send_response(response, send)
        if not closed:  # an async stream, consumed above: close it now, in a thread
            await threads.in_thread(response.close)

    def _serve(self, scope: Scope, body_file: Any) -> tuple[HttpResponseBase, bool]:
        with closing(body_file):
            set_script_prefix(get_script_prefix(scope))
            signals.request_started.send(sender=self.__class__, scope=scope)
            request, response = self.create_request(scope, body_file)
            if request is not None:
                response = self.get_response(request)
                response._handler_class = self.__class__
            if response.streaming and response.is_async:
                return response, False
            if response.streaming:
                # A file (WhiteNoise, media): read here, as Django reads a sync stream into memory under ASGI
                # anyway, so the loop only replays bytes and needs no thread of its own for it.
                chunks = list(response.streaming_content)
                response.streaming_content = _replay(chunks)
            response.close()  # request_finished: the connection goes back to the pool from this thread
            return response, True


async def _replay(chunks: list[bytes]) -> AsyncIterator[bytes]:
    for chunk in chunks:
        yield chunk


class ApiHandler(ApiPatternsFirst, OneHopHandler):
    """`settings.ASGI_API_PREFIXES` (`/bcp/v1`): the same project minus the page-only middleware, its paths
    resolved against the API's own patterns first (`ApiPatternsFirst`)."""

    def skipped_middleware(self) -> frozenset[str]:
        return frozenset(settings.ASGI_API_SKIPPED_MIDDLEWARE)


def build_application() -> ASGIApp:
    share_backends_per_process()  # not one cache backend built per request (each runs in a context of its own)
    start_if_enabled()  # `make run` only: the periodic sweeps without a broker or beat
    mounts = {prefix: import_string(target) for prefix, target in settings.ASGI_MOUNTS.items()}
    api = ApiHandler()
    mounts.update({prefix: api for prefix in getattr(settings, "ASGI_API_PREFIXES", ())})
    return AccessLog(PathRouter(django_app, mounts))


django_app = OneHopHandler()  # the site: storefront, admin, order pages
application = build_application()
# The garbage collector keeps Python's defaults here, on purpose (issue 34, measured): a request leaves some 45-60
# objects in reference cycles (Django's request/response graph, the same for the bare view), so a young collection
# runs about once per 35 requests; a full one did not run in 1000 in-process Get Orders. Under callgrind, windows of
# 10 and 60 Get Orders on REST, MCP and A2A held no collection at all, and the bare view's held one of ~1.7 M
# instructions. `gc.freeze()` after start-up (some 365 000 objects) leaves young collections as they are and only
# cheapens full ones, which barely run: it showed no gain in instructions per Get Order (within the run-to-run
# noise of ±0.1 M), and the one collection in the bare view's window cost 6.1 M instead of 1.7 M. A raised gen0
# threshold collects as many objects, just in bigger batches, and holds the garbage longer.
