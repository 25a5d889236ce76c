"""Payments HTTP endpoints: the PSP webhook (CSRF-exempt POST, thin: everything is in `webhooks.py`)."""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from payments.webhooks import receive_pix_webhook


@csrf_exempt
@require_POST
def pix_webhook(request: HttpRequest) -> JsonResponse:
    # request.body is read before any JSON parsing: the HMAC covers the exact bytes received.
    status, body = receive_pix_webhook(request.body, request.headers)
    return JsonResponse(body, status=status)
