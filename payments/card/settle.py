"""Outcomes learned after the complete call returned: announce them to the shop, refund what it rejects."""

from __future__ import annotations

import logging

from django.db import transaction

from payments.card.gateway import NOT_PAID, GatewayCharge, GatewayError, decline_message
from payments.card.models import CardPayment
from payments.card.refunds import card_refund_automatic
from payments.card.service import (
    CardCharge,
    CardPaymentResult,
    card_payment_record,
    get_card_gateway,
    record,
    record_charged,
    result_of,
)
from payments.signals import card_payment_settled
from payments.timeline import record_event

logger = logging.getLogger(__name__)

Status = CardPayment.Status


def announce(*, reference: str, payment_id: str, status: str, amount: int) -> str:
    """Inside the recording transaction: tell the shop; "rejected" when a receiver refused an approval."""
    answers = card_payment_settled.send(
        sender=CardPayment, reference=reference, payment_id=payment_id, status=status, amount=amount
    )
    rejected = any(answer == "rejected" for _, answer in answers)
    if rejected and status == Status.APPROVED:
        payment = CardPayment.objects.get(payment_id=payment_id)
        card_refund_automatic(payment=payment, reason="Pedido não pôde ser concluído")
        return "rejected"
    return "accepted" if status == Status.APPROVED else str(status)


def settle_recorded(*, reference: str, charge: GatewayCharge, gateway: str, source: str) -> CardPaymentResult:
    """Record a confirmed charge; announce it when its outcome became final now (or, on reconcile, again:
    an approval recorded by a process that died before placing the order)."""
    with transaction.atomic():
        payment, final = record(reference=reference, charge=charge, gateway=gateway, source=source)
        again = source == "reconcile" and payment.status == Status.APPROVED
        if final or again:
            announce(reference=reference, payment_id=payment.payment_id, status=payment.status, amount=payment.amount)
    return result_of(payment)


def card_payment_record_unclaimed(charged: CardCharge) -> CardPaymentResult:
    """Record an answer whose checkout moved on while the gateway call was out (the pending sweep released
    it, or a webhook placed it): announced as a late outcome is, so an approval no order takes is refunded
    (the shop answers "rejected") and one an order already took changes nothing."""
    if charged.answered is not None or charged.charge is None:
        return card_payment_record(charged)
    with transaction.atomic():
        payment, final = record_charged(charged, absent=False)  # the row may exist by now: read it first
        if final:
            announce(
                reference=charged.reference, payment_id=payment.payment_id, status=payment.status, amount=payment.amount
            )
    return result_of(payment)


def card_payment_reconcile(*, reference: str) -> CardPaymentResult | None:
    """Ask the gateway what became of `reference` (by order code) and record it; None when it cannot be asked.

    A paid charge is recorded as approved; an authorization left uncaptured (a process that died between
    the two calls) is captured now; no charge, or only failed/canceled ones, is a decline. Sends
    `card_payment_settled` when the outcome became final here.
    """
    try:
        gateway = get_card_gateway()
    except GatewayError as exc:  # misconfigured (no secret key): decide nothing, say why
        logger.error("card reconcile: no usable gateway: %s", exc)
        return None
    if gateway is None:
        return _record_nothing_charged(reference, "none")  # no gateway: nothing can have been charged
    try:
        # A boleto of the same checkout (payments/boleto/, an earlier attempt) is never a card outcome.
        charges = [c for c in gateway.find_charges(reference=reference) if c.payment_method != "boleto"]
        chosen = next((c for c in charges if c.paid), None) or next((c for c in charges if c.authorized), None)
        if chosen is not None and chosen.authorized:
            chosen = gateway.capture(
                charge_id=chosen.charge_id, amount=chosen.amount, idempotency_key=f"{reference}-reconcile-capture"
            )
        if chosen is None and charges and not all(c.status in NOT_PAID for c in charges):
            return None  # still processing at the gateway: ask again later
        chosen = chosen or (charges[0] if charges else None)
    except GatewayError as exc:
        logger.warning("card reconcile: gateway unavailable for %s: %s", reference, exc)
        return None
    if chosen is None:
        return _record_nothing_charged(reference, gateway.name)
    return settle_recorded(reference=reference, charge=chosen, gateway=gateway.name, source="reconcile")


def _record_nothing_charged(reference: str, gateway: str) -> CardPaymentResult:
    """The gateway has no order with this code, or only failed ones: the card was never charged."""
    with transaction.atomic():
        payment = CardPayment.objects.select_for_update().filter(reference=reference).first()
        if payment is not None and payment.status != Status.PENDING:
            return result_of(payment)
        if payment is not None:
            payment.status, payment.code, payment.message = Status.DECLINED, "payment_failed", decline_message("")
            payment.save(update_fields=["status", "code", "message", "updated_at"])
        record_event(reference=reference, kind="card_not_charged", source="reconcile", gateway=gateway)
        announce(
            reference=reference,
            payment_id=payment.payment_id if payment else "",
            status=Status.DECLINED,
            amount=payment.amount if payment else 0,
        )
    return result_of(payment) if payment else CardPaymentResult(False, "payment_failed", decline_message(""), "")
