"""The `brl` template filter; the formatting itself is the one money module, `kernel.money`."""

from __future__ import annotations

from django import template

from kernel.money import format_brl

__all__ = ["brl", "format_brl"]

register = template.Library()


@register.filter(name="brl")
def brl(value: object) -> str:
    """`{{ cents|brl }}`; empty string for None/blank so optional prices render nothing."""
    if value is None or value == "":
        return ""
    try:
        cents = int(value)  # type: ignore[call-overload]
    except (TypeError, ValueError):
        return ""
    return format_brl(cents)
