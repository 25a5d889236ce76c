"""Money formatting for templates: integer centavos → "R$ 1.234,56" (ARCHITECTURE.md: format only here)."""

from __future__ import annotations

from django import template

register = template.Library()


def format_brl(cents: int) -> str:
    """Format integer centavos as Brazilian reais, e.g. 123456 → "R$ 1.234,56"."""
    sign = "-" if cents < 0 else ""
    reais, centavos = divmod(abs(int(cents)), 100)
    # Group thousands with "." as Brazilians write them; never via float.
    grouped = f"{reais:,}".replace(",", ".")
    return f"{sign}R$ {grouped},{centavos:02d}"


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
