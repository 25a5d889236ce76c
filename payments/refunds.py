"""Devoluções (PIX.md §3.2 Refunds): request, execution at the PSP, and final status (monotonic).

`refund_id` is the caller's idempotency key; `psp_refund_id` (`[a-zA-Z0-9]{1,35}`) is generated and
stored before the PSP is called, so retrying the same PUT is idempotent at the PSP too.
"""

from __future__ import annotations

import logging
import uuid

from django.db import transaction
from django.db.models import Sum
from django.utils import timezone

from kernel.tasks import enqueue_on_commit
from payments.boleto.models import BoletoRefund
from payments.boleto.service import boleto_refund_request
from payments.card.models import CardRefund
from payments.card.refunds import card_refund_request
from payments.exceptions import PaymentInputError, refund_fits, refund_replayed
from payments.models import PixCharge, PixPayment, PixRecurringCharge, PixRefund
from payments.psp import PSPRefund
from payments.signals import refund_finished_on_commit
from payments.timeline import record_event

logger = logging.getLogger(__name__)
_FINAL = {PixRefund.Status.COMPLETED, PixRefund.Status.FAILED}
_PSP_TO_STATUS = {"RETURNED": PixRefund.Status.COMPLETED, "FAILED": PixRefund.Status.FAILED}


def _recurring_payment(reference: str) -> PixPayment | None:
    """The Pix a Pix Automático cycle (`reference` = the cycle, its order's checkout id) was paid with, locked."""
    paid = (
        PixRecurringCharge.objects.filter(reference=reference, settled_at__isnull=False)
        .exclude(end_to_end_id="")
        .values_list("end_to_end_id", flat=True)
        .first()
    )
    if paid is None:
        return None
    return PixPayment.objects.select_for_update().filter(end_to_end_id=paid, outcome=PixPayment.Outcome.SETTLED).first()


def _refunded_so_far(payment: PixPayment) -> int:
    total = payment.refunds.exclude(status=PixRefund.Status.FAILED).aggregate(total=Sum("amount"))["total"]
    return int(total or 0)


def _enqueue(refund: PixRefund) -> None:
    enqueue_on_commit("payments.tasks.execute_pix_refund", refund.pk)


def refund_request(
    *, reference: str, amount: int, refund_id: str, reason: str
) -> PixRefund | CardRefund | BoletoRefund:
    """Request a devolução of the settled Pix of `reference` (or the estorno of its card payment,
    `payments.card.refunds`); idempotent on `refund_id`.

    Raises PaymentInputError naming the field (unknown reference, amount above what is left, refund_id
    reused for a different refund). Ends with `refund_finished` on commit of the final status.
    """
    if not isinstance(refund_id, str) or not 1 <= len(refund_id) <= 64:
        raise PaymentInputError("refund_id", "must be 1..64 characters")
    if isinstance(amount, bool) or not isinstance(amount, int) or amount <= 0:
        raise PaymentInputError("amount", "must be a positive integer of centavos")
    with transaction.atomic():
        existing = refund_replayed(PixRefund, refund_id=refund_id, reference=reference, amount=amount)
        if existing is not None:
            return existing
        payment = (
            PixPayment.objects.select_for_update()
            .filter(charge__reference=reference, outcome=PixPayment.Outcome.SETTLED)
            .order_by("-created_at", "-id")
            .first()
        ) or _recurring_payment(reference)
        if payment is None:
            # Not a Pix: a paid boleto goes back by bank transfer (staff); an approved card payment of the
            # reference is refunded through its gateway.
            boleto = boleto_refund_request(reference=reference, amount=amount, refund_id=refund_id, reason=reason)
            if boleto is not None:
                return boleto
            return card_refund_request(reference=reference, amount=amount, refund_id=refund_id, reason=reason)
        available = payment.amount - _refunded_so_far(payment)
        refund_fits(amount, available)
        refund = PixRefund.objects.create(
            refund_id=refund_id,
            psp_refund_id=uuid.uuid4().hex,
            payment=payment,
            reference=reference,
            end_to_end_id=payment.end_to_end_id,
            amount=amount,
            kind=PixRefund.Kind.REQUESTED,
            reason=(reason or "Devolução")[:140],
        )
        record_event(
            reference=reference, kind="refund_requested", txid=payment.txid, refund_id=refund_id, amount=amount
        )
        _enqueue(refund)
    return refund


def refund_automatic(*, payment: PixPayment, reference: str, reason: str) -> PixRefund:
    """Full automatic refund of a Pix we must not keep (late, mismatched, rejected, duplicate). In a transaction."""
    refund, created = PixRefund.objects.get_or_create(
        refund_id=f"auto_{payment.end_to_end_id}",
        defaults={
            "psp_refund_id": uuid.uuid4().hex,
            "payment": payment,
            "reference": reference,
            "end_to_end_id": payment.end_to_end_id,
            "amount": payment.amount,
            "kind": PixRefund.Kind.AUTOMATIC,
            "reason": reason[:140],
        },
    )
    if created:
        record_event(reference=reference, kind="refund_automatic", txid=payment.txid, amount=payment.amount, why=reason)
        _enqueue(refund)
    return refund


def refund_unplaced(*, reference: str, reason: str) -> PixRefund | None:
    """Full automatic refund of the settled Pix of `reference` when no order will ever take it (a checkout
    paid before complete, then canceled or expired: PIX.md §3.2 "money must never be kept without an order").
    In the caller's transaction; None when `reference` holds no settled Pix. Idempotent (refund_automatic)."""
    payment = (
        PixPayment.objects.select_for_update()
        .filter(charge__reference=reference, outcome=PixPayment.Outcome.SETTLED)
        .order_by("-created_at", "-id")
        .first()
    )
    return None if payment is None else refund_automatic(payment=payment, reference=reference, reason=reason)


def pix_refund_apply(
    *, refund_pk: int, status: str, rtr_id: str = "", psp_status: str = "", error: str = ""
) -> PixRefund:
    """Record a PSP outcome (PROCESSING | RETURNED | FAILED). Final states never change."""
    with transaction.atomic():
        refund = PixRefund.objects.select_for_update().get(pk=refund_pk)
        if refund.status in _FINAL:
            return refund
        refund.rtr_id = rtr_id or refund.rtr_id
        refund.psp_status = psp_status or refund.psp_status
        refund.last_error = error or refund.last_error
        new_status = _PSP_TO_STATUS.get(status)
        if new_status is None:
            refund.save(update_fields=["rtr_id", "psp_status", "last_error", "updated_at"])
            return refund
        refund.status = new_status
        refund.finished_at = timezone.now()
        refund.save()
        txid = refund.payment.txid
        record_event(reference=refund.reference, kind=f"refund_{new_status}", txid=txid, refund_id=refund.refund_id)
        if new_status == PixRefund.Status.COMPLETED:
            _mark_charge_refunded(refund.payment)
        refund_finished_on_commit(refund, new_status)
    return refund


def _mark_charge_refunded(payment: PixPayment) -> None:
    charge = payment.charge
    if charge is None or charge.status != PixCharge.Status.PAID or charge.end_to_end_id != payment.end_to_end_id:
        return
    done = payment.refunds.filter(status=PixRefund.Status.COMPLETED).aggregate(total=Sum("amount"))["total"] or 0
    if done >= payment.amount:
        PixCharge.objects.filter(pk=charge.pk, status=PixCharge.Status.PAID).update(
            status=PixCharge.Status.REFUNDED, updated_at=timezone.now()
        )
        record_event(reference=charge.reference, kind="charge_refunded", txid=charge.txid)


def refunds_apply_from_psp(*, e2eid: str, refunds: tuple[PSPRefund, ...]) -> int:
    """Apply `devolucoes[]` reported by the PSP (webhook or GET) to our rows; returns how many matched."""
    matched = 0
    for reported in refunds:
        refund = PixRefund.objects.filter(end_to_end_id=e2eid, psp_refund_id=reported.refund_id).first()
        if refund is None:
            logger.warning("PSP reports devolucao %s on %s that we never requested", reported.refund_id, e2eid)
            continue
        matched += 1
        pix_refund_apply(
            refund_pk=refund.pk, status=reported.status, rtr_id=reported.rtr_id, psp_status=reported.status
        )
    return matched
