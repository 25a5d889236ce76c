"""Payments HTTP endpoints: the PSP and card gateway webhooks (CSRF-exempt POSTs, thin: the work is in
`webhooks.py` and `card/webhook.py`) and the QR image."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import segno
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.cache import cache_control
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_POST

from payments.automatic.webhook import receive_recurrence_webhook, receive_recurring_charge_webhook
from payments.card.webhook import receive_card_webhook
from payments.qr import qr_svg
from payments.selectors import pix_charge_by_txid
from payments.webhooks import MAX_BODY_BYTES, receive_med_webhook, receive_pix_webhook


def _inbox(request: HttpRequest, receive: Callable[[bytes, Mapping[str, str]], tuple[int, dict]]) -> JsonResponse:
    # A declared oversize body is refused before it is read at all (PSP callbacks are a few KiB); request.body is
    # read before any JSON parsing: the HMAC covers the exact bytes received.
    declared = request.META.get("CONTENT_LENGTH", "")
    if declared.isdigit() and int(declared) > MAX_BODY_BYTES:
        return JsonResponse({"error": "body_too_large"}, status=413)
    status, body = receive(request.body, request.headers)
    return JsonResponse(body, status=status)


@csrf_exempt
@require_POST
def pix_webhook(request: HttpRequest) -> JsonResponse:
    return _inbox(request, receive_pix_webhook)


@csrf_exempt
@require_POST
def med_webhook(request: HttpRequest) -> JsonResponse:
    """MED 2.0 notifications (infraction reports, refund requests) the PSP forwards, authenticated like Pix."""
    return _inbox(request, receive_med_webhook)


@csrf_exempt
@require_POST
def pix_recurrence_webhook(request: HttpRequest) -> JsonResponse:
    """Pix Automático recurrence notices (`{webhookUrl}/rec`), authenticated like the Pix webhook."""
    return _inbox(request, receive_recurrence_webhook)


@csrf_exempt
@require_POST
def card_webhook(request: HttpRequest) -> JsonResponse:
    return _inbox(request, receive_card_webhook)


@require_GET
@cache_control(public=True, max_age=3600)
def pix_qr(request: HttpRequest, txid: str, extension: str) -> HttpResponse:
    """The charge's QR as an image (PIX.md §2.3 `qr_code.url`), for platforms that cannot inline data URIs."""
    charge = pix_charge_by_txid(txid)
    if charge is None:
        raise Http404("unknown txid")
    if extension == "svg":
        return HttpResponse(qr_svg(charge.br_code), content_type="image/svg+xml")
    png = segno.make(charge.br_code, error="m", micro=False)
    response = HttpResponse(content_type="image/png")
    png.save(response, kind="png", scale=4, border=4)
    return response


@csrf_exempt
@require_POST
def pix_recurring_charge_webhook(request: HttpRequest) -> JsonResponse:
    """Pix Automático cycle charges (`{webhookUrl}/cobr`, `PUT /webhookcobr`), authenticated like Pix."""
    return _inbox(request, receive_recurring_charge_webhook)
