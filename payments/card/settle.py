"""Outcomes learned after the complete call returned: announce them to the shop, refund what it rejects."""

from __future__ import annotations

from django.db import transaction

from payments.card.gateway import GatewayCharge
from payments.card.models import CardPayment
from payments.card.service import (
    CardCharge,
    CardPaymentResult,
    card_payment_record,
    record,
    record_charged,
    result_of,
)
from payments.signals import card_payment_settled

Status = CardPayment.Status


def announce(*, reference: str, payment_id: str, status: str, amount: int) -> str:
    """Inside the recording transaction: tell the shop; "rejected" when a receiver refused an approval."""
    answers = card_payment_settled.send(
        sender=CardPayment, reference=reference, payment_id=payment_id, status=status, amount=amount
    )
    rejected = any(answer == "rejected" for _, answer in answers)
    if rejected and status == Status.APPROVED:
        from payments.card.refunds import card_refund_automatic

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
            announce(reference=charged.reference, payment_id=payment.payment_id, status=payment.status,
                     amount=payment.amount)
    return result_of(payment)
