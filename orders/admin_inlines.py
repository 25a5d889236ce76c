"""Read-only inlines of the order page: lines, expectations, fulfillment events, adjustments, timeline."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils import formats, timezone
from django.utils.html import format_html
from django.utils.translation import gettext_lazy as _

from kernel.money import format_brl
from orders.arrival import expectation_arrival, window_words
from orders.labels import (
    adjustment_label,
    event_label,
    fulfillable_on_label,
    fulfillment_method_label,
    line_items_text,
    timeline_kind_label,
)
from orders.models import (
    Adjustment,
    FulfillmentEvent,
    FulfillmentExpectation,
    OrderEvent,
    OrderLine,
    ReturnRequest,
)
from orders.selectors import with_actor_labels
from orders.summary import (
    expectation_items_now,
    expectation_progress,
    expectation_units_to_send,
    line_words_for_staff,
)


def _short(value: datetime | None) -> str:
    """One compact time, in the active time zone (settings.TIME_ZONE unless a request changes it)."""
    return formats.date_format(timezone.localtime(value), "SHORT_DATETIME_FORMAT") if value else ""


class ReadOnlyInline(admin.TabularInline):
    extra = 0
    can_delete = False
    show_change_link = False
    # Rows without the "original" caption (str(obj) above each row): every column is already shown.
    template = "orders/admin/readonly_tabular.html"

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        # Line titles for the "items" columns: one query for all rows.
        return super().get_queryset(request).select_related("order").prefetch_related("order__lines")

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        # Whoever may view the order sees all of it (no separate view permission per child model).
        return request.user.has_perm("orders.view_order")

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


def _items(row: FulfillmentExpectation | FulfillmentEvent | Adjustment | ReturnRequest) -> str:
    return line_items_text(row.line_items, {line.public_id: line for line in row.order.lines.all()})


class OrderLineInline(ReadOnlyInline):
    model = OrderLine
    fields = [
        "sku",
        "title",
        "price",
        "quantity_original",
        "quantity_total",
        "quantity_fulfilled",
        "status",
    ]  # the line's public id (li_…) is for the API, not for staff
    readonly_fields = fields

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        return (
            admin.TabularInline.get_queryset(self, request)
            .select_related("order")
            .prefetch_related("order__adjustments")
        )

    @admin.display(description=_("preço"))
    def price(self, line: OrderLine) -> str:
        return format_brl(line.unit_price)

    @admin.display(description=_("situação"))
    def status(self, line: OrderLine) -> str:
        return str(line_words_for_staff(line, line.order, list(line.order.adjustments.all())))


class ExpectationInline(ReadOnlyInline):
    model = FulfillmentExpectation
    fields = ["description", "method", "available", "arrival", "items"]
    readonly_fields = fields

    @admin.display(description=_("previsão de entrega"))
    def arrival(self, expectation: FulfillmentExpectation) -> str:
        """The dates the buyer's page gives ("entre 09/12 e 11/12"), once the parcel left (or days that count from
        the payment); empty while they cannot be said (nothing shipped, or an order without the quote's days)."""
        order = expectation.order
        planned = sorted(order.expectations.all(), key=lambda e: (e.position, e.pk))
        progress = expectation_progress(planned, list(order.adjustments.all()), list(order.lines.all()))
        events = list(order.fulfillment_events.all())
        window = expectation_arrival(expectation, order, progress[expectation.public_id], events)
        return window_words(window) if window else ""

    @admin.display(description=_("forma"))
    def method(self, expectation: FulfillmentExpectation) -> str:
        return fulfillment_method_label(expectation.method_type)

    @admin.display(description=_("disponível em"))
    def available(self, expectation: FulfillmentExpectation) -> str:
        return fulfillable_on_label(expectation.fulfillable_on)

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        # The order's expectations, adjustments and lines, to show what is still to send: one query each for all rows.
        return (
            super()
            .get_queryset(request)
            .prefetch_related("order__expectations", "order__adjustments", "order__lines", "order__fulfillment_events")
        )

    @admin.display(description=_("itens"))
    def items(self, expectation: FulfillmentExpectation) -> str:
        order = expectation.order
        planned = sorted(order.expectations.all(), key=lambda e: (e.position, e.pk))
        adjustments, order_lines = list(order.adjustments.all()), list(order.lines.all())
        now = expectation_items_now(planned, adjustments)
        kept, gone = now.get(expectation.public_id, (expectation.line_items, []))
        to_send = expectation_units_to_send(planned, adjustments, order_lines, now=now).get(expectation.public_id, {})
        lines = {line.public_id: line for line in order_lines}
        # What is still to send (a shipped unit is not), then what already left and the units cancelled since.
        left = [{"id": line_id, "quantity": units} for line_id, units in to_send.items()]
        out = [
            {"id": item["id"], "quantity": int(item["quantity"]) - to_send.get(str(item["id"]), 0)}
            for item in kept
            if int(item["quantity"]) > to_send.get(str(item["id"]), 0)
        ]
        parts = [line_items_text(left, lines)] if left else []
        if out:
            words = _("retirado: %(items)s") if order.fulfillment_method == "pickup" else _("enviado: %(items)s")
            parts.append(str(words % {"items": line_items_text(out, lines)}))
        if gone:
            parts.append(str(_("cancelado: %(items)s") % {"items": line_items_text(gone, lines)}))
        return " · ".join(parts)


class FulfillmentEventInline(ReadOnlyInline):
    model = FulfillmentEvent
    fields = ["when", "kind", "items", "tracking", "carrier", "description"]
    readonly_fields = fields
    ordering = ["occurred_at", "id"]

    @admin.display(description=_("quando"))
    def when(self, event: FulfillmentEvent) -> str:
        return _short(event.occurred_at)

    @admin.display(description=_("tipo"))
    def kind(self, event: FulfillmentEvent) -> str:
        return event_label(event.type)

    @admin.display(description=_("itens"))
    def items(self, event: FulfillmentEvent) -> str:
        return _items(event)

    @admin.display(description=_("rastreio"))
    def tracking(self, event: FulfillmentEvent) -> str:
        if event.tracking_url:
            return format_html(
                '<a href="{}" rel="noreferrer" target="_blank">{}</a>', event.tracking_url, event.tracking_number
            )
        return event.tracking_number


class AdjustmentInline(ReadOnlyInline):
    model = Adjustment
    fields = ["when", "kind", "status", "money", "items", "description"]
    readonly_fields = fields

    @admin.display(description=_("quando"))
    def when(self, adjustment: Adjustment) -> str:
        return _short(adjustment.occurred_at)

    @admin.display(description=_("tipo"))
    def kind(self, adjustment: Adjustment) -> str:
        return adjustment_label(adjustment.type)

    @admin.display(description=_("itens"))
    def items(self, adjustment: Adjustment) -> str:
        return _items(adjustment)

    @admin.display(description=_("valor"))
    def money(self, adjustment: Adjustment) -> str:
        return format_brl(adjustment.amount) if adjustment.amount else ""


class TimelineInline(ReadOnlyInline):
    model = OrderEvent
    verbose_name_plural = _("linha do tempo (notas internas incluídas)")
    fields = ["when", "what", "message", "actor_label", "internal"]
    readonly_fields = fields
    ordering = ["created_at", "id"]

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        return with_actor_labels(admin.TabularInline.get_queryset(self, request))

    @admin.display(description=_("quando"))
    def when(self, event: OrderEvent) -> str:
        return _short(event.created_at)

    @admin.display(description=_("evento"))
    def what(self, event: OrderEvent) -> str:
        return timeline_kind_label(event.kind)

    @admin.display(description=_("autor"))
    def actor_label(self, event: OrderEvent) -> str:
        return getattr(event, "actor_label", event.actor)


class ReturnRequestInline(ReadOnlyInline):
    """Returns the buyer or the platform asked for; the "Devolução solicitada" action takes the next step."""

    model = ReturnRequest
    fields = ["public_id", "when", "status", "reason_code", "items", "reason", "requested_by", "refund"]
    readonly_fields = fields

    @admin.display(description=_("quando"))
    def when(self, request: ReturnRequest) -> str:
        return _short(request.created_at)

    @admin.display(description=_("itens"))
    def items(self, request: ReturnRequest) -> str:
        return _items(request)

    @admin.display(description=_("reembolso"))
    def refund(self, request: ReturnRequest) -> str:
        return format_brl(request.refund_amount) if request.refund_amount else ""
