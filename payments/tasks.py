"""Celery tasks of payments (PIX.md §5): thin wrappers that take ids and call a service. All idempotent."""

from __future__ import annotations

import logging
import random
from datetime import timedelta
from typing import Any

from celery import shared_task
from django.db import OperationalError
from django.utils import timezone

from payments import settlement
from payments.automatic.services import (
    pix_recurrence_event_process,
    pix_recurrence_events_reprocess,
    pix_recurring_charge_event_process,
    pix_recurring_charges_reconcile,
)
from payments.boleto.service import boleto_expire_due, boleto_reconcile_due
from payments.card.gateway import GatewayNotFound, GatewayRejected, GatewayUnavailable
from payments.card.refunds import card_refund_apply
from payments.card.service import get_card_gateway
from payments.card.settle import card_payment_reconcile
from payments.card.webhook import card_webhook_event_process
from payments.med.services import (
    answers_due,
    events_unprocessed,
    infraction_answer_send,
    infraction_event_process,
)
from payments.models import CardPayment, CardRefund, CardWebhookEvent, PixRefund
from payments.psp import PSPNotFound, PSPRejected, PSPUnavailable, get_psp
from payments.refunds import pix_refund_apply
from payments.sandbox.tasks import deliver_sandbox_webhook

__all__ = [
    "deliver_sandbox_webhook",
    "execute_card_refund",
    "execute_pix_refund",
    "expire_pix_charges",
    "poll_pix_refund",
    "process_card_webhook",
    "process_infraction_event",
    "process_pix_webhook",
    "process_recurrence_webhook",
    "process_recurring_charge_webhook",
    "reconcile_card_payments",
    "reconcile_pix_charges",
    "reconcile_received_pix",
    "reconcile_recurring_charges",
    "reprocess_recurrence_webhooks",
    "revoke_pix_charge_at_psp",
    "send_infraction_answer",
    "sweep_boletos",
    "sweep_infractions",
]

logger = logging.getLogger(__name__)
_RETRYABLE = (PSPUnavailable, OperationalError)  # OperationalError covers deadlocks/serialization failures


@shared_task(
    bind=True, name="payments.tasks.process_pix_webhook", max_retries=8, acks_late=True, reject_on_worker_lost=True
)
def process_pix_webhook(self, event_id: int) -> str:
    try:
        return settlement.pix_webhook_event_process(event_id=event_id)
    except _RETRYABLE as exc:
        return _inbox_retry(self, exc, "Pix inbox event", event_id)


def _inbox_retry(task: Any, exc: Exception, what: str, event_id: int) -> str:
    """An inbox row whose processing failed for a passing reason: retried with exponential backoff and jitter
    (1 s … 10 min); after the task's retries, or with no broker (development, eager), the row is left to the sweep
    that re-processes unprocessed rows."""
    if task.request.is_eager:
        logger.warning("%s %s left for the sweep: %s", what, event_id, exc)
        return "retry_later"
    raise task.retry(exc=exc, countdown=min(2**task.request.retries, 600) * random.uniform(0.5, 1.0)) from exc


@shared_task(
    bind=True,
    name="payments.tasks.process_recurrence_webhook",
    max_retries=8,
    acks_late=True,
    reject_on_worker_lost=True,
)
def process_recurrence_webhook(self, event_id: int) -> str:
    """A Pix Automático `/rec` inbox row: confirm at the PSP, then `recurrence_changed` (payments/automatic)."""
    try:
        return pix_recurrence_event_process(event_id=event_id)
    except _RETRYABLE as exc:
        return _inbox_retry(self, exc, "recurrence inbox event", event_id)


@shared_task(name="payments.tasks.reprocess_recurrence_webhooks", acks_late=True)
def reprocess_recurrence_webhooks() -> int:
    """Every minute: `/rec` inbox rows left unprocessed (lost enqueue, dead worker) are processed again."""
    return pix_recurrence_events_reprocess()


@shared_task(
    bind=True,
    name="payments.tasks.process_recurring_charge_webhook",
    max_retries=8,
    acks_late=True,
    reject_on_worker_lost=True,
)
def process_recurring_charge_webhook(self, event_id: int) -> str:
    """A Pix Automático `/cobr` inbox row: confirm at the PSP, then the cycle is paid or failed, once."""
    try:
        return pix_recurring_charge_event_process(event_id=event_id)
    except _RETRYABLE as exc:
        return _inbox_retry(self, exc, "cobr inbox event", event_id)


@shared_task(name="payments.tasks.reconcile_recurring_charges", acks_late=True)
def reconcile_recurring_charges() -> int:
    """Every minute: `/cobr` rows left unprocessed, and cycle charges past due never notified (GET /cobr)."""
    return pix_recurring_charges_reconcile()


@shared_task(name="payments.tasks.reconcile_pix_charges", acks_late=True)
def reconcile_pix_charges() -> int:
    settled = settlement.pix_charges_reconcile()
    _resume_stalled_refunds()
    return settled


def _resume_stalled_refunds() -> None:
    """Pending devoluções untouched for 10 minutes (task lost, worker died): run or poll them again."""
    stalled = PixRefund.objects.filter(
        status=PixRefund.Status.PENDING,
        updated_at__lt=timezone.now() - timedelta(minutes=10),
        attempts__lt=REFUND_MAX_ATTEMPTS,
    ).values_list("pk", "psp_status")[:100]
    for refund_pk, psp_status in list(stalled):
        PixRefund.objects.filter(pk=refund_pk).update(updated_at=timezone.now())
        if psp_status:  # accepted by the PSP, outcome unknown: ask again
            poll_pix_refund.delay(refund_pk)
        else:
            execute_pix_refund.delay(refund_pk)


@shared_task(name="payments.tasks.reconcile_received_pix", acks_late=True)
def reconcile_received_pix(hours: int = 3) -> int:
    """Hourly: every Pix the PSP received in the last `hours` is known to us (lost webhooks of non-active charges)."""
    end = timezone.now()
    return settlement.pix_received_reconcile(start=end - timedelta(hours=hours), end=end)


@shared_task(name="payments.tasks.expire_pix_charges", acks_late=True)
def expire_pix_charges() -> int:
    return settlement.pix_charges_expire_due()


@shared_task(
    name="payments.tasks.revoke_pix_charge_at_psp",
    autoretry_for=(PSPUnavailable,),
    retry_backoff=True,
    retry_jitter=True,
    max_retries=8,
    acks_late=True,
)
def revoke_pix_charge_at_psp(txid: str) -> bool:
    return settlement.pix_charge_cancel_at_psp(txid=txid)


REFUND_MAX_ATTEMPTS = 9  # 1 + 8 retries with backoff (PIX.md §5), counted in the database


@shared_task(bind=True, name="payments.tasks.execute_pix_refund", max_retries=None, acks_late=True)
def execute_pix_refund(self, refund_pk: int) -> str:
    """`PUT /pix/{e2eid}/devolucao/{id}`; retried with backoff; the final status is recorded."""
    refund = PixRefund.objects.get(pk=refund_pk)
    if refund.status != PixRefund.Status.PENDING:
        return refund.status
    attempts = refund.attempts + 1
    PixRefund.objects.filter(pk=refund_pk).update(attempts=attempts)
    try:
        answer = get_psp().refund(
            e2eid=refund.end_to_end_id,
            refund_id=refund.psp_refund_id,
            amount_cents=refund.amount,
            description=refund.reason,
        )
    except PSPUnavailable as exc:
        if attempts >= REFUND_MAX_ATTEMPTS:
            return pix_refund_apply(refund_pk=refund_pk, status="FAILED", error=f"PSP unavailable: {exc}").status
        PixRefund.objects.filter(pk=refund_pk).update(last_error=str(exc)[:500])
        if self.request.is_eager:
            # No broker (development): retry inline; raising Retry would reach the caller's on_commit.
            return self.run(refund_pk)
        raise self.retry(exc=exc, countdown=min(30 * 2 ** (attempts - 1), 3600)) from exc
    except (PSPRejected, PSPNotFound) as exc:
        return pix_refund_apply(refund_pk=refund_pk, status="FAILED", error=str(exc)[:500]).status
    result = pix_refund_apply(refund_pk=refund_pk, status=answer.status, rtr_id=answer.rtr_id, psp_status=answer.status)
    if result.status == PixRefund.Status.PENDING and not self.request.is_eager:
        # The webhook usually reports the outcome first; polling covers a lost one.
        poll_pix_refund.apply_async(args=[refund_pk], countdown=30)
    return result.status


@shared_task(bind=True, name="payments.tasks.poll_pix_refund", max_retries=12, acks_late=True)
def poll_pix_refund(self, refund_pk: int) -> str:
    """`GET /pix/{e2eid}/devolucao/{id}` until final (backoff up to ~1 h); the webhook usually wins."""
    refund = PixRefund.objects.get(pk=refund_pk)
    if refund.status != PixRefund.Status.PENDING:
        return refund.status
    try:
        answer = get_psp().get_refund(refund.end_to_end_id, refund.psp_refund_id)
    except (PSPUnavailable, PSPNotFound) as exc:
        if self.request.is_eager:
            return refund.status  # no broker: the reconcile beat asks again later
        raise self.retry(exc=exc, countdown=min(30 * 2**self.request.retries, 3600)) from exc
    result = pix_refund_apply(refund_pk=refund_pk, status=answer.status, rtr_id=answer.rtr_id, psp_status=answer.status)
    if result.status == PixRefund.Status.PENDING and not self.request.is_eager:
        raise self.retry(countdown=min(30 * 2**self.request.retries, 3600))
    return result.status


# --- cards --------------------------------------------------------------------------------------------------------

CARD_REFUND_MAX_ATTEMPTS = 9
CARD_PENDING_GRACE = timedelta(minutes=2)  # longer than one authorize + capture with its retries


@shared_task(
    bind=True, name="payments.tasks.process_card_webhook", max_retries=8, acks_late=True, reject_on_worker_lost=True
)
def process_card_webhook(self, event_id: int) -> str:
    try:
        return card_webhook_event_process(event_id=event_id)
    except (GatewayUnavailable, OperationalError) as exc:
        CardWebhookEvent.objects.filter(pk=event_id).update(last_error=str(exc)[:500])
        return _inbox_retry(self, exc, "card inbox event", event_id)  # the sweep: reconcile_card_payments


@shared_task(bind=True, name="payments.tasks.execute_card_refund", max_retries=None, acks_late=True)
def execute_card_refund(self, refund_pk: int) -> str:
    """`DELETE /charges/{id}` with the amount, Idempotency-Key = refund_id; retried with backoff."""
    refund = CardRefund.objects.select_related("payment").get(pk=refund_pk)
    if refund.status != CardRefund.Status.PENDING:
        return refund.status
    attempts = refund.attempts + 1
    CardRefund.objects.filter(pk=refund_pk).update(attempts=attempts, updated_at=timezone.now())
    gateway = get_card_gateway()
    if gateway is None:
        return card_refund_apply(refund_pk=refund_pk, status="failed", error="no card gateway is configured").status
    try:
        charge = gateway.refund(
            charge_id=refund.payment.gateway_reference, amount=refund.amount, idempotency_key=refund.refund_id
        )
    except GatewayUnavailable as exc:
        if attempts >= CARD_REFUND_MAX_ATTEMPTS:
            return card_refund_apply(refund_pk=refund_pk, status="failed", error=f"gateway unavailable: {exc}").status
        card_refund_apply(refund_pk=refund_pk, status="pending", error=str(exc))
        if self.request.is_eager:
            return "pending"  # no broker: reconcile_card_payments runs it again
        raise self.retry(exc=exc, countdown=min(30 * 2 ** (attempts - 1), 3600)) from exc
    except (GatewayRejected, GatewayNotFound) as exc:
        return card_refund_apply(refund_pk=refund_pk, status="failed", error=str(exc)).status
    return card_refund_apply(refund_pk=refund_pk, status="completed", charge=charge).status


@shared_task(name="payments.tasks.reconcile_card_payments", acks_late=True)
def reconcile_card_payments(limit: int = 100) -> int:
    """Every minute: pending card payments asked at the gateway by order code, inbox rows left unprocessed,
    estornos left pending (task lost). Returns how many payments reached a final outcome."""
    cutoff = timezone.now() - CARD_PENDING_GRACE
    references = CardPayment.objects.filter(status=CardPayment.Status.PENDING, updated_at__lte=cutoff).values_list(
        "reference", flat=True
    )
    finished = 0
    for reference in list(references[:limit]):
        result = card_payment_reconcile(reference=reference)
        finished += int(result is not None and not result.pending)
    stale = CardWebhookEvent.objects.filter(processed_at__isnull=True, received_at__lte=cutoff, attempts__lt=10)
    for event_id in list(stale.values_list("pk", flat=True)[:limit]):
        try:
            card_webhook_event_process(event_id=event_id)
        except Exception:  # one bad row must not stop the sweep; it is counted in `attempts`
            logger.warning("card inbox event %s still failing", event_id, exc_info=True)
    stalled = CardRefund.objects.filter(
        status=CardRefund.Status.PENDING, updated_at__lt=cutoff, attempts__lt=CARD_REFUND_MAX_ATTEMPTS
    )
    for refund_pk in list(stalled.values_list("pk", flat=True)[:limit]):
        execute_card_refund.delay(refund_pk)
    return finished


@shared_task(name="payments.tasks.process_infraction_event", acks_late=True)
def process_infraction_event(event_id: int) -> str:
    return infraction_event_process(event_id=event_id)


@shared_task(name="payments.tasks.send_infraction_answer", acks_late=True)
def send_infraction_answer(answer_id: int) -> str:
    return infraction_answer_send(answer_id=answer_id)


@shared_task(name="payments.tasks.sweep_infractions", acks_late=True)
def sweep_infractions() -> int:
    """MED notifications whose task was lost, and answers not sent yet (PSP down, crash mid-call)."""
    events = events_unprocessed(older_than=timedelta(minutes=1))
    for event_id in events:
        infraction_event_process(event_id=event_id)
    answers = answers_due()
    for answer_id in answers:
        infraction_answer_send(answer_id=answer_id)
    return len(events) + len(answers)


# --- boletos ------------------------------------------------------------------------------------------------------


@shared_task(name="payments.tasks.sweep_boletos", acks_late=True)
def sweep_boletos(limit: int = 100) -> int:
    """Every few minutes: boletos waiting > 10 min asked at the gateway (a lost `charge.paid`), and those unpaid
    past their due date + BOLETO_EXPIRY_GRACE_DAYS canceled there and announced expired. Both settle once."""
    return boleto_reconcile_due(limit=limit) + boleto_expire_due(limit=limit)
