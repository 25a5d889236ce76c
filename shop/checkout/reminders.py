"""Abandoned-checkout recovery: a checkout with the buyer's e-mail and no order after
`SHOP_CHECKOUT_REMINDER_MINUTES` gets one e-mail with its `continue_url` (storefront and agent checkouts alike).

Outbox shape: `reminders_queue_due` writes one `CheckoutReminder` row per checkout (unique: once, whatever the
sweeps and replays) and queues the send after commit; `reminder_send` claims the row in a short transaction,
sends outside it, and re-checks the checkout first, so a checkout bought or cancelled meanwhile is never
reminded. An opt-out link (signed e-mail) stops all future reminders to that address.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.core import signing
from django.core.mail import EmailMultiAlternatives
from django.db import transaction
from django.db.models import Count, Exists, OuterRef, Q
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone, translation
from django.utils.translation import gettext as _

from kernel.tasks import enqueue_on_commit
from orders.emails import OrderEmail
from shop.checkout.selectors import absolute_url, checkout_continue_url, marketing_refused
from shop.checkout.types import STATUS_COMPLETED, STATUS_INCOMPLETE, STATUS_READY
from shop.models import Checkout, CheckoutReminder, ReminderOptOut

logger = logging.getLogger(__name__)
_SALT = "shop.checkout.reminders.optout"  # the signing salt of links already sent: kept when the module moved
BATCH = 200


def optout_token(email: str) -> str:
    return signing.dumps(email.strip().lower(), salt=_SALT, compress=True)


def optout_email(token: str) -> str | None:
    try:
        return str(signing.loads(token, salt=_SALT))
    except signing.BadSignature:
        return None


def reminder_optout(*, token: str) -> bool:
    """Stop reminders to the token's e-mail; False for a bad token."""
    email = optout_email(token)
    if not email:
        return False
    ReminderOptOut.objects.get_or_create(email=email)
    return True


def reminders_queue_due(*, now: object | None = None) -> int:
    """Write the reminder rows of checkouts abandoned long enough (not expired, with an e-mail); queue sends."""
    minutes = settings.SHOP_CHECKOUT_REMINDER_MINUTES
    if minutes <= 0:
        return 0
    now = now or timezone.now()
    cutoff = now - timedelta(minutes=minutes)  # type: ignore[operator]
    opted_out = Exists(ReminderOptOut.objects.filter(email__iexact=OuterRef("buyer_email")))
    due = (
        Checkout.objects.filter(status__in=(STATUS_INCOMPLETE, STATUS_READY), updated_at__lte=cutoff)
        .exclude(buyer_email="")
        .exclude(expires_at__lte=now)
        .filter(reminder__isnull=True)
        .exclude(opted_out)
        .order_by("id")
        .values_list("id", "buyer_email")[:BATCH]
    )
    with transaction.atomic():
        rows = [CheckoutReminder(checkout_id=pk, email=email) for pk, email in due]
        CheckoutReminder.objects.bulk_create(rows, ignore_conflicts=True)
        # New rows and any earlier one whose send failed (sent_at reset): sending is idempotent, so re-drive all.
        unsent = CheckoutReminder.objects.filter(sent_at__isnull=True, skipped="").order_by("id")
        created = list(unsent.values_list("id", flat=True)[:BATCH])
        for reminder_id in created:
            enqueue_on_commit("shop.tasks.send_checkout_reminder", reminder_id)
    return len(created)


def _message(checkout: Checkout, email: str) -> EmailMultiAlternatives:
    context = {
        "checkout": checkout,
        "lines": list(checkout.lines.all()),
        "continue_url": checkout_continue_url(checkout),
        "optout_url": absolute_url(reverse("shop:reminder_optout", kwargs={"token": optout_token(email)})),
        "shop_name": settings.SHOP_NAME,
    }
    with translation.override(checkout.language or settings.LANGUAGE_CODE):
        subject = _("%(shop)s: seu carrinho está esperando por você") % {"shop": settings.SHOP_NAME}
        text = render_to_string("shop/email/checkout_reminder.txt", context)
        html = render_to_string("shop/email/checkout_reminder.html", context)

    message: EmailMultiAlternatives = OrderEmail(subject=subject, body=text, to=[email])
    message.attach_alternative(html, "text/html")
    return message


def reminder_send(*, reminder_id: int) -> str:
    """Send one reminder unless done, skipped, opted out, or the checkout was bought/cancelled meanwhile."""
    with transaction.atomic():
        reminder = CheckoutReminder.objects.select_for_update().filter(pk=reminder_id).first()
        if reminder is None:
            return "missing"
        if reminder.sent_at is not None or reminder.skipped:
            return "done"
        checkout = Checkout.objects.prefetch_related("lines").get(pk=reminder.checkout_id)
        reason = ""
        if checkout.status not in (STATUS_INCOMPLETE, STATUS_READY):
            reason = f"status:{checkout.status}"
        elif ReminderOptOut.objects.filter(email__iexact=reminder.email).exists():
            reason = "opted_out"
        elif marketing_refused(checkout.buyer_consent):  # LGPD: the buyer said no to being contacted
            reason = "no_marketing_consent"
        if reason:
            reminder.skipped = reason[:40]
            reminder.save(update_fields=["skipped"])
            return reason
        reminder.sent_at = timezone.now()  # claimed: a concurrent run sees it sent
        reminder.save(update_fields=["sent_at"])
        message = _message(checkout, reminder.email)
    try:
        message.send()  # outside the lock
    except Exception:
        CheckoutReminder.objects.filter(pk=reminder_id).update(sent_at=None)  # the next sweep retries
        logger.exception("checkout reminder %s not sent", reminder_id)
        raise
    return "sent"


@dataclass(frozen=True)
class ReminderStats:
    sent: int
    recovered: int  # reminded checkouts that became orders afterwards


def reminder_stats() -> ReminderStats:
    """For the back office: reminders sent and checkouts bought after their reminder (1 query)."""
    counts = CheckoutReminder.objects.filter(sent_at__isnull=False).aggregate(
        sent=Count("pk"), recovered=Count("pk", filter=Q(checkout__status=STATUS_COMPLETED))
    )
    return ReminderStats(sent=counts["sent"], recovered=counts["recovered"])
