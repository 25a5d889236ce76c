"""Celery tasks of the shop (thin: call a service)."""

from __future__ import annotations

from celery import shared_task

from shop.services import checkout_expire_due


@shared_task(name="shop.tasks.expire_checkouts")
def expire_checkouts() -> int:
    """Beat, every minute: cancel checkouts past `expires_at` and release what they hold."""
    return checkout_expire_due()


@shared_task(name="shop.tasks.sweep_fiscal_requests")
def sweep_fiscal_requests() -> int:
    """Beat: paid recent orders whose NF-e request was never written (a lost after-commit receiver)."""
    from shop.fiscal.lifecycle import sweep_missing_documents

    return sweep_missing_documents()
