"""Product identifiers the marketplaces and Google Merchant Center ask for: GTIN (EAN/UPC barcodes) and MPN.

GTIN check digit: GS1 General Specifications §7.9.1 (weights 3 and 1 from the right, the check digit making the
sum a multiple of 10); Merchant Center accepts GTIN-8, -12 (UPC), -13 (EAN) and -14.
"""

from __future__ import annotations

import re

from django.core.exceptions import ValidationError
from django.utils.translation import gettext_lazy as _

GTIN_LENGTHS = (8, 12, 13, 14)


def gtin_check_digit_ok(digits: str) -> bool:
    """True when the last digit of `digits` is the GS1 check digit of the others."""
    body, check = digits[:-1], int(digits[-1])
    total = sum(int(d) * (3 if i % 2 == 0 else 1) for i, d in enumerate(reversed(body)))
    return (10 - total % 10) % 10 == check


def validate_gtin(value: str) -> None:
    if not value:
        return
    if not re.fullmatch(r"\d+", value) or len(value) not in GTIN_LENGTHS:
        raise ValidationError(_("GTIN inválido: informe só os 8, 12, 13 ou 14 dígitos do código de barras (EAN)."))
    if not gtin_check_digit_ok(value):
        raise ValidationError(_("GTIN inválido: o dígito verificador não confere; confira o código de barras."))
