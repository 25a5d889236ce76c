"""Pix Automático services the shop calls: ask the payer to authorize a recurrence (PSP calls, no transaction).

The PSP is called with no transaction open (ARCHITECTURE.md: no network I/O inside a transaction); the caller
records the outcome in its own short transaction afterwards.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from django.db import transaction
from django.utils import timezone

from payments.automatic.models import PixRecurrenceWebhookEvent
from payments.exceptions import PaymentInputError
from payments.psp import PixPayer, PSPNotFound, PSPRejected, PSPUnavailable, get_recurring_psp
from payments.psp.recurring import PERIODICITIES, PayerAccount
from payments.signals import recurrence_changed

logger = logging.getLogger(__name__)
AUTHORIZATION_VALIDITY = timedelta(days=2)


@dataclass(frozen=True)
class RecurrenceRequested:
    id_rec: str
    status: str  # the PSP's, in English (CREATED …)
    location: str  # the recurrence's QR location (Jornada 2), when the PSP gives one
    br_code: str
    id_solic_rec: str  # set when the request was pushed to the payer's PSP (Jornada 1)


def pix_recurrence_request(
    *,
    contract: str,
    payer_name: str,
    payer_tax_id: str,
    description: str,
    periodicity: str,
    start: date,
    amount_cents: int,
    payer_account: PayerAccount | None = None,
) -> RecurrenceRequested:
    """`POST /rec` (fixed amount, no retries after the due date), then `POST /solicrec` when the payer's
    account is known. Raises PaymentInputError for bad input, PSPUnavailable / PSPRejected from the PSP."""
    digits = "".join(ch for ch in payer_tax_id if ch.isdigit())
    if len(digits) not in (11, 14):
        raise PaymentInputError("payer_tax_id", "Informe o CPF (11 dígitos) ou CNPJ (14 dígitos) do pagador.")
    if not payer_name.strip():
        raise PaymentInputError("payer_name", "Informe o nome do pagador.")
    if periodicity not in PERIODICITIES:
        raise PaymentInputError("periodicity", f"Periodicidade desconhecida: {periodicity}.")
    if amount_cents <= 0:
        raise PaymentInputError("amount", "O valor da recorrência precisa ser maior que zero.")
    psp = get_recurring_psp()
    rec = psp.create_recurrence(
        contract=contract,
        debtor=PixPayer(name=payer_name.strip(), tax_id=digits),
        description=description,
        periodicity=periodicity,
        start=start,
        amount_cents=amount_cents,
    )
    id_solic = ""
    if payer_account is not None:
        expires: datetime = timezone.now() + AUTHORIZATION_VALIDITY
        id_solic = psp.request_authorization(id_rec=rec.id_rec, payer=payer_account, expires_at=expires).id_solic_rec
    return RecurrenceRequested(
        id_rec=rec.id_rec, status=rec.status, location=rec.location, br_code=rec.br_code, id_solic_rec=id_solic
    )


def pix_recurrence_event_process(*, event_id: int) -> str:
    """Process one `/rec` inbox row: confirm the recurrence's state with the PSP (no transaction open), then send
    `recurrence_changed` and mark the row processed in one transaction (row locked, so exactly once).

    Returns the outcome; raises PSPUnavailable for the task to retry."""
    event = PixRecurrenceWebhookEvent.objects.filter(pk=event_id, processed_at__isnull=True).first()
    if event is None:
        return "already_processed"
    try:
        rec = get_recurring_psp().get_recurrence(event.id_rec)
    except PSPNotFound:
        rec = None
    with transaction.atomic():
        locked = PixRecurrenceWebhookEvent.objects.select_for_update().filter(pk=event_id).first()
        if locked is None or locked.processed_at is not None:
            return "already_processed"
        if rec is not None:
            recurrence_changed.send(
                sender=PixRecurrenceWebhookEvent,
                id_rec=rec.id_rec,
                status=rec.status,
                cancelled_by=rec.cancellation.requester if rec.cancellation else "",
            )
        locked.processed_at = timezone.now()
        locked.save(update_fields=["processed_at"])
    return rec.status.lower() if rec is not None else "unknown_recurrence"


def pix_recurrence_events_reprocess(*, older_than: timedelta = timedelta(minutes=2), limit: int = 100) -> int:
    """Beat sweep: `/rec` inbox rows whose task was never enqueued (dead broker) or died are processed again
    (idempotent: the row lock and `processed_at` keep it once). Returns how many were processed now."""
    stale = PixRecurrenceWebhookEvent.objects.filter(
        processed_at__isnull=True, received_at__lte=timezone.now() - older_than
    ).values_list("pk", flat=True)[:limit]
    done = 0
    for event_id in list(stale):
        try:
            outcome = pix_recurrence_event_process(event_id=event_id)
        except (PSPUnavailable, PSPRejected) as exc:
            logger.warning("recurrence inbox event %s still failing: %s", event_id, exc)
            continue
        done += outcome != "already_processed"
    return done
