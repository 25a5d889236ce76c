"""Sales staff enter in the back office (WhatsApp, the counter, B2B):

- paid elsewhere (`checkout_complete_paid_elsewhere`): completed without a PSP, with the same stock
  reservation and order placement as any other checkout;
- paid later by Pix com vencimento (`checkout_complete_pix_due`, issue 17): the checkout waits in
  `complete_in_progress` (stock reserved) for a `cobv` charge with a due date, fine and interest; the buyer pays
  from the checkout's Pix page and the payment settles through the same webhook path as any Pix.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from datetime import date

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from orders.services import order_payment_record_manual
from payments.due import DueTerms
from payments.exceptions import PaymentInputError
from payments.services import pix_due_charge_ensure
from shop.checkout.complete import _finish_pix
from shop.checkout.core import (
    apply,
    in_checkout_language,
    input_from_checkout,
    reload,
    speak,
    status_error,
    stored_messages,
    with_status,
)
from shop.checkout.evaluate import evaluate
from shop.checkout.hold import lines_of, reserve
from shop.checkout.lock import lock, retried_on_deadlock
from shop.checkout.pix import charge_errors, err, save_status
from shop.checkout.place import place_order
from shop.checkout.types import (
    STATUS_IN_PROGRESS,
    STATUS_INCOMPLETE,
    STATUS_READY,
    CheckoutResult,
    InstrumentInput,
    PaymentInput,
)

logger = logging.getLogger(__name__)

MANUAL_METHODS = ("dinheiro", "transferencia", "maquininha", "pix_direto")


@in_checkout_language
@retried_on_deadlock
def checkout_complete_paid_elsewhere(*, checkout_id: str, method: str, reason: str, actor: str) -> CheckoutResult:
    """Staff confirm the buyer paid outside the shop (`method`, with a `reason`): the order is placed paid."""
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


@in_checkout_language
def checkout_complete_pix_due(
    *,
    checkout_id: str,
    due_date: date,
    validity_days: int = 30,
    fine_bp: int = 0,
    interest_bp: int = 0,
    discount_bp: int = 0,
    discount_until: date | None = None,
) -> CheckoutResult:
    """Complete a ready checkout with a Pix com vencimento: paid by `due_date`, or later with fine and interest.

    The three steps of checkout_complete (shop/checkout/complete.py), so the PSP call runs with no lock: reserve
    (Pix selected, so the shop's Pix discount applies as on any Pix checkout) → `PUT /cobv` → wait for the payment.
    A worker dying in between leaves what checkout_complete would (checkout_pending_due releases it).
    """
    terms = DueTerms(
        due_date=due_date,
        validity_days=validity_days,
        fine_bp=fine_bp,
        interest_bp=interest_bp,
        discount_bp=discount_bp,
        discount_until=discount_until,
    )
    with transaction.atomic():
        checkout = lock(checkout_id)
        speak(checkout.language)
        if checkout.status != STATUS_READY:
            return status_error(checkout, "concluir")
        existing = lines_of(checkout)
        pix = InstrumentInput(id="instr_due", handler_id=settings.PIX_HANDLER_ID, type="pix")
        state = replace(input_from_checkout(checkout, existing), payment=PaymentInput(instruments=(pix,)))
        ev = evaluate(checkout=checkout, existing_lines=existing, data=state, now=timezone.now())
        status, messages = with_status(ev, ev.rejections)
        checkout.status = status
        apply(checkout, ev, messages, existing)
        if status != STATUS_READY:
            return CheckoutResult(checkout=reload(checkout_id), messages=stored_messages(checkout))
        blocking = reserve(checkout, list(checkout.lines.all()), ev)
        if blocking:
            save_status(checkout, STATUS_INCOMPLETE, "complete_refused", blocking)
            return CheckoutResult(checkout=reload(checkout_id), messages=stored_messages(checkout))
        checkout.payment_txid = ""  # no payment attached yet (step 3 and the pending sweep look for it)
        save_status(checkout, STATUS_IN_PROGRESS, "payment_pending")
    try:
        charge = pix_due_charge_ensure(
            reference=checkout.public_id,
            amount=checkout.total_amount,
            terms=terms,
            payer_name=f"{checkout.buyer_first_name} {checkout.buyer_last_name}".strip(),
            payer_tax_id=checkout.buyer_tax_id,
            description=f"Pedido {checkout.public_id}",
        )
    except PaymentInputError as exc:
        logger.info("Pix com vencimento refused for %s: %s", checkout_id, exc)
        charge = None
    except charge_errors():
        logger.warning("Pix com vencimento could not be issued for %s", checkout_id, exc_info=True)
        charge = None
    result = _finish_pix(checkout_id, charge)
    if charge is None and not checkout.buyer_tax_id:
        text = _("Informe o CPF/CNPJ do comprador para o Pix com vencimento.")
        needed = err("field_required", text, "$.buyer.tax_id")
        return CheckoutResult(checkout=result.checkout, messages=[*result.messages, needed])
    return result
