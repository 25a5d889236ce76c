"""The payments app's business signals (contracts.md). Receivers live in `shop/receivers.py`."""

from typing import Any

from django.db import transaction
from django.dispatch import Signal

# send(sender=PixCharge, reference=str, txid=str, amount=int, end_to_end_id=str, paid_at=datetime)
# Sent INSIDE the settling transaction (charge row locked). A receiver returns "accepted" or
# "rejected"; any "rejected" makes payments record the payment and refund it in full automatically.
# A receiver that raises rolls the settlement back; the Celery task retries it.
charge_settled = Signal()

# send(sender=PixRefund, reference=str, refund_id=str, status="completed"|"failed", amount=int)
# Sent on commit, once, when a refund requested through `refund_request` reaches a final state.
refund_finished = Signal()


def refund_finished_on_commit(refund: Any, status: str) -> None:
    """Announce a Pix devolução's or card estorno's final `status` on commit, for refunds someone asked for
    (automatic ones — late, duplicate, rejected payments — have no adjustment waiting for them)."""
    if refund.kind != "requested":
        return
    payload = {
        "reference": refund.reference,
        "refund_id": refund.refund_id,
        "status": str(status),
        "amount": refund.amount,
    }
    transaction.on_commit(lambda: refund_finished.send(sender=type(refund), **payload))


# send(sender=CardPayment, reference=str, payment_id=str, status="approved"|"declined", amount=int)
# The outcome of a card payment learned after `card_payment_authorize` returned (gateway webhook, or the
# reconcile sweep asking the gateway by order code). Sent INSIDE the transaction that recorded it; a
# receiver returns "accepted" or "rejected"; any "rejected" of an approval refunds it in full automatically.
# `payment_id` is "" when the gateway has no charge at all for the reference.
card_payment_settled = Signal()

# send(sender=PixInfraction, reference=str, infraction_id=str, event=str, amount=int, returned_amount=int,
#      details=str, [situation=str | accept=bool, actor=str | outcome="returned"|"kept"])
# A MED dispute of a received Pix (payments/med/): event "opened" (the payer's bank disputes it), "answered" (staff
# answered the PSP; `accept` says whether they agree to return it), "agreed" (the PSP sided with the payer; a refund
# request follows), "closed" (`outcome` "returned" with `returned_amount` > 0, or "kept"). Sent INSIDE the
# transaction that records the step, once per step (the dispute row is locked and moves forward only);
# a receiver that raises rolls the step back and the inbox row is processed again.
pix_infraction_changed = Signal()

# send(sender=PixRecurrenceWebhookEvent, id_rec=str, status="CREATED"|"APPROVED"|"REJECTED"|"EXPIRED"|"CANCELLED",
#      cancelled_by=str)
# A Pix Automático recurrence's state as the PSP confirms it (`GET /rec/{idRec}`) after a `/rec` notice. Sent
# INSIDE the transaction that marks the inbox row processed (once per row); `cancelled_by` is the
# `encerramento.cancelamento.solicitante` (USUARIO_PAGADOR = the payer in the bank app) or "". A receiver that
# raises rolls it back and the task retries.
recurrence_changed = Signal()

# send(sender=BoletoPayment, reference=str, payment_id=str, status="paid"|"expired", amount=int, paid_amount=int)
# A boleto (payments/boleto/) paid, as the gateway confirms it (`GET /charges/{id}` after a webhook, the
# reconcile or the expiry's last look), or expired unpaid (canceled at the gateway). Sent INSIDE the transaction
# that moves the locked boleto row forward, once per status. A receiver returns "accepted" or "rejected"; a
# "rejected" payment is recorded for a refund by bank transfer (staff). A receiver that raises rolls it back and
# the inbox row / sweep tries again.
boleto_settled = Signal()
# send(sender=PixRecurringCharge, reference=str, txid=str, amount=int, end_to_end_id=str)
# A Pix Automático cycle charge confirmed paid at the PSP (`GET /cobr/{txid}` CONCLUIDA). Sent INSIDE the
# transaction that sets the charge's `settled_at` (row locked: once per charge); a receiver that raises rolls it
# back and the inbox row is processed again (task retry, beat sweep).
recurring_charge_settled = Signal()

# send(sender=PixRecurringCharge, reference=str, txid=str, final=bool, retry_on=date|None, reason=str)
# An attempt of a cycle charge failed (the payer's bank refused it, or it expired). `final`: no more attempts
# (the charge ended, or the retries allowed by the rules ran out); else `retry_on` is the date of the retry
# asked for. Sent INSIDE the transaction that records it, once per failed attempt.
recurring_charge_failed = Signal()
