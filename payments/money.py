"""Centavos <-> API Pix decimal strings ("5999.00"), integer arithmetic only (PIX.md conventions)."""

from __future__ import annotations

import re

_DECIMAL = re.compile(r"^(\d{1,10})\.(\d{2})$")


def cents_to_decimal(cents: int) -> str:
    if isinstance(cents, bool) or not isinstance(cents, int) or cents < 0:
        raise ValueError(f"amount must be a non-negative integer of centavos, got {cents!r}")
    return f"{cents // 100}.{cents % 100:02d}"


def decimal_to_cents(value: str) -> int:
    """Parse the API Pix `\\d{1,10}\\.\\d{2}` form; anything else is rejected (no floats, no commas)."""
    if not isinstance(value, str):
        raise ValueError(f"amount must be a decimal string like '5999.00', got {value!r}")
    match = _DECIMAL.match(value)
    if not match:
        raise ValueError(f"amount must be a decimal string like '5999.00', got {value!r}")
    return int(match.group(1)) * 100 + int(match.group(2))


def half_even(numerator: int, denominator: int) -> int:
    """`numerator / denominator` rounded half to even (banker's rounding), integers only; both ≥ 0, denominator > 0."""
    quotient, remainder = divmod(numerator, denominator)
    if remainder * 2 > denominator or (remainder * 2 == denominator and quotient % 2 == 1):
        quotient += 1
    return quotient


def percent_text(bp: int) -> str:
    """Basis points as the API Pix `valorPerc` ("\\d{1,3}\\.\\d{2}"): 200 → "2.00"."""
    if isinstance(bp, bool) or not isinstance(bp, int) or not 0 <= bp <= 99999:
        raise ValueError(f"percentage must be 0..999.99 % in basis points, got {bp!r}")
    return f"{bp // 100}.{bp % 100:02d}"


def percent_bp(value: object) -> int:
    """The API Pix `valorPerc` ("2.00") as basis points (200); anything else is rejected."""
    return decimal_to_cents(value)  # same \\d+\\.\\d{2} form: hundredths of a percent are basis points
