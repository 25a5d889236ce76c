"""What an order amounts to now, in words a buyer reads: for the e-mails and the permalink page alike.

The placed totals (items, discounts, shipping, total) never change (BCP §6); what happened since — cancelled
items, refunds done or under way — is added as rows after them, so the money shown is always the truth.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.utils.translation import gettext as _

from kernel.money import format_brl
from orders.labels import line_status_label, order_status_label, total_label
from orders.models import (
    Adjustment,
    AdjustmentStatus,
    AdjustmentType,
    FulfillmentEvent,
    FulfillmentEventType,
    FulfillmentExpectation,
    FulfillmentMethod,
    Order,
    OrderLine,
    OrderStatus,
)


@dataclass(frozen=True)
class MoneyRow:
    # subtotal, discount, fulfillment, total, …, then paid, refunded, refund_pending, refund_failed, refund_dropped, net
    kind: str
    label: str
    amount: int  # centavos, signed as shown (money back is negative)


def money_rows(order: Order, adjustments: list[Adjustment], *, staff: bool = False) -> list[MoneyRow]:
    """The order's totals lines, then what was paid, refunded (done / under way) and what it comes to.

    `staff`: the admin's "Valores" also names the refunds the provider refused (`refund_failed`, money that did not
    go back: redo it or record one made outside) and those staff then dropped (`refund_dropped`, not to be redone),
    shown without a sign and left out of the final value, which is what the buyer's page says too."""
    rows = [MoneyRow(str(entry["type"]), total_label(entry), int(entry["amount"])) for entry in order.totals]
    refunds = [a for a in adjustments if a.type == AdjustmentType.REFUND]
    done = sum(-a.amount for a in refunds if a.status == AdjustmentStatus.COMPLETED)
    pending = sum(-a.amount for a in refunds if a.status == AdjustmentStatus.PENDING)
    refused = [a for a in refunds if a.status == AdjustmentStatus.FAILED] if staff else []
    failed = sum(-a.amount for a in refused if not is_dropped(a))
    dropped = sum(-a.amount for a in refused if is_dropped(a))
    if order.paid_amount and (done or pending or failed or dropped):
        rows.append(MoneyRow("paid", _("Pago"), order.paid_amount))
    if done:
        rows.append(MoneyRow("refunded", _("Reembolsado"), -done))
    if pending:
        rows.append(MoneyRow("refund_pending", _("Reembolso em andamento"), -pending))
    if failed:
        rows.append(MoneyRow("refund_failed", _("Reembolso com falha (não devolvido)"), failed))
    if dropped:
        rows.append(MoneyRow("refund_dropped", _("Reembolso recusado descartado (não devolvido)"), dropped))
    if order.paid_amount and (done or pending or failed or dropped):
        rows.append(MoneyRow("net", _("Valor final do pedido"), order.paid_amount - done - pending))
    return rows


def is_dropped(adjustment: Adjustment) -> bool:
    """A refused refund staff chose not to redo: `dropped` is read with the adjustments by
    `orders.selectors.adjustments_with_drops` (other reads leave it out: nothing there tells the two apart)."""
    return bool(getattr(adjustment, "dropped", False))


def redone_refunds(adjustments: list[Adjustment]) -> set[int]:
    """The failed refunds that later refunds (pending or done) made up for: the buyer's page no longer says "a loja
    refaz" of them. Oldest first, each failed amount is covered by what the later refunds have left; a dropped one
    (`is_dropped`) is owed no more, so it takes nothing from them."""
    refunds = [a for a in adjustments if a.type == AdjustmentType.REFUND]
    left = {a.pk: -a.amount for a in refunds if a.status != AdjustmentStatus.FAILED}
    redone: set[int] = set()
    for index, failed in enumerate(refunds):
        if failed.status != AdjustmentStatus.FAILED or is_dropped(failed):
            continue
        owed = -failed.amount
        for later in refunds[index + 1 :]:
            taken = min(owed, left.get(later.pk, 0))
            left[later.pk] = left.get(later.pk, 0) - taken
            owed -= taken
        if owed <= 0:
            redone.add(failed.pk)
    return redone


def installments_text(order: Order) -> str:
    """The card plan in words ("3x de R$ 33,33 no cartão", the first named when it carries remainder cents)."""
    if order.payment_type != "card":
        return ""
    if order.installments <= 1 or not order.installment_amount:
        return _("cartão à vista")
    first = order.first_installment or order.installment_amount
    if first != order.installment_amount:
        return _("%(count)dx no cartão: 1ª de %(first)s e %(rest)dx de %(amount)s") % {
            "count": order.installments,
            "first": format_brl(first),
            "rest": order.installments - 1,
            "amount": format_brl(order.installment_amount),
        }
    return _("%(count)dx de %(amount)s no cartão") % {
        "count": order.installments,
        "amount": format_brl(order.installment_amount),
    }


def pickup_hours(order: Order) -> str:
    return str((order.destination or {}).get("opening_hours", ""))


def all_delivered(lines: list[OrderLine]) -> bool:
    """Every item still in the order was delivered (or picked up): only then "your order was delivered"."""
    live = [line for line in lines if line.quantity_total]
    return bool(live) and all(line.quantity_delivered >= line.quantity_total for line in live)


def is_closed(order: Order) -> bool:
    """Cancelled: no "preparing", no delivery estimate."""
    return order.status == OrderStatus.CANCELED


def ready_for_pickup(order: Order, events: list[FulfillmentEvent]) -> bool:
    """A pickup order the store said is ready ("Pronto para retirada"), not picked up, cancelled or returned."""
    return (
        order.fulfillment_method == FulfillmentMethod.PICKUP
        and order.status == OrderStatus.PLACED
        and any(event.type == FulfillmentEventType.READY_FOR_PICKUP for event in events)
    )


def came_back_lines(order: Order, adjustments: list[Adjustment], events: list[FulfillmentEvent]) -> set[str]:
    """Ids of the lines whose parcel the carrier brought back and the store has not settled yet (sent again or
    cancelled: `returned_to_sender_close`); empty when nothing is waiting in the shop."""
    waiting = order.status != OrderStatus.CANCELED and any(
        a.type == AdjustmentType.RETURN and a.status == AdjustmentStatus.PENDING for a in adjustments
    )
    if not waiting:
        return set()
    return {i["id"] for e in events if e.type == FulfillmentEventType.RETURNED_TO_SENDER for i in e.line_items}


def order_words(order: Order, *, ready: bool, came_back: bool = False) -> str:
    """The order's state for the buyer: its status, "Pronto para retirada" once the store said so, or "Voltou
    para a loja" while a parcel the carrier brought back waits (the status alone said "Pedido recebido")."""
    if came_back:
        return _("Voltou para a loja")
    return _("Pronto para retirada") if ready else order_status_label(order.status)


def lines_gone(adjustments: list[Adjustment]) -> tuple[set[str], set[str]]:
    """Ids of the lines that (returned) had units come back in a registered return, and (canceled) lost units to a
    cancellation and none to a return: what `line_words` says instead of "Removido"."""

    def ids(kind: str, *, completed: bool = False) -> set[str]:
        return {
            str(item["id"])
            for a in adjustments
            if a.type == kind and (not completed or a.status == AdjustmentStatus.COMPLETED)
            for item in a.line_items or ()
        }

    returned = ids(AdjustmentType.RETURN, completed=True)
    return returned, ids(AdjustmentType.CANCELLATION) - ids(AdjustmentType.RETURN)


def line_words_for_staff(line: OrderLine, order: Order, adjustments: list[Adjustment]) -> str:
    """A line's state as the order page's items, the CSV export and the buyer's page all say it (the admin read
    "Removido" for a line the buyer's page called "Cancelado", the export "Removido" for one the admin called
    "Devolvido"; QA walk)."""
    returned, canceled = lines_gone(adjustments)
    return line_words(line, order, canceled=line.public_id in canceled, returned=line.public_id in returned)


def line_words(
    line: OrderLine,
    order: Order,
    *,
    ready: bool = False,
    came_back: bool = False,
    canceled: bool = False,
    returned: bool = False,
) -> str:
    """A line's state for the buyer, one step past the BCP line status: delivered, ready to be picked up, back at
    the store with the carrier's returned parcel, cancelled (`canceled`: every unit it lost was cancelled, none
    returned: the store's partial cancel reads as the buyer's own, not "Removido") or returned (`returned`: units
    of it came back in a registered return; QA walk: the buyer's returned dress read "Removido")."""
    if line.quantity_total == 0 and line.quantity_shipped == 0 and (order.status == OrderStatus.CANCELED or canceled):
        return _("Cancelado")
    if line.quantity_total == 0 and returned:
        return _("Devolvido")
    if order.fulfillment_method != "pickup" and line.quantity_total and line.quantity_delivered >= line.quantity_total:
        return _("Entregue")
    if came_back and line.quantity_fulfilled < line.quantity_total:
        return _("Voltou para a loja")
    if ready and line.quantity_total and line.quantity_fulfilled < line.quantity_total:
        return _("Pronto para retirada")
    return line_status_label(line.status, order.fulfillment_method)


def current_tracking(shipment: FulfillmentEvent, events: list[FulfillmentEvent]) -> FulfillmentEvent:
    """The event holding a shipment's tracking code now: its latest correction (`tracking_corrected`, an
    event of its own that names the shipment), or the shipment itself."""
    corrections = [e for e in events if e.corrects_id == shipment.pk]
    return max(corrections, key=lambda e: (e.occurred_at, e.pk)) if corrections else shipment


def superseded_tracking(events: list[FulfillmentEvent]) -> set[int]:
    """Primary keys of the shipments and corrections whose code a later correction replaced."""
    by_pk = {event.pk: event for event in events}
    corrected = {event.corrects_id for event in events if event.corrects_id in by_pk}
    current = {current_tracking(by_pk[pk], events).pk for pk in corrected}
    return corrected | {event.pk for event in events if event.corrects_id in corrected and event.pk not in current}


# By an expectation's public id: (its items still in it, its items cancelled since).
ItemsNow = dict[str, tuple[list[dict[str, Any]], list[dict[str, Any]]]]


def expectation_items_now(expectations: list[FulfillmentExpectation], adjustments: list[Adjustment]) -> ItemsNow:
    """Each expectation's items as the order is now, by its public id: (still in it, cancelled since).

    Expectations keep the plan as placed (BCP §7 expectations are only split, merged or re-dated); the units a
    cancellation took off are taken from the last expectation back, as what was planned later leaves the shop last.
    """
    cancelled: dict[str, int] = {}
    for adjustment in adjustments:
        if adjustment.type == AdjustmentType.CANCELLATION:
            for item in adjustment.line_items or ():
                cancelled[str(item["id"])] = cancelled.get(str(item["id"]), 0) + abs(int(item["quantity"]))
    result: ItemsNow = {}
    for expectation in reversed(expectations):
        kept: list[dict[str, Any]] = []
        gone: list[dict[str, Any]] = []
        for item in expectation.line_items:
            line_id, quantity = str(item["id"]), int(item["quantity"])
            taken = min(quantity, cancelled.get(line_id, 0))
            cancelled[line_id] = cancelled.get(line_id, 0) - taken
            if quantity - taken:
                kept.append({"id": line_id, "quantity": quantity - taken})
            if taken:
                gone.append({"id": line_id, "quantity": taken})
        result[expectation.public_id] = (kept, gone)
    return result


def expectation_units_to_send(
    expectations: list[FulfillmentExpectation],
    adjustments: list[Adjustment],
    lines: list[OrderLine],
    *,
    now: ItemsNow | None = None,
) -> dict[str, dict[str, int]]:
    """What each expectation still has to send (or hand over at pickup), by its public id: {line id: units}.

    `expectation_items_now` keeps the plan less the cancelled units; a unit shipped or picked up is in it still, yet
    it is not left to send. Each line's units still in the shop (`quantity_total − quantity_fulfilled`) are what was
    planned last (the earlier plans left first), so they are given to the expectations from the last one back.
    `now`: `expectation_items_now` of the same lists when the caller has it already (it walks every cancellation)."""
    if now is None:
        now = expectation_items_now(expectations, adjustments)
    waiting = {line.public_id: max(0, line.quantity_total - line.quantity_fulfilled) for line in lines}
    result: dict[str, dict[str, int]] = {}
    for expectation in reversed(expectations):
        units: dict[str, int] = {}
        for item in now[expectation.public_id][0]:
            line_id = str(item["id"])
            take = min(int(item["quantity"]), waiting.get(line_id, 0))
            if take:
                units[line_id] = take
                waiting[line_id] -= take
        result[expectation.public_id] = units
    return result


@dataclass(frozen=True)
class ExpectationProgress:
    """Where an expectation's units are, by line id: promised now (less cancelled units), still in the shop, and
    handed to the buyer (delivered, picked up)."""

    planned: dict[str, int]
    to_send: dict[str, int]
    delivered: dict[str, int]


def expectation_progress(
    expectations: list[FulfillmentExpectation],
    adjustments: list[Adjustment],
    lines: list[OrderLine],
    *,
    now: ItemsNow | None = None,
) -> dict[str, ExpectationProgress]:
    """Each expectation's progress by its public id. What still waits is given from the last expectation back
    (`expectation_units_to_send`), so what left came from the earlier ones: the units delivered are given to them
    from the first one on, each up to what left from it. `now`: as in `expectation_units_to_send`."""
    if now is None:
        now = expectation_items_now(expectations, adjustments)
    to_send = expectation_units_to_send(expectations, adjustments, lines, now=now)
    arrived = {line.public_id: line.quantity_delivered for line in lines}
    # A registered return takes delivered units off the line (`order_return` accepts only those): they arrived once,
    # and counted as still travelling they would read "A caminho" again on the buyer's page (QA walk).
    for adjustment in adjustments:
        if adjustment.type == AdjustmentType.RETURN and adjustment.status == AdjustmentStatus.COMPLETED:
            for item in adjustment.line_items or ():
                line_id = str(item["id"])
                arrived[line_id] = arrived.get(line_id, 0) + abs(int(item["quantity"]))
    result: dict[str, ExpectationProgress] = {}
    for expectation in expectations:
        planned = {str(item["id"]): int(item["quantity"]) for item in now[expectation.public_id][0]}
        waiting = to_send[expectation.public_id]
        delivered: dict[str, int] = {}
        for line_id, units in planned.items():
            take = min(units - waiting.get(line_id, 0), arrived.get(line_id, 0))
            if take > 0:
                delivered[line_id] = take
                arrived[line_id] -= take
        result[expectation.public_id] = ExpectationProgress(planned=planned, to_send=waiting, delivered=delivered)
    return result
