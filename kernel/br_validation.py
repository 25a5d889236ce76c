"""Brazilian data checks: CPF/CNPJ check digits (alphanumeric CNPJ too), E.164 phones, e-mail."""

from __future__ import annotations

import re

from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.utils.translation import gettext as _

_E164_RE = re.compile(r"^\+[1-9]\d{7,14}$")
_CNPJ_RE = re.compile(r"^[0-9A-Z]{12}[0-9]{2}$")


def digits_only(raw: str) -> str:
    return re.sub(r"\D", "", raw or "")


def cpf_valid(digits: str) -> bool:
    if len(digits) != 11 or not digits.isdigit() or digits == digits[0] * 11:
        return False
    for size in (9, 10):
        total = sum(int(d) * w for d, w in zip(digits[:size], range(size + 1, 1, -1), strict=True))
        check = (total * 10) % 11 % 10
        if check != int(digits[size]):
            return False
    return True


def cnpj_valid(value: str) -> bool:
    """CNPJ check digits, numeric or alphanumeric (Receita Federal, valid from July 2026).

    The first 12 characters may be digits or capital letters, the last 2 are digits; each character
    counts as its ASCII code minus 48 ("0" → 0, "A" → 17), so numeric CNPJs keep their old digits.
    """
    if len(value) != 14 or not _CNPJ_RE.match(value) or value == value[0] * 14:
        return False
    weights_1 = (5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2)
    weights_2 = (6, *weights_1)
    for size, weights in ((12, weights_1), (13, weights_2)):
        total = sum((ord(c) - 48) * w for c, w in zip(value[:size], weights, strict=True))
        rest = total % 11
        check = 0 if rest < 2 else 11 - rest
        if check != int(value[size]):
            return False
    return True


def tax_id_normalize(raw: str) -> str:
    """ "123.456.789-09" → "12345678909"; "12.abc.345/01de-35" → "12ABC34501DE35" (letters kept, upper case)."""
    return re.sub(r"[^0-9A-Z]", "", (raw or "").upper())


def tax_id_text(value: str) -> str:
    """CPF "39053344705" → "390.533.447-05", CNPJ (numeric or alphanumeric) → "12.ABC.345/01DE-35"; other values
    as stored. People read it masked, and a spreadsheet keeps the mask as text (no leading zero lost)."""
    if len(value) == 11 and value.isdigit():
        return f"{value[:3]}.{value[3:6]}.{value[6:9]}-{value[9:]}"
    if len(value) == 14 and value.isalnum():  # the alphanumeric CNPJ (2026) keeps the same mask
        return f"{value[:2]}.{value[2:5]}.{value[5:8]}/{value[8:12]}-{value[12:]}"
    return value


def tax_id_valid(value: str) -> bool:
    """CPF (11 digits) or CNPJ (14 characters, numeric or alphanumeric) with valid check digits."""
    return cpf_valid(value) if len(value) == 11 else cnpj_valid(value)


def email_invalid() -> str:
    """An e-mail the buyer typed that is not one (checkout, its save on leaving the field, subscription): one
    sentence, with an example of the form (the checkout's "E-mail inválido." said nothing of what to fix)."""
    return _("Informe um e-mail válido, como nome@exemplo.com.br.")


def tax_id_invalid() -> str:
    """A CPF or CNPJ whose check digits fail (checkout, subscription, staff's correction): one sentence everywhere,
    saying what to check (the checkout's "CPF/CNPJ inválido." did not)."""
    return _("CPF ou CNPJ inválido: confira os dígitos (11 do CPF ou 14 do CNPJ).")


def phone_normalize(raw: str) -> str:
    """Storefront-friendly: "(11) 98765-4321", "11987654321", "011 98765-4321", "55 11 98765-4321" →
    "+5511987654321"; E.164 input is kept as is; anything else is returned unchanged (and then invalid)."""
    value = (raw or "").strip()
    if not value:
        return ""
    if value.startswith("+"):
        return "+" + digits_only(value)
    digits = digits_only(value)
    if digits.startswith("0"):
        # No DDD starts with 0: it is the trunk prefix ("011 98765-4321"), maybe with a carrier code
        # ("0 21 11 98765-4321", "0xx11…" once the x's are gone).
        digits = digits[1:]
        if len(digits) in (12, 13):
            digits = digits[2:]
    elif digits.startswith("55") and len(digits) in (12, 13):
        digits = digits[2:]  # "55 11 98765-4321": the country code without its "+"
    if len(digits) in (10, 11):  # DDD + number, Brazil implied
        return "+55" + digits
    return value


def phone_display(value: str) -> str:
    """For Brazilian buyers: "+5511987654321" → "(11) 98765-4321"; other numbers are shown as stored."""
    if not value.startswith("+55"):
        return value
    national = value[3:]
    if not national.isdigit() or len(national) not in (10, 11):
        return value
    return f"({national[:2]}) {national[2:-4]}-{national[-4:]}"


def phone_valid(value: str) -> bool:
    return bool(_E164_RE.match(value))


def email_valid(value: str) -> bool:
    try:
        validate_email(value)
    except ValidationError:
        return False
    return True
