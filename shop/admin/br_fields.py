"""Brazilian address fields of the admin's forms: a CEP typed as people write it ("01310-100") and a UF.

One place for their rules and messages, used by the store settings, the pickup points and the CEP ranges of
the shipping rates.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _

from shop.checkout.fulfillment import UFS, cep_digits, cep_format, cep_uf

CEP_INVALID = _("CEP inválido: informe os 8 números, ex.: 01310-100.")
UF_INVALID = _("UF inválida: use a sigla de 2 letras, ex.: SP.")


def clean_cep(value: str) -> str:
    """ "01310100" or "01310-100" → "01310-100"; "" stays ""."""
    value = (value or "").strip()
    if not value:
        return ""
    digits = cep_digits(value)
    if digits is None:
        raise forms.ValidationError(CEP_INVALID)
    return cep_format(digits)


def clean_uf(value: str) -> str:
    """ "sp" → "SP"; "" stays ""."""
    value = (value or "").strip().upper()
    if value and value not in UFS:
        raise forms.ValidationError(UF_INVALID)
    return value


def check_cep_in_uf(form: forms.Form, cleaned: dict[str, Any], *, cep: str, uf: str) -> None:
    """The CEP belongs to the UF (by the Correios ranges): a typo in either is said on the CEP."""
    digits = cep_digits(cleaned.get(cep) or "")
    state = cleaned.get(uf) or ""
    belongs_to = cep_uf(digits) if digits else None
    if state and belongs_to not in (None, state):
        form.add_error(cep, _("Este CEP é de %(uf)s, não de %(state)s.") % {"uf": belongs_to, "state": state})


class CepNumberField(forms.Field):
    """A CEP kept as its number (the shipping rates' ranges): typed and shown as "01000-000", never "1000000"."""

    widget = forms.TextInput(attrs={"inputmode": "numeric", "placeholder": "00000-000", "size": 10, "maxlength": 9})

    def prepare_value(self, value: Any) -> Any:
        if isinstance(value, int):
            return cep_format(f"{value:08d}")
        return value

    def to_python(self, value: Any) -> int | None:
        text = str(value or "").strip()
        return int(clean_cep(text).replace("-", "")) if text else None
