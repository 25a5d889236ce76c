"""E-mails to the subscriber (the subscription made, a failed cycle, its retry, a cycle without stock, a skip, the
cancellation).

The `SubscriptionEvent` written with the change is the outbox row: `subscription_event_mail` sends it once
(claimed with `mailed_at` under the row lock, sent with no lock held), and the sweep sends what a lost task left.
"""

from __future__ import annotations

import logging
from datetime import date, timedelta

from django.conf import settings
from django.db import transaction
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone, translation
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from kernel.money import format_brl
from kernel.tasks import enqueue_on_commit
from orders.emails import OrderEmail
from shop.checkout.selectors import absolute_url
from shop.models import Subscription, SubscriptionCycle, SubscriptionEvent, SubscriptionPlan
from shop.store.services import email_sender, store_get
from shop.subscriptions.offers import price_per_cycle
from shop.subscriptions.schedule import first_charge

logger = logging.getLogger(__name__)

# Marked for extraction here, translated when the e-mail is written (`_(SUBJECTS[kind])`).
SUBJECTS = {
    "cycle_failed": gettext_noop("Não conseguimos cobrar sua assinatura"),
    "cycle_retrying": gettext_noop("O Pix Automático da sua assinatura não passou; vamos tentar de novo"),
    "cycle_stock_short": gettext_noop("Falta estoque para o próximo ciclo da sua assinatura"),
    "cycle_skipped": gettext_noop("Ciclo da sua assinatura pulado"),
    "status_cancelled": gettext_noop("Sua assinatura foi cancelada"),
}
# The subscription just made (its own subject, no "<loja>: " prefix: the shop is in it) with the link to its page,
# the buyer's only way back there until cycle 1 is paid.
CREATED_SUBJECT = gettext_noop("Sua assinatura de %(product)s na %(shop)s")
# A "created" event still unsent after this long is not mailed by the sweep: a welcome that late says nothing the
# cycle e-mails do not, and subscriptions made before this e-mail existed are not greeted on deploy.
CREATED_MAIL_WITHIN = timedelta(days=2)
# A subscription paid by card: the same events, said of the card.
CARD_SUBJECTS = {
    **SUBJECTS,
    "cycle_retrying": gettext_noop("O cartão da sua assinatura foi recusado; vamos tentar de novo"),
}


def subscription_event(subscription: Subscription, kind: str, **detail: object) -> SubscriptionEvent:
    """The timeline event of a change (inside its transaction); an e-mail kind is sent after commit."""
    event = SubscriptionEvent.objects.create(subscription=subscription, kind=kind, detail=detail)
    if kind in SubscriptionEvent.MAILED:
        enqueue_on_commit("shop.tasks.send_subscription_email", event.pk)
    return event


def subscription_page_url(subscription: Subscription) -> str:
    return absolute_url(reverse("shop:subscription_page", kwargs={"token": subscription.access_token}))


def _day(value: object) -> date | None:
    """An event's ISO day ("2026-12-11", as the services write it) as a date, for the template to write as the
    buyer reads it (11/12/2026)."""
    try:
        return date.fromisoformat(value) if isinstance(value, str) and value else None
    except ValueError:
        return None


def _body(event: SubscriptionEvent) -> tuple[str, str, str]:
    """(subject, text, HTML or "") in the subscriber's language."""
    subscription = event.subscription
    with translation.override(subscription.language or settings.LANGUAGE_CODE):
        if event.kind == "created":
            return _created(subscription)
        return (*_rendered(event, subscription), "")


def _created(subscription: Subscription) -> tuple[str, str, str]:
    """What was subscribed (plan, price per period, first charge and its date) and what is left to do (authorize
    the Pix Automático in the bank app, unless done already), linking the subscription's page."""
    product = subscription.plan.variant.product.title
    shop_name = store_get().trade_name  # the name the merchant set in the admin, as the order e-mails say it
    # The first charge as the page shows it, not `starts_on`: authorized late (or less than 2 days before it), the
    # Pix Automático charges from the next period on, at the period's price.
    first_day, first_amount = first_charge(subscription)
    context = {
        "subscription": subscription,
        "product": product,
        "price_words": price_per_cycle(subscription.price, subscription.cycle),
        "first_day": first_day,
        "first_amount": format_brl(first_amount),
        "first_differs": first_amount != subscription.price,
        "weekly": subscription.cycle == SubscriptionPlan.Cycle.WEEKLY,
        "card": subscription.payment_method == Subscription.Method.CARD,
        "to_authorize": subscription.status == Subscription.Status.PENDING_AUTHORIZATION,
        "page_url": subscription_page_url(subscription),
        "shop_name": shop_name,
    }
    subject = _(CREATED_SUBJECT) % {"product": product, "shop": shop_name}
    text = render_to_string("shop/subscriptions/email_created.txt", context)
    return subject, text, render_to_string("shop/subscriptions/email_created.html", context)


def _rendered(event: SubscriptionEvent, subscription: Subscription) -> tuple[str, str]:
    cycle = SubscriptionCycle.objects.filter(public_id=event.detail.get("cycle", "")).first()
    shop_name = store_get().trade_name
    context = {
        "subscription": subscription,
        "product": subscription.plan.variant.product.title,
        "event": event,
        "cycle": cycle,
        "retry_on": _day(event.detail.get("retry_on")),
        "due_date": _day(event.detail.get("due_date")),
        "amount": format_brl(cycle.amount) if cycle else format_brl(subscription.price),
        "page_url": subscription_page_url(subscription),
        "shop_name": shop_name,
        "card": subscription.payment_method == Subscription.Method.CARD,
    }
    subjects = CARD_SUBJECTS if context["card"] else SUBJECTS
    subject = f"{shop_name}: {_(subjects[event.kind])}"
    return subject, render_to_string("shop/subscriptions/email_notice.txt", context)


def subscription_event_mail(*, event_id: int) -> str:
    with transaction.atomic():
        event = (
            SubscriptionEvent.objects.select_for_update(of=("self",))
            .select_related("subscription__plan__variant__product")
            .filter(pk=event_id)
            .first()
        )
        if event is None or event.kind not in SubscriptionEvent.MAILED:
            return "missing"
        if event.mailed_at is not None:
            return "done"
        event.mailed_at = timezone.now()  # claimed: a concurrent run sees it sent
        event.save(update_fields=["mailed_at"])
        subject, text, html = _body(event)
        to = event.subscription.buyer_email
    message = OrderEmail(subject=subject, body=text, from_email=email_sender()[1], to=[to])
    if html:
        message.attach_alternative(html, "text/html")
    try:
        message.send()
    except Exception:
        SubscriptionEvent.objects.filter(pk=event_id).update(mailed_at=None)  # the sweep retries
        logger.exception("subscription e-mail %s not sent", event_id)
        raise
    return "sent"


def subscription_emails_pending(*, older_than: timedelta = timedelta(minutes=5)) -> list[int]:
    now = timezone.now()
    return list(
        SubscriptionEvent.objects.filter(
            kind__in=SubscriptionEvent.MAILED, mailed_at__isnull=True, created_at__lte=now - older_than
        )
        .exclude(kind="created", created_at__lt=now - CREATED_MAIL_WITHIN)
        .values_list("pk", flat=True)[:200]
    )
