"""Buyer e-mails: subject, text and HTML rendered in the order's language (pt-BR or English)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.mail import EmailMultiAlternatives
from django.template.loader import render_to_string
from django.utils import translation
from django.utils.module_loading import import_string
from django.utils.translation import gettext as _

from orders.models import Adjustment, FulfillmentEvent, Order


def _shop_context() -> dict[str, Any]:
    """The shop's name and identity for header and footer, from the provider the project names."""
    provider = getattr(settings, "ORDERS_EMAIL_CONTEXT_PROVIDER", "")
    return dict(import_string(provider)()) if provider else {}


def _subject(kind: str, number: int, shop: str) -> str:
    subjects = {
        "placed": _("Recebemos seu pedido #%(number)s"),
        "payment_confirmed": _("Pagamento confirmado: pedido #%(number)s"),
        "shipped": _("Seu pedido #%(number)s foi enviado"),
        "ready_for_pickup": _("Seu pedido #%(number)s está pronto para retirada"),
        "delivered": _("Seu pedido #%(number)s foi entregue"),
        "refunded": _("Reembolso do pedido #%(number)s"),
        "canceled": _("Pedido #%(number)s cancelado"),
    }
    return f"{shop}: " + subjects[kind] % {"number": number}


def build_order_email(order: Order, kind: str, *, ref: str = "", to: str) -> EmailMultiAlternatives:
    event = adjustment = None
    if ref.startswith("evt_"):
        # "<event id>:<code>" is the e-mail of a corrected tracking code.
        event = FulfillmentEvent.objects.filter(order=order, public_id=ref.split(":")[0]).first()
    elif ref.startswith("adj_"):
        adjustment = Adjustment.objects.filter(order=order, public_id=ref).first()
    elif kind in ("shipped", "delivered"):  # a resend: the latest event of that kind
        event = FulfillmentEvent.objects.filter(order=order, type=kind).order_by("-occurred_at", "-id").first()
    elif kind == "refunded":
        adjustment = Adjustment.objects.filter(order=order, type="refund").order_by("-occurred_at", "-id").first()
    context = {
        "order": order,
        "kind": kind,
        "lines": list(order.lines.all()),
        "event": event,
        "adjustment": adjustment,
        "refund_amount": -adjustment.amount if adjustment is not None else 0,
        "permalink_url": order.permalink_url,
        "tracking_corrected": ref.startswith("evt_") and ":" in ref,
        "shop_name": settings.SHOP_NAME,
        **_shop_context(),
    }
    with translation.override(order.language or settings.LANGUAGE_CODE):
        subject = _subject(kind, order.number, context["shop_name"])
        text = render_to_string(f"orders/email/{kind}.txt", context)
        html = render_to_string(f"orders/email/{kind}.html", context)
    message = EmailMultiAlternatives(subject=subject, body=text, to=[to])
    message.attach_alternative(html, "text/html")
    return message
