"""Template helpers for order pages and e-mails (`{% load orders_extras %}`)."""

from __future__ import annotations

from django import template

from kernel.money import format_brl
from orders.labels import (
    adjustment_label,
    adjustment_reason_label,
    adjustment_status_label,
    carrier_note_label,
    event_label,
    event_note,
    line_status_label,
    order_status_label,
    payment_status_label,
    stored_reason_label,
)

register = template.Library()


@register.filter
def cents_brl(value: int | None) -> str:
    """12345 → "R$ 123,45"."""
    return format_brl(value)


register.filter("event_label", event_label)
register.filter("adjustment_label", adjustment_label)
register.filter("adjustment_status_label", adjustment_status_label)
register.filter("line_status_label", line_status_label)
register.filter("order_status_label", order_status_label)
register.filter("payment_status_label", payment_status_label)
register.filter("stored_reason", stored_reason_label)
register.filter("adjustment_reason", adjustment_reason_label)
register.filter("carrier_note", carrier_note_label)


@register.filter
def note_of(event: object) -> str:
    """The note beside a fulfillment event (`labels.event_note`): "" when it only repeats the step."""
    return event_note(str(getattr(event, "type", "")), str(getattr(event, "description", "")))
