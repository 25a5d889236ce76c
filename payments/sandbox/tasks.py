"""Sandbox webhook delivery (Celery). Registered through `payments.tasks`."""

from __future__ import annotations

import logging

import httpx
from celery import shared_task
from django.conf import settings

from payments import webhook_auth
from payments.webhooks import receive_pix_webhook

logger = logging.getLogger(__name__)


def sandbox_webhook_url() -> str:
    return getattr(settings, "PIX_SANDBOX_WEBHOOK_URL", "") or f"{settings.BCP_PUBLIC_URL}/payments/pix/webhook/pix"


@shared_task(bind=True, name="payments.sandbox.deliver_webhook", max_retries=8, acks_late=True)
def deliver_sandbox_webhook(self, body: str) -> int:
    """POST the signed Bacen body to our webhook URL; returns the HTTP status we answered."""
    raw = body.encode()
    signature = webhook_auth.sign(settings.PIX_SANDBOX_WEBHOOK_SECRET, raw)
    url = sandbox_webhook_url()
    if self.request.is_eager and url.startswith(settings.BCP_PUBLIC_URL + "/"):
        # Eager (no broker) inside a request: an HTTP call to our own single-threaded sync views
        # could deadlock, so deliver in-process through the very same receiver the view uses.

        status, _ = receive_pix_webhook(raw, {webhook_auth.HEADER: signature, "Content-Type": "application/json"})
        return status
    try:
        response = httpx.post(
            url,
            content=raw,
            headers={webhook_auth.HEADER: signature, "Content-Type": "application/json"},
            timeout=10.0,
            follow_redirects=False,
        )
    except httpx.HTTPError as exc:
        raise self.retry(exc=exc, countdown=min(2**self.request.retries, 300)) from exc
    if response.status_code >= 500:
        raise self.retry(countdown=min(2**self.request.retries, 300))
    if response.status_code >= 400:
        logger.warning("sandbox webhook refused with %s: %s", response.status_code, response.text[:200])
    return response.status_code
