"""Cancel and return by the buyer (order page) or the order's platform (BCP extension order_actions), issue 35.

No second engine: a cancel is `order_cancel` (stock back, refund through the outbox) once the rules for a buyer
hold (nothing left the shop); a return request only tracks its steps — staff *receive* it through
`order_return` (quantities, stock) and *refund* it through `order_refund` (the outbox, never more than was paid
and not refunded yet). Each step writes its timeline event and calls `notify_changed`, so the order's platform
gets a signed webhook per step (bcp_app.service.webhooks).

The window (CDC art. 49: 7 days to withdraw from an online purchase; the store may give more, kept in the
order's policy snapshot) runs from the last recorded delivery; while no delivery is recorded it has not begun.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from django.db import transaction
from django.utils import timezone, translation
from django.utils.functional import Promise
from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext_lazy

from kernel.money import PT_BR, format_brl
from orders.errors import OrderError
from orders.labels import CANCELED_BY_BUYER, CANCELED_BY_PLATFORM, units_text
from orders.models import (
    Adjustment,
    EmailKind,
    FulfillmentEvent,
    Order,
    OrderLine,
    OrderStatus,
    PaymentDispute,
    ReturnReason,
    ReturnRequest,
    ReturnStatus,
)
from orders.net_value import item_discount, lines_net_value
from orders.selectors import OrderActions, order_actions, return_requests_of
from orders.services._common import (
    clean_line_quantities,
    clean_text,
    lock_lines,
    lock_order,
    notify_changed,
    refundable_amount,
    schedule_email,
    timeline,
)
from orders.services.adjustments import cancel_locked, order_refund, order_return, refund_paid_outside
from orders.types import LineQuantity

BUYER = "buyer"
PLATFORM = "platform"

# The message of each refusal of order_actions (the codes are the extension's `unavailable_reason` values).
REFUSALS = {
    "order_canceled": _("O pedido #%(number)s está cancelado."),
    "already_shipped": _(
        "O pedido #%(number)s já foi enviado e não pode mais ser cancelado: depois de recebê-lo, solicite a devolução."
    ),
    "nothing_to_cancel": _("O pedido #%(number)s não tem itens a cancelar."),
    # A refund now could pay the buyer twice: the MED dispute may return the same Pix (orders.services.disputes).
    "payment_disputed": _(
        "O Pix do pedido #%(number)s está em contestação (MED): o cancelamento só pode ser feito depois que a loja "
        "responder a disputa."
    ),
    "nothing_to_return": _("O pedido #%(number)s não tem itens entregues que possam ser devolvidos."),
    "return_window_closed": _("O prazo de %(days)s dias para devolver o pedido #%(number)s terminou em %(deadline)s."),
}


def _actor(requested_by: str, platform_id: str) -> str:
    return "comprador" if requested_by == BUYER else f"plataforma {platform_id}"


def _refuse(code: str, order: Order, *, field: str = "order_id", **params: object) -> OrderError:
    return OrderError(field, REFUSALS[code], code=code, number=order.number, **params)


def _actions_locked(
    order: Order, known: dict[str, OrderLine], requests: list[ReturnRequest], now: datetime
) -> OrderActions:
    events = FulfillmentEvent.objects.filter(order=order, type="delivered").only("type", "occurred_at")
    return order_actions(order, lines=known.values(), events=events, requests=requests, now=now)


@transaction.atomic
def order_cancel_requested(
    *, order_id: str, reason: str = "", requested_by: str = BUYER, platform_id: str = ""
) -> Adjustment:
    """The buyer or the order's platform cancels what has not left the shop, through `cancel_locked`: before
    anything shipped, everything paid goes back (freight included); once part shipped, the units still in the shop
    are cancelled and what was paid for them goes back (the shipped part stays: a return once received). Refused
    when everything still in the order has been sent."""
    reason = clean_text(reason, field="reason", max_length=255) or (
        CANCELED_BY_BUYER if requested_by == BUYER else CANCELED_BY_PLATFORM
    )
    order = lock_order(order_id)
    known = lock_lines(order)
    if order.status == OrderStatus.CANCELED:
        raise _refuse("order_canceled", order)
    if not any(line.quantity_total > 0 for line in known.values()):
        raise _refuse("nothing_to_cancel", order)
    if all(line.quantity_fulfilled >= line.quantity_total for line in known.values()):
        raise _refuse("already_shipped", order)
    if order.payment_dispute == PaymentDispute.OPEN:
        raise _refuse("payment_disputed", order)
    actor = _actor(requested_by, platform_id)
    return cancel_locked(order, known, reason=reason, restock=True, refund=True, actor=actor)


def _clean_reason_code(value: object) -> str:
    if not isinstance(value, str) or value not in ReturnReason.values:
        # Agents meet the codes in the schema first (pydantic); this is what a person reads on the order page.
        raise OrderError("reason_code", _("Escolha o motivo da devolução."), code="bad_reason")
    return value


def _too_many_to_return(quantity: int, left: int) -> Promise:
    """The refusal of `quantity` units when `left` delivered ones are not in a request yet: two counts, so two
    plural choices; none left (not delivered yet, or all asked already) says why instead of "só 0". The line is
    named by its title (product — variant), as the order's other texts name it, not by its SKU."""
    asked = ngettext_lazy(
        "Não é possível devolver %(quantity)s unidade de %(title)s: ",
        "Não é possível devolver %(quantity)s unidades de %(title)s: ",
        quantity,
    )
    if not left:
        return format_lazy(
            "{}{}",
            asked,
            _("nenhuma unidade recebida está livre para devolução (ainda não foi entregue ou já foi pedida)."),
        )
    free = ngettext_lazy(
        "só %(left)s unidade recebida ainda não foi pedida em devolução.",
        "só %(left)s unidades recebidas ainda não foram pedidas em devolução.",
        left,
    )
    return format_lazy("{}{}", asked, free)


@transaction.atomic
def return_request_create(
    *,
    order_id: str,
    lines: Sequence[LineQuantity],
    reason_code: str,
    reason: str = "",
    requested_by: str = BUYER,
    platform_id: str = "",
    request_key: str = "",
    now: datetime | None = None,
) -> ReturnRequest:
    """Ask to return delivered units within the window. `request_key`: a replay (the order page's nonce, an
    agent's idempotency key) returns the first request and adds nothing."""
    reason_code = _clean_reason_code(reason_code)
    reason = clean_text(reason, field="reason", max_length=500)
    if reason_code == ReturnReason.OTHER and not reason:
        # The buyer's page shows this above the form: it names the box to fill, not just "Campo obrigatório" (QA).
        raise OrderError("reason", _("Conte o que aconteceu: com “Outro motivo” a descrição é obrigatória."),
                         code="required")  # fmt: skip
    request_key = clean_text(request_key, field="request_key", max_length=64)
    order = lock_order(order_id)
    requests = return_requests_of(order)  # one read: the replay check and the quantities already asked
    existing = next((r for r in requests if request_key and r.request_key == request_key), None)
    if existing is not None:
        return existing
    known = lock_lines(order)
    if not lines:
        raise OrderError("lines", _("Informe a quantidade de pelo menos um item."), code="lines_required")
    pairs = clean_line_quantities(lines, known)
    now = now or timezone.now()
    actions = _actions_locked(order, known, requests, now)
    if actions.return_refusal == "return_window_closed" and actions.return_deadline is not None:
        raise _refuse(
            "return_window_closed",
            order,
            days=actions.window_days,
            deadline=timezone.localtime(actions.return_deadline).strftime("%d/%m/%Y"),
        )
    if actions.return_refusal == "order_canceled":
        raise _refuse("order_canceled", order)
    if not any(line.quantity_delivered for line in known.values()):
        # Nothing delivered yet (shipped and on the road counts as nothing): the code the order's `order_actions`
        # gives (`return.unavailable_reason`), not a quantity error on the first line (QA walk). Units delivered
        # but already asked keep the line's message.
        raise _refuse("nothing_to_return", order)
    for index, (line, quantity) in enumerate(pairs):
        left = actions.returnable.get(line.public_id, 0)
        if quantity > left:
            raise OrderError(
                f"lines[{index}].quantity",
                _too_many_to_return(quantity, left),
                code="quantity_exceeded",
                quantity=quantity,
                title=line.title,
                sku=line.sku,
                left=left,
            )
    request = ReturnRequest.objects.create(
        order=order,
        reason_code=reason_code,
        reason=reason,
        line_items=[{"id": line.public_id, "quantity": quantity} for line, quantity in pairs],
        requested_by=requested_by,
        platform_id=platform_id,
        request_key=request_key,
    )
    items = units_text((q, line.title) for line, q in pairs)
    timeline(
        order,
        "return_requested",
        f"Devolução solicitada ({items}): {ReturnReason(reason_code).label}" + (f" — {reason}" if reason else ""),
        actor=_actor(requested_by, platform_id),
        data={"return_id": request.public_id},
    )
    # The buyer hears that the request arrived and what comes next (whoever asked: the buyer or their agent).
    schedule_email(order, EmailKind.RETURN_UPDATE, ref=f"{request.public_id}:requested")
    notify_changed(order, "return_requested")
    return request


@dataclass(frozen=True)
class ReturnStep:
    """A staff step's outcome: the request after it, and whether this call moved it. `changed=False`: the locked
    row was already past the step (a second click, a second tab), so nothing was written — the caller says so
    instead of repeating the success (a status read before the call cannot tell two simultaneous clicks apart)."""

    request: ReturnRequest
    changed: bool


def _pt(text: Promise | str) -> str:
    with translation.override(PT_BR):
        return str(text)


def _lock_request(return_id: str) -> tuple[Order, ReturnRequest]:
    found = ReturnRequest.objects.filter(public_id=return_id).values_list("order__public_id", flat=True).first()
    if not isinstance(return_id, str) or found is None:
        raise OrderError("return_id", _("Devolução não encontrada."), code="not_found")
    order = lock_order(found)  # the order first, as every order service
    return order, ReturnRequest.objects.select_for_update().get(public_id=return_id)


def _wrong_step(request: ReturnRequest, wanted: str) -> OrderError:
    return OrderError(
        "return_id",
        _("A devolução %(id)s está “%(status)s”; este passo pede “%(wanted)s”."),
        code="invalid_return_status",
        id=request.public_id,
        status=ReturnStatus(request.status).label,
        wanted=ReturnStatus(wanted).label,
    )


def _items_text(request: ReturnRequest, order: Order) -> str:
    skus = dict(OrderLine.objects.filter(order=order).values_list("public_id", "sku"))
    return ", ".join(f"{item['quantity']}× {skus.get(item['id'], item['id'])}" for item in request.line_items)


@transaction.atomic
def return_request_approve(*, return_id: str, note: str = "", actor: str = "") -> ReturnStep:
    """Staff accept the request: the buyer sends the items back. A second approval changes nothing."""
    note = clean_text(note, field="note", max_length=255)
    order, request = _lock_request(return_id)
    if request.status == ReturnStatus.APPROVED:
        return ReturnStep(request, changed=False)
    if request.status != ReturnStatus.REQUESTED:
        raise _wrong_step(request, ReturnStatus.REQUESTED)
    request.status = ReturnStatus.APPROVED
    request.staff_note = note or request.staff_note
    request.save(update_fields=["status", "staff_note", "updated_at"])
    timeline(order, "return_approved", f"Devolução aprovada ({_items_text(request, order)})" + (
        f": {note}" if note else "."), actor=actor, data={"return_id": request.public_id})  # fmt: skip
    schedule_email(order, EmailKind.RETURN_UPDATE, ref=f"{request.public_id}:approved")  # send the items back
    notify_changed(order, "return_approved")
    return ReturnStep(request, changed=True)


@transaction.atomic
def return_request_reject(*, return_id: str, note: str, actor: str = "") -> ReturnStep:
    """Staff refuse the request, saying why (the buyer and the platform read it). A second refusal changes
    nothing."""
    note = clean_text(note, field="note", max_length=255, required=True)
    order, request = _lock_request(return_id)
    if request.status == ReturnStatus.REJECTED:
        return ReturnStep(request, changed=False)
    if request.status not in (ReturnStatus.REQUESTED, ReturnStatus.APPROVED):
        raise _wrong_step(request, ReturnStatus.REQUESTED)
    request.status = ReturnStatus.REJECTED
    request.staff_note = note
    request.save(update_fields=["status", "staff_note", "updated_at"])
    timeline(order, "return_rejected", f"Devolução recusada: {note}", actor=actor,
             data={"return_id": request.public_id})  # fmt: skip
    schedule_email(order, EmailKind.RETURN_UPDATE, ref=f"{request.public_id}:rejected")
    notify_changed(order, "return_rejected")
    return ReturnStep(request, changed=True)


# The statuses a received return can be in: a second "Itens recebidos" changes nothing.
_RECEIVED_ALREADY = (
    ReturnStatus.RECEIVED,
    ReturnStatus.REFUND_PENDING,
    ReturnStatus.REFUNDED,
    ReturnStatus.REFUND_FAILED,
)


@transaction.atomic
def return_request_receive(*, return_id: str, restock: bool = True, actor: str = "") -> ReturnStep:
    """The items came back: the return is recorded in the ledger by `order_return` (lines shrink, stock
    optionally returns); the money is the next step. A second receipt changes nothing."""
    order, request = _lock_request(return_id)
    if request.status in _RECEIVED_ALREADY:
        return ReturnStep(request, changed=False)
    if request.status != ReturnStatus.APPROVED:
        raise _wrong_step(request, ReturnStatus.APPROVED)
    reason = f"{ReturnReason(request.reason_code).label}" + (f": {request.reason}" if request.reason else "")
    adjustment = order_return(
        order_id=order.public_id,
        lines=[LineQuantity(line_id=item["id"], quantity=item["quantity"]) for item in request.line_items],
        reason=reason[:255],
        restock=restock,
        actor=actor,
    )
    request.status = ReturnStatus.RECEIVED
    request.return_adjustment_id = adjustment.public_id
    request.save(update_fields=["status", "return_adjustment_id", "updated_at"])
    # order_return announced "returned"; the request's own step is in the same order snapshot.
    return ReturnStep(request, changed=True)


def return_units_net_values(order: Order, returnable: dict[str, int]) -> dict[str, list[int]]:
    """What the buyer paid for 0, 1, … `returnable[line id]` units of each line (list price less their share of
    the order's discounts, `orders.net_value`): the staff return form suggests the refund of the units marked."""
    lines = list(
        OrderLine.objects.filter(order=order)
        .order_by("position", "id")
        .values_list("public_id", "unit_price", "quantity_original")
    )
    discount = item_discount(order.totals or [])
    return {
        line_id: [lines_net_value(lines, discount, {line_id: units}) for units in range(count + 1)]
        for line_id, count in returnable.items()
    }


# Returns the buyer is not to blame for: once every item is back, the freight paid to receive them goes back too
# (CDC art. 18 §1 II: "restituição imediata da quantia paga"), as for a withdrawal (art. 49).
_FREIGHT_BACK_REASONS = frozenset(
    {ReturnReason.CHANGED_MIND, ReturnReason.DEFECTIVE, ReturnReason.DAMAGED, ReturnReason.WRONG_ITEM}
)


def return_refund_includes_freight(request: ReturnRequest, order: Order) -> bool:
    """Whether the default refund of a received return is all that was paid: every item came back (the order is
    `returned`) for a withdrawal or a fault of the shop's (defect, damage, wrong item). A partial return keeps
    the freight (it carried what the buyer kept); "Outro motivo" leaves it to staff (the amount is editable)."""
    return request.reason_code in _FREIGHT_BACK_REASONS and order.status == OrderStatus.RETURNED


def return_refund_suggestion(request: ReturnRequest, order: Order) -> int:
    """What a received return gives back by default: what the buyer paid for the items (list price less their
    share of the order's discounts), or all that was paid when the freight goes back too
    (`return_refund_includes_freight`). Never more than can still be refunded."""
    lines = list(
        OrderLine.objects.filter(order=order)
        .order_by("position", "id")
        .values_list("public_id", "unit_price", "quantity_original")
    )
    quantities: dict[str, int] = {}
    for item in request.line_items:
        quantities[item["id"]] = quantities.get(item["id"], 0) + int(item["quantity"])
    value = lines_net_value(lines, item_discount(order.totals or []), quantities)
    available = refundable_amount(order)
    if return_refund_includes_freight(request, order):
        value = available
    return min(value, available)


@transaction.atomic
def return_request_refund_offline(*, return_id: str, means: str, note: str = "", actor: str = "") -> ReturnStep:
    """The PSP refused the return's refund (`refund_failed`) and staff paid the buyer outside the shop (transfer,
    cash, Pix from the bank app): the same amount is recorded as a refund paid outside
    (adjustments.refund_paid_outside, the offline path of orders paid outside the shop) and the return turns
    `refunded`. Nothing goes to the PSP. A second one (a double click) changes nothing."""
    order, request = _lock_request(return_id)
    if request.status == ReturnStatus.REFUNDED:
        return ReturnStep(request, changed=False)
    if request.status != ReturnStatus.REFUND_FAILED:
        raise _wrong_step(request, ReturnStatus.REFUND_FAILED)
    refund_paid_outside(
        order,
        amount=request.refund_amount,
        reason=f"Devolução: {_pt(ReturnReason(request.reason_code).label)}",
        pairs=clean_line_quantities(
            [LineQuantity(line_id=item["id"], quantity=item["quantity"]) for item in request.line_items],
            lock_lines(order),
        ),
        means=means,
        note=note,
        actor=actor,
        for_return=request,
    )
    return ReturnStep(request, changed=True)


@transaction.atomic
def return_request_refund(*, return_id: str, amount: int | None = None, actor: str = "") -> ReturnStep:
    """Money back for a received return through `order_refund` (the outbox; at most what was paid and not
    refunded yet: `refund_exceeds_paid` otherwise). The request is `refund_pending` until the refund adjustment
    completes (`refunded`) or fails (`refund_failed`, adjustments._return_follows_refund); a failed one may be
    refunded again. No money to give back closes it `refunded` at once. A second refund of the same request
    (pending or done) changes nothing."""
    order, request = _lock_request(return_id)
    if request.status in (ReturnStatus.REFUNDED, ReturnStatus.REFUND_PENDING):
        return ReturnStep(request, changed=False)
    if request.status not in (ReturnStatus.RECEIVED, ReturnStatus.REFUND_FAILED):
        raise _wrong_step(request, ReturnStatus.RECEIVED)
    if amount is None:
        amount = return_refund_suggestion(request, order)
    brl = format_brl(amount, language=PT_BR)  # stored in Portuguese
    request.refund_amount = amount
    if amount:
        refund = order_refund(
            order_id=order.public_id,
            amount=amount,
            # The buyer reads it as the refund e-mail's "Motivo": the reason, not the request's code (QA walk);
            # stored in Portuguese, as the shop's other stored reasons.
            reason=f"Devolução: {_pt(ReturnReason(request.reason_code).label)}",
            lines=[LineQuantity(line_id=item["id"], quantity=item["quantity"]) for item in request.line_items],
            actor=actor,
        )
        request.refund_adjustment_id = refund.public_id
        request.status = ReturnStatus.REFUND_PENDING  # the PSP (or staff, paid outside the shop) has not answered
        message = f"Devolução {request.public_id}: reembolso de {brl} solicitado."
    else:
        request.status = ReturnStatus.REFUNDED
        message = f"Devolução {request.public_id} encerrada: {brl} a devolver."
    request.save(update_fields=["status", "refund_amount", "refund_adjustment_id", "updated_at"])
    timeline(order, "return_refunded", message, actor=actor,
             data={"return_id": request.public_id, "amount": amount})  # fmt: skip
    if not amount:
        notify_changed(order, "return_refunded")  # order_refund announced the refund otherwise
    return ReturnStep(request, changed=True)


@transaction.atomic
def return_request_refund_retry(*, return_id: str, actor: str = "") -> ReturnStep:
    """The PSP refused the return's refund (`refund_failed`) and staff ask the same refund again: the amount the
    failed one asked (`refund_amount`), through `return_request_refund` (the outbox; at most what was paid and not
    refunded). The failed refund adjustment stays failed. A second retry (pending or done) changes nothing."""
    _order, request = _lock_request(return_id)  # the order first, as every step
    if request.status in (ReturnStatus.REFUNDED, ReturnStatus.REFUND_PENDING):
        return ReturnStep(request, changed=False)
    if request.status != ReturnStatus.REFUND_FAILED:
        raise _wrong_step(request, ReturnStatus.REFUND_FAILED)
    return return_request_refund(return_id=return_id, amount=request.refund_amount, actor=actor)
