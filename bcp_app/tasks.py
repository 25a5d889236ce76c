"""Celery tasks of bcp_app: thin wrappers over services (take ids, idempotent)."""

from __future__ import annotations

from celery import shared_task

from bcp_app.service import a2a_tasks, idempotency, webhooks


@shared_task(name="bcp_app.tasks.purge_idempotency_records")
def purge_idempotency_records() -> int:
    return idempotency.purge_expired()


@shared_task(name="bcp_app.tasks.prepare_order_webhook", bind=True, max_retries=50)
def prepare_order_webhook(
    self: object, order_id: str, event: str, source_key: str | None = None, snapshot: str = ""
) -> str:
    """An order event whose platform profile could not be read when the order's task ran: retried until the
    profile answers, then prepared and tried at once as there."""
    try:
        return webhooks.order_webhook_send(order_id=order_id, event=event, source_key=source_key, snapshot=snapshot)
    except webhooks.WebhookNotReady as exc:
        if self.request.is_eager:  # type: ignore[attr-defined]  # in-process mode: no broker to retry with
            return "profile_unreachable"
        # The platform profile is unreachable: try again later (≈ 25 h in total with the cap).
        countdown = min(1800, 30 * 2**self.request.retries)  # type: ignore[attr-defined]
        raise self.retry(exc=exc, countdown=countdown) from exc  # type: ignore[attr-defined]


@shared_task(name="bcp_app.tasks.deliver_order_webhook")
def deliver_order_webhook(delivery_id: int) -> str:
    return webhooks.webhook_deliver(delivery_id=delivery_id)


@shared_task(name="bcp_app.tasks.retry_order_webhooks")
def retry_order_webhooks() -> int:
    """Beat sweep: one attempt for each due delivery (each claimed with a lease, so no double sends)."""
    due = webhooks.due_deliveries()
    for delivery_id in due:
        webhooks.webhook_deliver(delivery_id=delivery_id)
    return len(due)


@shared_task(name="bcp_app.tasks.reconcile_a2a_tasks")
def reconcile_a2a_tasks() -> int:
    """Beat sweep: A2A tasks whose checkout ended without a settlement reaching them (Pix expired) end too."""
    return a2a_tasks.tasks_reconcile()
