"""CEP (Brazilian postal code): its format, the offline CEP-prefix → UF table (the Correios range allocation by
state) and the sentences that refuse a CEP or a UF. One set of rules for the checkout, the shipping quotes, the
admin's address forms and an order's delivery address corrected by staff."""

from __future__ import annotations

import re

from django.utils.translation import gettext as _

_CEP_RE = re.compile(r"^\s*(\d{5})-?(\d{3})\s*$")

# (first CEP as int, last CEP as int, UF), inclusive, 8-digit integers.
_RANGES: tuple[tuple[int, int, str], ...] = (
    (1_000_000, 19_999_999, "SP"),
    (20_000_000, 28_999_999, "RJ"),
    (29_000_000, 29_999_999, "ES"),
    (30_000_000, 39_999_999, "MG"),
    (40_000_000, 48_999_999, "BA"),
    (49_000_000, 49_999_999, "SE"),
    (50_000_000, 56_999_999, "PE"),
    (57_000_000, 57_999_999, "AL"),
    (58_000_000, 58_999_999, "PB"),
    (59_000_000, 59_999_999, "RN"),
    (60_000_000, 63_999_999, "CE"),
    (64_000_000, 64_999_999, "PI"),
    (65_000_000, 65_999_999, "MA"),
    (66_000_000, 68_899_999, "PA"),
    (68_900_000, 68_999_999, "AP"),
    (69_000_000, 69_299_999, "AM"),
    (69_300_000, 69_399_999, "RR"),
    (69_400_000, 69_899_999, "AM"),
    (69_900_000, 69_999_999, "AC"),
    (70_000_000, 72_799_999, "DF"),
    (72_800_000, 72_999_999, "GO"),
    (73_000_000, 73_699_999, "DF"),
    (73_700_000, 76_799_999, "GO"),
    (76_800_000, 76_999_999, "RO"),
    (77_000_000, 77_999_999, "TO"),
    (78_000_000, 78_899_999, "MT"),
    (79_000_000, 79_999_999, "MS"),
    (80_000_000, 87_999_999, "PR"),
    (88_000_000, 89_999_999, "SC"),
    (90_000_000, 99_999_999, "RS"),
)

UFS: frozenset[str] = frozenset(uf for _, _, uf in _RANGES)


def cep_digits(raw: str) -> str | None:
    """ "01310-100" / "01310100" → "01310100"; None when the format is wrong."""
    match = _CEP_RE.match(raw or "")
    return f"{match.group(1)}{match.group(2)}" if match else None


def cep_format(digits: str) -> str:
    """ "01310100" → "01310-100"."""
    return f"{digits[:5]}-{digits[5:]}"


def cep_uf(digits: str) -> str | None:
    """UF of a CEP by its range; None when no state uses it (e.g. "00000-000")."""
    value = int(digits)
    for start, end, uf in _RANGES:
        if start <= value <= end:
            return uf
    return None


def cep_invalid() -> str:
    """A CEP that is not 8 digits (product page, checkout, the address autofill): one sentence everywhere."""
    return _("CEP inválido: use o formato 00000-000.")


def cep_missing(digits: str) -> str:
    """A well-formed CEP the table does not know, named so the buyer sees which one (product page and checkout)."""
    return _("CEP %(cep)s não existe.") % {"cep": cep_format(digits)}


def uf_invalid() -> str:
    return _("UF inválida.")


def uf_not_of_cep(uf: str) -> str:
    """The UF typed is not the CEP's (`uf`: the CEP's, by the table)."""
    return _("A UF não corresponde ao CEP (o CEP é de %(uf)s).") % {"uf": uf}
