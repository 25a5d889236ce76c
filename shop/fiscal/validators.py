"""Validation of fiscal codes, with messages that say which field and why (pt-BR source strings)."""

from __future__ import annotations

import re

from django.core.exceptions import ValidationError
from django.utils.translation import gettext_lazy as _

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
    cleaned = _digits(value)
    if value and cleaned.upper() != "ISENTO" and not re.fullmatch(r"\d{2,14}", cleaned):
        raise ValidationError(_("Inscrição estadual inválida: use só números (até 14) ou ISENTO."))


def normalize_code(value: str) -> str:
    """What goes into the NF-e: digits only (the admin accepts 6109.10.00 as typed)."""
    return _digits(value).upper()
