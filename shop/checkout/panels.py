"""The buyer consent box on the admin order page (`ORDERS_ADMIN_PANELS`): what the buyer decided, when and where."""

from __future__ import annotations

from django.http import HttpRequest
from django.template.loader import render_to_string

from orders.models import Order
from shop.checkout.consent import consent_rows
from shop.models import Checkout


def consent_admin_panel(request: HttpRequest, order: Order) -> str:
    stored = Checkout.objects.filter(public_id=order.checkout_id).values_list("buyer_consent", flat=True).first()
    context = {"rows": consent_rows(stored), "given": stored is not None}
    return render_to_string("shop/checkout/consent_panel.html", context)
