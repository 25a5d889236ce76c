"""IBS and CBS of the consumption-tax reform on the NF-e (NT 2025.002-RTC, leiaute 4.00 with the RTC groups).

Amounts are integer centavos; rates are kept as integers in ten-thousandths of a percent (pIBSUF and its
siblings are `3v2-4`: up to four decimals), so nothing here touches a float.

Fields built here, by their ids in the NT's field table:
- per item, group `IBSCBS` (UB12) under `det/imposto`: `CST` (UB13, 3 digits), `cClassTrib` (UB14, 6 digits whose
  first three are the CST), and for a taxed CST the group `gIBSCBS` (UB15): `vBC` (UB16), `gIBSUF` (UB17) with
  `pIBSUF` (UB18) and `vIBSUF` (UB35), `gIBSMun` (UB36) with `pIBSMun` (UB37) and `vIBSMun` (UB54), `vIBS` (UB54a =
  vIBSUF + vIBSMun, rule UB54a-10) and `gCBS` (UB55) with `pCBS` (UB56) and `vCBS` (UB70). Each value is
  vBC × rate / 100 rounded half up to the centavo (rules UB35-10, UB67-10).
- per note, group `IBSCBSTot` (W34) under `total`: `vBCIBSCBS` (W35), `gIBS` with `gIBSUF` (`vDif` W38, `vDevTrib`
  W39, `vIBSUF` W41), `gIBSMun` (`vDif` W43, `vDevTrib` W44, `vIBSMun` W46), `vIBS` (W47), `vCredPres` (W48),
  `vCredPresCondSus` (W49); `gCBS` with `vDif` (W53), `vDevTrib` (W54), `vCBS` (W56), `vCredPres` (W56a),
  `vCredPresCondSus` (W56b). Each total is the sum of the items' already rounded values (W35-10, W41-10, W46-10,
  W47-10, W56-10). The shop defers, returns and presumes no credit: those totals are 0, present because the
  leiaute makes them 1-1.
- The totals group goes with the items' groups in both directions (W34-10 rejection 1118: totals without an item
  group; W34-20 rejection 1119: an item group without totals).

Who carries the groups and when (`applies`): the normal regime (CRT 3) from 5 January 2026 (rule UB12-10, rejection
1115 without the group); Simples Nacional (CRT 1/2) and MEI (CRT 4) from 2027 — a date in the settings
(`FISCAL_IBSCBS_SIMPLES_FROM`), not a code change. The 2026 test rates are CBS 0.9 % (LC 214/2025 art. 346) and IBS
0.1 % all to the UF with 0 % to the municipality (art. 343; rule UB37-10); they are settings too.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Any

from kernel.money import format_brl

# CST of IBS/CBS the shop computes (tabela CST do IBS/CBS, Informe Técnico 2025.002):
# 000 tributação integral → gIBSCBS with the full rates; 410 imunidade e não incidência → no gIBSCBS.
TAXED_CSTS = frozenset({"000"})
UNTAXED_CSTS = frozenset({"410"})
SUPPORTED_CSTS = TAXED_CSTS | UNTAXED_CSTS
DEFAULT_CST = "000"
DEFAULT_CLASS = "000001"  # cClassTrib of CST 000: "situações tributadas integralmente pelo IBS e CBS"
SIMPLES_REGIMES = frozenset({"simples", "simples_excesso", "mei"})
RATE_SCALE = 10_000  # a rate of 1 % is 10 000 units: four decimals


@dataclass(frozen=True)
class Rates:
    """Rates in ten-thousandths of a percent (0.9 % → 9000)."""

    cbs: int
    ibs_uf: int
    ibs_mun: int


def parse_rate(text: str) -> int:
    """ "0.90" or "0,9" (percent) → 9000. ValueError naming the value for anything else."""
    try:
        value = Decimal(str(text).strip().replace(",", "."))
    except InvalidOperation as exc:
        raise ValueError(f"alíquota inválida: {text!r}") from exc
    scaled = value * RATE_SCALE
    if not value.is_finite() or value < 0 or value >= 100 or scaled != scaled.to_integral_value():
        raise ValueError(f"alíquota inválida: {text!r} (de 0 a 99,9999 %, até 4 casas decimais)")
    return int(scaled)


def rate_text(rate: int) -> str:
    """9000 → "0.9000" (the NT's decimal with four places)."""
    return f"{rate // RATE_SCALE}.{rate % RATE_SCALE:04d}"


def amount(base: int, rate: int) -> int:
    """vBC × p / 100 in centavos, rounded half up."""
    exact = Decimal(base) * Decimal(rate) / Decimal(100 * RATE_SCALE)
    return int(exact.quantize(Decimal(1), rounding=ROUND_HALF_UP))


def applies(*, tax_regime: str, on: date, normal_from: date, simples_from: date) -> bool:
    """Whether an NF-e issued `on` that day by a store in `tax_regime` carries the IBS/CBS groups."""
    start = simples_from if tax_regime in SIMPLES_REGIMES else normal_from
    return on >= start


def item_base(*, total: int, freight: int, discount: int, other: int = 0) -> int:
    """vBC (UB16) of an item: the operation's value, vProd + vFrete + vOutro − vDesc with the item's shares of the
    note's freight, other charges (installment interest) and discount (the shop's notes carry no vSeg, vII, and no
    ICMS, PIS or COFINS amounts to subtract: their CSTs are informed without values)."""
    return max(total + freight + other - discount, 0)


def item_group(*, cst: str, class_code: str, base: int, rates: Rates) -> dict[str, Any]:
    """The neutral form of one item's `IBSCBS` group (amounts in centavos, rates as NT decimals)."""
    group: dict[str, Any] = {"cst": cst, "class_code": class_code}
    if cst not in TAXED_CSTS:
        return group  # CST 410: CST and cClassTrib only, no gIBSCBS
    ibs_uf, ibs_mun, cbs = amount(base, rates.ibs_uf), amount(base, rates.ibs_mun), amount(base, rates.cbs)
    group.update(
        base=base,
        ibs_uf_rate=rate_text(rates.ibs_uf),
        ibs_uf_amount=ibs_uf,
        ibs_mun_rate=rate_text(rates.ibs_mun),
        ibs_mun_amount=ibs_mun,
        ibs_amount=ibs_uf + ibs_mun,
        cbs_rate=rate_text(rates.cbs),
        cbs_amount=cbs,
    )
    return group


TOTAL_KEYS = ("base", "ibs_uf_amount", "ibs_mun_amount", "ibs_amount", "cbs_amount")


def totals(groups: list[dict[str, Any]]) -> dict[str, int]:
    """`IBSCBSTot`: the sums of the items' rounded values (an item with CST 410 adds nothing)."""
    return {key: sum(int(group.get(key, 0)) for group in groups) for key in TOTAL_KEYS}


def totals_brl(totals: dict[str, Any] | None) -> dict[str, str] | None:
    """A note's stored totals as staff read them, in R$: base, IBS and CBS; None when it carries no IBS/CBS group
    (the order page's NF-e box and the NF-e's own admin page say the same)."""
    if not totals:
        return None
    return {key: format_brl(int(totals.get(field) or 0)) for key, field in (("base", "base"), ("ibs", "ibs_amount"),
                                                                            ("cbs", "cbs_amount"))}  # fmt: skip
