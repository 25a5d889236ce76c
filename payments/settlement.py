"""Settlement of received Pix (PIX.md §3.1, §3.2, §5): inbox, fetch-to-confirm, settle, reconcile, expire.

Every path (webhook task, reconcile poll, expiry's last look) ends in `pix_payment_settle`, which
locks the charge row and is keyed by the unique endToEndId, so a payment is settled at most once
however many times and in whatever order it is reported.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from kernel.rows import insert_each_once
from kernel.tasks import enqueue_on_commit
from payments.due import local_date
from payments.locks import pix_charge_lock
from payments.models import PixCharge, PixPayment, PixWebhookEvent
from payments.psp import PSPCharge, PSPNotFound, PSPPayment, PSPRejected, PSPUnavailable, get_psp
from payments.psp.base import payment_from_bacen
from payments.refunds import refund_automatic, refunds_apply_from_psp
from payments.signals import charge_settled
from payments.timeline import record_event

logger = logging.getLogger(__name__)
Outcome = PixPayment.Outcome


def expiry_grace() -> timedelta:
    return timedelta(seconds=int(getattr(settings, "PIX_EXPIRY_GRACE_SECONDS", 120)))


def _refund_state(payment: PSPPayment) -> str:
    if not payment.refunds:
        return ""
    state = ",".join(sorted(f"{r.refund_id}:{r.status}" for r in payment.refunds))
    return state if len(state) <= 255 else hashlib.sha256(state.encode()).hexdigest()


def pix_webhook_events_store(
    *, items: list[tuple[PSPPayment, dict[str, Any]]], raw_body: bytes, headers: Mapping[str, str], source: str
) -> tuple[int, int]:
    """Insert one inbox row per `pix[]` item (unique on endToEndId); enqueue processing after commit (a dead
    broker is logged and the reconcile beat processes the row later).

    Returns (stored, duplicates). Duplicates are not re-processed. Items are independent, so each is
    its own statement (autocommit when called outside a transaction): the PSP gets its 200 sooner.
    """
    digest = hashlib.sha256(raw_body).hexdigest()
    received_at = timezone.now()
    events = (
        PixWebhookEvent(
            source=source,
            end_to_end_id=payment.end_to_end_id,
            refund_state=_refund_state(payment),
            txid=payment.txid,
            payload=item,
            raw_body=raw_body,
            body_sha256=digest,
            headers=dict(headers),
            received_at=received_at,
        )
        for payment, item in items
    )
    # the unique (endToEndId, refund state) decides: one round trip, no savepoint; a replay writes nothing
    return insert_each_once(  # durable: no 500 on a dead broker
        events, ("end_to_end_id", "refund_state"),
        inserted=lambda event: enqueue_on_commit("payments.tasks.process_pix_webhook", event.pk),
    )  # fmt: skip


def _confirm(notified: PSPPayment) -> tuple[PSPPayment | None, PSPCharge | None]:
    """Fetch-to-confirm (PIX.md §4.4): use the PSP's own `GET /cob/{txid}`, never the callback body."""
    if not notified.txid:
        return None, None
    # A cobv is read at GET /cobv/{txid}; our own row says which kind the txid is (unknown: ask as a cob).
    kind = PixCharge.objects.filter(txid=notified.txid).values_list("kind", flat=True).first() or "cob"
    try:
        charge = get_psp().get_charge(notified.txid, kind=kind)
    except PSPNotFound:
        return None, None
    for payment in charge.payments:
        if payment.end_to_end_id == notified.end_to_end_id:
            return payment, charge
    return None, charge


def pix_webhook_event_process(*, event_id: int) -> str:
    """Process one inbox row: confirm at the PSP, settle, apply reported devoluções. Idempotent."""
    event = PixWebhookEvent.objects.get(pk=event_id)
    if event.processed_at is not None:
        return event.outcome
    PixWebhookEvent.objects.filter(pk=event_id).update(attempts=event.attempts + 1)
    notified = payment_from_bacen(event.payload)
    confirmed, _ = _confirm(notified)
    if confirmed is None:
        # Forged, or a PSP that reports before its own API knows: nothing is settled from the body.
        outcome = "unconfirmed"
    else:
        outcome = pix_payment_settle(payment=confirmed, source=event.source)
        refunds_apply_from_psp(e2eid=confirmed.end_to_end_id, refunds=confirmed.refunds)
    PixWebhookEvent.objects.filter(pk=event_id, processed_at__isnull=True).update(
        processed_at=timezone.now(), outcome=outcome
    )
    return outcome


def _lateness(charge: PixCharge, payment: PSPPayment) -> str | None:
    """Why this Pix cannot settle `charge`, judged by the Pix `horario` (not arrival time), or None."""
    if charge.status in (PixCharge.Status.PAID, PixCharge.Status.REFUNDED):
        return Outcome.REFUNDED_DUPLICATE
    if charge.status == PixCharge.Status.REVOKED:
        return Outcome.REFUNDED_LATE
    if payment.paid_at > charge.expires_at:
        return Outcome.REFUNDED_LATE
    return None  # active, or expired locally although paid on time: settle normally


_REASONS = {
    Outcome.REFUNDED_MISMATCH: "Valor recebido diferente do valor da cobrança",
    Outcome.REFUNDED_LATE: "Pagamento recebido após expiração",
    Outcome.REFUNDED_REJECTED: "Pedido não pôde ser concluído",
    Outcome.REFUNDED_DUPLICATE: "Pagamento em duplicidade",
    Outcome.UNKNOWN_CHARGE: "Cobrança desconhecida",
}


def pix_payment_settle(*, payment: PSPPayment, source: str) -> str:
    """Settle one confirmed Pix exactly once; returns the outcome ("duplicate" when already known)."""
    with transaction.atomic():
        # The reference lock first (payments.locks): the checkout's writers take it before the checkout.
        charge = pix_charge_lock(txid=payment.txid) if payment.txid else None
        if PixPayment.objects.filter(end_to_end_id=payment.end_to_end_id).exists():
            return "duplicate"
        row = PixPayment(
            end_to_end_id=payment.end_to_end_id,
            charge=charge,
            txid=payment.txid,
            amount=payment.amount_cents,
            paid_at=payment.paid_at,
            payer_message=payment.payer_message[:140],
            source=source,
        )
        if charge is None:
            return _record_refund(row, Outcome.UNKNOWN_CHARGE, reference=f"txid:{payment.txid}"[:64])
        # A cob is paid its amount; a cobv the amount of the day it was paid (fine, interest, discount).
        owed = charge.amount_due_on(local_date(payment.paid_at))
        if payment.amount_cents != owed.total:
            if charge.status == PixCharge.Status.ACTIVE:
                # The cob is CONCLUIDA at the PSP now; a fresh charge is needed for this checkout.
                charge.status = PixCharge.Status.REVOKED
                charge.status_reason = "amount_mismatch"
                charge.save(update_fields=["status", "status_reason", "updated_at"])
                reference = charge.reference
                record_event(reference=reference, kind="charge_revoked", txid=charge.txid, reason="amount_mismatch")
            return _record_refund(row, Outcome.REFUNDED_MISMATCH, reference=charge.reference, charge=charge)
        late = _lateness(charge, payment)
        if late is not None:
            return _record_refund(row, late, reference=charge.reference, charge=charge)
        charge.status = PixCharge.Status.PAID
        charge.status_reason = ""
        charge.paid_amount = payment.amount_cents
        charge.end_to_end_id = payment.end_to_end_id
        charge.paid_at = payment.paid_at
        charge.save()
        row.outcome = Outcome.SETTLED
        row.save()
        detail = {"fine": owed.fine, "interest": owed.interest, "discount": owed.discount} if charge.terms else {}
        record_event(
            reference=charge.reference, kind="charge_paid", txid=charge.txid, e2eid=payment.end_to_end_id, **detail
        )
        answers = charge_settled.send(
            sender=PixCharge,
            reference=charge.reference,
            txid=charge.txid,
            # The charge's own amount (= the checkout total it was issued for); a cobv's fine/interest/discount
            # are in `received`, the value that actually arrived.
            amount=charge.amount,
            received=payment.amount_cents,
            end_to_end_id=payment.end_to_end_id,
            paid_at=payment.paid_at,
        )
        if any(answer == "rejected" for _, answer in answers):
            row.outcome = Outcome.REFUNDED_REJECTED
            row.save(update_fields=["outcome"])
            refund_automatic(payment=row, reference=charge.reference, reason=_REASONS[Outcome.REFUNDED_REJECTED])
            return str(Outcome.REFUNDED_REJECTED)
        return str(Outcome.SETTLED)


def _record_refund(row: PixPayment, outcome: str, *, reference: str, charge: PixCharge | None = None) -> str:
    row.outcome = outcome
    row.save()
    record_event(reference=reference, kind=f"payment_{outcome}", txid=row.txid, e2eid=row.end_to_end_id)
    logger.warning("Pix %s on txid %s will be refunded: %s", row.end_to_end_id, row.txid, outcome)
    refund_automatic(payment=row, reference=reference, reason=_REASONS[outcome])
    return outcome


def _settle_from_charge(psp_charge: PSPCharge) -> list[str]:
    outcomes = []
    for payment in psp_charge.payments:
        outcomes.append(pix_payment_settle(payment=payment, source="poll"))
        refunds_apply_from_psp(e2eid=payment.end_to_end_id, refunds=payment.refunds)
    return outcomes


def pix_charges_reconcile(*, now: datetime | None = None, min_age_seconds: int = 30, limit: int = 200) -> int:
    """Poll `GET /cob` for active charges (lost webhooks); returns how many payments were settled."""
    now = now or timezone.now()
    charges = PixCharge.objects.filter(
        status=PixCharge.Status.ACTIVE,
        created_at__lte=now - timedelta(seconds=min_age_seconds),
        expires_at__gte=now - expiry_grace(),
    ).order_by("created_at")[:limit]
    settled = 0
    psp = get_psp()
    for txid, kind in [(charge.txid, charge.kind) for charge in charges]:
        try:
            psp_charge = psp.get_charge(txid, kind=kind)
        except (PSPUnavailable, PSPNotFound, PSPRejected) as exc:
            logger.warning("reconcile: GET /cob/%s failed: %s", txid, exc)
            continue
        settled += sum(1 for outcome in _settle_from_charge(psp_charge) if outcome == Outcome.SETTLED)
    # Inbox rows whose processing was never enqueued or died: process them again (idempotent).
    stale = PixWebhookEvent.objects.filter(
        processed_at__isnull=True, received_at__lte=now - timedelta(minutes=2), attempts__lt=10
    ).values_list("pk", flat=True)[:limit]
    for event_id in list(stale):
        try:
            pix_webhook_event_process(event_id=event_id)
        except (PSPUnavailable, PSPNotFound, PSPRejected) as exc:
            logger.warning("reconcile: inbox event %s still failing: %s", event_id, exc)
    return settled


def pix_received_reconcile(*, start: datetime, end: datetime) -> int:
    """`GET /pix?inicio&fim`: settle (or refund) every received Pix we never recorded; returns how many.

    Covers what the per-charge poll cannot see: a lost webhook for a charge that is no longer active
    (paid after revocation/expiry), so that no money is kept without an order.
    """
    known = set(
        PixPayment.objects.filter(paid_at__gte=start - timedelta(days=1)).values_list("end_to_end_id", flat=True)
    )
    handled = 0
    for payment in get_psp().list_received(start, end):
        if payment.end_to_end_id in known:
            continue
        if pix_payment_settle(payment=payment, source="poll") != "duplicate":
            handled += 1
        refunds_apply_from_psp(e2eid=payment.end_to_end_id, refunds=payment.refunds)
    return handled


def pix_charges_expire_due(*, now: datetime | None = None, limit: int = 200) -> int:
    """Expire active charges past `expires_at + grace` after a last look at the PSP; returns how many."""
    now = now or timezone.now()
    due = PixCharge.objects.filter(status=PixCharge.Status.ACTIVE, expires_at__lt=now - expiry_grace())
    txids = list(due.order_by("expires_at").values_list("txid", flat=True)[:limit])
    return sum(pix_charge_expire(txid=txid, now=now) == "expired" for txid in txids)


def pix_charge_expire(*, txid: str, now: datetime | None = None) -> str:
    """One active charge past its `expires_at`: a last look at the PSP, then settle or expire it.

    Returns "expired", "settled" (paid at the last moment), "active" (not past expiry yet) or
    "unavailable" (the PSP could not be asked or refused: looked at again later). The PSP calls run
    outside any transaction; the local change is one short locked transaction. No grace is needed
    here: the PSP was asked about payments and told to remove the charge before it is expired.
    """
    charge = PixCharge.objects.filter(txid=txid).first()
    if charge is None or charge.status != PixCharge.Status.ACTIVE:
        return charge.status if charge is not None else "unavailable"
    if charge.expires_at > (now or timezone.now()):
        return "active"
    psp = get_psp()
    try:
        psp_charge = psp.get_charge(txid, kind=charge.kind)
        if psp_charge.payments:
            _settle_from_charge(psp_charge)  # paid at the last moment: settle, do not expire
            return "settled"
        psp.cancel_charge(txid, kind=charge.kind)
        removed = True
    except PSPNotFound:
        removed = True
    except PSPRejected as exc:
        logger.warning("expire: PATCH /cob/%s refused (%s); looking again next beat", txid, exc)
        return "unavailable"
    except PSPUnavailable as exc:
        logger.warning("expire: PSP unavailable for %s: %s", txid, exc)
        return "unavailable"
    return _end_if_active(txid, PixCharge.Status.EXPIRED, reason="expired", psp_removed=removed, event="charge_expired")


def pix_charge_withdraw(*, txid: str, reason: str = "payment_method_changed") -> str:
    """The buyer gave up an unpaid active charge before its expiry (changed the payment method): a look at the
    PSP first, then the charge is removed there and revoked here.

    Returns "revoked" (removed at the PSP: it can no longer be paid), "settled" (it was paid meanwhile: settled
    now, the order follows), "paid"/"expired"/… (it was no longer active), "not_withdrawable" (a Pix com
    vencimento) or "unavailable" (the PSP could not be asked or refused: nothing changed, the buyer may try
    again). Unlike a revoke after commit, the caller knows the QR can no longer be paid before it offers
    another way to pay. PSP calls outside any transaction.
    """
    charge = PixCharge.objects.filter(txid=txid).first()
    if charge is None:
        return "unavailable"
    if charge.status != PixCharge.Status.ACTIVE:
        return charge.status
    if charge.kind != "cob":
        return "not_withdrawable"  # a Pix com vencimento (cobv) is the merchant's bill: only staff cancel it
    psp = get_psp()
    try:
        psp_charge = psp.get_charge(txid, kind=charge.kind)
        if psp_charge.payments:
            _settle_from_charge(psp_charge)
            return "settled"
        psp.cancel_charge(txid, kind=charge.kind)
    except PSPNotFound:
        pass
    except (PSPRejected, PSPUnavailable) as exc:
        logger.warning("withdraw: PSP refused or unavailable for %s: %s", txid, exc)
        return "unavailable"
    return _end_if_active(
        txid,
        PixCharge.Status.REVOKED,
        reason=reason,
        psp_removed=True,
        event="charge_revoked",
        details={"reason": reason},
    )


def _end_if_active(
    txid: str, status: str, *, reason: str, psp_removed: bool, event: str, details: Mapping[str, Any] | None = None
) -> str:
    """After the PSP was asked (expiry, withdrawal): the charge, locked, ends as `status` with its timeline `event`
    if it is still active; else it stays as it became meanwhile. Returns its status."""
    with transaction.atomic():
        charge = PixCharge.objects.select_for_update().get(txid=txid)
        if charge.status != PixCharge.Status.ACTIVE:
            return charge.status
        charge.status, charge.status_reason, charge.psp_removed = status, reason, psp_removed
        charge.save(update_fields=["status", "status_reason", "psp_removed", "updated_at"])
        record_event(reference=charge.reference, kind=event, txid=txid, **(details or {}))
    return str(status)


def pix_charge_cancel_at_psp(*, txid: str) -> bool:
    """PATCH a revoked charge at the PSP so a stale QR cannot be paid; True once the PSP agreed."""
    kind = PixCharge.objects.filter(txid=txid).values_list("kind", flat=True).first() or "cob"
    try:
        get_psp().cancel_charge(txid, kind=kind)
    except PSPNotFound:
        pass
    except PSPRejected as exc:
        # Usually CONCLUIDA: someone paid meanwhile; the webhook/reconcile path refunds it as late.
        logger.warning("revoke: PATCH /cob/%s refused: %s", txid, exc)
        return False
    PixCharge.objects.filter(txid=txid).update(psp_removed=True)
    return True
