"""Adjustments ledger: refunds (Pix devolução through `refund_requested`), cancellations and returns."""

from __future__ import annotations

from collections.abc import Sequence

from django.db import transaction
from django.utils import timezone
from django.utils.functional import Promise
from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext_lazy

from kernel.money import PT_BR, format_brl
from orders.errors import OrderError
from orders.labels import units_text
from orders.models import (
    Adjustment,
    AdjustmentStatus,
    AdjustmentType,
    EmailKind,
    Order,
    OrderEvent,
    OrderLine,
    OrderStatus,
    ReturnCondition,
    ReturnRequest,
    ReturnStatus,
)
from orders.net_value import item_discount, lines_net_value
from orders.selectors import failed_refunds_to_pay_outside, with_actor_labels
from orders.services._common import (
    MAX_QUANTITY,
    clean_line_quantities,
    clean_text,
    line_items_json,
    lock_lines,
    lock_order,
    notify_changed,
    refresh_line,
    refresh_order_status,
    refresh_payment_status,
    refund_count,
    refundable_amount,
    refuse_if_canceled,
    returned_to_sender_close,
    schedule_email,
    send_on_commit,
    timeline,
)
from orders.services.outbox import REFUND_REQUESTED, outbox_add
from orders.signals import stock_return_requested
from orders.types import LineQuantity

REFUND_RESULTS = (AdjustmentStatus.COMPLETED, AdjustmentStatus.FAILED)
# How staff gave the money back outside the shop (an order paid outside it has no PSP to refund through).
OFFLINE_REFUND_MEANS = {
    "pix": "Pix",
    "dinheiro": "dinheiro",
    "transferencia": "transferência bancária",
    "outro": "outro meio",
}


def refund_goes_through_psp(order: Order) -> bool:
    """A refund of this order is sent to payments (Pix devolução, card estorno, or a boleto's refund by bank
    transfer, completed when staff record the transfer) and settled by its answer."""
    return order.payment_type in ("pix", "card", "boleto") and bool(order.payment_reference)


def _clean_amount(amount: object, *, field: str = "amount") -> int:
    if isinstance(amount, bool) or not isinstance(amount, int) or not 1 <= amount <= MAX_QUANTITY * 100:
        raise OrderError(field, _("Informe um valor maior que zero."), code="bad_amount")
    return amount


def _check_refundable(order: Order, amount: int, *, field: str) -> None:
    """Money back (refund or credit note) is at most what was paid and not refunded yet."""
    available = refundable_amount(order)
    if amount > available:
        raise OrderError(
            field,
            _("Não é possível reembolsar %(amount)s: só %(available)s do valor pago pode ser reembolsado."),
            code="refund_exceeds_paid",
            amount=format_brl(amount),
            available=format_brl(available),
        )


def _create_credit_note(order: Order, *, amount: int, reason: str, actor: str) -> Adjustment:
    """A store credit (vale-troca) instead of money back: at most what was paid and not refunded."""
    _check_refundable(order, amount, field="credit_amount")
    adjustment = Adjustment.objects.create(
        order=order,
        type=AdjustmentType.CREDIT,
        status=AdjustmentStatus.COMPLETED,
        totals=[{"type": "total", "amount": -amount}],
        amount=-amount,
        description=f"Vale-troca: {reason}"[:255],
        occurred_at=timezone.now(),
    )
    timeline(
        order,
        "credit_note",
        f"Vale-troca de {format_brl(amount, language=PT_BR)} emitido: {reason}",
        actor=actor,
        data={"adjustment_id": adjustment.public_id, "amount": amount},
    )
    return adjustment


def _create_refund(
    order: Order,
    *,
    amount: int,
    reason: str,
    pairs: Sequence[tuple[OrderLine, int]],
    actor: str,
    through_psp: bool | None = None,
    retries: str = "",
) -> Adjustment:
    """Inside the caller's transaction, with the order locked: the refund adjustment and its side effects.
    `through_psp` False: staff pay it outside the shop (`refund_paid_outside`), nothing goes to payments.
    `retries`: the failed refund this one asks again (on its timeline line, so that one is settled once)."""
    _check_refundable(order, amount, field="amount")
    adjustment = Adjustment.objects.create(
        order=order,
        type=AdjustmentType.REFUND,
        status=AdjustmentStatus.PENDING,
        line_items=line_items_json(pairs, sign=-1),
        totals=[{"type": "total", "amount": -amount}],
        amount=-amount,
        description=reason,
        occurred_at=timezone.now(),
    )
    brl = format_brl(amount, language=PT_BR)
    timeline(
        order,
        "refund_requested",
        f"Reembolso de {brl} solicitado de novo (o anterior falhou): {reason}"
        if retries
        else f"Reembolso de {brl} solicitado: {reason}",
        actor=actor,
        data={"adjustment_id": adjustment.public_id, "amount": amount, **({"retries": retries} if retries else {})},
    )
    # The order's change first: after commit its webhook is sent before the refund row runs, so a card estorno the
    # gateway answers at once (the completion's own change and webhook, in the same after-commit run) comes after
    # it and does not supersede it: the platform hears this change (a cancellation, a refund asked) by its name.
    notify_changed(order, "refund_requested")
    if refund_goes_through_psp(order) if through_psp is None else through_psp:
        # The shop forwards this to payments (Pix devolução, or the card estorno at the gateway); the result comes
        # back via adjustment_mark_refund_result.
        # An outbox row in this transaction, not a signal after commit: a failure is retried by the sweep.
        outbox_add(
            kind=REFUND_REQUESTED,
            key=f"refund:{adjustment.public_id}",
            payload={
                "order_id": order.public_id,
                "adjustment_id": adjustment.public_id,
                "payment_reference": order.payment_reference,
                "amount": amount,
                "reason": reason,
            },
        )
    return adjustment


def _refund_changed(order: Order) -> OrderError:
    """Another refund was registered after the staff member opened the page (two people on one complaint): say
    which one, and by whom, instead of sending the money a second time."""
    latest = Adjustment.objects.filter(order=order, type=AdjustmentType.REFUND).order_by("-occurred_at", "-id").first()
    amount = format_brl(-latest.amount) if latest else ""
    event = (
        with_actor_labels(OrderEvent.objects.filter(order=order, data__adjustment_id=latest.public_id))
        .exclude(actor="")
        .first()
        if latest
        else None
    )
    if event is not None:
        return OrderError(
            "known_refunds",
            _(
                "Enquanto esta página estava aberta, %(who)s registrou um reembolso de %(amount)s neste pedido. Nada "
                "foi reembolsado agora: confira os reembolsos do pedido e, se ainda quiser reembolsar, envie de novo."
            ),
            code="refund_changed",
            who=event.actor_label,  # the person's name, as the timeline shows it
            amount=amount,
        )
    return OrderError(
        "known_refunds",
        _(
            "Enquanto esta página estava aberta, um reembolso de %(amount)s foi registrado neste pedido. Nada foi "
            "reembolsado agora: confira os reembolsos do pedido e, se ainda quiser reembolsar, envie de novo."
        ),
        code="refund_changed",
        amount=amount,
    )


@transaction.atomic
def order_refund(
    *,
    order_id: str,
    amount: int,
    reason: str,
    lines: Sequence[LineQuantity] = (),
    actor: str = "",
    known_refunds: int | None = None,
) -> Adjustment:
    """Refund money (pending until the PSP answers). `lines` only say what the money is for. `known_refunds`: how
    many refunds the order had when the staff member saw it (the admin page); any other number now — checked with
    the order locked, so two people pressing at the same instant are told apart — refuses, nothing changes."""
    amount = _clean_amount(amount)
    reason = clean_text(reason, field="reason", max_length=255, required=True)
    order = lock_order(order_id)
    if known_refunds is not None and refund_count(order) != known_refunds:
        raise _refund_changed(order)
    known = lock_lines(order)
    pairs = clean_line_quantities(lines, known)
    for index, (line, quantity) in enumerate(pairs):
        if quantity > line.quantity_original:
            raise OrderError(
                f"lines[{index}].quantity",
                ngettext_lazy(
                    "Só %(ordered)s unidade de %(sku)s foi comprada.",
                    "Só %(ordered)s unidades de %(sku)s foram compradas.",
                    line.quantity_original,
                ),
                code="quantity_exceeded",
                ordered=line.quantity_original,
                sku=line.sku,
            )
    if order.paid_amount <= 0:
        raise OrderError(
            "amount",
            _("O pedido #%(number)s não tem pagamento a reembolsar."),
            code="refund_exceeds_paid",
            number=order.number,
        )
    return _create_refund(order, amount=amount, reason=reason, pairs=pairs, actor=actor)


@transaction.atomic
def adjustment_mark_refund_result(*, adjustment_id: str, status: str, actor: str = "") -> Adjustment:
    """Final result of a refund ("completed" | "failed"). Replays of the same result change nothing. `actor`: the
    staff member who recorded it in the admin (empty when the PSP's answer did)."""
    if status not in REFUND_RESULTS:
        raise OrderError("status", _("Use “completed” ou “failed”."), code="bad_status")
    found = Adjustment.objects.filter(public_id=adjustment_id).values_list("order__public_id", flat=True).first()
    if found is None:
        raise OrderError("adjustment_id", _("Ajuste não encontrado."), code="not_found")
    order = lock_order(found)
    adjustment = Adjustment.objects.select_for_update().get(public_id=adjustment_id)
    if adjustment.type != AdjustmentType.REFUND:
        raise OrderError("adjustment_id", _("Este ajuste não é um reembolso."), code="not_a_refund")
    if adjustment.status == status:
        return adjustment
    if adjustment.status != AdjustmentStatus.PENDING:
        raise OrderError("status", _("Este reembolso já foi finalizado."), code="invalid_status")
    adjustment.status = status
    adjustment._allow_update = True  # the one in-place change BCP §7 allows: pending → completed|failed
    adjustment.save(update_fields=["status", "updated_at"])
    amount = -adjustment.amount
    if status == AdjustmentStatus.COMPLETED:
        _refund_completed(
            order, adjustment, f"Reembolso de {format_brl(amount, language=PT_BR)} concluído.", actor=actor
        )
    else:
        timeline(
            order,
            "refund_failed",
            f"Reembolso de {format_brl(amount, language=PT_BR)} falhou; verifique com o PSP.",
            actor=actor,
            data={"adjustment_id": adjustment.public_id},
        )
        _return_follows_refund(order, adjustment, actor=actor)
        notify_changed(order, "refund_failed")
    return adjustment


def _return_follows_refund(order: Order, adjustment: Adjustment, *, actor: str = "") -> None:
    """The return request whose refund this adjustment is (`refund_adjustment_id`) says what the money did: it
    stays `refund_pending` while the adjustment is pending, turns `refunded` when it completes and `refund_failed`
    when it fails — never "Reembolsada" for money that did not go back (agent walk, session 46). With the order
    locked by the caller."""
    request = (
        ReturnRequest.objects.select_for_update()
        .filter(order=order, refund_adjustment_id=adjustment.public_id, status=ReturnStatus.REFUND_PENDING)
        .first()
    )
    if request is None:
        return
    if adjustment.status == AdjustmentStatus.COMPLETED:
        request.status = ReturnStatus.REFUNDED
        request.save(update_fields=["status", "updated_at"])
        return
    request.status = ReturnStatus.REFUND_FAILED
    request.save(update_fields=["status", "updated_at"])
    brl = format_brl(-adjustment.amount, language=PT_BR)  # stored in Portuguese, as the other timeline lines
    timeline(
        order,
        "return_refund_failed",
        f"Reembolso da devolução {request.public_id} falhou: {brl} não voltaram ao comprador; na devolução, use "
        "“Tentar de novo” ou, se a loja pagou por outro meio, “Marcar como pago por fora”.",
        actor=actor,
        internal=True,  # an instruction to staff, not news for the buyer
        data={"return_id": request.public_id, "adjustment_id": adjustment.public_id},
    )


def _refund_completed(
    order: Order, adjustment: Adjustment, message: str, *, actor: str = "", data: dict[str, str] | None = None
) -> None:
    """The money went back: count it on the order, say it on the timeline, e-mail the buyer once, tell platforms."""
    _return_follows_refund(order, adjustment, actor=actor)
    order.refunded_amount = min(order.paid_amount, order.refunded_amount - adjustment.amount)
    refresh_payment_status(order)
    order.save(update_fields=["refunded_amount", "payment_status", "updated_at"])
    timeline(
        order, "refund_completed", message, actor=actor, data={"adjustment_id": adjustment.public_id, **(data or {})}
    )
    schedule_email(order, EmailKind.REFUNDED, ref=adjustment.public_id)
    notify_changed(order, "refunded")


def _clean_offline(means: str, note: str) -> str:
    if means not in OFFLINE_REFUND_MEANS:
        raise OrderError("means", _("Escolha como o valor foi devolvido."), code="bad_means")
    return clean_text(note, field="note", max_length=255, required=means == "outro")


def _settle_offline(order: Order, adjustment: Adjustment, *, means: str, note: str, actor: str, pays: str = "") -> None:
    """The one path for money staff gave back outside the shop: the pending refund (locked, as the order) is
    completed, counted, said on the timeline (staff's own words internal) and announced."""
    adjustment.status = AdjustmentStatus.COMPLETED
    adjustment._allow_update = True  # pending → completed, as for a PSP's answer
    adjustment.save(update_fields=["status", "updated_at"])
    amount = format_brl(-adjustment.amount, language=PT_BR)
    _refund_completed(
        order, adjustment, f"Reembolso de {amount} feito pela loja ({OFFLINE_REFUND_MEANS[means]}).", actor=actor,
        data={"means": means, **({"pays": pays} if pays else {})},
    )  # fmt: skip
    if note:  # staff's own words (whose account, which receipt) stay off the buyer's timeline
        timeline(order, "note", f"Reembolso de {amount}: {note}", actor=actor, internal=True)


@transaction.atomic
def adjustment_settle_offline(*, adjustment_id: str, means: str, note: str = "", actor: str = "") -> Adjustment:
    """Staff gave a pending refund back outside the shop (Pix from the bank app, cash, transfer): the refund is
    completed once — a replay of the same settlement changes nothing. Only for orders whose refunds no PSP
    settles (paid outside the shop): for those the PSP's answer is the truth, and a second payment would follow
    (a refund the PSP refused is paid outside with `refund_paid_outside`)."""
    note = _clean_offline(means, note)
    found = Adjustment.objects.filter(public_id=adjustment_id).values_list("order__public_id", flat=True).first()
    if found is None:
        raise OrderError("adjustment", _("Reembolso não encontrado."), code="not_found")
    order = lock_order(found)
    adjustment = Adjustment.objects.select_for_update().get(public_id=adjustment_id)
    if adjustment.type != AdjustmentType.REFUND:
        raise OrderError("adjustment", _("Este ajuste não é um reembolso."), code="not_a_refund")
    if refund_goes_through_psp(order):
        raise OrderError(
            "adjustment",
            _("Este reembolso é feito pelo meio de pagamento do pedido; aguarde a confirmação dele."),
            code="refund_through_psp",
        )
    if adjustment.status == AdjustmentStatus.COMPLETED:
        return adjustment  # settled already (a double click, a second tab): nothing twice
    if adjustment.status != AdjustmentStatus.PENDING:
        raise OrderError("adjustment", _("Este reembolso já foi finalizado."), code="invalid_status")
    _settle_offline(order, adjustment, means=means, note=note, actor=actor)
    return adjustment


def refund_paid_outside(
    order: Order,
    *,
    amount: int,
    reason: str,
    pairs: Sequence[tuple[OrderLine, int]] = (),
    means: str,
    note: str = "",
    actor: str = "",
    for_return: ReturnRequest | None = None,
    pays: str = "",
) -> Adjustment:
    """With the order locked by the caller: money staff already gave back outside the shop (transfer, cash) for an
    order whose refunds otherwise go through the PSP — after the PSP refused one. A refund adjustment that never
    reaches payments (no outbox row: the PSP must not pay it a second time), settled at once by the offline path;
    `for_return` (locked by the caller) is the return request it pays, which follows it to `refunded`; `pays`: the
    failed refund adjustment it stands for (on the timeline, so it is paid once)."""
    note = _clean_offline(means, note)
    amount = _clean_amount(amount)
    adjustment = _create_refund(order, amount=amount, reason=reason, pairs=pairs, actor=actor, through_psp=False)
    if for_return is not None:
        for_return.refund_amount = amount
        for_return.refund_adjustment_id = adjustment.public_id
        for_return.status = ReturnStatus.REFUND_PENDING  # _return_follows_refund turns it `refunded` below
        for_return.save(update_fields=["status", "refund_amount", "refund_adjustment_id", "updated_at"])
    _settle_offline(order, adjustment, means=means, note=note, actor=actor, pays=pays)
    if for_return is not None:
        for_return.refresh_from_db(fields=["status", "updated_at"])
    return adjustment


@transaction.atomic
def adjustment_failed_refund_offline(
    *, adjustment_id: str, means: str, note: str = "", actor: str = ""
) -> tuple[Adjustment, bool]:
    """The PSP refused an order's refund (`failed`, not a return's: `return_request_refund_offline`) and staff paid
    the buyer outside the shop: the same amount and items are recorded as a refund paid outside
    (`refund_paid_outside`); nothing goes to the PSP. Returns the completed refund and whether it is new: a second
    one for the same failed refund (a double click, a second tab) changes nothing."""
    redo = _failed_refund_to_redo(
        adjustment_id,
        done=("refund_completed", "pays"),
        refusal=_("Só um reembolso que falhou pode ser marcado como pago por fora."),
    )
    if isinstance(redo, Adjustment):
        return redo, False
    order, failed, pairs = redo
    paid = refund_paid_outside(
        order, amount=-failed.amount, reason=failed.description, pairs=pairs, means=means, note=note, actor=actor,
        pays=adjustment_id,
    )  # fmt: skip
    return paid, True


def _failed_refund_to_redo(
    adjustment_id: str, *, done: tuple[str, str], refusal: str | Promise
) -> Adjustment | tuple[Order, Adjustment, list[tuple[OrderLine, int]]]:
    """The failed refund `adjustment_id` about to be redone (retried, or paid outside), its order locked and its items
    as (line, quantity) pairs; or the adjustment that already redid it — found by the event `done` = (kind, the data
    member naming the failed refund) — so a double click or a second tab changes nothing. `refusal`: the error when
    it is not a failed refund still waiting for a decision."""
    order, failed = _failed_refund_locked(adjustment_id)
    kind, member = done
    earlier = OrderEvent.objects.filter(order=order, kind=kind, **{f"data__{member}": adjustment_id}).first()
    if earlier is not None:
        return Adjustment.objects.get(public_id=earlier.data["adjustment_id"])
    if failed.status != AdjustmentStatus.FAILED or all(
        a.public_id != adjustment_id for a in failed_refunds_to_pay_outside(order)
    ):
        raise OrderError("adjustment", refusal, code="invalid_status")
    known = lock_lines(order)
    pairs = [(known[item["id"]], -int(item["quantity"])) for item in failed.line_items if item["id"] in known]
    return order, failed, pairs


def _failed_refund_locked(adjustment_id: str) -> tuple[Order, Adjustment]:
    """The order (locked) and the refund `adjustment_id` of it; refuses an unknown id or another kind of ajuste."""
    found = Adjustment.objects.filter(public_id=adjustment_id).values_list("order__public_id", flat=True).first()
    if found is None:
        raise OrderError("adjustment", _("Reembolso não encontrado."), code="not_found")
    order = lock_order(found)
    failed = Adjustment.objects.get(public_id=adjustment_id)
    if failed.type != AdjustmentType.REFUND:
        raise OrderError("adjustment", _("Este ajuste não é um reembolso."), code="not_a_refund")
    return order, failed


@transaction.atomic
def adjustment_refund_retry(*, adjustment_id: str, actor: str = "") -> tuple[Adjustment, bool]:
    """The PSP refused an order's refund (`failed`, not a return's: its request has its own "Tentar de novo") and
    staff ask the same refund again: a new refund of the same amount, reason and items through the outbox — still at
    most what was paid and not refunded (`refund_exceeds_paid`). The failed one stays failed (BCP §7) and is no
    longer offered to retry or to pay outside. Returns the new refund and whether it is new: a second retry of the
    same failed refund (a double click, a second tab) returns the first and changes nothing."""
    redo = _failed_refund_to_redo(
        adjustment_id,
        done=("refund_requested", "retries"),
        refusal=_("Só um reembolso que falhou pode ser tentado de novo."),
    )
    if isinstance(redo, Adjustment):
        return redo, False
    order, failed, pairs = redo
    retried = _create_refund(
        order, amount=-failed.amount, reason=failed.description, pairs=pairs, actor=actor, retries=adjustment_id
    )
    return retried, True


@transaction.atomic
def adjustment_failed_refund_drop(*, adjustment_id: str, reason: str, actor: str = "") -> tuple[Adjustment, bool]:
    """The PSP refused an order's refund (`failed`, not a return's) and staff decide it is not redone: the buyer was
    paid in a way the shop does not record as a refund, or the shop will not refund. No money moves; the failed one
    stays failed (BCP §7) and is no longer offered to retry or to pay outside, so the order offers a fresh
    "Reembolsar" again, bounded by what was paid and not refunded (a failed refund never counted there). Returns the
    failed refund and whether it is newly dropped: a second drop (a double click, a second tab) changes nothing."""
    reason = clean_text(reason, field="reason", max_length=255, required=True)
    redo = _failed_refund_to_redo(
        adjustment_id,
        done=("refund_dropped", "adjustment_id"),  # the drop's event names the failed refund itself
        refusal=_("Só um reembolso que falhou e ainda não foi refeito pode ser descartado."),
    )
    if isinstance(redo, Adjustment):
        return redo, False
    order, failed, _pairs = redo
    brl = format_brl(-failed.amount, language=PT_BR)  # stored in Portuguese, as the other timeline lines
    # Staff's words stay off the buyer's page, as the note of a refund paid outside.
    timeline(
        order,
        "refund_dropped",
        f"Reembolso de {brl} que falhou descartado: {reason}",
        actor=actor,
        internal=True,
        data={"adjustment_id": failed.public_id, "amount": -failed.amount},
    )
    return failed, True


@transaction.atomic
def order_cancel(
    *, order_id: str, reason: str, restock: bool = True, refund: bool = True, actor: str = ""
) -> Adjustment:
    """Cancel what has not shipped: lines shrink to what left the shop, stock comes back, money goes back."""
    reason = clean_text(reason, field="reason", max_length=255, required=True)
    order = lock_order(order_id)
    refuse_if_canceled(order)
    return cancel_locked(order, lock_lines(order), reason=reason, restock=restock, refund=refund, actor=actor)


def cancel_locked(
    order: Order, known: dict[str, OrderLine], *, reason: str, restock: bool, refund: bool, actor: str
) -> Adjustment:
    """`order_cancel` once the order and its lines are locked (the buyer's cancel checks its own rules first)."""
    removed = [(line, line.quantity_total - line.quantity_fulfilled) for line in known.values()]
    removed = [(line, quantity) for line, quantity in removed if quantity > 0]
    if not removed:
        raise OrderError(
            "order_id",
            _("Tudo do pedido #%(number)s já foi enviado: registre uma devolução."),
            code="all_shipped",
            number=order.number,
        )
    anything_shipped = any(line.quantity_fulfilled > 0 for line in known.values())
    for line, quantity in removed:
        line.quantity_total -= quantity
        refresh_line(line)
    OrderLine.objects.bulk_update([line for line, _ in removed], ["quantity_total", "quantity_fulfilled"])
    adjustment = Adjustment.objects.create(
        order=order,
        type=AdjustmentType.CANCELLATION,
        status=AdjustmentStatus.COMPLETED,
        line_items=line_items_json(removed, sign=-1),
        description=reason,
        occurred_at=timezone.now(),
    )
    order.canceled_at = timezone.now()
    refresh_order_status(order, known.values(), empty_status=OrderStatus.CANCELED)
    order.save(update_fields=["status", "canceled_at", "updated_at"])
    # What came back with the carrier was not shipped again, so it is among the units just cancelled.
    returned_to_sender_close(order, why="itens cancelados", actor=actor)
    timeline(
        order,
        "canceled",
        f"Pedido cancelado ({units_text((q, line.title) for line, q in removed)}): {reason}",
        actor=actor,
        data={"adjustment_id": adjustment.public_id},
    )
    if restock:
        send_on_commit(stock_return_requested, order, items=[(line.sku, quantity) for line, quantity in removed])
    # The whole order: its one "cancelado" e-mail. Part of it (the rest of a partly shipped order): an e-mail of
    # this cancellation, naming what was cancelled (a later cancel of the rest still gets its own). Scheduled
    # before the refund: after commit, callbacks run in this order, and an estorno answered at once sends its
    # "Reembolso" e-mail from within the outbox's callback (QA walk: it reached the buyer first).
    whole = order.status == OrderStatus.CANCELED
    schedule_email(order, EmailKind.CANCELED, ref="" if whole else adjustment.public_id)
    if refund and order.paid_amount > 0:
        available = refundable_amount(order)
        # Nothing shipped: everything paid goes back (freight included); else what the buyer paid for what was
        # removed: list price less its share of the order's discount (orders.net_value, the NF-e's vDesc rule).
        value = available
        if anything_shipped:
            in_order = sorted(known.values(), key=lambda line: (line.position, line.id))  # as the NF-e splits it
            bought = [(line.public_id, line.unit_price, line.quantity_original) for line in in_order]
            removed_units = {line.public_id: quantity for line, quantity in removed}
            value = lines_net_value(bought, item_discount(order.totals or []), removed_units)
        amount = min(available, value)
        if amount > 0:
            _create_refund(order, amount=amount, reason=reason, pairs=removed, actor=actor)
    notify_changed(order, "canceled")
    return adjustment


@transaction.atomic
def order_return(
    *,
    order_id: str,
    lines: Sequence[LineQuantity],
    reason: str,
    condition: str = "",
    restock: bool = False,
    refund_amount: int = 0,
    credit_amount: int = 0,
    actor: str = "",
) -> Adjustment:
    """The buyer sent items back: lines shrink, stock optionally returns, optionally money goes back
    (a Pix refund) or a store credit note (vale-troca) is issued. Only delivered units can come back: a parcel
    still on the road is not the buyer's yet (a parcel the carrier brought back is `order_returned_to_sender_open`)."""
    reason = clean_text(reason, field="reason", max_length=255, required=True)
    if condition and condition not in ReturnCondition.values:
        raise OrderError("condition", _("Escolha o estado dos itens."), code="invalid_condition")
    if refund_amount:
        _clean_amount(refund_amount, field="refund_amount")
    if credit_amount:
        _clean_amount(credit_amount, field="credit_amount")
    order = lock_order(order_id)
    known = lock_lines(order)
    if not lines:
        raise OrderError("lines", _("Informe a quantidade de pelo menos um item."), code="lines_required")
    pairs = clean_line_quantities(lines, known)
    for index, (line, quantity) in enumerate(pairs):
        if quantity > line.quantity_delivered:
            raise OrderError(
                f"lines[{index}].quantity",
                format_lazy(
                    "{}{}",
                    ngettext_lazy(
                        "Não é possível devolver %(quantity)s unidade de %(title)s: ",
                        "Não é possível devolver %(quantity)s unidades de %(title)s: ",
                        quantity,
                    ),
                    ngettext_lazy(
                        "só %(sent)s foi entregue ao comprador.",
                        "só %(sent)s foram entregues ao comprador.",
                        line.quantity_delivered,
                    )
                    if line.quantity_delivered
                    else _("nenhuma foi entregue ao comprador ainda."),
                ),
                code="quantity_exceeded",
                quantity=quantity,
                title=line.title,  # named as the order's other texts name a line (product — variant)
                sku=line.sku,
                sent=line.quantity_delivered,
            )
    for line, quantity in pairs:
        line.quantity_total -= quantity
        line.quantity_shipped = max(0, min(line.quantity_shipped - quantity, line.quantity_total))
        line.quantity_delivered = max(0, min(line.quantity_delivered - quantity, line.quantity_total))
        refresh_line(line)
    OrderLine.objects.bulk_update(
        [line for line, _ in pairs], ["quantity_total", "quantity_shipped", "quantity_delivered", "quantity_fulfilled"]
    )
    adjustment = Adjustment.objects.create(
        order=order,
        type=AdjustmentType.RETURN,
        status=AdjustmentStatus.COMPLETED,
        line_items=line_items_json(pairs, sign=-1),
        description=reason,
        condition=condition,
        occurred_at=timezone.now(),
    )
    refresh_order_status(order, known.values(), empty_status=OrderStatus.RETURNED)
    order.save(update_fields=["status", "updated_at"])
    timeline(
        order,
        "returned",
        f"Devolução ({units_text((q, line.title) for line, q in pairs)}): {reason}"
        + (f"; estado: {ReturnCondition(condition).label}" if condition else ""),
        actor=actor,
        data={"adjustment_id": adjustment.public_id, "restock": restock},
    )
    if restock:
        send_on_commit(stock_return_requested, order, items=[(line.sku, quantity) for line, quantity in pairs])
    if refund_amount:
        _create_refund(order, amount=refund_amount, reason=reason, pairs=pairs, actor=actor)
    if credit_amount:
        _create_credit_note(order, amount=credit_amount, reason=reason, actor=actor)
    notify_changed(order, "returned")
    return adjustment


@transaction.atomic
def order_returned_to_sender_open(*, order_id: str, description: str, actor: str = "") -> Adjustment:
    """The carrier brought the parcel back: a pending return adjustment tells staff to decide (ship again,
    refund, or cancel). No money moves and no quantity changes here; the returned_to_sender fulfillment event
    already put the units back as not shipped."""
    order = lock_order(order_id)
    adjustment = Adjustment.objects.create(
        order=order,
        type=AdjustmentType.RETURN,
        status=AdjustmentStatus.PENDING,
        description=clean_text(description, field="description", max_length=255, required=True),
        occurred_at=timezone.now(),
    )
    timeline(
        order,
        "returned_to_sender",
        f"Devolvido ao remetente pela transportadora: {adjustment.description} — decida reenviar ou reembolsar.",
        actor=actor,
        data={"adjustment_id": adjustment.public_id},
    )
    notify_changed(order, "adjustment")
    return adjustment
