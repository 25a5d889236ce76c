"""Writes of "Minha conta": the sign-in link by e-mail, its use, and the LGPD erasure of a buyer's data.

The link. A buyer types their e-mail; if the shop has an order for it, an `AccountLoginLink` row is written and
its e-mail queued after commit (the row is the outbox: `sent_at`, re-driven by the sweep). The answer is the same
whether or not an order exists (no account enumeration), and requests are counted per client address and per
e-mail (`request_allowed`). The link is `/conta/entrar/<signed public id>`: signed with the project's key (a
forged or altered one is refused before any query), valid `SHOP_ACCOUNT_LINK_MINUTES`, used once (an UPDATE that
matches only an unused, unexpired row). The link page asks for a click before signing in, so a mail scanner that
opens links does not burn it.

The erasure (LGPD art. 18, VI). What the law lets go is anonymized at once; what it requires is kept, and the
page says so. Kept on placed orders: name, CPF, the delivery address, items, prices and payment (the NF-e and
the books must be kept 5 years: CTN art. 173 and 195; LGPD art. 16, I allows keeping data for a legal duty).
Erased: the e-mail (replaced by a placeholder no one receives) and the phone on every order and checkout,
everything of checkouts that never became orders (name, CPF, address), the consent records' personal part,
pending sign-in links; the session that asked is signed out. Subscriptions still running are cancelled first (as
the buyer would, CDC art. 49: the recurrence is cancelled at the PSP after commit, no further cycle is charged);
then every subscription keeps only what its cycle orders already keep (name and CPF, the contract of those
sales) and loses the e-mail and the delivery address.
"""

from __future__ import annotations

import hashlib
import logging
from datetime import timedelta

from django.conf import settings
from django.core import signing
from django.db import transaction
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone, translation
from django.utils.translation import gettext as _

from kernel.br_validation import email_valid
from kernel.ops.ratelimit import attempt_allowed
from kernel.tasks import enqueue_on_commit
from orders.emails import OrderEmail
from orders.models import EmailDelivery, Order
from shop.checkout.selectors import absolute_url
from shop.checkout.types import STATUS_COMPLETED
from shop.models import AccountLoginLink, Checkout, CheckoutReminder, Subscription
from shop.store.services import email_sender
from shop.subscriptions.services import SubscriptionStateError, subscription_cancel

logger = logging.getLogger(__name__)

_SALT = "shop.account.login"
WINDOW_SECONDS = 15 * 60
MAX_PER_CLIENT = 5
MAX_PER_EMAIL = 3
_PREFIX = "account-link:v1:"
ERASED_DOMAIN = "apagado.invalid"  # RFC 2606: never delivers


def link_minutes() -> int:
    return int(getattr(settings, "SHOP_ACCOUNT_LINK_MINUTES", 15))


def normalized(email: str) -> str:
    return email.strip().lower()


def request_allowed(*, client: str, email: str) -> bool:
    """Count this request; False once the client or the e-mail used up its requests in the window."""
    return attempt_allowed(
        _PREFIX, client=client, email=email, per_client=MAX_PER_CLIENT, per_email=MAX_PER_EMAIL, seconds=WINDOW_SECONDS
    )


def _digest(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()[:32]


@transaction.atomic
def account_link_request(*, email: str) -> None:
    """Queue a sign-in link for `email` if the shop has an order or a subscription for it (a subscriber whose
    first cycle is not charged yet manages it here too); else nothing (same answer either way)."""
    email = normalized(email)
    if not email_valid(email):
        return
    known = Order.objects.filter(buyer_email__iexact=email).exists()
    if not known and not Subscription.objects.filter(buyer_email__iexact=email).exists():
        return
    link = AccountLoginLink.objects.create(email=email, expires_at=timezone.now() + timedelta(minutes=link_minutes()))
    enqueue_on_commit("shop.tasks.send_account_link", link.pk)


def link_token(link: AccountLoginLink) -> str:
    return signing.Signer(salt=_SALT).sign(link.public_id)


def link_url(link: AccountLoginLink) -> str:
    return absolute_url(reverse("account:enter", kwargs={"token": link_token(link)}))


def account_link_send(*, link_id: int) -> str:
    """Send one link's e-mail unless sent or expired (claimed in a short transaction, sent outside it)."""
    with transaction.atomic():
        link = AccountLoginLink.objects.select_for_update().filter(pk=link_id).first()
        if link is None:
            return "missing"
        if link.sent_at is not None or link.used_at is not None:
            return "done"
        if link.expires_at <= timezone.now():
            return "expired"
        link.sent_at = timezone.now()
        link.save(update_fields=["sent_at"])
    shop_name, sender = email_sender()
    context = {"url": link_url(link), "minutes": link_minutes(), "shop_name": shop_name}
    with translation.override(settings.LANGUAGE_CODE):
        subject = _("%(shop)s: seu link para entrar em Minha conta") % {"shop": shop_name}
        text = render_to_string("shop/account/email_link.txt", context)
    try:
        OrderEmail(subject=subject, body=text, from_email=sender, to=[link.email]).send()
    except Exception:
        AccountLoginLink.objects.filter(pk=link_id).update(sent_at=None)  # the sweep retries
        logger.exception("account link %s not sent", link_id)
        raise
    return "sent"


def account_links_resend_due(*, limit: int = 200) -> int:
    """Beat sweep: links whose e-mail was never sent (a dead broker, a failed send), while still valid."""
    due = AccountLoginLink.objects.filter(
        sent_at__isnull=True, used_at__isnull=True, expires_at__gt=timezone.now()
    ).values_list("pk", flat=True)[:limit]
    return sum(account_link_send(link_id=pk) == "sent" for pk in list(due))


def account_link_use(*, token: str) -> str | None:
    """The e-mail a valid, unused, unexpired link signs in, marking it used; None otherwise."""
    try:
        public_id = signing.Signer(salt=_SALT).unsign(token)
    except signing.BadSignature:
        return None
    now = timezone.now()
    with transaction.atomic():
        link = (
            AccountLoginLink.objects.select_for_update()
            .filter(public_id=public_id, used_at__isnull=True, expires_at__gt=now)
            .first()
        )
        if link is None:
            return None
        link.used_at = now
        link.save(update_fields=["used_at"])
    return link.email


def erased_email(email: str) -> str:
    """A stable placeholder for an erased address (the same buyer's records still group together)."""
    return f"apagado-{_digest(normalized(email))[:12]}@{ERASED_DOMAIN}"


def account_erase(*, email: str) -> dict[str, int]:
    """Cancel the buyer's running subscriptions (each in its own short transaction, the PSP after commit), then
    anonymize what the law lets go (module docstring) in one; returns how many rows of each kind."""
    email = normalized(email)
    running = Subscription.objects.filter(buyer_email__iexact=email).exclude(status=Subscription.Status.CANCELLED)
    cancelled = 0
    for public_id in running.values_list("public_id", flat=True):
        try:
            subscription_cancel(public_id=public_id, by="buyer")
        except SubscriptionStateError:  # cancelled meanwhile (the bank app, staff): nothing left to stop
            continue
        cancelled += 1
    return {**_anonymize(email), "subscriptions_cancelled": cancelled}


@transaction.atomic
def _anonymize(email: str) -> dict[str, int]:
    placeholder = erased_email(email)
    orders = Order.objects.filter(buyer_email__iexact=email).update(buyer_email=placeholder, buyer_phone="")
    EmailDelivery.objects.filter(to_email__iexact=email).update(to_email=placeholder)
    mine = Checkout.objects.filter(buyer_email__iexact=email)
    completed = mine.filter(status=STATUS_COMPLETED).update(
        buyer_email=placeholder, buyer_phone="", ship_phone="", buyer_consent=None
    )
    unplaced = mine.exclude(status=STATUS_COMPLETED).update(
        buyer_email=placeholder,
        buyer_first_name="",
        buyer_last_name="",
        buyer_phone="",
        buyer_tax_id="",
        buyer_consent=None,
        ship_first_name="",
        ship_last_name="",
        ship_phone="",
        ship_cep="",
        ship_street="",
        ship_number="",
        ship_complement="",
        ship_neighborhood="",
        ship_city="",
    )
    CheckoutReminder.objects.filter(email__iexact=email).update(email=placeholder)
    AccountLoginLink.objects.filter(email__iexact=email).delete()
    subscriptions = Subscription.objects.filter(buyer_email__iexact=email).update(
        buyer_email=placeholder, destination={}, updated_at=timezone.now()
    )
    return {
        "orders": orders, "checkouts_kept": completed, "checkouts_erased": unplaced, "subscriptions": subscriptions,
    }  # fmt: skip
