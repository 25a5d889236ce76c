"""URL resolution of the API handlers (config/asgi.py `ApiHandler`; the thread-hop bench's WSGI twin)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.urls import Resolver404, ResolverMatch, get_resolver


class ApiPatternsFirst:
    """A Django handler of the API's paths that resolves them against `settings.ASGI_API_URLCONF` (the API's own
    patterns, which the site's URLconf includes first, at the root) before the site's whole URLconf: the walk
    down through the root's resolver and its include was ~100 Python calls of every agent request, more than
    its view's own SQL (issue 34). What they do not match (a 404, a path only the site's URLconf knows) is
    resolved as Django does, so the match, the URLconf `reverse` uses and the 404 stay the same."""

    def resolve_request(self, request: Any) -> ResolverMatch:
        urlconf = getattr(settings, "ASGI_API_URLCONF", None)
        if urlconf is not None and not hasattr(request, "urlconf"):
            try:
                match = get_resolver(urlconf).resolve(request.path_info)
            except Resolver404:
                pass
            else:
                request.resolver_match = match
                return match
        return super().resolve_request(request)  # type: ignore[misc]
