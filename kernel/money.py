"""The one money module: integer centavos ↔ "R$ 1.234,56" / "R$1,234.56" (display, in the reader's language)
and typed amounts (parsing, Brazilian first).

It lives in `kernel`, which every app may import, so the storefront filter, the admin, e-mails, CSV, coupons and
agent replies share one rule.
Never floats: every conversion is integer arithmetic on the digits.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils.translation import get_language
from django.utils.translation import gettext as _


def format_brl(cents: int | None, *, language: str | None = None) -> str:
    """Reais as the reader writes them, in the active language unless `language` is given (CLDR's BRL format, as
    Babel writes it): pt-BR 12345678 → "R$ 123.456,78", -500 → "-R$ 5,00"; English 12345678 → "R$123,456.78",
    -500 → "-R$5.00"; None → "". Text that is Portuguese whatever the reader's language (a timeline entry stored
    in Portuguese, the NF-e) passes `language="pt-br"`. Machine formats carry integer centavos, never this."""
    if cents is None:
        return ""
    sign = "-" if cents < 0 else ""
    reais, centavos = divmod(abs(int(cents)), 100)
    if (language or get_language() or "").lower().startswith("en"):
        return f"{sign}R${reais:,}.{centavos:02d}"
    # Thousands grouped with "." as Brazilians write them.
    return f"{sign}R$ {reais:,}".replace(",", ".") + f",{centavos:02d}"


PT_BR = "pt-br"  # `format_brl(..., language=PT_BR)`: amounts inside a text that is always Portuguese


def apportion(amount_total: int, weights: list[int]) -> list[int]:
    """`amount_total` centavos split across items in proportion to `weights` (their totals), the shares summing
    exactly to it: each item gets the floor of its share and the centavos left go to the largest remainders
    (ties to the first item). How a note-level freight or discount becomes each NF-e item's `vFrete`/`vDesc`,
    and an order's discount each line's share (orders.services.returns): one rule, so refund and note agree."""
    if amount_total == 0 or not weights:
        return [0] * len(weights)
    whole = sum(weights)
    if whole <= 0:
        shares = [0] * len(weights)
        shares[0] = amount_total
        return shares
    exact = [amount_total * w for w in weights]
    shares = [e // whole for e in exact]
    left = amount_total - sum(shares)
    by_remainder = sorted(range(len(weights)), key=lambda i: (-(exact[i] % whole), i))
    for i in by_remainder[:left]:
        shares[i] += 1
    return shares


def format_decimal_comma(cents: int) -> str:
    """12345 → "123,45" (spreadsheets in pt-BR: no currency sign, no thousands separator)."""
    sign = "-" if cents < 0 else ""
    reais, centavos = divmod(abs(int(cents)), 100)
    return f"{sign}{reais},{centavos:02d}"


def format_decimal_point(cents: int) -> str:
    """4290 → "42.90" (machine formats: schema.org, APIs)."""
    sign = "-" if cents < 0 else ""
    reais, centavos = divmod(abs(int(cents)), 100)
    return f"{sign}{reais}.{centavos:02d}"


def format_amount_input(cents: int | None) -> str:
    """The value shown back in a form field: 3590 → "35,90" (what the merchant typed)."""
    if cents is None:
        return ""
    return format_decimal_comma(cents)


def parse_brl(text: str, *, allow_zero: bool = True) -> int:
    """ "35,90" / "35.90" / "R$ 35,90" / "1.234,56" / "1.234" / "1,234.56" / "10" → centavos.

    Brazilian first: "," is the decimal separator and "." groups thousands; "35.90" (one or two
    digits after a lone ".") is read as decimals too, because that is how a keyboard's numpad types it.
    Raises ValueError with a Portuguese message a person can act on (shown on the form field).
    """
    raw = (text or "").strip().replace("R$", "").replace("\xa0", "").replace(" ", "")
    if not raw:
        raise ValueError(_("Informe um valor, por exemplo 35,90."))
    if raw.startswith("-"):
        raise ValueError(_("O valor não pode ser negativo."))
    if "," in raw and "." in raw and raw.rfind(".") > raw.rfind(","):
        # "1,234.56": English grouping, accepted only with its decimal part (a lone "59,999" is a typo).
        whole, _sep, frac = raw.rpartition(".")
        groups = whole.split(",")
        if len(groups) == 1:
            groups = ["", ""]  # "1,5.3": not a grouping, refused below
    elif "," in raw:
        whole, _sep, frac = raw.rpartition(",")
        groups = whole.split(".")
    elif raw.count(".") == 1 and len(raw.rpartition(".")[2]) in (1, 2):
        whole, _sep, frac = raw.partition(".")
        groups = [whole]
    else:
        whole, frac = raw, ""
        groups = raw.split(".")
    grouped_ok = len(groups) == 1 or (1 <= len(groups[0]) <= 3 and all(len(g) == 3 for g in groups[1:]))
    digits = "".join(groups)
    if not grouped_ok or not (digits or frac) or not (digits.isdigit() or digits == ""):
        raise ValueError(_("Valor inválido: use reais e centavos, por exemplo 35,90."))
    if frac and (not frac.isdigit() or len(frac) > 2):
        raise ValueError(_("Use no máximo duas casas decimais, por exemplo 35,90."))
    if len(digits) > 12:
        raise ValueError(_("Valor grande demais."))
    cents = int(digits or "0") * 100 + int(frac.ljust(2, "0") or "0")
    if cents == 0 and not allow_zero:
        raise ValueError(_("O valor deve ser maior que zero."))
    return cents


class MoneyField(forms.Field):
    """A form field for reais: accepts "35,90", "35.90", "R$ 35,90"; cleans to integer centavos."""

    widget = forms.TextInput

    def __init__(self, *args: Any, allow_zero: bool = True, **kwargs: Any) -> None:
        self.allow_zero = allow_zero
        super().__init__(*args, **kwargs)
        self.widget.attrs.update({"inputmode": "decimal", "placeholder": "0,00", "size": 10, "maxlength": 20})

    def prepare_value(self, value: Any) -> Any:
        # Stored centavos come back as "35,90"; a re-shown bad input stays as typed.
        if isinstance(value, int) and not isinstance(value, bool):
            return format_amount_input(value)
        return value

    def to_python(self, value: Any) -> int | None:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        text = str(value).strip() if value is not None else ""
        if not text:
            return None
        if len(text) > 20:
            raise forms.ValidationError(_("Valor grande demais."), code="invalid")
        try:
            return parse_brl(text, allow_zero=self.allow_zero)
        except ValueError as error:
            raise forms.ValidationError(str(error), code="invalid") from None

    def has_changed(self, initial: Any, data: Any) -> bool:
        try:
            return self.to_python(data) != (initial if initial not in ("", None) else None)
        except forms.ValidationError:
            return True
