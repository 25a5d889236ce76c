"""The buyer-facing promises of an order (BCP §7 expectations): update, split, merge."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from orders.errors import OrderError
from orders.labels import fulfillment_method_label
from orders.models import Adjustment, AdjustmentType, FulfillmentExpectation, Order, OrderLine
from orders.services._common import clean_text, lock_order, notify_changed, refuse_if_canceled, timeline
from orders.summary import expectation_items_now, expectation_units_to_send
from orders.types import LineQuantity


def _lock_expectation(order_id: str, expectation_id: str, *, field: str = "expectation_id"):
    order = lock_order(order_id)
    refuse_if_canceled(order)
    expectation = (
        FulfillmentExpectation.objects.select_for_update().filter(order=order, public_id=expectation_id).first()
    )
    if expectation is None:
        raise OrderError(field, _("Previsão não encontrada neste pedido."), code="not_found")
    return order, expectation


def _local_date(iso: str) -> str:
    """ "2026-12-10T15:00:00Z" → "10/12/2026 12:00" in the shop's time zone (timeline text for staff)."""
    return timezone.localtime(datetime.fromisoformat(iso.replace("Z", "+00:00"))).strftime("%d/%m/%Y %H:%M")


def _clean_fulfillable_on(value: str | None) -> str | None:
    if value is None:
        return None
    value = clean_text(value, field="fulfillable_on", max_length=40)
    if value in ("", "now"):
        return value or "now"
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise OrderError(
            "fulfillable_on", _("Use “now” ou uma data ISO 8601 com fuso horário."), code="bad_datetime"
        ) from None
    if timezone.is_naive(parsed):
        raise OrderError("fulfillable_on", _("Informe a data com fuso horário."), code="naive_datetime")
    return parsed.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@transaction.atomic
def expectation_update(
    *,
    order_id: str,
    expectation_id: str,
    description: str | None = None,
    fulfillable_on: str | None = None,
    actor: str = "",
) -> FulfillmentExpectation:
    order, expectation = _lock_expectation(order_id, expectation_id)
    if description is not None:
        worded = clean_text(description, field="description", max_length=255)
        if worded != expectation.description:
            # new words, new promise: the checkout's days would date an arrival the words no longer say
            expectation.days_min = expectation.days_max = expectation.handling_days = None
            expectation.days_from = ""
        expectation.description = worded
    cleaned = _clean_fulfillable_on(fulfillable_on)
    if cleaned is not None:
        expectation.fulfillable_on = cleaned
    expectation.save()
    timeline(
        order,
        "expectation_changed",
        f"{expectation.description or 'Previsão'} — "
        + (
            "disponível agora"
            if expectation.fulfillable_on in ("", "now")
            else f"disponível em {_local_date(expectation.fulfillable_on)}"
        ),
        actor=actor,
        data={"expectation_id": expectation.public_id},
    )
    notify_changed(order, "expectation_changed")
    return expectation


def _lock_plans(order: Order) -> list[FulfillmentExpectation]:
    """All the order's expectations, locked, in their order (position, id)."""
    return list(FulfillmentExpectation.objects.select_for_update().filter(order=order).order_by("position", "id"))


def _left_now(
    order: Order, expectations: list[FulfillmentExpectation], adjustments: list[Adjustment] | None = None
) -> dict[str, dict[str, int]]:
    """What each expectation still has to fulfil ({expectation id: {line id: units}}): the plan minus the units a
    cancellation took off, as the admin's order page and the BCP order show it (`expectation_items_now`)."""
    if adjustments is None:
        adjustments = list(Adjustment.objects.filter(order=order))
    now = expectation_items_now(expectations, adjustments)
    return {
        exp.public_id: {str(item["id"]): int(item["quantity"]) for item in now[exp.public_id][0]}
        for exp in expectations
    }


def _write_plans(order: Order, expectations: list[FulfillmentExpectation], left: dict[str, dict[str, int]]) -> None:
    """Store plans from which `expectation_items_now` reads back exactly `left` for each expectation.

    Expectations keep the plan as placed and the cancelled units are taken off from the last expectation back, so
    after a split or a merge each plan becomes what is left, and each line's cancelled units go to the last
    expectation that still plans that line (nothing after it does, so they are all taken off there and only there).
    """
    cancelled: dict[str, int] = {}
    for adjustment in Adjustment.objects.filter(order=order, type=AdjustmentType.CANCELLATION):
        for item in adjustment.line_items or ():
            cancelled[str(item["id"])] = cancelled.get(str(item["id"]), 0) + abs(int(item["quantity"]))
    plans = {exp.public_id: dict(left[exp.public_id]) for exp in expectations}
    for line_id, units in cancelled.items():
        holders = [exp for exp in expectations if plans[exp.public_id].get(line_id)] or [
            exp for exp in expectations if any(str(item["id"]) == line_id for item in exp.line_items)
        ]
        if units and holders:
            plan = plans[holders[-1].public_id]
            plan[line_id] = plan.get(line_id, 0) + units
    for exp in expectations:
        items = [{"id": line_id, "quantity": units} for line_id, units in plans[exp.public_id].items() if units > 0]
        if items != exp.line_items:
            exp.line_items = items
            exp.save(update_fields=["line_items"])


def _expectation_name(expectation: FulfillmentExpectation) -> str:
    return expectation.description or fulfillment_method_label(expectation.method_type)


@transaction.atomic
def expectation_split(
    *,
    order_id: str,
    expectation_id: str,
    lines: Sequence[LineQuantity],
    description: str | None = None,
    fulfillable_on: str | None = None,
    actor: str = "",
) -> FulfillmentExpectation:
    """Move the given quantities out of an expectation into a new one (e.g. a back-ordered item).

    Only what is left to send moves: units a cancellation took off are no longer in the expectation, and units
    already shipped (or picked up) have left with it (`expectation_units_to_send`).
    """
    order, source = _lock_expectation(order_id, expectation_id)
    expectations = _lock_plans(order)
    adjustments = list(Adjustment.objects.filter(order=order))
    left = _left_now(order, expectations, adjustments)
    held = dict(left[source.public_id])
    order_lines = list(OrderLine.objects.filter(order=order))
    sendable = dict(expectation_units_to_send(expectations, adjustments, order_lines)[source.public_id])
    if not lines:
        raise OrderError("lines", _("Informe a quantidade de pelo menos um item."), code="lines_required")
    titles = {line.public_id: f"{line.title} ({line.sku})" for line in order_lines}
    moved: dict[str, int] = {}
    for index, item in enumerate(lines):
        quantity = item.quantity
        if item.line_id not in held:
            if item.line_id in titles and any(str(i["id"]) == item.line_id for i in source.line_items):
                raise OrderError(
                    f"lines[{index}].id",
                    _("Nada de %(line)s resta a cumprir na previsão “%(expectation)s”: foi cancelado."),
                    code="nothing_left",
                    line=titles[item.line_id],
                    expectation=_expectation_name(source),
                )
            raise OrderError(
                f"lines[{index}].id", _("Este item não está na previsão escolhida."), code="not_in_expectation"
            )
        to_send = sendable.get(item.line_id, 0)
        if not to_send:
            raise OrderError(
                f"lines[{index}].id",
                _("Nada de %(line)s falta enviar na previsão “%(expectation)s”: já foi enviado."),
                code="nothing_left",
                line=titles[item.line_id],
                expectation=_expectation_name(source),
            )
        if isinstance(quantity, bool) or not isinstance(quantity, int) or quantity < 1:
            raise OrderError(f"lines[{index}].quantity", _("Informe de 1 a %(max)s."), code="bad_quantity", max=to_send)
        if quantity > to_send:
            raise OrderError(
                f"lines[{index}].quantity",
                _("A previsão “%(expectation)s” tem só %(left)s× %(line)s a enviar: informe de 1 a %(left)s."),
                code="more_than_left",
                expectation=_expectation_name(source),
                line=titles.get(item.line_id, item.line_id),
                left=to_send,
            )
        sendable[item.line_id] = to_send - quantity
        held[item.line_id] -= quantity
        moved[item.line_id] = moved.get(item.line_id, 0) + quantity
    if not any(sendable.values()):
        raise OrderError("lines", _("A divisão precisa deixar algo na previsão original."), code="split_leaves_nothing")
    worded = source.description if description is None else clean_text(description, field="description", max_length=255)
    same_promise = worded == source.description  # the part keeps the quote's days only with its words
    split = FulfillmentExpectation.objects.create(
        order=order,
        position=source.position + 1,
        method_type=source.method_type,
        destination=source.destination,
        description=worded,
        fulfillable_on=_clean_fulfillable_on(fulfillable_on) or source.fulfillable_on,
        line_items=[{"id": line_id, "quantity": quantity} for line_id, quantity in moved.items()],
        days_min=source.days_min if same_promise else None,
        days_max=source.days_max if same_promise else None,
        days_from=source.days_from if same_promise else "",
        handling_days=source.handling_days if same_promise else None,
    )
    left[source.public_id] = held
    left[split.public_id] = moved
    _write_plans(order, sorted([*expectations, split], key=lambda exp: (exp.position, exp.pk)), left)
    timeline(
        order,
        "expectation_split",
        f"Previsão dividida: {split.description or source.description}",
        actor=actor,
        data={"from": source.public_id, "to": split.public_id},
    )
    notify_changed(order, "expectation_changed")
    return split


@transaction.atomic
def expectation_merge(*, order_id: str, expectation_ids: Sequence[str], actor: str = "") -> FulfillmentExpectation:
    """Merge expectations (same method and destination) into the first one; the others disappear.

    What is left to fulfil is merged: units a cancellation took off stay off (an expectation with nothing left to
    fulfil is not offered and cannot be merged).
    """
    ids = list(expectation_ids)
    if len(ids) < 2 or len(set(ids)) != len(ids):
        raise OrderError("expectation_ids", _("Marque pelo menos duas previsões."), code="merge_needs_two")
    order = lock_order(order_id)
    refuse_if_canceled(order)
    expectations = _lock_plans(order)
    found = {exp.public_id: exp for exp in expectations if exp.public_id in ids}
    for index, exp_id in enumerate(ids):
        if exp_id not in found:
            raise OrderError(f"expectation_ids[{index}]", _("Previsão não encontrada neste pedido."), code="not_found")
    left = _left_now(order, expectations)
    target = found[ids[0]]
    for index, exp_id in enumerate(ids):
        if not any(left[exp_id].values()):
            raise OrderError(
                f"expectation_ids[{index}]",
                _("A previsão “%(expectation)s” não tem mais nada a cumprir: seus itens foram cancelados."),
                code="nothing_left",
                expectation=_expectation_name(found[exp_id]),
            )
    merged = dict(left[target.public_id])
    for index, exp_id in enumerate(ids[1:], start=1):
        other = found[exp_id]
        if other.method_type != target.method_type or other.destination != target.destination:
            raise OrderError(
                f"expectation_ids[{index}]",
                _("Só é possível juntar previsões com a mesma forma de entrega e o mesmo destino."),
                code="merge_mismatch",
            )
        for line_id, quantity in left[exp_id].items():
            merged[line_id] = merged.get(line_id, 0) + quantity
    gone = [found[exp_id] for exp_id in ids[1:]]
    FulfillmentExpectation.objects.filter(pk__in=[exp.pk for exp in gone]).delete()
    left[target.public_id] = merged
    _write_plans(order, [exp for exp in expectations if exp not in gone], left)
    timeline(
        order,
        "expectation_merged",
        f"Previsões unidas: {target.description}".rstrip(": "),
        actor=actor,
        data={"into": target.public_id, "merged": ids[1:]},
    )
    notify_changed(order, "expectation_changed")
    return target
