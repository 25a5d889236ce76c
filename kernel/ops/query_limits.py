"""Refuse a query string with more parameters than `DATA_UPLOAD_MAX_NUMBER_FIELDS`, first and in every mode.

Django refuses it only when something reads `request.GET` (TooManyFieldsSent). With DEBUG on (`make run`)
that read happens while a page renders; the technical error page that follows reads `request.GET` again,
fails again and ends as a 500 after 14–25 s of CPU for 5,000 parameters (issue 31). Counting the separators
as Django does (`1 + count("&")`, urllib's rule) costs nothing and answers a short 400 before any of that.
"""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.translation import gettext as _


def too_many_query_fields(query_string: str) -> bool:
    limit = settings.DATA_UPLOAD_MAX_NUMBER_FIELDS
    return limit is not None and bool(query_string) and query_string.count("&") + 1 > limit


class QueryFieldLimitMiddleware:
    """First middleware: a 400 naming the limit, JSON on the API paths (BCP §5.4 `{code, content}`)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if not too_many_query_fields(request.META.get("QUERY_STRING", "")):
            return self.get_response(request)
        content = _("Parâmetros demais no endereço: no máximo %(limit)d.") % {
            "limit": settings.DATA_UPLOAD_MAX_NUMBER_FIELDS
        }
        if request.path.startswith(tuple(settings.ASGI_API_PREFIXES)):
            body = {"code": "invalid_request", "content": content}
            return JsonResponse(body, status=400, json_dumps_params={"ensure_ascii": False})
        return HttpResponse(content, status=400, content_type="text/plain; charset=utf-8")
