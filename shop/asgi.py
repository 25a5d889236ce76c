"""ASGI entry point: a small path router in front of Django.

`/bcp/mcp` and `/bcp/a2a` (+ the A2A agent card) are served by the protocol transports, mounted by
dotted path from `settings.ASGI_MOUNTS` so the project package never imports the protocol app;
`settings.ASGI_API_PREFIXES` (`/bcp/v1`) go to a second Django handler without the page-only middleware;
everything else goes to Django. Lifespan events are forwarded to every mounted app. Mounted apps
get Django's body cap, a JSON depth/UTF-8 check and SecurityMiddleware's headers and HTTPS rule
(`shop.asgi_guard`).
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "shop.settings")

from django.core.asgi import get_asgi_application

django_app = get_asgi_application()

from asgiref.sync import sync_to_async  # noqa: E402
from django.conf import settings  # noqa: E402
from django.core.handlers.asgi import ASGIHandler  # noqa: E402
from django.utils.module_loading import import_string  # noqa: E402

from shop.asgi_guard import guarded  # noqa: E402

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


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


class ApiHandler(ASGIHandler):
    """Django for `settings.ASGI_API_PREFIXES`: the same project minus the page-only middleware, its chain
    entered in one thread hop per request.

    Django builds an async chain around the sync API views; a sync-only middleware in it
    (`MethodNotAllowedPage`) makes each request hop into a thread, back to the event loop and into a
    thread again for the view. The views and middleware of the API are all sync, so the chain is built sync
    (as under WSGI) and entered once, thread-sensitively, per request (issue 11: GET order's CPU).
    """

    def load_middleware(self, is_async: bool = False) -> None:
        full = settings.MIDDLEWARE
        settings.MIDDLEWARE = [m for m in full if m not in settings.ASGI_API_SKIPPED_MIDDLEWARE]
        try:
            super().load_middleware(is_async=False)
        finally:
            settings.MIDDLEWARE = full
        if is_async:
            self._middleware_chain = sync_to_async(self._middleware_chain, thread_sensitive=True)


def build_application() -> ASGIApp:
    from shop.ops.access_log import AccessLog
    from shop.ops.scheduler import start_if_enabled

    start_if_enabled()  # `make run` only: the periodic sweeps without a broker or beat
    mounts = {prefix: import_string(target) for prefix, target in settings.ASGI_MOUNTS.items()}
    api = ApiHandler()
    mounts.update({prefix: api for prefix in getattr(settings, "ASGI_API_PREFIXES", ())})
    return AccessLog(PathRouter(django_app, mounts))


application = build_application()
