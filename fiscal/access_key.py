"""Chave de acesso of an NF-e (MOC 7.0 §5.4): 44 digits, the last one a módulo 11 check digit.

Layout: cUF(2) AAMM(4) CNPJ(14) mod(2) série(3) nNF(9) tpEmis(1) cNF(8) cDV(1).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

UF_CODES = {
    "RO": "11", "AC": "12", "AM": "13", "RR": "14", "PA": "15", "AP": "16", "TO": "17", "MA": "21", "PI": "22",
    "CE": "23", "RN": "24", "PB": "25", "PE": "26", "AL": "27", "SE": "28", "BA": "29", "MG": "31", "ES": "32",
    "RJ": "33", "SP": "35", "PR": "41", "SC": "42", "RS": "43", "MS": "50", "MT": "51", "GO": "52", "DF": "53",
}  # fmt: skip
KEY_RE = re.compile(r"^\d{44}$")


def check_digit(first_43: str) -> int:
    """Módulo 11 with weights 2..9 from the right; a remainder of 0 or 1 gives 0."""
    if not re.fullmatch(r"\d{43}", first_43):
        raise ValueError("the check digit is computed over exactly 43 digits")
    total = sum(int(digit) * (2 + index % 8) for index, digit in enumerate(reversed(first_43)))
    remainder = total % 11
    return 0 if remainder < 2 else 11 - remainder


def is_valid(key: str) -> bool:
    return isinstance(key, str) and bool(KEY_RE.match(key)) and check_digit(key[:43]) == int(key[43])


@dataclass(frozen=True)
class KeyParts:
    uf: str  # two-letter UF of the issuer
    year_month: str  # "AAMM"
    cnpj: str  # 14 digits (the alphanumeric CNPJ of 2026 is not in the NF-e 4.00 key yet)
    series: int
    number: int
    numeric_code: int  # cNF, 8 digits, random per document
    model: str = "55"
    emission_type: str = "1"  # normal


def build(parts: KeyParts) -> str:
    if parts.uf not in UF_CODES:
        raise ValueError(f"unknown UF {parts.uf!r}")
    if not re.fullmatch(r"\d{4}", parts.year_month) or not re.fullmatch(r"\d{14}", parts.cnpj):
        raise ValueError("year_month must be AAMM and cnpj 14 digits")
    if not 0 <= parts.series <= 999 or not 1 <= parts.number <= 999_999_999 or not 0 <= parts.numeric_code < 10**8:
        raise ValueError("series, number or numeric code out of range")
    body = (
        f"{UF_CODES[parts.uf]}{parts.year_month}{parts.cnpj}{parts.model}{parts.series:03d}"
        f"{parts.number:09d}{parts.emission_type}{parts.numeric_code:08d}"
    )
    return body + str(check_digit(body))
