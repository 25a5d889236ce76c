"""The thread-hop bench's sync server (tests/bench/test_get_order_read.py): the Django project as WSGI, for
gunicorn. Like `config.asgi`, paths under `settings.ASGI_API_PREFIXES` are served by a handler without the
page-only middleware that resolves the API's patterns first, so uvicorn and gunicorn run the same chain for the
BCP REST API; MCP and A2A are ASGI apps and are not served here.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import Any

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.bcp_app.bench_site")

import django

django.setup(set_prefix=False)

from django.conf import settings  # noqa: E402
from django.core.handlers.wsgi import WSGIHandler  # noqa: E402

from config.api_urls import ApiPatternsFirst  # noqa: E402


class ApiWSGIHandler(ApiPatternsFirst, WSGIHandler):
    def load_middleware(self, is_async: bool = False) -> None:
        full = settings.MIDDLEWARE
        settings.MIDDLEWARE = [m for m in full if m not in settings.ASGI_API_SKIPPED_MIDDLEWARE]
        try:
            super().load_middleware(is_async=False)
        finally:
            settings.MIDDLEWARE = full


_site, _api = WSGIHandler(), ApiWSGIHandler()
_prefixes = tuple(prefix.rstrip("/") + "/" for prefix in settings.ASGI_API_PREFIXES)


def application(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    handler = _api if environ.get("PATH_INFO", "").startswith(_prefixes) else _site
    return handler(environ, start_response)
