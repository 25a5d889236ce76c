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
