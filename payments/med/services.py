"""Every write of a MED dispute. Each is one short transaction; what the order must know goes out by the signal
`payments.signals.pix_infraction_changed`, sent inside that transaction (the shop writes the order's timeline and
hold in it, so a failing receiver rolls the step back and the inbox row is processed again).

    infraction_event_store    (webhook)  the raw notification, once per PSP event key; a replay stores nothing
    infraction_event_process  (Celery)   apply it: open the dispute, note the PSP's analysis, record the outcome
    infraction_answer         (admin)    the staff's answer + its outbox row, in one transaction
    infraction_answer_send    (Celery)   the outbox row → the PSP, outside any transaction, exactly once
"""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from kernel.tasks import enqueue_on_commit
from payments.exceptions import PaymentInputError
from payments.med.models import PixInfraction, PixInfractionAnswer, PixInfractionEvent
from payments.med.notifications import MedNotification, parse_notification
from payments.models import PixPayment, PixRecurringCharge
from payments.psp import PixPSP, PSPError, PSPRejected, get_psp
from payments.signals import pix_infraction_changed
from payments.timeline import record_event

logger = logging.getLogger(__name__)
Status = PixInfraction.Status
# A status inside a sentence ("Esta disputa já está respondida"): lower-case words, not the choice labels.
STATUS_WORDS = {
    Status.OPEN: gettext_lazy("aberta"),
    Status.ANSWERED: gettext_lazy("respondida"),
    Status.CLOSED: gettext_lazy("encerrada"),
    Status.CANCELLED: gettext_lazy("cancelada pelo pagador"),
}
MIN_JUSTIFICATION = 20  # characters: the PSP's analyst needs more than a word
MAX_JUSTIFICATION = 2000  # DICT's analysis details limit


def _announce(infraction: PixInfraction, event: str, **extra: Any) -> None:
    record_event(reference=infraction.reference, kind=f"med_{event}", infraction_id=infraction.public_id, **extra)
    if infraction.reference:
        pix_infraction_changed.send(
            sender=PixInfraction, reference=infraction.reference, infraction_id=infraction.public_id, event=event,
            amount=infraction.amount, returned_amount=infraction.returned_amount, details=infraction.details,
            **extra,
        )  # fmt: skip


def infraction_event_store(
    *, notification: MedNotification, payload: Any, raw_body: bytes
) -> PixInfractionEvent | None:
    """The notification as received, once per event key: None for a re-delivery (which changes nothing)."""
    try:
        with transaction.atomic():
            row = PixInfractionEvent.objects.create(
                event_key=notification.event_key, kind=notification.kind, psp_id=notification.psp_id,
                payload=payload, raw_body=raw_body,
            )  # fmt: skip
    except IntegrityError:
        return None
    enqueue_on_commit("payments.tasks.process_infraction_event", row.pk)  # broker down: the sweep processes it
    return row


def _payment_reference(payment: PixPayment) -> str:
    """Whose Pix it is: the checkout's charge (`cob`), or the subscription cycle whose Pix Automático charge
    (`cobr`) was paid with this endToEndId — its order carries the cycle's id, so the dispute holds that order."""
    if payment.charge:
        return payment.charge.reference
    if not payment.txid:
        return ""
    cycle = (
        PixRecurringCharge.objects.filter(txid=payment.txid, end_to_end_id=payment.end_to_end_id)
        .values_list("reference", flat=True)
        .first()
    )
    return cycle or ""


def _open(notification: MedNotification) -> tuple[PixInfraction | None, str]:
    payment = PixPayment.objects.select_related("charge").filter(end_to_end_id=notification.end_to_end_id).first()
    if payment is None:
        return None, "unknown_payment"
    infraction = PixInfraction.objects.create(
        psp_id=notification.psp_id, end_to_end_id=notification.end_to_end_id, payment=payment,
        reference=_payment_reference(payment),
        amount=min(notification.requested_amount, payment.amount) if notification.requested_amount else payment.amount,
        situation=notification.situation, details=notification.details[:2000], psp_status=notification.status,
        opened_at=notification.at,
    )  # fmt: skip
    _announce(infraction, "opened", situation=infraction.situation)
    return infraction, "opened"


def _close(infraction: PixInfraction, *, returned: int, at: Any, analysis_details: str) -> str:
    infraction.status = Status.CLOSED
    infraction.outcome = PixInfraction.Outcome.RETURNED if returned > 0 else PixInfraction.Outcome.KEPT
    infraction.returned_amount = min(returned, infraction.amount)
    infraction.closed_at = at
    infraction.analysis_details = analysis_details[:2000] or infraction.analysis_details
    infraction.save()
    _announce(infraction, "closed", outcome=infraction.outcome)
    return f"closed_{infraction.outcome}"


def _apply(notification: MedNotification) -> str:
    infraction = PixInfraction.objects.select_for_update().filter(psp_id=notification.psp_id).first()
    if infraction is None:
        if notification.kind == "infraction_report" and notification.status in ("open", "acknowledged"):
            return _open(notification)[1]
        return "unknown_infraction"
    if infraction.status in (Status.CLOSED, Status.CANCELLED):
        return "already_final"  # a late or repeated notice about a decided dispute
    infraction.psp_status = notification.status
    if notification.kind == "infraction_report":
        if notification.status == "cancelled":
            infraction.status, infraction.outcome = Status.CANCELLED, PixInfraction.Outcome.KEPT
            infraction.closed_at = notification.at
            infraction.save()
            _announce(infraction, "closed", outcome=infraction.outcome)
            return "cancelled"
        if notification.status == "closed" and notification.analysis_result == "disagreed":
            return _close(infraction, returned=0, at=notification.at, analysis_details=notification.analysis_details)
        if notification.status == "closed":  # agreed: the payer's bank asks the money back by a refund request
            infraction.analysis_details = notification.analysis_details[:2000]
            infraction.save()
            _announce(infraction, "agreed")
            return "agreed"
        infraction.save(update_fields=["psp_status", "updated_at"])
        return "unchanged"
    if notification.status == "closed":  # refund request decided: what actually went back to the payer
        returned = notification.refunded_amount or 0
        if notification.analysis_result == "rejected":
            returned = 0
        return _close(infraction, returned=returned, at=notification.at, analysis_details=notification.analysis_details)
    infraction.save(update_fields=["psp_status", "updated_at"])
    return "refund_requested" if notification.status == "open" else "unchanged"


def infraction_event_process(*, event_id: int) -> str:
    """Apply one stored notification, once: "opened", "agreed", "closed_returned", "closed_kept", … or "skipped"."""
    with transaction.atomic():
        row = PixInfractionEvent.objects.select_for_update().filter(pk=event_id, processed_at__isnull=True).first()
        if row is None:
            return "skipped"
        notification = parse_notification(row.payload)
        outcome = _apply(notification)
        row.processed_at = timezone.now()
        row.outcome = outcome
        row.attempts += 1
        row.save(update_fields=["processed_at", "outcome", "attempts"])
    return outcome


def infraction_answer(*, infraction_id: str, accept: bool, justification: str, actor: str = "") -> PixInfractionAnswer:
    """Staff's answer to an open dispute: recorded with its outbox row; the PSP gets it after commit, once."""
    text = " ".join((justification or "").split())
    if len(text) < MIN_JUSTIFICATION:
        raise PaymentInputError(
            "justification",
            _(
                "Escreva a justificativa com as evidências (pelo menos %(count)d caracteres): "
                "código de rastreio, data da entrega, conversa com o comprador, nota fiscal."
            )
            % {"count": MIN_JUSTIFICATION},
        )
    if len(text) > MAX_JUSTIFICATION:
        raise PaymentInputError(
            "justification",
            _("A justificativa pode ter no máximo %(count)d caracteres.") % {"count": MAX_JUSTIFICATION},
        )
    with transaction.atomic():
        infraction = PixInfraction.objects.select_for_update().filter(public_id=infraction_id).first()
        if infraction is None:
            raise PaymentInputError("infraction_id", _("Disputa não encontrada."))
        if infraction.status != Status.OPEN:
            raise PaymentInputError(
                "infraction_id",
                _("Esta disputa já está %(status)s: não aceita outra resposta.")
                % {"status": STATUS_WORDS[infraction.status]},
            )
        answer = PixInfractionAnswer.objects.create(
            infraction=infraction, accept=accept, justification=text, actor=actor[:150], next_run_at=timezone.now()
        )
        infraction.status = Status.ANSWERED
        infraction.save(update_fields=["status", "updated_at"])
        _announce(infraction, "answered", accept=accept, actor=actor[:150])
    enqueue_on_commit("payments.tasks.send_infraction_answer", answer.pk)
    return answer


def _retry_delay(attempts: int) -> timedelta:
    return timedelta(seconds=min(30 * 2 ** max(attempts - 1, 0), 3600))


def infraction_answer_send(*, answer_id: int, psp: PixPSP | None = None) -> str:
    """Lease the answer, call the PSP outside any transaction, record "sent", "failed" or "retry"."""
    with transaction.atomic():
        answer = (
            PixInfractionAnswer.objects.select_for_update(skip_locked=True)
            .select_related("infraction")
            .filter(pk=answer_id, status=PixInfractionAnswer.Status.PENDING)
            .first()
        )
        if answer is None:
            return "skipped"
        answer.attempts += 1
        answer.next_run_at = timezone.now() + _retry_delay(answer.attempts)  # a crash mid-call: the sweep retries
        answer.save(update_fields=["attempts", "next_run_at"])
    infraction = answer.infraction
    try:
        (psp or get_psp()).answer_infraction(
            infraction_id=infraction.psp_id, accept=answer.accept, justification=answer.justification
        )
    except PSPRejected as exc:  # the PSP refused it (deadline passed, already decided): staff must know
        status, error = PixInfractionAnswer.Status.FAILED, str(exc)[:500]
    except PSPError as exc:
        PixInfractionAnswer.objects.filter(pk=answer.pk).update(last_error=str(exc)[:500])
        logger.warning("MED answer %s not sent yet: %s", answer.pk, exc)
        return "retry"
    else:
        status, error = PixInfractionAnswer.Status.SENT, ""
    with transaction.atomic():
        locked = PixInfractionAnswer.objects.select_for_update().get(pk=answer.pk)
        if locked.status != PixInfractionAnswer.Status.PENDING:
            return "skipped"
        locked.status, locked.last_error = status, error
        locked.sent_at = timezone.now() if status == PixInfractionAnswer.Status.SENT else None
        locked.save(update_fields=["status", "last_error", "sent_at"])
        record_event(
            reference=infraction.reference, kind=f"med_answer_{status}", infraction_id=infraction.public_id,
            error=error,
        )  # fmt: skip
    return str(status)


def answers_due(*, limit: int = 100) -> list[int]:
    return list(
        PixInfractionAnswer.objects.filter(status=PixInfractionAnswer.Status.PENDING, next_run_at__lte=timezone.now())
        .order_by("next_run_at", "id")
        .values_list("pk", flat=True)[:limit]
    )


def events_unprocessed(*, older_than: timedelta, limit: int = 100) -> list[int]:
    cutoff = timezone.now() - older_than
    return list(
        PixInfractionEvent.objects.filter(processed_at__isnull=True, received_at__lt=cutoff)
        .order_by("id")
        .values_list("pk", flat=True)[:limit]
    )
