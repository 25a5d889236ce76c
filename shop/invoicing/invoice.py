"""The neutral invoice `fiscal` issues from: store (issuer), buyer (recipient), lines with fiscal codes.

Built when the issue is requested, so a re-issue after fixing a product picks up the corrected data.
Missing data comes back as Portuguese problems naming the product and the field; they block the
issue (the fiscal document shows them) and never touch the order.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from django.conf import settings
from django.utils import timezone

from fiscal import ibscbs
from kernel.br_validation import tax_id_normalize
from kernel.compiled import compiled
from kernel.money import apportion
from kernel.ops import kept, request_cache
from orders.models import Order
from orders.net_value import item_discount, line_discount_shares, prorated
from shop.invoicing.validators import (
    ibs_cbs_pair_problem,
    icms_default,
    icms_fits_regime,
    interstate_cfop,
    normalize_code,
    state_registration_problem,
)
from shop.models import Variant
from shop.models.store import FISCAL_KEY, STORE_ROW_ID, StoreSettings

# What the invoice reads of the settings row (the issuer), cached as plain values: the row has some sixty
# columns, and reading it was 7 % of the worker's CPU per placed order (issue 34). Saving the row drops it.
ISSUER_FIELDS = (
    "cnpj", "state_registration", "tax_regime", "state", "default_cfop", "icms_cst", "pis_cofins_cst",
    "ibs_cbs_cst", "ibs_cbs_class", "fiscal_environment", "nfe_series", "legal_name", "trade_name", "cnae",
    "street", "number", "neighborhood", "city", "postal_code",
)  # fmt: skip
ISSUER_SECONDS = 3600  # saving the row drops it; the TTL bounds a missed drop (a minute without Redis: kept.timeout)


def _store() -> SimpleNamespace:
    values = request_cache.get(FISCAL_KEY)
    if not isinstance(values, dict):
        values = StoreSettings.objects.filter(pk=STORE_ROW_ID).values(*ISSUER_FIELDS).first()
        if values is None:  # no row saved yet: the defaults the shop shows
            default = StoreSettings(trade_name=settings.SHOP_NAME)
            values = {name: getattr(default, name) for name in ISSUER_FIELDS}
        request_cache.set(FISCAL_KEY, values, kept.timeout(ISSUER_SECONDS))
    return SimpleNamespace(**values)


COMPILED_SKUS = 8  # orders with up to this many lines read their variants through a statement compiled once


def _variants(skus: list[str]) -> list[Variant]:
    """The variants of `skus` with their products; for a few SKUs a statement compiled once per count (issue 34:
    compiling it cost more than running it)."""
    if not skus or len(skus) > COMPILED_SKUS:
        return list(Variant.objects.select_related("product").filter(sku__in=skus))
    read = compiled(
        ("invoice.variants", len(skus)),
        lambda *stand_ins: Variant.objects.select_related("product").filter(sku__in=stand_ins).order_by(),
        len(skus),
    )
    return read.rows(*skus)


def _amount(order: Order, kind: str) -> int:
    return sum(int(entry.get("amount", 0)) for entry in order.totals or [] if entry.get("type") == kind)


def build_invoice(order: Order) -> tuple[dict[str, Any], list[str]]:
    """(invoice, problems). Two queries: the store row and the variants of the order's lines.

    Tax codes per item: the product's CFOP and ICMS CST/CSOSN, else the store's defaults (CSOSN 102 / CST 00 by
    regime); a sale to another UF takes the 6xxx CFOP of the same operation; PIS/COFINS CST from the store.
    IBS/CBS (`fiscal.ibscbs`, NT 2025.002): when the regime's date has come, each item carries `ibs_cbs` (CST and
    cClassTrib of the product, else the store's; base = the item's total) and the invoice `ibs_cbs_totals`."""
    store = _store()
    problems: list[str] = []
    cnpj = tax_id_normalize(store.cnpj)
    if not cnpj:
        problems.append("dados da loja: CNPJ não informado")
    if not store.state_registration:
        problems.append("dados da loja: inscrição estadual não informada")
    elif state_registration_problem(store.state_registration, store.state):  # a row saved before the UF check
        problems.append(f"dados da loja: inscrição estadual inválida para {store.state or 'a UF da loja'}")
    if not store.tax_regime:
        problems.append("dados da loja: regime tributário não informado")
    regime = store.tax_regime or "simples"
    destination = order.destination or {}
    interstate = bool(destination.get("state")) and destination.get("state") != store.state
    store_cfop = normalize_code(store.default_cfop) or "5102"
    store_icms = normalize_code(store.icms_cst) or icms_default(regime)
    pis_cofins = normalize_code(store.pis_cofins_cst) or "07"
    if not icms_fits_regime(store_icms, regime):
        problems.append(f"dados da loja: CST/CSOSN do ICMS {store_icms} não combina com o regime tributário")
    # IBS/CBS (NT 2025.002): by the regime and the day of issue; the classification of the product, else the store's.
    with_ibs_cbs = ibscbs.applies(
        tax_regime=regime, on=timezone.localdate(), normal_from=settings.FISCAL_IBSCBS_NORMAL_FROM,
        simples_from=settings.FISCAL_IBSCBS_SIMPLES_FROM,
    )  # fmt: skip
    rates = ibscbs.Rates(
        cbs=settings.FISCAL_CBS_RATE, ibs_uf=settings.FISCAL_IBS_UF_RATE, ibs_mun=settings.FISCAL_IBS_MUN_RATE
    )
    store_ibs_cst = normalize_code(store.ibs_cbs_cst) or ibscbs.DEFAULT_CST
    store_ibs_class = normalize_code(store.ibs_cbs_class) or (
        ibscbs.DEFAULT_CLASS if store_ibs_cst == ibscbs.DEFAULT_CST else ""
    )
    shipping_amount, other_amount = _amount(order, "fulfillment"), _amount(order, "fee")
    discount_amount = item_discount(order.totals or [])
    ordered = list(order.lines.all())
    # Each line's share of the order's discount, split over what was bought (as the refunds split it), then pro
    # rata to what is still on the order: a line cancelled or returned before the note takes its share away.
    shares = line_discount_shares([(line.unit_price, line.quantity_original) for line in ordered], discount_amount)
    discount_of = {
        line.pk: prorated(share, line.quantity_total, line.quantity_original)
        for line, share in zip(ordered, shares, strict=True)
    }
    lines = [line for line in ordered if line.quantity_total > 0]
    variants = {variant.sku: variant for variant in _variants([line.sku for line in lines])}
    items: list[dict[str, Any]] = []
    for line in lines:
        variant = variants.get(line.sku)
        if variant is None:
            problems.append(f"item “{line.title}” (SKU {line.sku}): não está mais no catálogo, sem dados fiscais")
            continue
        product = variant.product
        ncm = normalize_code(variant.ncm or product.ncm)
        cfop = normalize_code(product.cfop) or store_cfop
        icms = normalize_code(product.icms_cst) or store_icms
        where = f"produto “{product.title}” (SKU {line.sku})"
        if not ncm:
            problems.append(f"{where}: NCM não informado")
        if not cfop:
            problems.append(f"{where}: CFOP não informado (nem o padrão da loja)")
        if product.icms_cst and not icms_fits_regime(icms, regime):
            problems.append(f"{where}: CST/CSOSN do ICMS {icms} não combina com o regime tributário da loja")
        if not product.unit:
            problems.append(f"{where}: unidade comercial não informada")
        if not product.origin:
            problems.append(f"{where}: origem da mercadoria não informada")
        ibs_cbs: dict[str, Any] | None = None
        if with_ibs_cbs:
            ibs_cst = normalize_code(product.ibs_cbs_cst) or store_ibs_cst
            ibs_class = normalize_code(product.ibs_cbs_class) or (store_ibs_class if ibs_cst == store_ibs_cst else "")
            pair_problem = ibs_cbs_pair_problem(ibs_cst, ibs_class)
            if ibs_cst not in ibscbs.SUPPORTED_CSTS:
                problems.append(f"{where}: CST do IBS/CBS {ibs_cst} não é calculado pela loja (use 000 ou 410)")
            elif not ibs_class:
                problems.append(f"{where}: classificação tributária do IBS/CBS (cClassTrib) não informada")
            elif pair_problem:
                problems.append(f"{where}: {pair_problem}")
            else:
                ibs_cbs = {"cst": ibs_cst, "class_code": ibs_class}  # computed below, once freight is apportioned
        items.append(
            {
                "sku": line.sku, "description": line.title, "ncm": ncm,
                "cfop": interstate_cfop(cfop) if interstate else cfop, "origin": product.origin,
                "unit": product.unit, "quantity": line.quantity_total, "unit_price": line.unit_price,
                "total": line.unit_price * line.quantity_total, "discount_amount": discount_of[line.pk],
                "icms_cst": icms, "pis_cst": pis_cofins, "cofins_cst": pis_cofins,
                **({"ibs_cbs": ibs_cbs} if ibs_cbs is not None else {}),
            }
        )  # fmt: skip
    # The note's freight and installment interest (vOutro: charged by the shop, part of the operation's value),
    # apportioned to the items by their totals; an item's IBS/CBS base is its operation's value with those shares.
    weights = [int(item["total"]) for item in items]
    for item, freight, other in zip(
        items, apportion(shipping_amount, weights), apportion(other_amount, weights), strict=True
    ):
        item["shipping_amount"], item["other_amount"] = freight, other
        if "ibs_cbs" in item:
            base = ibscbs.item_base(
                total=int(item["total"]), freight=freight, other=other, discount=int(item["discount_amount"])
            )
            chosen = item["ibs_cbs"]
            item["ibs_cbs"] = ibscbs.item_group(
                cst=chosen["cst"], class_code=chosen["class_code"], base=base, rates=rates
            )
    discount_amount = sum(int(item["discount_amount"]) for item in items)
    if not items and not problems:
        problems.append("o pedido não tem itens a faturar")
    tax_id = tax_id_normalize(order.buyer_tax_id)
    if not tax_id:
        problems.append(f"pedido #{order.number}: CPF/CNPJ do comprador não informado")
    invoice = {
        "order_ref": order.public_id,
        "order_number": order.number,
        "issued_at": timezone.localtime().isoformat(timespec="seconds"),
        "environment": store.fiscal_environment or "homologacao",
        "series": store.nfe_series,
        "issuer": {
            "cnpj": cnpj, "legal_name": store.legal_name, "trade_name": store.trade_name,
            "state_registration": normalize_code(store.state_registration), "tax_regime": store.tax_regime,
            "cnae": normalize_code(store.cnae), "state": store.state,
            "address": {"street": store.street, "number": store.number, "neighborhood": store.neighborhood,
                        "city": store.city, "state": store.state, "postal_code": store.postal_code},
        },
        "recipient": {
            "name": f"{order.buyer_first_name} {order.buyer_last_name}".strip(), "tax_id": tax_id,
            "email": order.buyer_email, "phone": order.buyer_phone,
            "address": {key: str(destination.get(key, "")) for key in
                        ("street", "number", "complement", "neighborhood", "city", "state", "postal_code")},
        },
        "items": items,
        "shipping_amount": shipping_amount,
        "other_amount": other_amount,
        "discount_amount": discount_amount,
        # vNF: what the note's items add up to; the order's total unless units left the order before the note.
        "total_amount": sum(weights) + shipping_amount + other_amount - discount_amount,
    }  # fmt: skip
    groups = [item["ibs_cbs"] for item in items if "ibs_cbs" in item]
    if groups:  # W34: the totals group goes with the items' groups
        invoice["ibs_cbs_totals"] = ibscbs.totals(groups)
    return invoice, problems
