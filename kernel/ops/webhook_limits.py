"""Rate limit of the webhook endpoints (Pix PSP, NF-e provider) per source IP (issue 13 §10).

Each accepted Pix notification queues a PSP lookup, so junk deliveries cost real work. Deliveries to a
path of `settings.WEBHOOK_RATE_LIMITED_PATHS` are counted per endpoint and source IP against
`settings.WEBHOOK_RATE_LIMIT`; over it they are answered 429 + Retry-After before the body is read.
Per IP, so traffic from elsewhere never spends the PSP's budget, and the default is generous: a PSP
re-sending a backlog after an outage stays under it.
"""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse

from kernel.ops import ratelimit
from kernel.ops.access_log import current_client_ip


class WebhookRateLimitMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.method == "POST":
            for prefix in settings.WEBHOOK_RATE_LIMITED_PATHS:
                if request.path.startswith(prefix):
                    ip = current_client_ip() or request.META.get("REMOTE_ADDR") or ""
                    seconds = ratelimit.hit(settings.WEBHOOK_RATE_LIMIT, "webhook", prefix, ip) if ip else None
                    if seconds is not None:
                        return JsonResponse(
                            {"error": "rate_limited", "retry_after": seconds},
                            status=429,
                            headers={"Retry-After": str(seconds)},
                        )
                    break
        return self.get_response(request)
