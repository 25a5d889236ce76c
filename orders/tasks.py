"""Celery tasks of orders: take ids, call a service, idempotent."""

from __future__ import annotations

from smtplib import SMTPException

from celery import shared_task

from orders.services import email_delivery_send


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
