"""The invoice of an NF-e de devolução, built from the sale's note as it was sent to the provider.

A shop selling to consumers (non-contributors, who issue no note) takes returned goods back with its own NF-e de
entrada: finalidade 4 (devolução), natureza "Devolução de venda", CFOP 1.202 (buyer in the shop's UF) or 2.202
(another UF), referencing the sale's note by its chave (refNFe). Each returned item carries the sale's unit price,
codes and taxes, and its shares of the sale's freight, discount and other charges in proportion to the units that
came back; its IBS/CBS group is computed again on that proportional base at the sale's rates (fiscal/ibscbs.py), so
the note's totals are the sums of its items, as the SEFAZ checks.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.utils import timezone

from fiscal import ibscbs

OPERATION = "Devolução de venda"
CFOP_SAME_STATE, CFOP_OTHER_STATE = "1202", "2202"  # devolução de venda de mercadoria adquirida de terceiros


def _share(amount: int, part: int, whole: int) -> int:
    """`amount` × part / whole in centavos, rounded half up (a whole return gives the amount back exactly)."""
    return (2 * amount * part + whole) // (2 * whole) if whole else 0


def _regroup(group: dict[str, Any], base: int) -> dict[str, Any]:
    """The sale's IBS/CBS group of an item again, on the returned units' base, at the sale's rates."""
    if "base" not in group:
        return dict(group)  # a CST without gIBSCBS (410): CST and cClassTrib only
    rates = ibscbs.Rates(
        cbs=ibscbs.parse_rate(group["cbs_rate"]),
        ibs_uf=ibscbs.parse_rate(group["ibs_uf_rate"]),
        ibs_mun=ibscbs.parse_rate(group["ibs_mun_rate"]),
    )
    return ibscbs.item_group(cst=group["cst"], class_code=group["class_code"], base=base, rates=rates)


def return_invoice(
    sale: Mapping[str, Any], *, access_key: str, quantities: Mapping[str, int], already: Mapping[str, int]
) -> tuple[dict[str, Any], list[str]]:
    """(invoice, problems): the devolução of `quantities` (SKU → units) of the sale's note `sale` (its invoice as
    sent), whose chave is `access_key`. `already`: the units of each SKU other devolução notes of the sale took
    back. Problems (in Portuguese, naming the item) when a SKU is not on the note or more units would come back
    than it sold."""
    issuer = sale.get("issuer") or {}
    recipient = sale.get("recipient") or {}
    state = (recipient.get("address") or {}).get("state") or issuer.get("state")
    cfop = CFOP_SAME_STATE if state == issuer.get("state") else CFOP_OTHER_STATE
    sold = {str(item["sku"]): item for item in sale.get("items") or []}
    problems: list[str] = []
    items: list[dict[str, Any]] = []
    for sku, quantity in quantities.items():
        item = sold.get(sku)
        if item is None:
            problems.append(f"SKU {sku}: não consta da NF-e de venda")
            continue
        whole, taken = int(item["quantity"]), int(already.get(sku, 0))
        if quantity < 1 or quantity + taken > whole:
            problems.append(
                f"item “{item['description']}” (SKU {sku}): {quantity} unidade(s) a devolver, mas a NF-e de venda "
                f"tem {whole} e outras NF-e de devolução já devolveram {taken}"
            )
            continue
        returned: dict[str, Any] = {
            **{key: value for key, value in item.items() if key != "ibs_cbs"},
            "cfop": cfop,
            "quantity": quantity,
            "total": int(item["unit_price"]) * quantity,
        }
        for key in ("shipping_amount", "discount_amount", "other_amount"):
            returned[key] = _share(int(item.get(key) or 0), quantity, whole)
        if item.get("ibs_cbs"):
            base = ibscbs.item_base(
                total=returned["total"], freight=returned["shipping_amount"], other=returned["other_amount"],
                discount=returned["discount_amount"],
            )  # fmt: skip
            returned["ibs_cbs"] = _regroup(item["ibs_cbs"], base)
        items.append(returned)
    if not items and not problems:
        problems.append("nenhum item a devolver")
    shipping, other, discount = (sum(int(item[key]) for item in items) for key in
                                 ("shipping_amount", "other_amount", "discount_amount"))  # fmt: skip
    invoice: dict[str, Any] = {
        **{key: value for key, value in sale.items() if key not in ("items", "ibs_cbs_totals")},
        "purpose": "return",  # finalidade 4, tipo de documento 0 (entrada)
        "operation": OPERATION,
        "referenced_keys": [access_key],
        "issued_at": timezone.localtime().isoformat(timespec="seconds"),
        "items": items,
        "shipping_amount": shipping,
        "other_amount": other,
        "discount_amount": discount,
        "total_amount": sum(int(item["total"]) for item in items) + shipping + other - discount,
    }
    groups = [item["ibs_cbs"] for item in items if "ibs_cbs" in item]
    if groups:
        invoice["ibs_cbs_totals"] = ibscbs.totals(groups)
    return invoice, problems
