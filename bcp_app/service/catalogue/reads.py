"""Read operations of the typed catalogue tools over `shop.catalog.selectors` (no business rule of their own).

Each returns the tool's result model ("ok" or the seed's error envelope); constructing the model
validates the output, so a corrupt mapping fails here instead of reaching the agent.
"""

from __future__ import annotations

from django.conf import settings

from bcp_app.protocol.field_errors import field_path
from bcp_app.service.catalogue.contracts import (
    CatalogueListInput,
    CatalogueListOk,
    ErrorResult,
    InventoryCheckInput,
    InventoryCheckOk,
    InventoryLine,
    Product,
    ProductDetailInput,
    ProductDetailOk,
    error_result,
)
from bcp_app.service.operations import StockLine, stock_check
from shop.catalog import selectors
from shop.catalog.schema_org import availability_url, product_offer, product_schema_org
from shop.models import Product as ShopProduct
from shop.models import Variant


def _base_url() -> str:
    return settings.BCP_PUBLIC_URL


def _product(product: ShopProduct, *, base_url: str, variant: Variant | None = None) -> Product:
    """schema.org Product with one `Offer` (seed 002): the requested variant, else the lowest available."""
    data = product_schema_org(product, base_url=base_url, offers=False)
    data["offers"] = product_offer(product, url=str(data["url"]), variant=variant)
    return Product.model_validate(data)


def catalogue_list(args: CatalogueListInput) -> CatalogueListOk | ErrorResult:
    try:
        page = selectors.product_search(
            query=args.query or "",
            category_slug=args.category or "",
            in_stock=bool(args.in_stock),
            price_min=args.price_min,
            price_max=args.price_max,
            page=args.page,
            per_page=args.per_page,
        )
    except selectors.CatalogQueryError as exc:
        # Input that is well-formed but names nothing here (unknown category, page past the end).
        field = {"q": "query"}.get(exc.field, exc.field)
        return error_result("not_found", exc.message, fields={field_path((field,)): exc.message})
    base_url = _base_url()
    return CatalogueListOk(
        status="ok",
        results=[_product(p, base_url=base_url) for p in page.products],
        total=page.total,
        page=page.page,
        per_page=page.per_page,
    )


def product_detail(args: ProductDetailInput) -> ProductDetailOk | ErrorResult:
    variant = None
    if args.sku is not None:
        variant = selectors.variants_by_sku([args.sku]).get(args.sku)
        product = selectors.product_get(public_id=variant.product.public_id) if variant else None
        field, value = "sku", args.sku
    elif args.slug is not None:
        product = selectors.product_get(slug=args.slug)
        field, value = "slug", args.slug
    else:
        product = selectors.product_get(public_id=args.product_id)
        field, value = "product_id", args.product_id or ""
    if product is None:
        message = f"Produto não encontrado: {value}."
        return error_result("not_found", message, fields={field_path((field,)): message})
    return ProductDetailOk(status="ok", product=_product(product, base_url=_base_url(), variant=variant))


def unknown_skus(lines: list[StockLine]) -> ErrorResult | None:
    """`not_found` naming each `items[i].sku` the shop does not sell (inventory.check, order.intent), else None."""
    unknown = {
        field_path(("items", index, "sku")): f"SKU desconhecido: {line.sku}."
        for index, line in enumerate(lines)
        if not line.known
    }
    return error_result("not_found", "Há SKUs que a loja não vende.", fields=unknown) if unknown else None


def inventory_check(args: InventoryCheckInput) -> InventoryCheckOk | ErrorResult:
    lines = stock_check([(item.sku, item.quantity) for item in args.items])
    unknown = unknown_skus(lines)
    if unknown is not None:
        return unknown
    return InventoryCheckOk(
        status="ok",
        items=[
            InventoryLine(
                sku=line.sku,
                quantity=line.quantity,
                availability=availability_url(line.availability),  # type: ignore[arg-type]
                can_fulfill=line.can_fulfill,
            )
            for line in lines
        ],
    )
