"""Celery tasks of orders: take ids, call a service, idempotent."""

from __future__ import annotations

from datetime import timedelta
from smtplib import SMTPException

from celery import shared_task
from django.utils import timezone

from orders.models import EmailDelivery
from orders.services import email_delivery_send
from orders.services.dispatch import outbox_pending_ids, outbox_process

SWEEP_MIN_AGE = timedelta(minutes=2)  # younger rows are still in their normal after-commit path
SWEEP_MAX_AGE = timedelta(days=2)  # an e-mail that old is stale: leave it to staff ("resend e-mail")
SWEEP_BATCH = 200


@shared_task(
    name="orders.tasks.send_order_email",
    autoretry_for=(SMTPException, OSError),
    retry_backoff=True,
    retry_backoff_max=600,
    max_retries=10,
)
def send_order_email(delivery_id: int) -> str:
    """Send one buyer e-mail; a replayed or duplicated task finds it sent and does nothing."""
    return email_delivery_send(delivery_id=delivery_id)


@shared_task(name="orders.tasks.send_pending_emails")
def send_pending_emails() -> int:
    """Beat sweep: enqueue e-mails recorded but never sent (e.g. the broker was down at commit time)."""
    now = timezone.now()
    pending = list(
        EmailDelivery.objects.filter(
            sent_at__isnull=True, created_at__lt=now - SWEEP_MIN_AGE, created_at__gte=now - SWEEP_MAX_AGE
        )
        .order_by("created_at")
        .values_list("pk", flat=True)[:SWEEP_BATCH]
    )
    for delivery_id in pending:
        send_order_email.delay(delivery_id)
    return len(pending)


OUTBOX_SWEEP_MIN_AGE = timedelta(minutes=1)  # younger rows are still in their after-commit task


@shared_task(name="orders.tasks.process_outbox_message", acks_late=True)
def process_outbox_message(message_id: int) -> str:
    """Run one outbox row (refund request, …); a duplicate task finds it done and does nothing."""
    return outbox_process(message_id=message_id)


@shared_task(name="orders.tasks.sweep_outbox")
def sweep_outbox() -> int:
    """Beat sweep: run outbox rows whose task was lost or failed. Returns how many it completed."""
    ids = outbox_pending_ids(older_than=OUTBOX_SWEEP_MIN_AGE, limit=SWEEP_BATCH)
    return sum(outbox_process(message_id=message_id) == "done" for message_id in ids)
