"""The "Pagar com Pix" page: QR code, copia-e-cola, countdown, "Gerar novo Pix" and the status poll.

Thin like the checkout views: shop.checkout.services does the work; an overdue Pix is expired lazily when read.
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.contrib import messages
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import NoReverseMatch, reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from payments.due import local_date
from payments.qr import qr_svg
from payments.selectors import pix_charge_latest_for_reference
from shop.cart import cart_clear
from shop.checkout.selectors import may_open
from shop.checkout.services import (
    CheckoutNotFound,
    checkout_get,
    checkout_pix_refresh,
    checkout_pix_regenerate,
    checkout_pix_withdraw,
)
from shop.checkout.types import STATUS_COMPLETED, STATUS_IN_PROGRESS, STATUS_INCOMPLETE, TERMINAL_STATUSES
from shop.checkout.web.views import _get_or_404, _language, _local, _pix_instrument
from shop.models import Checkout


def _sandbox_pay_url(txid: str) -> str:
    if not settings.BCP_PIX_SANDBOX:
        return ""
    try:
        return reverse("sandbox-psp-pay", kwargs={"txid": txid})
    except NoReverseMatch:
        return ""


def _due(charge) -> dict[str, object] | None:
    """A Pix com vencimento's due date and what it costs today (fine and interest once overdue), for the page."""
    terms = charge.terms
    if terms is None:
        return None
    owed = charge.amount_due_on(local_date(timezone.now()))
    return {
        "terms": terms,
        "owed": owed,
        "overdue": owed.overdue_days > 0,
        "last_day": terms.due_date + timedelta(days=terms.validity_days),
        "fine_percent": terms.fine_bp / 100,
        "interest_percent": terms.interest_bp / 100,
        "discount_percent": terms.discount_bp / 100,
    }


def _pix_expired(checkout: Checkout) -> bool:
    """The checkout went back to the form because its Pix expired unpaid (shop.checkout.settle)."""
    return checkout.status == STATUS_INCOMPLETE and any(
        message.get("code") == "pix_charge_expired" for message in checkout.messages
    )


@require_GET
def pix_page(request: HttpRequest, checkout_id: str) -> HttpResponse:
    """QR code, copia-e-cola, amount and countdown; polls the status endpoint until the order exists."""
    checkout = _get_or_404(request, checkout_id)
    lapsed = checkout.status == STATUS_IN_PROGRESS and checkout_pix_refresh(checkout_id=checkout_id)
    if lapsed:
        checkout = _get_or_404(request, checkout_id)
    if checkout.status == STATUS_COMPLETED and checkout.order_permalink_url:
        if checkout.session_key and checkout.session_key == request.session.session_key:
            cart_clear(request.session)
        return redirect(_local(checkout.order_permalink_url))
    charge = pix_charge_latest_for_reference(checkout_id)
    # An expired Pix keeps its page (with "Gerar novo Pix") while the checkout waits for a new one.
    if charge is None or (checkout.status != STATUS_IN_PROGRESS and not _pix_expired(checkout)):
        return redirect("checkout:resume", checkout_id=checkout_id)
    payable = checkout.status == STATUS_IN_PROGRESS and charge.status == "active" and charge.expires_at > timezone.now()
    return render(
        request,
        "shop/checkout/pix.html",
        {
            "checkout": checkout,
            "charge": charge,
            "payable": payable,
            "qr_svg": qr_svg(charge.br_code) if payable else "",
            "status_url": reverse("checkout:status", kwargs={"checkout_id": checkout_id}),
            "sandbox_pay_url": _sandbox_pay_url(charge.txid) if payable else "",
            "expires_at_iso": charge.expires_at.isoformat(),
            "due": _due(charge),
        },
    )


@require_POST
def pix_regenerate(request: HttpRequest, checkout_id: str) -> HttpResponse:
    """The "Gerar novo Pix" button: a new charge for the same checkout, re-validating stock and prices."""
    checkout = _get_or_404(request, checkout_id)
    if checkout.status in TERMINAL_STATUSES:
        return redirect("checkout:resume", checkout_id=checkout_id)
    result = checkout_pix_regenerate(checkout_id=checkout_id, instrument=_pix_instrument(), language=_language(request))
    if result.checkout.status == STATUS_IN_PROGRESS:
        return redirect("checkout:pix", checkout_id=checkout_id)
    return redirect("checkout:resume", checkout_id=checkout_id)  # the form shows what blocks it (stock, price…)


@require_POST
def pix_withdraw(request: HttpRequest, checkout_id: str) -> HttpResponse:
    """ "Mudar forma de pagamento" on a pending Pix: the charge is cancelled at the PSP, then the checkout page
    offers every payment method again (shop.checkout.services.checkout_pix_withdraw)."""
    checkout = _get_or_404(request, checkout_id)
    outcome = checkout_pix_withdraw(checkout_id=checkout.public_id)
    if outcome == "unavailable":
        messages.error(request, _("Não foi possível cancelar este Pix agora. Tente de novo em instantes."))
        return redirect("checkout:pix", checkout_id=checkout_id)
    if outcome == "settled":
        return redirect("checkout:pix", checkout_id=checkout_id)  # paid meanwhile: the Pix page goes to the order
    if outcome == "withdrawn":
        messages.info(request, _("O Pix foi cancelado e não pode mais ser pago. Escolha como quer pagar."))
    return redirect("checkout:resume", checkout_id=checkout_id)


@require_GET
def checkout_status(request: HttpRequest, checkout_id: str) -> JsonResponse:
    """Small JSON polled by the Pix page: status, whether its Pix expired unpaid and, once completed, where
    the order is."""
    try:
        checkout = checkout_get(checkout_id=checkout_id).checkout
    except CheckoutNotFound:
        checkout = None
    if checkout is None or not may_open(request, checkout):
        return JsonResponse({"error": "not_found"}, status=404)
    # The lazy expiry of pix_page, run by the poll too: an open page learns its Pix expired with no beat and
    # no reload. Before expires_at it reads one row; after it, one last look at the PSP, then the lapse.
    if checkout.status == STATUS_IN_PROGRESS and checkout_pix_refresh(checkout_id=checkout_id):
        checkout = checkout_get(checkout_id=checkout_id).checkout
    order_url = _local(checkout.order_permalink_url) if checkout.status == STATUS_COMPLETED else ""
    if order_url and checkout.session_key and checkout.session_key == request.session.session_key:
        cart_clear(request.session)  # bought: the next visit starts with an empty cart
    response = JsonResponse({"status": checkout.status, "order_url": order_url, "pix_expired": _pix_expired(checkout)})
    response["Cache-Control"] = "no-store"
    return response
