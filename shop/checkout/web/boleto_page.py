"""The "Pagar com boleto" page (issue 37): linha digitável with a copy button, the barcode, the PDF link, and
in the sandbox the "Pagar boleto no sandbox" button. Thin: the boleto is read from payments' selectors."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import NoReverseMatch, reverse
from django.views.decorators.http import require_GET

from payments.boleto.codes import barcode_from_line, itf_svg, line_display
from payments.boleto.service import expiry_grace_days
from payments.models import BoletoPayment
from payments.selectors import boleto_for_payment_id
from shop.cart import cart_clear
from shop.checkout.boleto import is_boleto
from shop.checkout.types import STATUS_COMPLETED, STATUS_IN_PROGRESS
from shop.checkout.web.views import _get_or_404, _local


def boleto_slip_context(boleto: BoletoPayment) -> dict[str, object]:
    """What `templates/shop/partials/boleto_slip.html` needs: the line as banks print it, the barcode drawn
    from it (ours: no third-party image), the PDF link."""
    try:
        svg = itf_svg(barcode_from_line(boleto.line))
    except ValueError:
        svg = ""
    return {"boleto": boleto, "boleto_line": line_display(boleto.line), "boleto_barcode_svg": svg}


def _sandbox_pay_url(boleto: BoletoPayment) -> str:
    if not settings.BCP_PIX_SANDBOX or boleto.gateway != "sandbox":
        return ""
    try:
        return reverse("sandbox-gateway-boleto-pay", kwargs={"charge_id": boleto.gateway_charge_id})
    except NoReverseMatch:
        return ""


@require_GET
def boleto_page(request: HttpRequest, checkout_id: str) -> HttpResponse:
    checkout = _get_or_404(request, checkout_id)
    if checkout.status == STATUS_COMPLETED and checkout.order_permalink_url:
        if checkout.session_key and checkout.session_key == request.session.session_key:
            cart_clear(request.session)
        return redirect(_local(checkout.order_permalink_url))
    boleto = boleto_for_payment_id(checkout.payment_txid) if checkout.payment_txid else None
    if checkout.status != STATUS_IN_PROGRESS or not is_boleto(checkout.payment_instrument) or boleto is None:
        return redirect("checkout:resume", checkout_id=checkout_id)
    context = {
        "checkout": checkout,
        "sandbox_pay_url": _sandbox_pay_url(boleto),
        # The items stay held past the due date for the bank's late report (payments' expiry sweep): the page says
        # the day they are released, not "o vencimento".
        "held_until": boleto.due_date + timedelta(days=expiry_grace_days()),
        **boleto_slip_context(boleto),
    }
    return render(request, "shop/checkout/boleto.html", context)
