"""Card estornos through the gateway: request (idempotent on `refund_id`), execution, final status.

The gateway call (`DELETE /charges/{id}` with `amount`) runs in a Celery task outside any transaction,
with `refund_id` as its Idempotency-Key, so a retry after a timeout never refunds twice.
"""

from __future__ import annotations

import logging

from django.db import transaction
from django.db.models import Sum
from django.utils import timezone

from kernel.tasks import enqueue_on_commit
from payments.card.gateway import GatewayCharge
from payments.card.models import CardPayment, CardRefund
from payments.exceptions import PaymentInputError, refund_fits, refund_replayed
from payments.signals import refund_finished_on_commit
from payments.timeline import record_event

logger = logging.getLogger(__name__)
_FINAL = {CardRefund.Status.COMPLETED, CardRefund.Status.FAILED}


def _enqueue(refund: CardRefund) -> None:
    enqueue_on_commit("payments.tasks.execute_card_refund", refund.pk)


def card_refund_request(*, reference: str, amount: int, refund_id: str, reason: str) -> CardRefund:
    """Inside the caller's transaction: an estorno of the approved card payment of `reference`."""
    existing = refund_replayed(CardRefund, refund_id=refund_id, reference=reference, amount=amount)
    if existing is not None:
        return existing
    payment = (
        CardPayment.objects.select_for_update()
        .filter(reference=reference, status=CardPayment.Status.APPROVED)
        .exclude(gateway_reference="")
        .first()
    )
    if payment is None:
        raise PaymentInputError("reference", "has no settled payment to refund")
    asked = payment.refunds.exclude(status=CardRefund.Status.FAILED).aggregate(total=Sum("amount"))["total"] or 0
    available = payment.amount - max(int(asked), payment.refunded_amount)
    refund_fits(amount, available)
    refund = CardRefund.objects.create(
        refund_id=refund_id, payment=payment, reference=reference, amount=amount, reason=(reason or "Estorno")[:140]
    )
    record_event(reference=reference, kind="card_refund_requested", refund_id=refund_id, amount=amount)
    _enqueue(refund)
    return refund


def card_refund_automatic(*, payment: CardPayment, reason: str) -> CardRefund:
    """Full estorno of an approval the shop could not accept (its checkout was canceled meanwhile)."""
    refund, created = CardRefund.objects.get_or_create(
        refund_id=f"auto_{payment.payment_id}",
        defaults={
            "payment": payment,
            "reference": payment.reference,
            "amount": payment.amount - payment.refunded_amount,
            "kind": CardRefund.Kind.AUTOMATIC,
            "reason": reason[:140],
        },
    )
    if created:
        record_event(reference=payment.reference, kind="card_refund_automatic", amount=refund.amount, why=reason)
        _enqueue(refund)
    return refund


def card_refund_apply(
    *, refund_pk: int, status: str, charge: GatewayCharge | None = None, error: str = ""
) -> CardRefund:
    """Record the gateway's answer: "completed" | "failed" | "pending" (try again). Final states never change."""
    with transaction.atomic():
        refund = CardRefund.objects.select_for_update().select_related("payment").get(pk=refund_pk)
        if refund.status in _FINAL:
            return refund
        refund.last_error = error[:500] or refund.last_error
        if charge is not None:
            refund.gateway_status = f"{charge.status}/{charge.transaction_status}"[:40]
        if status not in _FINAL:
            refund.save(update_fields=["last_error", "gateway_status", "updated_at"])
            return refund
        refund.status = status
        refund.finished_at = timezone.now()
        refund.save()
        payment = CardPayment.objects.select_for_update().get(pk=refund.payment_id)
        if status == CardRefund.Status.COMPLETED:
            reported = charge.canceled_amount if charge is not None else 0
            done = CardRefund.objects.filter(payment=payment, status=CardRefund.Status.COMPLETED).aggregate(
                total=Sum("amount")
            )["total"]
            payment.refunded_amount = min(payment.amount, max(int(done or 0), reported, payment.refunded_amount))
            payment.save(update_fields=["refunded_amount", "updated_at"])
        record_event(reference=refund.reference, kind=f"card_refund_{status}", refund_id=refund.refund_id)
        refund_finished_on_commit(refund, status)
    return refund
