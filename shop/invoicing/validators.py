"""Validation of fiscal codes, with messages that say which field and why (pt-BR source strings)."""

from __future__ import annotations

import re

from django.core.exceptions import ValidationError
from django.utils.translation import gettext_lazy as _

from fiscal.ibscbs import SUPPORTED_CSTS
from kernel.state_registration import state_registration_lengths, state_registration_valid

ORIGINS = [
    ("0", _("0 – Nacional")),
    ("1", _("1 – Estrangeira, importação direta")),
    ("2", _("2 – Estrangeira, adquirida no mercado interno")),
    ("3", _("3 – Nacional, conteúdo de importação entre 40% e 70%")),
    ("4", _("4 – Nacional, produção conforme processos básicos")),
    ("5", _("5 – Nacional, conteúdo de importação até 40%")),
    ("6", _("6 – Estrangeira, importação direta, sem similar nacional")),
    ("7", _("7 – Estrangeira, mercado interno, sem similar nacional")),
    ("8", _("8 – Nacional, conteúdo de importação acima de 70%")),
]
TAX_REGIMES = [
    ("simples", _("Simples Nacional")),
    ("simples_excesso", _("Simples Nacional – excesso de sublimite")),
    ("normal", _("Regime normal (Lucro Presumido ou Real)")),
    ("mei", _("MEI")),
]


def _digits(value: str) -> str:
    return re.sub(r"[.\-\s/]", "", value or "")


def validate_ncm(value: str) -> None:
    if value and not re.fullmatch(r"\d{8}", _digits(value)):
        raise ValidationError(_("NCM inválido: informe os 8 dígitos da classificação fiscal (ex.: 6109.10.00)."))


def validate_cfop(value: str) -> None:
    if value and not re.fullmatch(r"[1-7]\d{3}", _digits(value)):
        raise ValidationError(_("CFOP inválido: informe 4 dígitos, começando de 1 a 7 (ex.: 5102)."))


def validate_cnae(value: str) -> None:
    if value and not re.fullmatch(r"\d{7}", _digits(value)):
        raise ValidationError(_("CNAE inválido: informe os 7 dígitos da atividade (ex.: 4781-4/00)."))


def validate_state_registration(value: str) -> None:
    """The form alone (numbers, ISENTO, SP's rural "P…"); the length and check digits by the store's UF are
    `state_registration_problem`, which needs the UF."""
    cleaned = _digits(value)
    if value and cleaned.upper() != "ISENTO" and not re.fullmatch(r"[Pp]?\d{2,14}", cleaned):
        raise ValidationError(_("Inscrição estadual inválida: use só números (até 14) ou ISENTO."))


def _digits_in_words(lengths: tuple[int, ...]) -> str:
    if len(lengths) == 1:
        return str(lengths[0])
    return str(_("%(first)s ou %(second)s") % {"first": lengths[0], "second": lengths[1]})


def state_registration_problem(value: str, uf: str) -> str:
    """Why `value` is no inscrição estadual of the UF `uf` (its length and check digits, SEFAZ rules:
    kernel/state_registration.py), a sentence for the field; "" when it is one, is ISENTO, is empty, or is not even
    numbers (`validate_state_registration` says that)."""
    cleaned = _digits(value)
    if not value or cleaned.upper() == "ISENTO" or not re.fullmatch(r"[Pp]?\d{2,14}", cleaned):
        return ""
    lengths = state_registration_lengths(uf)
    if not lengths:
        return str(_("Inscrição estadual: informe a UF da loja (em Endereço) para conferir o número."))
    if state_registration_valid(cleaned, uf):
        return ""
    return str(
        _(
            "Inscrição estadual inválida para %(uf)s: a de %(uf)s tem %(digits)s dígitos; confira os números e os "
            "dígitos verificadores no cadastro da SEFAZ (ou informe ISENTO)."
        )
        % {"uf": uf.upper(), "digits": _digits_in_words(lengths)}
    )


# ICMS: CST for the normal regime, CSOSN for Simples Nacional (and MEI); PIS/COFINS: CST (2 digits).
ICMS_CST = frozenset({"00", "10", "20", "30", "40", "41", "50", "51", "60", "70", "90"})
ICMS_CSOSN = frozenset({"101", "102", "103", "201", "202", "203", "300", "400", "500", "900"})
SIMPLES_REGIMES = frozenset({"simples", "simples_excesso", "mei"})
PIS_COFINS_CST = frozenset(
    {f"{n:02d}" for n in (*range(1, 10), 49, *range(50, 57), *range(60, 68), *range(70, 76), 98, 99)}
)


def validate_icms_cst(value: str) -> None:
    if value and value not in ICMS_CST | ICMS_CSOSN:
        raise ValidationError(
            _("CST/CSOSN do ICMS inválido: use 2 dígitos no regime normal (ex.: 00) ou o CSOSN do Simples (ex.: 102).")
        )


def validate_pis_cofins_cst(value: str) -> None:
    if value and value not in PIS_COFINS_CST:
        raise ValidationError(_("CST de PIS/COFINS inválido: use 2 dígitos da tabela (ex.: 07, 49 ou 99)."))


def icms_default(tax_regime: str) -> str:
    """The ICMS code when neither product nor store names one: CSOSN 102 (Simples: tributada sem permissão de
    crédito) or CST 00 (regime normal: tributada integralmente)."""
    return "102" if tax_regime in SIMPLES_REGIMES else "00"


def icms_fits_regime(code: str, tax_regime: str) -> bool:
    return code in (ICMS_CSOSN if tax_regime in SIMPLES_REGIMES else ICMS_CST)


def interstate_cfop(cfop: str) -> str:
    """A sale to another UF uses the 6xxx CFOP of the same operation (5102 → 6102)."""
    return f"6{cfop[1:]}" if len(cfop) == 4 and cfop.startswith("5") else cfop


def normalize_code(value: str) -> str:
    """What goes into the NF-e: digits only (the admin accepts 6109.10.00 as typed)."""
    return _digits(value).upper()


# IBS/CBS (NT 2025.002): CST (3 digits) and cClassTrib (6 digits whose first three are the CST) of each item.
def validate_ibs_cbs_cst(value: str) -> None:
    if not value:
        return
    if not re.fullmatch(r"\d{3}", value):
        raise ValidationError(_("CST do IBS/CBS inválido: informe 3 dígitos (ex.: 000)."))
    if value not in SUPPORTED_CSTS:
        raise ValidationError(
            _(
                "CST do IBS/CBS %(value)s ainda não é calculado pela loja: use 000 (tributação integral) ou 410 "
                "(imunidade e não incidência)."
            ),
            params={"value": value},
        )


def validate_ibs_cbs_class(value: str) -> None:
    if value and not re.fullmatch(r"\d{6}", value):
        raise ValidationError(
            _("Classificação tributária (cClassTrib) inválida: informe os 6 dígitos da tabela (ex.: 000001).")
        )


def ibs_cbs_pair_problem(cst: str, class_code: str) -> str:
    """The Portuguese reason the pair does not fit (a cClassTrib starts with its CST), or an empty string."""
    if cst and class_code and not class_code.startswith(cst):
        return str(
            _(
                "a classificação tributária %(class_code)s não pertence ao CST %(cst)s "
                "(os 3 primeiros dígitos são o CST)"
            )
            % {"class_code": class_code, "cst": cst}
        )
    return ""
