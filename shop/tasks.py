"""Celery tasks of the shop (thin: call a service)."""

from __future__ import annotations

from celery import shared_task

from payments.psp import PSPUnavailable
from shop.account.services import account_link_send, account_links_resend_due
from shop.checkout.boleto_mail import boleto_notice_send, boleto_notices_queue_due
from shop.checkout.reminders import reminder_send, reminders_queue_due
from shop.checkout.services import checkout_expire_due
from shop.freight.tracking import tracking_poll_due
from shop.invoicing.lifecycle import fiscal_retry_blocked, sweep_missing_cancellations, sweep_missing_documents
from shop.subscriptions.cycles import cycle_charge, subscription_cycles_sweep
from shop.subscriptions.emails import subscription_emails_pending, subscription_event_mail
from shop.subscriptions.services import subscriptions_abandoned_close


@shared_task(name="shop.tasks.expire_checkouts")
def expire_checkouts() -> int:
    """Beat, every minute: cancel checkouts past `expires_at` and release what they hold."""
    return checkout_expire_due()


@shared_task(name="shop.tasks.remind_abandoned_checkouts")
def remind_abandoned_checkouts() -> int:
    """Beat, every 10 minutes: write the due reminders (once per checkout) and queue their e-mails."""
    return reminders_queue_due()


@shared_task(name="shop.tasks.send_checkout_reminder")
def send_checkout_reminder(reminder_id: int) -> str:
    return reminder_send(reminder_id=reminder_id)


@shared_task(name="shop.tasks.sweep_boleto_notices")
def sweep_boleto_notices() -> int:
    """Beat, every 10 minutes: "vence amanhã" e-mails for boletos due tomorrow, and unsent boleto e-mails again."""
    return boleto_notices_queue_due()


@shared_task(name="shop.tasks.send_boleto_notice")
def send_boleto_notice(notice_id: int) -> str:
    return boleto_notice_send(notice_id=notice_id)


@shared_task(name="shop.tasks.sweep_fiscal_requests")
def sweep_fiscal_requests() -> int:
    """Beat: paid recent orders whose NF-e request was never written, and cancelled orders whose authorized
    NF-e was never asked to be cancelled (a lost or failed after-commit step), and blocked NF-e whose missing
    data was filled in since (the admin's after-commit retry was lost)."""
    return sweep_missing_documents() + sweep_missing_cancellations() + fiscal_retry_blocked()


@shared_task(name="shop.tasks.retry_blocked_fiscal")
def retry_blocked_fiscal(order_ref: str = "") -> int:
    """After fiscal data changed (a product, the store, an order's buyer): re-issue the blocked NF-e now complete."""
    return fiscal_retry_blocked(order_refs=[order_ref] if order_ref else None)


@shared_task(name="shop.tasks.poll_carrier_tracking")
def poll_carrier_tracking() -> int:
    """Beat: the Correios' tracking of bought labels (Melhor Envio tells by webhook) → fulfillment events."""
    return tracking_poll_due()


@shared_task(name="shop.tasks.send_account_link")
def send_account_link(link_id: int) -> str:
    """After the request's commit: the "Minha conta" sign-in e-mail (once; expired links are not sent)."""
    return account_link_send(link_id=link_id)


@shared_task(name="shop.tasks.resend_account_links")
def resend_account_links() -> int:
    """Beat, every minute: sign-in e-mails still unsent (a dead broker, a failed send) while their link is valid."""
    return account_links_resend_due()


@shared_task(name="shop.tasks.sweep_subscription_cycles", acks_late=True)
def sweep_subscription_cycles() -> dict[str, int]:
    """Beat, every 5 minutes: plan and charge subscription cycles ahead, re-drive what a crash left, and send
    the subscriber e-mails whose task was lost."""
    for event_id in subscription_emails_pending():
        send_subscription_email.delay(event_id)
    return {**subscription_cycles_sweep(), "abandoned": subscriptions_abandoned_close()}


@shared_task(name="shop.tasks.send_subscription_email", acks_late=True)
def send_subscription_email(event_id: int) -> str:
    return subscription_event_mail(event_id=event_id)


@shared_task(name="shop.tasks.charge_subscription_cycle", acks_late=True)
def charge_subscription_cycle(cycle_id: str) -> str:
    """A cycle planned inside its charging window: send its charge now (the sweep re-drives a lost one)."""
    try:
        return cycle_charge(cycle_id=cycle_id)
    except PSPUnavailable:
        return "psp_unavailable"
