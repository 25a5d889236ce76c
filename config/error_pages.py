"""Styled error pages with the shop's header: 405 for a browser that opens a POST-only address, 403 and 500.

404: Django's default handler renders `templates/404.html` with the request's context; with DEBUG on (`make run`)
Django answers its English technical page listing every route instead, which `NotFoundPage` replaces.
"""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.contrib import admin
from django.http import HttpRequest, HttpResponse, HttpResponseServerError, JsonResponse
from django.shortcuts import render
from django.template import loader
from django.utils import translation

# Machine clients get the plain 405 they expect (JSON APIs and protocol endpoints).
_API_PREFIXES = ("/bcp/", "/api/", "/.well-known/", "/_sandbox/", "/admin/")


class MethodNotAllowedPage:
    """Turn the empty 405 of `require_POST` views into a page a buyer understands (status and Allow kept)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if response.status_code != 405:
            return response
        if request.path.startswith(tuple(settings.ASGI_API_PREFIXES)):
            return _api_method_not_allowed(request, response)
        if response.content or request.path.startswith(_API_PREFIXES):
            return response
        if "text/html" not in request.headers.get("Accept", "text/html"):
            return response
        page = render(request, "405.html", status=405)
        if response.has_header("Allow"):
            page["Allow"] = response["Allow"]
        return page


# Django's technical 404 (django/views/templates/technical_404.html) carries this robots tag; our pages do not.
_TECHNICAL_404 = b'<meta name="robots" content="NONE,NOARCHIVE">'


class NotFoundPage:
    """With DEBUG on, an unknown address shows the shop's own 404 (as in production), not Django's technical page
    in English with every route of the site. Responses that are not Django's technical page are left alone."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if response.status_code != 404 or not settings.DEBUG or getattr(response, "streaming", False):
            return response
        if _TECHNICAL_404 not in response.content[:2000]:
            return response
        return render(request, "404.html", status=404)


def _api_method_not_allowed(request: HttpRequest, response: HttpResponse) -> HttpResponse:
    """The REST API's 405 as its other protocol errors (BCP §5.4: JSON `{code, content}`), naming the methods
    the path takes; its router answers a bare text/html "Method not allowed" otherwise."""
    allowed = response.get("Allow", "")
    content = f"O método {request.method} não é aceito em {request.path}"
    body = {"code": "method_not_allowed", "content": f"{content}; use {allowed}." if allowed else f"{content}."}
    answer = JsonResponse(body, status=405, json_dumps_params={"ensure_ascii": False})
    if allowed:
        answer["Allow"] = allowed
    return answer


def permission_denied(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """handler403: staff refused an admin page stay in the admin's layout (menu, their name, a way back to the
    panel); elsewhere the shop's own page (templates/403.html), as Django's default handler would render it."""
    if request.path.startswith("/admin/"):
        return render(request, "admin/403.html", admin.site.each_context(request), status=403)
    return render(request, "403.html", status=403)


def server_error(request: HttpRequest) -> HttpResponse:
    """handler500: no context processors and no database (either may be what failed)."""
    template = loader.get_template("500.html")
    context = {"SHOP_NAME": settings.SHOP_NAME, "LANGUAGE_CODE": translation.get_language() or "pt-br"}
    return HttpResponseServerError(template.render(context))
