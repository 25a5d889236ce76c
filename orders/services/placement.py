"""Order placement from a completed checkout (contracts.md) and payment confirmation."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, connection, transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from kernel.money import PT_BR, format_brl
from kernel.rows import Update, insert_together, new_row, update_then_insert
from orders.arrival import days_from_payment
from orders.errors import OrderError
from orders.models import (
    FIRST_NUMBER,
    DeliveryDaysFrom,
    EmailKind,
    FulfillmentExpectation,
    Order,
    OrderEvent,
    OrderLine,
    OrderNumberCounter,
    PaymentStatus,
    PaymentType,
)
from orders.selectors import order_bcp_json_of
from orders.services._common import (
    MAX_QUANTITY,
    changed_outbox_row,
    clean_text,
    lock_order,
    notify_changed,
    refresh_payment_status,
    schedule_email,
    timeline,
    with_relations,
)
from orders.services.outbox import outbox_enqueue
from orders.types import PlacedCheckout

LANGUAGES = {"pt-br": "pt-br", "pt": "pt-br", "en": "en"}
CURRENCY_RE = re.compile(r"^[A-Z]{3}$")
METHODS = {"shipping", "pickup", "digital"}


COUNTER_KEY = "orders"


def _next_number() -> int:
    """The next order number, drawn inside the placement's transaction from the store's counter row: only
    placed orders get a number and a rolled-back placement gives its number back, so there are no gaps (issue
    33). The row stays locked until the placement commits: placements take their numbers one at a time, in a
    statement at the end of a short transaction. One statement whatever the table holds: an upsert whose insert
    (an empty table: a new database, or one a test flushed) seeds the counter from the highest number already
    given (the unique index on the number answers MAX at once)."""
    with connection.cursor() as cursor:
        cursor.execute(_draw_sql(), [COUNTER_KEY, FIRST_NUMBER - 1])
        row = cursor.fetchone()
    return int(row[0])


def order_number_draw(source: str) -> tuple[str, list[object]]:
    """`_next_number`'s draw as a data-modifying statement for a caller's CTE (`kernel.rows.Then`): the next number,
    drawn only when the CTE `source` has a row (a card payment inserted in the same statement), else nothing drawn.
    Its value goes to `order_draft_from_checkout(number=…)` in the same transaction, so a rolled-back placement
    gives it back as before (issue 33: no gaps); one statement fewer on every card sale (issue 34)."""
    return _draw_sql(f" WHERE EXISTS (SELECT 1 FROM {source})"), [COUNTER_KEY, FIRST_NUMBER - 1]  # noqa: S608


def _draw_sql(condition: str = " WHERE TRUE") -> str:
    """The counter's upsert (params: key, the number before the first); `condition` filters its one row (SQLite
    needs a WHERE in an upsert's SELECT to parse ON CONFLICT as the upsert's)."""
    table = connection.ops.quote_name(OrderNumberCounter._meta.db_table)
    orders = connection.ops.quote_name(Order._meta.db_table)
    return (
        f"INSERT INTO {table} (key, last) SELECT %s, (SELECT COALESCE(MAX(number), %s) FROM {orders}) + 1{condition}"  # noqa: S608
        f" ON CONFLICT (key) DO UPDATE SET last = {table}.last + 1 RETURNING last"
    )  # constant SQL, values bound


def _validate(checkout: PlacedCheckout) -> None:
    if not isinstance(checkout, PlacedCheckout):
        raise OrderError("checkout", _("Dados de checkout inválidos."), code="bad_checkout")
    clean_text(checkout.checkout_id, field="checkout_id", max_length=64, required=True)
    if not CURRENCY_RE.match(checkout.currency or ""):
        raise OrderError("currency", _("Use um código de moeda ISO 4217, como BRL."), code="bad_currency")
    if not checkout.lines:
        raise OrderError("lines", _("Um pedido precisa de pelo menos um item."), code="lines_required")
    seen: set[str] = set()
    for index, line in enumerate(checkout.lines):
        where = f"lines[{index}]"
        clean_text(line.line_id, field=f"{where}.line_id", max_length=64, required=True)
        if line.line_id in seen:
            raise OrderError(f"{where}.line_id", _("Item repetido."), code="duplicate_line")
        seen.add(line.line_id)
        clean_text(line.title, field=f"{where}.title", max_length=10_000, required=True)  # truncated below
        clean_text(line.sku, field=f"{where}.sku", max_length=64, required=True)
        if isinstance(line.unit_price, bool) or not isinstance(line.unit_price, int) or line.unit_price < 0:
            raise OrderError(f"{where}.unit_price", _("Informe o preço em centavos, a partir de 0."), code="bad_amount")
        quantity = line.quantity
        if isinstance(quantity, bool) or not isinstance(quantity, int) or not 1 <= quantity <= MAX_QUANTITY:
            raise OrderError(
                f"{where}.quantity", _("Informe uma quantidade inteira, a partir de 1."), code="bad_quantity"
            )
    totals = list(checkout.totals)
    if sum(1 for entry in totals if entry[0] == "total") != 1:
        raise OrderError("totals", _("Os totais precisam de exatamente uma linha “total”."), code="bad_totals")
    for index, entry in enumerate(totals):
        if len(entry) != 3 or not isinstance(entry[1], int) or isinstance(entry[1], bool):
            raise OrderError(f"totals[{index}]", _("Use (tipo, valor em centavos, texto)."), code="bad_totals")
    if checkout.fulfillment_method and checkout.fulfillment_method not in METHODS:
        raise OrderError("fulfillment_method", _("Use shipping, pickup ou digital."), code="bad_fulfillment_method")
    if not isinstance(checkout.paid_amount, int) or checkout.paid_amount < 0:
        raise OrderError("paid_amount", _("Informe o valor pago em centavos, a partir de 0."), code="bad_amount")


def _totals_json(checkout: PlacedCheckout) -> list[dict[str, object]]:
    result: list[dict[str, object]] = []
    for kind, amount, display_text in checkout.totals:
        entry: dict[str, object] = {"type": kind, "amount": amount}
        if display_text:
            entry["display_text"] = display_text
        result.append(entry)
    return result


@dataclass(frozen=True)
class OrderDraft:
    """The order of a completed checkout built in memory (public id, permalink, number, presented BCP JSON):
    the caller can write what refers to it before the order itself (`order_place_draft`)."""

    order: Order
    lines: list[OrderLine]
    expectation: FulfillmentExpectation


def order_draft_from_checkout(*, checkout: PlacedCheckout, number: int | None = None) -> OrderDraft:
    """Validate and build the order; nothing is written but its number, drawn now unless `number` is one the caller
    drew in this transaction (`order_number_draw`)."""
    _validate(checkout)
    return _build(checkout, number)


def order_place_draft(draft: OrderDraft, *, only_if: Update | None = None) -> Order | None:
    """Write a draft: the caller holds the checkout's row lock, or completes it by a conditional UPDATE, so no
    other placement of it can run (no savepoint to catch a concurrent one).

    `only_if`: that conditional UPDATE (the checkout completed while it still waits for this payment), run in
    the order's own statement (`kernel.rows.update_then_insert`); None, and nothing written, when it matched
    no row. The order returned does not remember its relations as prefetched (the caller has them in the draft;
    the checkout's placement reads none: four related managers built for nothing on every sale, issue 34)."""
    return _write(draft, only_if=only_if)


def order_place_from_checkout(*, checkout: PlacedCheckout, checkout_locked: bool = False) -> Order:
    """Create the order of a completed checkout. Idempotent: one checkout gives one order, ever.

    `checkout_locked`: the caller holds the checkout's row lock and saw it not completed, so no other
    placement of it can run: the order is inserted without the savepoint that catches a concurrent one."""
    _validate(checkout)
    if checkout_locked:
        return _create(checkout)
    # No "does it exist" read first: the unique checkout_id decides (a replay lands in the except branch).
    try:
        with transaction.atomic():
            order = _create(checkout)
    except IntegrityError:
        # A concurrent placement of the same checkout won the unique constraint: return its order.
        existing = Order.objects.filter(checkout_id=checkout.checkout_id).first()
        if existing is None:
            raise
        return existing
    return order


def _cut(value: str | None, length: int) -> str:
    # Placement must not fail on cosmetic data (the money is already in): over-long text is truncated.
    return (value or "")[:length]


def _create(checkout: PlacedCheckout) -> Order:
    draft = _build(checkout)
    order = _write(draft)
    assert order is not None  # written unconditionally
    # The caller gets the order with what was just written as its relations (no query to read them back).
    return with_relations(
        order, lines=draft.lines, expectations=[draft.expectation], fulfillment_events=[], adjustments=[]
    )


def _build(checkout: PlacedCheckout, number: int | None = None) -> OrderDraft:
    totals = _totals_json(checkout)
    total_amount = next(int(entry["amount"]) for entry in totals if entry["type"] == "total")
    split = checkout.installments > 1
    order = new_row(
        Order,
        number=_next_number() if number is None else number,
        checkout_id=checkout.checkout_id,
        platform_id=checkout.platform_id or None,
        language=LANGUAGES.get((checkout.language or "").lower(), "pt-br"),
        currency=checkout.currency,
        buyer_first_name=_cut(checkout.buyer_first_name, 120),
        buyer_last_name=_cut(checkout.buyer_last_name, 120),
        buyer_email=_cut(checkout.buyer_email, 254),
        buyer_phone=_cut(checkout.buyer_phone, 32),
        buyer_tax_id=_cut(checkout.buyer_tax_id, 14),
        fulfillment_method=checkout.fulfillment_method or "",
        fulfillment_title=_cut(checkout.fulfillment_title, 120),
        fulfillment_carrier=_cut(checkout.fulfillment_carrier, 80),
        fulfillment_description=_cut(checkout.fulfillment_description, 255),
        destination={str(k): str(v) for k, v in (checkout.destination or {}).items() if v is not None},
        totals=totals,
        total_amount=total_amount,
        payment_handler_id=checkout.payment_handler_id or "",
        payment_type=checkout.payment_type or "",
        payment_reference=checkout.payment_reference or "",
        payment_txid=checkout.payment_txid or "",
        paid_amount=checkout.paid_amount,
        installments=max(1, min(24, checkout.installments)),
        installment_amount=checkout.installment_amount if split else 0,
        first_installment=(checkout.first_installment or checkout.installment_amount) if split else 0,
        policies=list(checkout.policies),
    )
    refresh_payment_status(order)
    # Built before anything is written, so the presented BCP order goes into the order's own INSERT (no
    # UPDATE of `bcp_json` after it); the rows get the order's id when they are saved.
    lines = [
        new_row(
            OrderLine,
            order=order,
            public_id=line.line_id,
            position=index,
            sku=line.sku,
            title=_cut(line.title, 255),
            unit_price=line.unit_price,
            image_url=_cut(line.image_url, 500),
            quantity_original=line.quantity,
            quantity_total=line.quantity,
        )
        for index, line in enumerate(checkout.lines)
    ]
    expectation = new_row(
        FulfillmentExpectation,
        order=order,
        method_type=order.fulfillment_method or "shipping",
        destination=order.destination,
        description=order.fulfillment_description or order.fulfillment_title,
        fulfillable_on="now",
        line_items=[{"id": line.line_id, "quantity": line.quantity} for line in checkout.lines],
        **_delivery_days(checkout),
    )
    order.bcp_json_at = timezone.now()  # the snapshot's `updated_at`
    order.bcp_json = order_bcp_json_of(order, lines=lines, expectations=[expectation])
    return OrderDraft(order=order, lines=lines, expectation=expectation)


def _delivery_days(checkout: PlacedCheckout) -> dict[str, Any]:
    """The expectation's business days: only a shipping order's, with the words they were quoted with (a pickup's
    "Pronto para retirada em 2 dias úteis" stays words). With the shop's handling days they count from the payment
    (handling + carrier), else from the shipment (the carrier's)."""
    days = checkout.fulfillment_days
    if checkout.fulfillment_method != "shipping" or days is None or not checkout.fulfillment_description:
        return {}
    low, high = (max(0, int(d)) for d in days)
    low, high = min(low, high), max(low, high)
    handling = max(0, checkout.handling_days)
    if handling:
        # the shop posts within `handling` business days of the payment: until then the window counts from it
        from_payment = days_from_payment((low, high), handling)
        return {
            "days_min": from_payment[0],
            "days_max": from_payment[1],
            "days_from": DeliveryDaysFrom.PAYMENT,
            "handling_days": handling,
        }
    return {"days_min": low, "days_max": high, "days_from": DeliveryDaysFrom.SHIPPING}


def _write(draft: OrderDraft, *, only_if: Update | None = None) -> Order | None:
    order, lines, expectation = draft.order, draft.lines, draft.expectation
    events = [
        new_row(
            OrderEvent,
            order=order,
            kind="placed",
            message=f"Pedido #{order.number} recebido.",
            data={"checkout_id": order.checkout_id, "platform_id": order.platform_id, "paid_amount": order.paid_amount},
        )
    ]
    if order.payment_type == PaymentType.CARD and order.paid_amount > 0:
        # A card order is placed once the gateway approved it: its payment is part of the placement (a Pix one
        # gets its "Pagamento Pix confirmado" from settlement), written in the same INSERT.
        events.append(
            new_row(
                OrderEvent,
                order=order,
                kind="payment_confirmed",
                message=f"Pagamento no cartão aprovado: {format_brl(order.paid_amount, language=PT_BR)}"
                f" (pagamento {order.payment_txid or order.payment_reference}).",
                data={"paid_amount": order.paid_amount, "payment_id": order.payment_txid},
            )
        )
    if order.payment_type == PaymentType.BOLETO and order.paid_amount > 0:
        # A boleto order is placed when the gateway confirms the bank's payment (issue 37): the same INSERT.
        events.append(
            OrderEvent(
                order=order,
                kind="payment_confirmed",
                message=f"Pagamento do boleto confirmado: {format_brl(order.paid_amount, language=PT_BR)}"
                f" (boleto {order.payment_txid or order.payment_reference}).",
                data={"paid_amount": order.paid_amount, "payment_id": order.payment_txid},
            )
        )
    # The "Pedido recebido" e-mail is recorded and sent by the order's outbox task (orders.services.outbox);
    # its row (what `notify_changed` writes, with the order as presented in its INSERT) goes with the rest:
    # the order, its lines, expectation, events and outbox row are one statement (issue 34).
    message = changed_outbox_row(order, "placed")
    if only_if is None:
        insert_together(order, lines, [expectation], events, [message])
    elif not update_then_insert(only_if, order, lines, [expectation], events, [message]):
        return None
    outbox_enqueue(message)
    return order


@transaction.atomic
def order_payment_confirm(*, order_id: str, paid_amount: int, txid: str = "", actor: str = "") -> Order:
    """For orders placed before the money arrived: record the payment once and tell the buyer."""
    order = lock_order(order_id)
    if isinstance(paid_amount, bool) or not isinstance(paid_amount, int) or paid_amount <= 0:
        raise OrderError("paid_amount", _("Informe um valor maior que zero."), code="bad_amount")
    if order.payment_status != PaymentStatus.PENDING:
        if order.paid_amount == paid_amount:
            return order  # replay
        raise OrderError(
            "paid_amount",
            _("O pedido #%(number)s já tem o pagamento registrado."),
            code="already_paid",
            number=order.number,
        )
    order.paid_amount = paid_amount
    order.payment_txid = clean_text(txid, field="txid", max_length=64) or order.payment_txid
    refresh_payment_status(order)
    order.save(update_fields=["paid_amount", "payment_txid", "payment_status", "updated_at"])
    timeline(order, "payment_confirmed", "Pagamento confirmado.", actor=actor, data={"paid_amount": paid_amount})
    schedule_email(order, EmailKind.PAYMENT_CONFIRMED)
    notify_changed(order, "payment_confirmed")
    return order


@transaction.atomic
def order_payment_record(*, checkout_id: str, amount: int, txid: str, end_to_end_id: str) -> bool:
    """Timeline "Pagamento confirmado" with the Pix end-to-end id, once per payment (a replay adds nothing).

    Called by the shop when payments settles a Pix for the order's checkout; False when no order matches.
    """
    order = Order.objects.select_for_update().filter(checkout_id=checkout_id).first()
    if order is None:
        return False
    e2e = clean_text(end_to_end_id, field="end_to_end_id", max_length=64)
    if order.timeline.filter(kind="payment_confirmed", data__end_to_end_id=e2e).exists():
        return True
    timeline(
        order,
        "payment_confirmed",
        f"Pagamento Pix confirmado: {format_brl(amount, language=PT_BR)} (endToEndId {e2e}).",
        data={"paid_amount": amount, "txid": txid, "end_to_end_id": e2e},
    )
    return True


MANUAL_METHOD_LABELS = {
    "dinheiro": "dinheiro",
    "transferencia": "transferência bancária",
    "maquininha": "cartão na maquininha",
    "pix_direto": "Pix direto na conta",
}


@transaction.atomic
def order_payment_record_manual(*, order_id: str, method: str, reason: str, actor: str = "") -> Order:
    """Timeline "Pagamento confirmado" for a payment staff received outside the shop (who, how, why)."""
    reason = clean_text(reason, field="reason", max_length=255, required=True)
    order = lock_order(order_id)
    label = MANUAL_METHOD_LABELS.get(method, method)
    timeline(
        order,
        "payment_confirmed",
        f"Pagamento registrado pela loja ({label}): {format_brl(order.paid_amount, language=PT_BR)} — {reason}",
        actor=actor,
        data={"paid_amount": order.paid_amount, "manual_method": method, "reason": reason},
    )
    return order
