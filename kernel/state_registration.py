"""Inscrição estadual (IE): length and check digits per UF.

No maintained Python package checks the IE of every UF (pycpfcnpj, brazilnum and validate-docbr cover CPF/CNPJ
only; the IE packages on PyPI are unmaintained or cover a few states), so the rules are implemented here from
the SEFAZ routines published by SINTEGRA, "Conferência de Inscrições Estaduais":
http://www.sintegra.gov.br/insc_est.html (one page per state, http://www.sintegra.gov.br/Cad_Estados/cad_XX.html),
with the Bahia rules of its SEFAZ (https://www.sefaz.ba.gov.br/contribuinte/informacoes_fiscais/doc_fiscal/calculodv.htm:
8 or 9 digits, module by the first or second digit). Each state's example from those pages is in
tests/kernel/test_state_registration.py.

`state_registration_problem(value, uf)` says what is wrong (a sentence for the field) or "" for a valid one;
"ISENTO" is accepted for every UF.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

EXEMPT = "ISENTO"


def _weighted(digits: str, weights: Sequence[int]) -> int:
    return sum(int(d) * w for d, w in zip(digits, weights, strict=True))


def _down(start: int, count: int) -> list[int]:
    """`count` weights from `start` down to 2, then 9, 8, … again (the usual módulo 11 series)."""
    weights = []
    weight = start
    for _ in range(count):
        weights.append(weight)
        weight = weight - 1 if weight > 2 else 9
    return weights


def _mod11(digits: str, weights: Sequence[int]) -> int:
    """11 − rest; a rest of 0 or 1 gives 0 (most states)."""
    rest = _weighted(digits, weights) % 11
    return 0 if rest < 2 else 11 - rest


def _mod11_ten(digits: str, weights: Sequence[int]) -> int:
    """11 − rest, where 10 and 11 give 0 (same result as `_mod11`, written as the states that say it so)."""
    check = 11 - _weighted(digits, weights) % 11
    return 0 if check >= 10 else check


def _two_mod11(ie: str, first: Sequence[int], second: Sequence[int], calc: Callable[[str, Sequence[int]], int]) -> bool:
    size = len(first)
    d1 = calc(ie[:size], first)
    d2 = calc(ie[:size] + str(d1), second)
    return ie[size:] == f"{d1}{d2}"


def _ac(ie: str) -> bool:  # 13 digits, "01" first, two check digits
    return len(ie) == 13 and ie.startswith("01") and _two_mod11(ie, _down(4, 11), _down(5, 12), _mod11)


def _al(ie: str) -> bool:  # 9 digits, "24" first, (sum × 10) mod 11, 10 → 0
    if len(ie) != 9 or not ie.startswith("24"):
        return False
    check = _weighted(ie[:8], _down(9, 8)) * 10 % 11
    return int(ie[8]) == (0 if check == 10 else check)


def _ap(ie: str) -> bool:  # 9 digits, "03" first; p and d by the number's range
    if len(ie) != 9 or not ie.startswith("03"):
        return False
    number = int(ie[:8])
    p, d = (5, 0) if number <= 3017000 else (9, 1) if number <= 3019022 else (0, 0)
    check = 11 - (p + _weighted(ie[:8], _down(9, 8))) % 11
    check = 0 if check == 10 else d if check == 11 else check
    return int(ie[8]) == check


def _am(ie: str) -> bool:  # 9 digits; a sum under 11 gives 11 − sum
    if len(ie) != 9:
        return False
    total = _weighted(ie[:8], _down(9, 8))
    check = 11 - total if total < 11 else (0 if total % 11 < 2 else 11 - total % 11)
    return int(ie[8]) == check


def _ba(ie: str) -> bool:
    """8 or 9 digits; the second check digit is computed first. Module 10 when the first digit (8 digits) or the
    second (9 digits) is 0-5 or 8, module 11 when it is 6, 7 or 9."""
    if len(ie) not in (8, 9):
        return False
    body = ie[:-2]
    module = 11 if ie[len(ie) - 8] in "679" else 10

    def calc(digits: str) -> int:
        rest = _weighted(digits, range(len(digits) + 1, 1, -1)) % module
        if module == 10:
            return 0 if rest == 0 else 10 - rest
        return 0 if rest < 2 else 11 - rest

    d2 = calc(body)
    d1 = calc(body + str(d2))
    return ie[-2:] == f"{d1}{d2}"


def _nine_mod11(ie: str) -> bool:  # CE, ES, PA (15), PB, PI, SC, SE, MA (12): 9 digits, weights 9..2
    return len(ie) == 9 and int(ie[8]) == _mod11(ie[:8], _down(9, 8))


def _df(ie: str) -> bool:  # 13 digits, "07" first, two check digits
    return len(ie) == 13 and ie.startswith("07") and _two_mod11(ie, _down(4, 11), _down(5, 12), _mod11)


def _go(ie: str) -> bool:  # 9 digits, 10/11/15/20-29 first; a rest of 1 gives 1 in one range of numbers
    if len(ie) != 9 or ie[:2] not in {"10", "11", "15", *(str(n) for n in range(20, 30))}:
        return False
    if ie[:8] == "11094402":  # SINTEGRA: this one number takes 0 or 1
        return ie[8] in "01"
    rest = _weighted(ie[:8], _down(9, 8)) % 11
    if rest == 0:
        check = 0
    elif rest == 1:
        check = 1 if 10103105 <= int(ie[:8]) <= 10119997 else 0
    else:
        check = 11 - rest
    return int(ie[8]) == check


def _ma(ie: str) -> bool:  # 9 digits, "12" first
    return ie.startswith("12") and _nine_mod11(ie)


def _mt(ie: str) -> bool:  # 11 digits (shorter ones are completed with zeros on the left)
    if len(ie) > 11 or len(ie) < 9:
        return False
    ie = ie.zfill(11)
    return int(ie[10]) == _mod11(ie[:10], _down(3, 10))


def _ms(ie: str) -> bool:  # 9 digits, "28" first (and "50", the newer range); rest 0 or 11 − rest > 9 give 0
    if len(ie) != 9 or ie[:2] not in ("28", "50"):
        return False
    rest = _weighted(ie[:8], _down(9, 8)) % 11
    check = 0 if rest == 0 or 11 - rest > 9 else 11 - rest
    return int(ie[8]) == check


def _mg(ie: str) -> bool:
    """13 digits: municipality (3), number (6), order (2), 2 check digits. D1: a 0 after the municipality, weights
    1, 2 alternating from the left, the digits of the products added, up to the next ten. D2: weights 3, 2, 11..2."""
    if len(ie) != 13:
        return False
    padded = ie[:3] + "0" + ie[3:11]
    total = sum(sum(int(c) for c in str(int(d) * (1 if i % 2 == 0 else 2))) for i, d in enumerate(padded))
    d1 = (10 - total % 10) % 10
    d2 = _mod11(ie[:11] + str(d1), [3, 2, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2])
    return ie[11:] == f"{d1}{d2}"


def _pa(ie: str) -> bool:  # 9 digits, "15" first
    return ie.startswith("15") and _nine_mod11(ie)


def _pr(ie: str) -> bool:  # 10 digits: 8 + 2 check digits, weights 3, 2, 7..2 and 4, 3, 2, 7..2
    return len(ie) == 10 and _two_mod11(ie, [3, 2, 7, 6, 5, 4, 3, 2], [4, 3, 2, 7, 6, 5, 4, 3, 2], _mod11)


def _pe(ie: str) -> bool:
    """9 digits (e-Fisco): two check digits, weights 8..2 and 9..2. 14 digits (the old CACEPE): one check digit,
    weights 5, 4, 3, 2, 1, 9..2, 11 − rest with 10 or 11 taken minus 10."""
    if len(ie) == 9:
        return _two_mod11(ie, _down(8, 7), _down(9, 8), _mod11)
    if len(ie) == 14:
        check = 11 - _weighted(ie[:13], [5, 4, 3, 2, 1, 9, 8, 7, 6, 5, 4, 3, 2]) % 11
        return int(ie[13]) == (check - 10 if check > 9 else check)
    return False


def _rj(ie: str) -> bool:  # 8 digits, weights 2, 7..2
    return len(ie) == 8 and int(ie[7]) == _mod11(ie[:7], [2, 7, 6, 5, 4, 3, 2])


def _rn(ie: str) -> bool:  # 9 or 10 digits, "20" first, (sum × 10) mod 11, 10 → 0
    if len(ie) not in (9, 10) or not ie.startswith("20"):
        return False
    body = ie[:-1]
    check = _weighted(body, range(len(body) + 1, 1, -1)) * 10 % 11
    return int(ie[-1]) == (0 if check == 10 else check)


def _rs(ie: str) -> bool:  # 10 digits, weights 2, 9..2
    return len(ie) == 10 and int(ie[9]) == _mod11_ten(ie[:9], [2, 9, 8, 7, 6, 5, 4, 3, 2])


def _ro(ie: str) -> bool:
    """14 digits since 08/2000 (weights 6..2, 9..2), or the old 9 (municipality + 5 digits weighted 6..2);
    11 − rest, 10 or 11 taken minus 10."""
    if len(ie) == 14:
        body, weights = ie[:13], _down(6, 13)
    elif len(ie) == 9:
        body, weights = ie[3:8], _down(6, 5)
    else:
        return False
    check = 11 - _weighted(body, weights) % 11
    return int(ie[-1]) == (check - 10 if check > 9 else check)


def _rr(ie: str) -> bool:  # 9 digits, "24" first, weights 1..8, module 9
    return len(ie) == 9 and ie.startswith("24") and int(ie[8]) == _weighted(ie[:8], range(1, 9)) % 9


def _sp(ie: str) -> bool:
    """12 digits (industry and commerce): 9th and 12th are check digits, weights 1, 3..8, 10 and 3, 2, 10..2, the
    rest's last digit. "P" + 12 (rural producer): the 10th character (9th digit) checks the 8 digits before it."""
    if ie.startswith("P"):
        digits = ie[1:]
        return len(digits) == 12 and digits.isdigit() and _sp_check(digits[:8], digits[8])
    return (
        len(ie) == 12
        and _sp_check(ie[:8], ie[8])
        and int(ie[11]) == _weighted(ie[:11], [3, 2, 10, 9, 8, 7, 6, 5, 4, 3, 2]) % 11 % 10
    )


def _sp_check(digits: str, check: str) -> bool:
    return int(check) == _weighted(digits, [1, 3, 4, 5, 6, 7, 8, 10]) % 11 % 10


def _to(ie: str) -> bool:
    """9 digits (current): weights 9..2. 11 digits (old): the 3rd and 4th (01, 02, 03 or 99) stay out of the sum."""
    if len(ie) == 11:
        return ie[2:4] in ("01", "02", "03", "99") and int(ie[10]) == _mod11(ie[:2] + ie[4:10], _down(9, 8))
    return _nine_mod11(ie)


RULES: dict[str, tuple[Callable[[str], bool], tuple[int, ...]]] = {
    # UF → (check, the lengths said in the message)
    "AC": (_ac, (13,)),
    "AL": (_al, (9,)),
    "AP": (_ap, (9,)),
    "AM": (_am, (9,)),
    "BA": (_ba, (8, 9)),
    "CE": (_nine_mod11, (9,)),
    "DF": (_df, (13,)),
    "ES": (_nine_mod11, (9,)),
    "GO": (_go, (9,)),
    "MA": (_ma, (9,)),
    "MT": (_mt, (11,)),
    "MS": (_ms, (9,)),
    "MG": (_mg, (13,)),
    "PA": (_pa, (9,)),
    "PB": (_nine_mod11, (9,)),
    "PR": (_pr, (10,)),
    "PE": (_pe, (9,)),
    "PI": (_nine_mod11, (9,)),
    "RJ": (_rj, (8,)),
    "RN": (_rn, (9, 10)),
    "RS": (_rs, (10,)),
    "RO": (_ro, (14,)),
    "RR": (_rr, (9,)),
    "SC": (_nine_mod11, (9,)),
    "SP": (_sp, (12,)),
    "SE": (_nine_mod11, (9,)),
    "TO": (_to, (9,)),
}


def state_registration_normalize(value: str) -> str:
    """ "110.042.490.114" → "110042490114"; "isento" → "ISENTO"; "P-01100424.3/002" → "P011004243002"."""
    return re.sub(r"[^0-9A-Z]", "", (value or "").upper())


def state_registration_valid(value: str, uf: str) -> bool:
    """Whether `value` (punctuation allowed) is an IE of `uf` by its SEFAZ rules, or ISENTO. An unknown UF: False."""
    ie = state_registration_normalize(value)
    if ie == EXEMPT:
        return True
    rule = RULES.get((uf or "").upper())
    if rule is None or not re.fullmatch(r"P?\d+", ie) or (ie.startswith("P") and uf.upper() != "SP"):
        return False
    return rule[0](ie)


def state_registration_lengths(uf: str) -> tuple[int, ...]:
    """How many digits an IE of `uf` has, for a message ((12,), (8, 9)); () for an unknown UF."""
    rule = RULES.get((uf or "").upper())
    return rule[1] if rule else ()
