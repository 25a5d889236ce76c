"""The buyer-facing promises of an order (BCP §7 expectations): update, split, merge."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from orders.errors import OrderError
from orders.models import FulfillmentExpectation
from orders.services._common import clean_text, lock_order, notify_changed, refuse_if_canceled, timeline
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
        expectation.description = clean_text(description, field="description", max_length=255)
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
    """Move the given quantities out of an expectation into a new one (e.g. a back-ordered item)."""
    order, source = _lock_expectation(order_id, expectation_id)
    held = {item["id"]: int(item["quantity"]) for item in source.line_items}
    if not lines:
        raise OrderError("lines", _("Informe a quantidade de pelo menos um item."), code="lines_required")
    moved: list[dict[str, object]] = []
    for index, item in enumerate(lines):
        quantity = item.quantity
        if item.line_id not in held:
            raise OrderError(
                f"lines[{index}].id", _("Este item não está na previsão escolhida."), code="not_in_expectation"
            )
        if isinstance(quantity, bool) or not isinstance(quantity, int) or not 1 <= quantity <= held[item.line_id]:
            raise OrderError(
                f"lines[{index}].quantity", _("Informe de 1 a %(max)s."), code="bad_quantity", max=held[item.line_id]
            )
        held[item.line_id] -= quantity
        moved.append({"id": item.line_id, "quantity": quantity})
    remaining = [{"id": line_id, "quantity": quantity} for line_id, quantity in held.items() if quantity > 0]
    if not remaining:
        raise OrderError("lines", _("A divisão precisa deixar algo na previsão original."), code="split_leaves_nothing")
    source.line_items = remaining
    source.save()
    split = FulfillmentExpectation.objects.create(
        order=order,
        position=source.position + 1,
        method_type=source.method_type,
        destination=source.destination,
        description=source.description
        if description is None
        else clean_text(description, field="description", max_length=255),
        fulfillable_on=_clean_fulfillable_on(fulfillable_on) or source.fulfillable_on,
        line_items=moved,
    )
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
    """Merge expectations (same method and destination) into the first one; the others disappear."""
    ids = list(expectation_ids)
    if len(ids) < 2 or len(set(ids)) != len(ids):
        raise OrderError("expectation_ids", _("Marque pelo menos duas previsões."), code="merge_needs_two")
    order = lock_order(order_id)
    refuse_if_canceled(order)
    found = {
        exp.public_id: exp
        for exp in FulfillmentExpectation.objects.select_for_update().filter(order=order, public_id__in=ids)
    }
    for index, exp_id in enumerate(ids):
        if exp_id not in found:
            raise OrderError(f"expectation_ids[{index}]", _("Previsão não encontrada neste pedido."), code="not_found")
    target = found[ids[0]]
    merged: dict[str, int] = {item["id"]: int(item["quantity"]) for item in target.line_items}
    for index, exp_id in enumerate(ids[1:], start=1):
        other = found[exp_id]
        if other.method_type != target.method_type or other.destination != target.destination:
            raise OrderError(
                f"expectation_ids[{index}]",
                _("Só é possível juntar previsões com a mesma forma de entrega e o mesmo destino."),
                code="merge_mismatch",
            )
        for item in other.line_items:
            merged[item["id"]] = merged.get(item["id"], 0) + int(item["quantity"])
    target.line_items = [{"id": line_id, "quantity": quantity} for line_id, quantity in merged.items()]
    target.save()
    FulfillmentExpectation.objects.filter(pk__in=[found[exp_id].pk for exp_id in ids[1:]]).delete()
    timeline(
        order,
        "expectation_merged",
        f"Previsões unidas: {target.description}".rstrip(": "),
        actor=actor,
        data={"into": target.public_id, "merged": ids[1:]},
    )
    notify_changed(order, "expectation_changed")
    return target
