"""Sandbox webhook delivery (Celery). Registered through `payments.tasks`."""

from __future__ import annotations

import logging

from celery import shared_task
from django.conf import settings

from kernel.http import OutboundError
from kernel.http import request as http_request
from payments import webhook_auth
from payments.automatic.webhook import receive_recurrence_webhook, receive_recurring_charge_webhook
from payments.webhooks import receive_pix_webhook

logger = logging.getLogger(__name__)


def sandbox_webhook_url(resource: str = "pix") -> str:
    """Where the sandbox calls back: Bacen PSPs append `/pix` (payments) or `/rec` (Pix Automático recurrences)
    to the one URL the receiver registered (`/cobr` for cycle charges)."""
    url = getattr(settings, "PIX_SANDBOX_WEBHOOK_URL", "") or f"{settings.BCP_PUBLIC_URL}/payments/pix/webhook/pix"
    return url if resource == "pix" else url.removesuffix("/pix") + f"/{resource}"


@shared_task(bind=True, name="payments.sandbox.deliver_webhook", max_retries=8, acks_late=True)
def deliver_sandbox_webhook(self, body: str, resource: str = "pix") -> int:
    """POST the signed Bacen body to our webhook URL (`resource` pix or rec); returns the HTTP status we answered."""
    raw = body.encode()
    signature = webhook_auth.sign(settings.PIX_SANDBOX_WEBHOOK_SECRET, raw)
    url = sandbox_webhook_url(resource)
    if self.request.is_eager and url.startswith(settings.BCP_PUBLIC_URL + "/"):
        # Eager (no broker) inside a request: an HTTP call to our own single-threaded sync views
        # could deadlock, so deliver in-process through the very same receiver the view uses.

        receivers = {"rec": receive_recurrence_webhook, "cobr": receive_recurring_charge_webhook}
        receive = receivers.get(resource, receive_pix_webhook)
        status, _ = receive(raw, {webhook_auth.HEADER: signature, "Content-Type": "application/json"})
        return status
    try:
        # The shop's own webhook URL, configured by the merchant (not from outside): no SSRF guard, the
        # kernel client's total deadline and no redirects like every other outbound call.
        response = http_request(
            "POST",
            url,
            content=raw,
            headers={webhook_auth.HEADER: signature, "Content-Type": "application/json"},
            deadline=10.0,
            guard=False,
        )
    except OutboundError as exc:
        raise self.retry(exc=exc, countdown=min(2**self.request.retries, 300)) from exc
    if response.status_code >= 500:
        raise self.retry(countdown=min(2**self.request.retries, 300))
    if response.status_code >= 400:
        logger.warning("sandbox webhook refused with %s: %s", response.status_code, response.text[:200])
    return response.status_code
