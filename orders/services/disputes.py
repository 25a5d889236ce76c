"""MED 2.0 disputes of the order's Pix, as `payments` reports them (through the shop's receiver of
`payments.signals.pix_infraction_changed`): the timeline, the hold on shipment, the returned amount as a refund.

    opened    → payment_dispute "open": the fulfillment actions refuse to ship until staff decide
    answered  → staff contested (the hold is lifted: they vouch for the sale) or agreed to return (still held)
    agreed    → the PSP sided with the payer; the money goes back by a refund request
    closed    → "returned": a refund adjustment of what the PSP debited, completed at once (the PSP already moved
                the money), once; beyond what was left to refund, the excess is flagged ("returned_twice");
                "kept": the payment stays and the hold is lifted

Each step moves the order's dispute state forward only, with the order row locked: a replayed step changes nothing.
"""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from kernel.money import PT_BR, format_brl
from orders.choices import ALL_SENT_STATUSES
from orders.errors import OrderError
from orders.models import Adjustment, AdjustmentStatus, AdjustmentType, Order, PaymentDispute
from orders.services._common import (
    lock_order,
    notify_changed,
    refresh_payment_status,
    refundable_amount,
    timeline,
)


def _brl(cents: int) -> str:
    """The timeline entries are stored in Portuguese. (kernel.money follows the reader's language.)"""
    return format_brl(cents, language=PT_BR)


FINAL = (PaymentDispute.RETURNED, PaymentDispute.KEPT)
_SITUATIONS = {
    "scam": "golpe",
    "account_takeover": "invasão de conta",
    "coercion": "coação",
    "fraudulent_access": "acesso fraudulento",
    "other": "outro motivo",
    "unknown": "motivo não informado",
}


def refuse_if_disputed(order: Order) -> None:
    """The fulfillment actions call this: nothing leaves the shop while the payer disputes the Pix."""
    if order.payment_dispute == PaymentDispute.OPEN:
        raise OrderError(
            "order_id",
            _(
                "O Pix do pedido #%(number)s foi contestado pelo pagador (MED): o envio fica retido até a equipe "
                "responder a disputa em Pagamentos → Disputas Pix (MED)."
            ),
            code="payment_disputed",
            number=order.number,
        )


@transaction.atomic
def order_dispute_record(
    *,
    checkout_id: str,
    infraction_id: str,
    event: str,
    amount: int,
    returned_amount: int = 0,
    details: str = "",
    situation: str = "",
    accept: bool | None = None,
    outcome: str = "",
    actor: str = "",
) -> str:
    """One step of the dispute of the order paid by `checkout_id`; what it did ("held", "released", "refunded", …,
    "unchanged" for a replay, "no_order" when no order was placed for that payment)."""
    found = Order.objects.filter(checkout_id=checkout_id).values_list("public_id", flat=True).first()
    if found is None:
        return "no_order"
    order = lock_order(found)
    if order.payment_dispute_id and order.payment_dispute_id != infraction_id and order.payment_dispute not in FINAL:
        return "another_dispute_open"  # one dispute at a time per order (one Pix per order)
    if order.payment_dispute in FINAL and order.payment_dispute_id == infraction_id:
        return "unchanged"
    brl = _brl(amount)
    if event == "opened":
        if order.payment_dispute_id == infraction_id:
            return "unchanged"
        order.payment_dispute, order.payment_dispute_id = PaymentDispute.OPEN, infraction_id
        order.save(update_fields=["payment_dispute", "payment_dispute_id", "updated_at"])
        reason = _SITUATIONS.get(situation, situation or "motivo não informado")
        # QA walk: a dispute of a delivered order said "Envio retido", though nothing was left to hold.
        hold = (
            "O pedido já saiu da loja: responda com o rastreio e a nota fiscal."
            if order.status in ALL_SENT_STATUSES
            else "Envio retido até a equipe responder."
        )
        timeline(
            order, "dispute_opened",
            f"O pagador contestou o Pix de {brl} pelo MED ({reason}). {hold}"
            + (f" Relato: {details[:300]}" if details else ""),
            data={"infraction_id": infraction_id, "amount": amount},
        )  # fmt: skip
        notify_changed(order, "payment_disputed")
        return "held"
    if order.payment_dispute_id != infraction_id:
        return "unknown_dispute"
    if event == "answered":
        if accept:
            timeline(
                order, "dispute_answered", f"A equipe aceitou devolver {brl} ao pagador (MED). O envio segue retido.",
                actor=actor, data={"infraction_id": infraction_id, "accept": True},
            )  # fmt: skip
            return "answered"
        order.payment_dispute = PaymentDispute.CONTESTED
        order.save(update_fields=["payment_dispute", "updated_at"])
        timeline(
            order, "dispute_answered",
            "A equipe contestou a disputa com evidências"
            + ("; o PSP analisa." if order.status in ALL_SENT_STATUSES else "; envio liberado enquanto o PSP analisa."),
            actor=actor, data={"infraction_id": infraction_id, "accept": False},
        )  # fmt: skip
        notify_changed(order, "payment_dispute_contested")
        return "released"
    if event == "agreed":
        timeline(
            order, "dispute_agreed", f"O PSP deu razão ao pagador: {brl} devem voltar a ele pelo MED.",
            data={"infraction_id": infraction_id},
        )  # fmt: skip
        return "agreed"
    if event != "closed":
        return "unchanged"
    if outcome == "returned" and returned_amount > 0:
        return _record_returned(order, infraction_id=infraction_id, debited=returned_amount)
    order.payment_dispute = PaymentDispute.KEPT
    order.save(update_fields=["payment_dispute", "updated_at"])
    timeline(
        order, "dispute_kept",
        f"Disputa do Pix encerrada: os {brl} ficam com a loja."
        + ("" if order.status in ALL_SENT_STATUSES else " Envio liberado."),
        data={"infraction_id": infraction_id},
    )  # fmt: skip
    notify_changed(order, "payment_dispute_closed")
    return "kept"


def _record_returned(order: Order, *, infraction_id: str, debited: int) -> str:
    """The PSP debited `debited` from the shop's account to return it to the payer. The refund adjustment records
    that amount as it happened (money that left); the order's refunded amount counts only what was still left to
    refund (it never exceeds what was paid), and the rest — money already refunded before, now gone a second
    time — is the excess, said to staff with its exact amount so they can claim it back."""
    left = refundable_amount(order)  # pending refunds count as gone: that money is on its way back already
    excess = debited - min(debited, left)
    adjustment = Adjustment.objects.create(
        order=order, type=AdjustmentType.REFUND, status=AdjustmentStatus.COMPLETED,
        totals=[{"type": "total", "amount": -debited}], amount=-debited,
        description=f"Devolução pelo MED (disputa {infraction_id})"[:255], occurred_at=timezone.now(),
    )  # fmt: skip
    order.refunded_amount = min(order.paid_amount, order.refunded_amount + debited)
    order.payment_dispute = PaymentDispute.RETURNED
    refresh_payment_status(order)
    order.save(update_fields=["refunded_amount", "payment_status", "payment_dispute", "updated_at"])
    message = f"{_brl(debited)} devolvidos ao pagador pelo MED (o PSP debitou a conta da loja)."
    if excess:
        already = order.paid_amount - left
        message += (
            f" O pedido já tinha {_brl(already)} reembolsados e só restavam {_brl(left)} a reembolsar: "
            f"{_brl(excess)} saíram duas vezes. Confira com o PSP e peça de volta ao pagador."
        )
    timeline(
        order, "dispute_returned", message,
        data={"infraction_id": infraction_id, "adjustment_id": adjustment.public_id, "amount": debited,
              "excess": excess},
    )  # fmt: skip
    notify_changed(order, "refunded")
    return "returned_twice" if excess else "refunded"
