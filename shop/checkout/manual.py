"""A sale the merchant made elsewhere (WhatsApp, the counter) and was paid there: complete the
checkout without a PSP, with the same stock reservation and order placement as any other checkout."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from shop.checkout.core import in_checkout_language, input_from_checkout, lock, reload, status_error, with_status
from shop.checkout.evaluate import evaluate
from shop.checkout.hold import lines_of, reserve
from shop.checkout.pix import save_status
from shop.checkout.place import place_order
from shop.checkout.types import STATUS_INCOMPLETE, STATUS_READY, CheckoutResult

MANUAL_METHODS = ("dinheiro", "transferencia", "maquininha", "pix_direto")


@in_checkout_language
def checkout_complete_paid_elsewhere(*, checkout_id: str, method: str, reason: str, actor: str) -> CheckoutResult:
    """Staff confirm the buyer paid outside the shop (`method`, with a `reason`): the order is placed paid."""
    from orders.services import order_payment_record_manual

    if method not in MANUAL_METHODS:
        raise ValueError(f"unknown manual payment method {method!r}")
    with transaction.atomic():
        checkout = lock(checkout_id)
        if checkout.status != STATUS_READY:
            return status_error(checkout, "concluir")
        lines = lines_of(checkout)
        existing = list(lines)
        ev = evaluate(
            checkout=checkout, existing_lines=existing, data=input_from_checkout(checkout, existing), now=timezone.now()
        )
        status, messages = with_status(ev, [])
        if status != STATUS_READY:
            return CheckoutResult(checkout=reload(checkout_id), messages=messages)
        blocking = reserve(checkout, lines, ev)
        if blocking:
            save_status(checkout, STATUS_INCOMPLETE, "stock_unavailable", blocking)
            return CheckoutResult(checkout=reload(checkout_id), messages=blocking)
        checkout.payment_instrument = {"type": "manual", "handler_id": "manual", "method": method}
        place_order(checkout, payment_type="manual", paid_amount=checkout.total_amount, lines=lines)
        order_payment_record_manual(order_id=checkout.order_id, method=method, reason=reason, actor=actor)
    return CheckoutResult(checkout=reload(checkout_id), messages=[])
