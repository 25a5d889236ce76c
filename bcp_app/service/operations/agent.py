"""Operations of the agent tools that are not BCP objects (A2A intents, seed 002 tools), re-exported by
`bcp_app.service.operations`: product resolution with the negotiation check, one stock check, one order state."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bcp_app.protocol.names import CHECKOUT
from bcp_app.service.context import RequestContext
from bcp_app.service.operations.base import incompatible
from shop.catalog import selectors


def find_products(ctx: RequestContext, *, query: str = "", item_id: str = "", limit: int = 10) -> Any:
    """The products an agent names while it builds a checkout (A2A intents): by `item_id` (a SKU → its product,
    or a `prod_…` id), else by full-text `query`; shop models with their active variants, `[]` for none.
    Product resolution is part of checkout, so the checkout capability must be active (BCP-NEG-06)."""
    if not ctx.has(CHECKOUT):
        return incompatible(ctx, CHECKOUT)
    if item_id:
        variant = selectors.variants_by_sku([item_id]).get(item_id)
        public_id = variant.product.public_id if variant else (item_id if item_id.startswith("prod_") else "")
        product = selectors.product_get(public_id=public_id) if public_id else None
        return [product] if product is not None else []
    if not query.strip():
        return []
    try:
        return list(selectors.product_search(query=query[:200], per_page=limit).products)
    except selectors.CatalogQueryError:
        return []


@dataclass(frozen=True)
class StockLine:
    sku: str
    quantity: int
    known: bool  # a sellable variant (variant and product active)
    availability: str  # schema.org name: InStock, OutOfStock or PreOrder ("" when unknown)
    in_stock: int
    can_fulfill: bool


def stock_check(items: Sequence[tuple[str, int]], *, together: bool = False) -> list[StockLine]:
    """The one stock check of the agent tools (seed 002 `inventory.check`, `order.intent`'s pre-flight): per
    item, can its quantity be sold now (backorder variants always can). `together`: the quantities of one SKU
    add up, as one order takes them all. The engine re-checks under its locks at complete (shop/checkout/stock.py)."""
    variants = selectors.variants_by_sku(sku for sku, _ in items)
    wanted: dict[str, int] = {}
    for sku, quantity in items:
        wanted[sku] = wanted.get(sku, 0) + quantity
    lines = []
    for sku, quantity in items:
        variant = variants.get(sku)
        needed = wanted[sku] if together else quantity
        lines.append(
            StockLine(
                sku=sku,
                quantity=quantity,
                known=variant is not None,
                availability=variant.availability if variant else "",
                in_stock=variant.stock if variant else 0,
                can_fulfill=variant is not None and (variant.allow_backorder or variant.stock >= needed),
            )
        )
    return lines


def order_state(order: Mapping[str, Any]) -> str:
    """One state for a whole BCP order (§7) from its lines' derived statuses: every line removed → canceled;
    every remaining line fulfilled → fulfilled; some fulfilled → partial; else processing."""
    statuses = {line.get("status") for line in order.get("line_items", [])}
    if statuses <= {"removed"}:
        return "canceled"
    statuses.discard("removed")
    if statuses == {"fulfilled"}:
        return "fulfilled"
    return "partial" if statuses & {"fulfilled", "partial"} else "processing"
