"""Celery tasks of the shop (thin: call a service)."""

from __future__ import annotations

from celery import shared_task

from shop.services import checkout_expire_due


@shared_task(name="shop.tasks.expire_checkouts")
def expire_checkouts() -> int:
    """Beat, every minute: cancel checkouts past `expires_at` and release what they hold."""
    return checkout_expire_due()
