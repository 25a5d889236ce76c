"""The admin login's lockout (django-axes): the client IP it counts, and its answer, 429 and a Portuguese page."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render


def client_ip(request: HttpRequest) -> str | None:
    """`AXES_CLIENT_IP_CALLABLE`: the peer uvicorn settled on (X-Forwarded-For only from FORWARDED_ALLOW_IPS).

    Never a header read here: axes would use django-ipware, which believes any client's X-Forwarded-For.
    """
    return request.META.get("REMOTE_ADDR")


def lockout_response(
    request: HttpRequest, original_response: HttpResponse | None = None, credentials: dict[str, Any] | None = None
) -> HttpResponse:
    minutes = max(1, int(settings.AXES_COOLOFF_TIME.total_seconds() // 60))
    response = render(
        request,
        "admin/shop/login_locked.html",
        {"failure_limit": settings.AXES_FAILURE_LIMIT, "cooloff_minutes": minutes},
        status=429,
    )
    response["Retry-After"] = str(minutes * 60)
    return response
