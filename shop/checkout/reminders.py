"""Abandoned-checkout reminders: one service e-mail about the buyer's own unfinished checkout.

The rule (issue 33, major 5), as a careful Brazilian shop applies the LGPD:

- **What it is.** One e-mail per checkout, `SHOP_CHECKOUT_REMINDER_MINUTES` after its last change, telling the
  buyer what they left (items, prices, total) and the way back (`continue_url`). It offers nothing else: no
  other products, no coupon, no newsletter. It is a service message about a purchase the buyer began
  (LGPD art. 7º, V — steps before a contract, at the data subject's request — and IX, legitimate interest,
  with the art. 10 test: expected by the buyer, minimal data, easy refusal), not marketing, so it is **not
  gated on the marketing box** (unticked by default; it governs offers and news only).
- **Opt-out.** Every reminder carries a link that stops all future reminders to that address at once
  (art. 18, §2º; a `ReminderOptOut` row, case-folded e-mail), whatever checkout comes next.
- **Never after the buyer paid for those items.** No reminder for a checkout already paid (a paid agent
  checkout waiting for complete included), nor when the same e-mail completed another checkout with any of
  the same SKUs since this one was created (checked when the row is written and again just before sending).
- **Never for checkouts the buyer did not start.** A sale staff typed in the back office ("Nova venda",
  a Pix link sent to a buyer; `session_key` `admin:…`) is the merchant's, not an abandoned purchase: the
  buyer may have paid another way, and only the merchant contacts them about it. Storefront checkouts (the
  buyer typed the e-mail: saved as soon as it is typed, shop/checkout/web/views.py `checkout_email`) and
  agent checkouts (the buyer's own agent, BCP) are reminded.
- **At most one a week per address**: a second abandoned checkout within `REMINDER_EMAIL_DAYS` of a reminder
  sent to the same e-mail is skipped.

Outbox shape: `reminders_queue_due` writes one `CheckoutReminder` row per checkout (unique: once, whatever the
sweeps and replays) and queues the send after commit; `reminder_send` claims the row in a short transaction,
sends outside it, and re-checks the checkout first, so a checkout bought or cancelled meanwhile is never
reminded. A skipped row says why in `skipped`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.core import signing
from django.core.mail import EmailMultiAlternatives
from django.db import transaction
from django.db.models import Count, Exists, OuterRef, Q, QuerySet
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone, translation
from django.utils.translation import gettext as _

from kernel.br_validation import email_valid
from kernel.tasks import enqueue_on_commit
from orders.emails import OrderEmail
from shop.checkout.selectors import STAFF_KEY_PREFIX, absolute_url, checkout_continue_url
from shop.checkout.types import STATUS_COMPLETED, STATUS_INCOMPLETE, STATUS_READY
from shop.models import Checkout, CheckoutLine, CheckoutReminder, ReminderOptOut
from shop.store.services import email_sender

logger = logging.getLogger(__name__)
_SALT = "shop.checkout.reminders.optout"  # the signing salt of links already sent: kept when the module moved
BATCH = 200
REMINDER_EMAIL_DAYS = 7  # at most one reminder a week to the same address


def _bought_since() -> Exists:
    """The same e-mail completed a checkout with any of this checkout's SKUs after this one was created."""
    skus = CheckoutLine.objects.filter(checkout=OuterRef(OuterRef("pk"))).values("sku")
    return Exists(
        CheckoutLine.objects.filter(
            checkout__status=STATUS_COMPLETED,
            checkout__buyer_email__iexact=OuterRef("buyer_email"),
            checkout__completed_at__gt=OuterRef("created_at"),
            sku__in=skus,
        ).exclude(checkout=OuterRef("pk"))
    )


def _remindable(checkouts: QuerySet[Checkout]) -> QuerySet[Checkout]:
    """The rule of the module docstring, as one filter (the sweep and the send both apply it)."""
    return (
        checkouts.filter(status__in=(STATUS_INCOMPLETE, STATUS_READY), paid_at__isnull=True)
        .exclude(buyer_email="")
        .exclude(session_key__startswith=STAFF_KEY_PREFIX)
        .exclude(Exists(ReminderOptOut.objects.filter(email__iexact=OuterRef("buyer_email"))))
        .exclude(_bought_since())
    )


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
    due = (
        _remindable(Checkout.objects.filter(updated_at__lte=cutoff))
        .exclude(expires_at__lte=now)
        .filter(reminder__isnull=True)
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
    shop_name, sender = email_sender()
    context = {
        "checkout": checkout,
        # What the buyer left, at the prices and total of the checkout (issue 33: items, prices and total).
        "lines": [(line, line.unit_price * line.quantity) for line in checkout.lines.all()],
        "totals": [total for total in checkout.totals or () if total.get("type") != "total"],
        "total": checkout.total_amount,
        "continue_url": checkout_continue_url(checkout),
        "optout_url": absolute_url(reverse("shop:reminder_optout", kwargs={"token": optout_token(email)})),
        "shop_name": shop_name,
    }
    with translation.override(checkout.language or settings.LANGUAGE_CODE):
        subject = _("%(shop)s: seu carrinho está esperando por você") % {"shop": shop_name}
        text = render_to_string("shop/email/checkout_reminder.txt", context)
        html = render_to_string("shop/email/checkout_reminder.html", context)

    message: EmailMultiAlternatives = OrderEmail(subject=subject, body=text, from_email=sender, to=[email])
    message.attach_alternative(html, "text/html")
    return message


def _why_not(checkout: Checkout, reminder: CheckoutReminder) -> str:
    """Why this reminder must not go out now (empty: send it); the rule of the module docstring."""
    if checkout.status not in (STATUS_INCOMPLETE, STATUS_READY):
        return f"status:{checkout.status}"
    if not email_valid(reminder.email):
        return "email_invalid"
    if reminder.email.strip().lower() != checkout.buyer_email.strip().lower():
        return "email_changed"  # the buyer corrected the address: the row's one was a typo
    if not _remindable(Checkout.objects.filter(pk=checkout.pk)).exists():
        if checkout.paid_at is not None:
            return "paid"
        if checkout.session_key.startswith(STAFF_KEY_PREFIX):
            return "not_started_by_buyer"
        if ReminderOptOut.objects.filter(email__iexact=reminder.email).exists():
            return "opted_out"
        return "bought_since"
    recent = timezone.now() - timedelta(days=REMINDER_EMAIL_DAYS)
    others = CheckoutReminder.objects.filter(email__iexact=reminder.email, sent_at__gte=recent)
    if others.exclude(pk=reminder.pk).exists():
        return "recently_reminded"
    return ""


def reminder_send(*, reminder_id: int) -> str:
    """Send one reminder unless done, or the rule says no now (bought, paid, opted out, not the buyer's…)."""
    with transaction.atomic():
        reminder = CheckoutReminder.objects.select_for_update().filter(pk=reminder_id).first()
        if reminder is None:
            return "missing"
        if reminder.sent_at is not None or reminder.skipped:
            return "done"
        checkout = Checkout.objects.prefetch_related("lines").get(pk=reminder.checkout_id)
        reason = _why_not(checkout, reminder)
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
