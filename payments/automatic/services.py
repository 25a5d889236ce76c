"""Pix Automático services the shop calls: ask the payer to authorize a recurrence (PSP calls, no transaction).

The PSP is called with no transaction open (ARCHITECTURE.md: no network I/O inside a transaction); the caller
records the outcome in its own short transaction afterwards.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

from django.db import transaction
from django.utils import timezone

from kernel.rows import insert_once
from payments.automatic.models import PixRecurrenceWebhookEvent, PixRecurringCharge, PixRecurringChargeWebhookEvent
from payments.exceptions import PaymentInputError
from payments.models import PixPayment
from payments.psp import PixPayer, PSPNotFound, PSPRejected, PSPUnavailable, get_recurring_psp
from payments.psp.recurring import (
    MAX_RETRIES,
    PERIODICITIES,
    RETRY_WINDOW_DAYS,
    PayerAccount,
    PSPRecurrence,
    PSPRecurringCharge,
    charge_outcome,
    paid_end_to_end_id,
)
from payments.signals import recurrence_changed, recurring_charge_failed, recurring_charge_settled

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
    amount_cents: int | None,
    minimum_cents: int | None = None,
    payer_account: PayerAccount | None = None,
) -> RecurrenceRequested:
    """`POST /rec` — a fixed amount (`amount_cents`), or a variable one (`amount_cents` None) charged at least
    `minimum_cents` — then `POST /solicrec` when the payer's account is known. Raises PaymentInputError for bad
    input, PSPUnavailable / PSPRejected from the PSP."""
    digits = "".join(ch for ch in payer_tax_id if ch.isdigit())
    if len(digits) not in (11, 14):
        raise PaymentInputError("payer_tax_id", "Informe o CPF (11 dígitos) ou CNPJ (14 dígitos) do pagador.")
    if not payer_name.strip():
        raise PaymentInputError("payer_name", "Informe o nome do pagador.")
    if periodicity not in PERIODICITIES:
        raise PaymentInputError("periodicity", f"Periodicidade desconhecida: {periodicity}.")
    if (amount_cents is None) == (minimum_cents is None):
        raise PaymentInputError("amount", "Informe o valor fixo ou o valor mínimo da recorrência, um dos dois.")
    if (amount_cents if amount_cents is not None else minimum_cents or 0) <= 0:
        raise PaymentInputError("amount", "O valor da recorrência precisa ser maior que zero.")
    psp = get_recurring_psp()
    rec = psp.create_recurrence(
        contract=contract,
        debtor=PixPayer(name=payer_name.strip(), tax_id=digits),
        description=description,
        periodicity=periodicity,
        start=start,
        amount_cents=amount_cents,
        minimum_cents=minimum_cents,
        # A failed cycle may be retried within the rules (up to 3 times in the 7 days after the due date).
        retry_policy="PERMITE_3R_7D",
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


def _announce_recurrence(rec: PSPRecurrence) -> None:
    recurrence_changed.send(
        sender=PixRecurrenceWebhookEvent,
        id_rec=rec.id_rec,
        status=rec.status,
        cancelled_by=rec.cancellation.requester if rec.cancellation else "",
    )


def pix_recurrence_refresh(*, id_rec: str) -> str:
    """`GET /rec/{idRec}` (no transaction open), then `recurrence_changed` in one transaction: recovers a `/rec`
    notice that never arrived (the receiver's side is idempotent). Returns the PSP's status."""
    rec = get_recurring_psp().get_recurrence(id_rec)
    with transaction.atomic():
        _announce_recurrence(rec)
    return rec.status


def pix_recurrence_cancel(*, id_rec: str) -> str:
    """The shop ends the authorization: `PATCH /rec/{idRec}` `status: CANCELADA` (no transaction open). An
    already ended recurrence is read back instead of failing. Returns the PSP's status."""
    psp = get_recurring_psp()
    try:
        return psp.cancel_recurrence(id_rec).status
    except PSPRejected:
        return psp.get_recurrence(id_rec).status


def pix_recurring_charge_issue(
    *, reference: str, txid: str, id_rec: str, amount_cents: int, due_date: date, info: str = ""
) -> PixRecurringCharge:
    """`PUT /cobr/{txid}` (no transaction open; a replay of the same PUT answers the same charge, so a caller that
    died after the call asks again safely), then the charge recorded once. Raises PSPUnavailable / PSPRejected."""
    remote = get_recurring_psp().create_recurring_charge(
        txid=txid, id_rec=id_rec, amount_cents=amount_cents, due_date=due_date, info=info
    )
    charge = PixRecurringCharge(
        txid=remote.txid, id_rec=id_rec, reference=reference, amount=remote.amount_cents, due_date=remote.due_date
    )
    insert_once(charge, conflict=("txid",))
    return PixRecurringCharge.objects.get(txid=txid)


def pix_recurring_charge_cancel(*, txid: str) -> bool:
    """Withdraw a cycle's charge before its first attempt (`PATCH /cobr/{txid}` CANCELADA, no transaction open).
    False when the PSP refuses (the attempt date came): the cycle is then charged as planned."""
    try:
        get_recurring_psp().cancel_recurring_charge(txid)
    except PSPRejected:
        return False
    except PSPNotFound:
        pass
    PixRecurringCharge.objects.filter(txid=txid, settled_at__isnull=True).update(
        status=PixRecurringCharge.Status.CANCELLED, updated_at=timezone.now()
    )
    return True


def _retry_date(charge: PixRecurringCharge, after: date) -> date | None:
    """The next retry the rules allow (PERMITE_3R_7D: 3 retries, within 7 days after the due date, one a day)."""
    wanted = after + timedelta(days=1)
    if charge.retries >= MAX_RETRIES or wanted > charge.due_date + timedelta(days=RETRY_WINDOW_DAYS):
        return None
    return wanted


def pix_recurring_charge_sync(*, txid: str) -> str:
    """Confirm a cycle charge at the PSP (`GET /cobr/{txid}`, no transaction open) and tell the shop once, with
    the row locked: paid → `recurring_charge_settled`; a failed attempt → `recurring_charge_failed` (with the retry
    asked for, when the rules allow one, after commit: `POST /cobr/{txid}/retentativa/{data}`).

    Returns "paid", "retrying", "failed", "pending", "cancelled" or "already_final". Raises PSPUnavailable."""
    remote = get_recurring_psp().get_recurring_charge(txid)
    outcome = charge_outcome(remote)
    retry_on: date | None = None
    with transaction.atomic():
        charge = PixRecurringCharge.objects.select_for_update().filter(txid=txid).first()
        if charge is None:
            return "unknown_charge"
        if charge.status in (PixRecurringCharge.Status.PAID, PixRecurringCharge.Status.FAILED):
            return "already_final"
        if outcome == "paid":
            _settle(charge, remote)
            return "paid"
        if charge.status == PixRecurringCharge.Status.CANCELLED:
            return "cancelled"
        if outcome not in ("failed", "attempt_failed"):
            return "pending"
        attempt_date = remote.attempts[-1].settlement_date if remote.attempts else charge.due_date
        failures = max(1, len(remote.attempts))
        # One attempt a day, from the day after the failed one (and never in the past).
        after = max(timezone.localdate(), attempt_date)
        if charge.failures_told >= failures:
            # Told already; a retry asked for in that transaction may have died before reaching the PSP.
            if charge.status != PixRecurringCharge.Status.RETRYING or outcome != "attempt_failed":
                return "pending"
            retry_on = after + timedelta(days=1)
        else:
            retry_on = _retry_date(charge, after) if outcome == "attempt_failed" else None
            charge.failures_told = failures
            charge.status = PixRecurringCharge.Status.RETRYING if retry_on else PixRecurringCharge.Status.FAILED
            charge.retries += 1 if retry_on else 0
            charge.save(update_fields=["failures_told", "status", "retries", "updated_at"])
            reason = "expirada" if remote.status == "EXPIRED" else "recusada pelo banco do pagador"
            recurring_charge_failed.send(
                sender=PixRecurringCharge, reference=charge.reference, txid=txid, final=retry_on is None,
                retry_on=retry_on, reason=reason,
            )  # fmt: skip
    if retry_on is None:
        return "failed"
    try:
        get_recurring_psp().retry_recurring_charge(txid, retry_on)
    except PSPRejected as exc:
        logger.info("retry of %s refused (already asked?): %s", txid, exc)
    return "retrying"


def _settle(charge: PixRecurringCharge, remote: PSPRecurringCharge) -> None:
    charge.status = PixRecurringCharge.Status.PAID
    charge.end_to_end_id = paid_end_to_end_id(remote)[:32]
    charge.settled_at = timezone.now()
    charge.save(update_fields=["status", "end_to_end_id", "settled_at", "updated_at"])
    if charge.end_to_end_id:
        # The Pix received, as every settled Pix is recorded: a refund of the cycle's order is a devolução of this
        # endToEndId (`PUT /pix/{e2eid}/devolucao/{id}`, the same for any received Pix), found by the cycle.
        payment = PixPayment(
            end_to_end_id=charge.end_to_end_id, txid=charge.txid, amount=remote.amount_cents or charge.amount,
            paid_at=charge.settled_at, outcome=PixPayment.Outcome.SETTLED, source="cobr",
        )  # fmt: skip
        insert_once(payment, ["end_to_end_id"])  # one statement; a re-run finds it written
    recurring_charge_settled.send(
        sender=PixRecurringCharge, reference=charge.reference, txid=charge.txid, amount=remote.amount_cents,
        end_to_end_id=charge.end_to_end_id,
    )  # fmt: skip


def pix_recurring_charge_event_process(*, event_id: int) -> str:
    """One `/cobr` inbox row: confirm at the PSP and tell the shop (`pix_recurring_charge_sync`, once per charge
    state), then mark the row processed. A crash in between leaves the row for the sweep; the charge row's state
    keeps the shop told once. Raises PSPUnavailable for the task to retry."""
    event = PixRecurringChargeWebhookEvent.objects.filter(pk=event_id, processed_at__isnull=True).first()
    if event is None:
        return "already_processed"
    try:
        outcome = pix_recurring_charge_sync(txid=event.txid)
    except PSPNotFound:
        outcome = "unknown_charge"
    PixRecurringChargeWebhookEvent.objects.filter(pk=event_id, processed_at__isnull=True).update(
        processed_at=timezone.now()
    )
    return outcome


def pix_recurring_charges_reconcile(
    *, older_than: timedelta = timedelta(minutes=2), limit: int = 100, today: date | None = None
) -> int:
    """Beat sweep: `/cobr` inbox rows whose task was lost are processed again, and charges past their due date
    still waiting are read at the PSP (`GET /cobr/{txid}`: a notice that never came). Returns how many moved."""
    moved = 0
    stale = PixRecurringChargeWebhookEvent.objects.filter(
        processed_at__isnull=True, received_at__lte=timezone.now() - older_than
    ).values_list("pk", flat=True)[:limit]
    for event_id in list(stale):
        try:
            moved += pix_recurring_charge_event_process(event_id=event_id) in ("paid", "retrying", "failed")
        except (PSPUnavailable, PSPRejected) as exc:
            logger.warning("cobr inbox event %s still failing: %s", event_id, exc)
    waiting = PixRecurringCharge.objects.filter(
        status__in=[PixRecurringCharge.Status.SCHEDULED, PixRecurringCharge.Status.RETRYING],
        due_date__lte=today or timezone.localdate(),
        updated_at__lte=timezone.now() - older_than,
    ).values_list("txid", flat=True)[:limit]
    for txid in list(waiting):
        try:
            moved += pix_recurring_charge_sync(txid=txid) in ("paid", "retrying", "failed")
        except (PSPUnavailable, PSPRejected, PSPNotFound) as exc:
            logger.warning("cobr %s could not be read: %s", txid, exc)
    return moved


def pix_recurring_charge_brief(reference: str) -> dict[str, Any] | None:
    """The charge of a cycle as the shop shows it (status, retries, txid), or None; one query."""
    return (
        PixRecurringCharge.objects.filter(reference=reference)
        .values("txid", "status", "retries", "due_date", "settled_at")
        .first()
    )
