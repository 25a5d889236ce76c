"""The buyer's boleto e-mails: "boleto emitido" when it is issued, "vence amanhã" the day before its due date,
"venceu" when the expiry sweep cancelled it unpaid (the items went back to stock: the buyer can still buy).

A buyer who pays by boleto usually pays it later, from the bank app, often after closing the page: the e-mail
is where the linha digitável, the PDF and the due date are found again. Both are service messages about the
buyer's own purchase (like the order e-mails), so they are not gated on the marketing consent, and they carry
nothing else.

Outbox shape, like the abandoned-checkout reminders (reminders.py): the "issued" row is written in the same
transaction that records the boleto on the checkout (boleto.py `_finish`), so a boleto shown to the buyer always
has its e-mail, and its send is queued after commit. The sweep (`boleto_notices_queue_due`, beat) writes the
"due_soon" rows and re-drives any row whose send was lost or failed. `boleto_notice_send` claims the row in a
short transaction, re-checks that the boleto still waits for payment (no "pague" e-mail for a boleto already
paid or cancelled), and sends outside it. One row per boleto and kind (unique), whatever the sweeps and replays.
"""

from __future__ import annotations

import logging
from datetime import date, timedelta

from django.conf import settings
from django.core.mail import EmailMultiAlternatives
from django.db import transaction
from django.template.loader import render_to_string
from django.utils import formats, timezone, translation
from django.utils.translation import gettext as _

from kernel.br_validation import email_valid
from kernel.money import format_brl
from kernel.tasks import enqueue_on_commit
from orders.emails import OrderEmail
from payments.boleto.codes import line_display
from payments.boleto.service import brasilia_today, expiry_grace_days
from payments.models import BoletoPayment
from shop.checkout.selectors import checkout_continue_url
from shop.checkout.types import STATUS_COMPLETED, STATUS_IN_PROGRESS
from shop.models import BoletoNotice, Checkout
from shop.store.services import email_sender

logger = logging.getLogger(__name__)
SEND_TASK = "shop.tasks.send_boleto_notice"
BATCH = 200
RESEND_DAYS = 3  # an unsent row older than this is left alone: its boleto has lapsed or been paid by now


def boleto_notice_issued(checkout: Checkout, payment: BoletoPayment) -> None:
    """Inside the transaction recording `payment` on `checkout`: its "boleto emitido" e-mail, sent after commit."""
    if not email_valid(checkout.buyer_email):
        return
    # One INSERT: the caller holds the checkout's lock and records this boleto once (unique per boleto and kind).
    notice = BoletoNotice.objects.create(
        checkout=checkout, payment_id=payment.payment_id, kind=BoletoNotice.Kind.ISSUED,
        email=checkout.buyer_email.strip(),
    )  # fmt: skip
    enqueue_on_commit(SEND_TASK, notice.pk)


def boleto_notice_expired(checkout: Checkout, payment_id: str) -> None:
    """Inside the transaction that released what the expired boleto `payment_id` held (the checkout locked): its
    "venceu" e-mail, sent after commit, once per boleto (a replayed expiry finds the row)."""
    if not email_valid(checkout.buyer_email):
        return
    notice, created = BoletoNotice.objects.get_or_create(
        payment_id=payment_id, kind=BoletoNotice.Kind.EXPIRED,
        defaults={"checkout": checkout, "email": checkout.buyer_email.strip()},
    )  # fmt: skip
    if created:
        enqueue_on_commit(SEND_TASK, notice.pk)


def boleto_notices_queue_due(*, today: date | None = None) -> int:
    """Beat: write "vence amanhã" rows for boletos due tomorrow still awaited, then queue every unsent row."""
    today = today or brasilia_today()
    waiting = Checkout.objects.filter(
        status=STATUS_IN_PROGRESS, payment_txid__in=_waiting_boletos(due=today + timedelta(days=1))
    ).exclude(buyer_email="")
    issued_recently = timezone.now() - timedelta(hours=20)  # just told: a second e-mail the same day is noise
    fresh = set(
        BoletoNotice.objects.filter(kind=BoletoNotice.Kind.ISSUED, created_at__gte=issued_recently).values_list(
            "payment_id", flat=True
        )
    )
    rows = [
        BoletoNotice(checkout=checkout, payment_id=checkout.payment_txid, kind=BoletoNotice.Kind.DUE_SOON,
                     email=checkout.buyer_email.strip())
        for checkout in waiting.only("id", "payment_txid", "buyer_email")[:BATCH]
        if checkout.payment_txid not in fresh and email_valid(checkout.buyer_email)
    ]  # fmt: skip
    with transaction.atomic():
        BoletoNotice.objects.bulk_create(rows, ignore_conflicts=True)
        unsent = BoletoNotice.objects.filter(
            sent_at__isnull=True, skipped="", created_at__gte=timezone.now() - timedelta(days=RESEND_DAYS)
        )
        queued = list(unsent.order_by("id").values_list("id", flat=True)[:BATCH])
        for notice_id in queued:
            enqueue_on_commit(SEND_TASK, notice_id)
    return len(queued)


def _waiting_boletos(*, due: date | None = None) -> list[str]:
    boletos = BoletoPayment.objects.filter(status=BoletoPayment.Status.ISSUED)
    if due is not None:
        boletos = boletos.filter(due_date=due)
    return list(boletos.values_list("payment_id", flat=True)[:BATCH])


def _why_not(notice: BoletoNotice, checkout: Checkout, boleto: BoletoPayment | None) -> str:
    """Why this e-mail must not go out now (empty: send it)."""
    if notice.kind == BoletoNotice.Kind.EXPIRED:  # told only while the buyer has not bought otherwise since
        if boleto is None or boleto.status != BoletoPayment.Status.EXPIRED:
            return f"boleto:{boleto.status if boleto else 'missing'}"
        if checkout.status == STATUS_COMPLETED:
            return f"status:{checkout.status}"
        return "" if email_valid(notice.email) else "email_invalid"
    if boleto is None or boleto.status != BoletoPayment.Status.ISSUED:
        return f"boleto:{boleto.status if boleto else 'missing'}"
    if checkout.status != STATUS_IN_PROGRESS or checkout.payment_txid != notice.payment_id:
        return f"status:{checkout.status}"
    if notice.kind == BoletoNotice.Kind.DUE_SOON and boleto.due_date < brasilia_today():
        return "past_due"
    if not email_valid(notice.email):
        return "email_invalid"
    return ""


def boleto_notice_send(*, notice_id: int) -> str:
    """Send one boleto e-mail unless done, or its boleto no longer waits for payment."""
    with transaction.atomic():
        notice = BoletoNotice.objects.select_for_update().filter(pk=notice_id).first()
        if notice is None:
            return "missing"
        if notice.sent_at is not None or notice.skipped:
            return "done"
        checkout = Checkout.objects.prefetch_related("lines").get(pk=notice.checkout_id)
        boleto = BoletoPayment.objects.filter(payment_id=notice.payment_id).first()
        reason = _why_not(notice, checkout, boleto)
        if reason or boleto is None:
            notice.skipped = reason[:40]
            notice.save(update_fields=["skipped"])
            return reason
        notice.sent_at = timezone.now()  # claimed: a concurrent run sees it sent
        notice.save(update_fields=["sent_at"])
        message = _message(notice, checkout, boleto)
    try:
        message.send()  # outside the lock
    except Exception:
        BoletoNotice.objects.filter(pk=notice_id).update(sent_at=None)  # the next sweep retries
        logger.exception("boleto e-mail %s not sent", notice_id)
        raise
    return "sent"


def _message(notice: BoletoNotice, checkout: Checkout, boleto: BoletoPayment) -> EmailMultiAlternatives:
    shop_name, sender = email_sender()
    context = {
        "checkout": checkout,
        "boleto": boleto,
        "boleto_line": line_display(boleto.line),
        "due_soon": notice.kind == BoletoNotice.Kind.DUE_SOON,
        "lines": [(line, line.unit_price * line.quantity) for line in checkout.lines.all()],
        "expired": notice.kind == BoletoNotice.Kind.EXPIRED,
        # An expired boleto has nothing to pay: the link opens the checkout to choose another payment.
        "boleto_url": checkout_continue_url(checkout)
        if notice.kind == BoletoNotice.Kind.EXPIRED
        else checkout_continue_url(checkout, page="checkout:boleto"),
        "shop_name": shop_name,
        # The day the items are released: the due date plus the grace days the expiry sweep waits for the bank.
        "held_until": boleto.due_date + timedelta(days=expiry_grace_days()),
    }
    with translation.override(checkout.language or settings.LANGUAGE_CODE):
        due = formats.date_format(boleto.due_date, "SHORT_DATE_FORMAT")  # 10/12/2026, or 12/10/2026 in English
        values = {"shop": shop_name, "amount": format_brl(boleto.amount), "due": due}  # the reader's way
        if notice.kind == BoletoNotice.Kind.EXPIRED:
            subject = _("%(shop)s: seu boleto de %(amount)s venceu sem pagamento") % values
        elif notice.kind == BoletoNotice.Kind.DUE_SOON:
            subject = _("%(shop)s: seu boleto de %(amount)s vence amanhã (%(due)s)") % values
        else:
            subject = _("%(shop)s: seu boleto de %(amount)s, vencimento %(due)s") % values
        text = render_to_string("shop/email/boleto_notice.txt", context)
        html = render_to_string("shop/email/boleto_notice.html", context)
    message: EmailMultiAlternatives = OrderEmail(subject=subject, body=text, from_email=sender, to=[notice.email])
    message.attach_alternative(html, "text/html")
    return message
