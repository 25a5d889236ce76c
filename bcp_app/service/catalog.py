"""BCP catalog capability (§16) over `shop.catalog.selectors`: search, lookup, get_product → BCP JSON.

Not to be confused with `bcp_app/service/catalogue/` (seed 002 typed tools for non-BCP agents).
"""

from __future__ import annotations

from typing import Any

from django.conf import settings

from shop.catalog import selectors
from shop.models import Product, Variant

CURSOR_PREFIX = "p"


def _abs(url: str) -> str:
    return url if url.startswith(("http://", "https://")) else f"{settings.BCP_PUBLIC_URL}{url}"


def price(amount: int) -> dict[str, Any]:
    return {"amount": amount, "currency": "BRL"}


def _availability(variant: Variant) -> dict[str, Any]:
    if variant.stock > 0:
        return {"available": True, "status": "in_stock"}
    if variant.allow_backorder:
        return {"available": True, "status": "backorder"}
    return {"available": False, "status": "out_of_stock"}


def variant_payload(product: Product, variant: Variant) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "id": variant.sku,
        "sku": variant.sku,
        "title": variant.title or product.title,
        "description": {"plain": f"{product.title} — {variant.title}" if variant.title else product.title},
        "price": price(variant.price),
    }
    if variant.compare_at_price:
        payload["list_price"] = price(variant.compare_at_price)
    payload["availability"] = _availability(variant)
    if variant.options:
        payload["options"] = [{"name": str(k), "label": str(v)} for k, v in variant.options.items()]
    return payload


def _options(variants: list[Variant]) -> list[dict[str, Any]]:
    names: dict[str, list[str]] = {}
    for variant in variants:
        for name, label in (variant.options or {}).items():
            labels = names.setdefault(str(name), [])
            if str(label) not in labels:
                labels.append(str(label))
    return [{"name": name, "values": [{"label": label} for label in labels]} for name, labels in names.items()]


def product_payload(product: Product, variants: list[Variant] | None = None) -> dict[str, Any]:
    variants = list(product.variants.all()) if variants is None else variants
    prices = [v.price for v in variants] or [0]
    try:
        url = _abs(product.get_absolute_url())
    except Exception:  # storefront URL not routed (e.g. minimal test urlconf)
        url = None
    payload: dict[str, Any] = {"id": product.public_id, "handle": product.slug}
    if url:
        payload["url"] = url
    payload.update(
        {
            "title": product.title,
            "description": {"plain": product.description or product.title},
            "price_range": {"min": price(min(prices)), "max": price(max(prices))},
        }
    )
    media = [
        {"type": "image", "url": _abs(img.url), **({"alt_text": img.alt_text} if img.alt_text else {})}
        for img in product.images.all()
    ]
    if media:
        payload["media"] = media
    options = _options(list(product.variants.all()))  # natural option order, whatever variant comes first
    if options:
        payload["options"] = options
    payload["variants"] = [variant_payload(product, v) for v in variants]
    return payload


def parse_cursor(cursor: str | None) -> int:
    """Cursor → page number; raises ValueError for a cursor we did not issue."""
    if cursor is None:
        return 1
    if not cursor.startswith(CURSOR_PREFIX) or not cursor[1:].isdigit() or int(cursor[1:]) < 1:
        raise ValueError("cursor")
    return int(cursor[1:])


def search(
    *, query: str, categories: list[str], price_min: int | None, price_max: int | None, cursor: str | None, limit: int
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    page = parse_cursor(cursor)
    try:
        result = selectors.product_search(
            query=query,
            category_slug=categories[0] if categories else "",
            price_min=price_min,
            price_max=price_max,
            page=page,
            per_page=min(limit, selectors.MAX_PER_PAGE),
        )
    except selectors.CatalogQueryError as exc:
        if exc.field != "category":
            raise
        # A filter naming a category the shop does not have matches nothing (BCP §16: empty result =
        # `products: []`); the storefront, whose links name real categories, still says it is unknown.
        return [], {"has_next_page": False, "total_count": 0}
    pagination: dict[str, Any] = {"has_next_page": result.has_next}
    if result.has_next:
        pagination["cursor"] = f"{CURSOR_PREFIX}{result.page + 1}"
    pagination["total_count"] = result.total
    return [product_payload(p) for p in result.products], pagination


def lookup(ids: list[str]) -> tuple[list[dict[str, Any]], list[str]]:
    """Products for product ids and variant SKUs, each product once, variants tagged with `inputs`."""
    unique = list(dict.fromkeys(ids))
    by_sku = selectors.variants_by_sku([i for i in unique if not i.startswith("prod_")])
    order: list[str] = []  # product public ids in first-seen order
    inputs: dict[str, dict[str, list[dict[str, str]]]] = {}  # product → sku → inputs
    featured: dict[str, list[str]] = {}
    found: set[str] = set()
    for wanted in unique:
        if wanted in by_sku:
            product_id = by_sku[wanted].product.public_id
            inputs.setdefault(product_id, {}).setdefault(wanted, []).append({"id": wanted, "match": "exact"})
        elif wanted.startswith("prod_"):
            product_id = wanted
            featured.setdefault(product_id, []).append(wanted)
        else:
            continue
        if product_id not in order:
            order.append(product_id)
    products = []
    for product_id in order:
        product = selectors.product_get(public_id=product_id)
        if product is None:
            continue
        variants = list(product.variants.all())
        wanted_skus = inputs.get(product_id, {})
        chosen = [v for v in variants if v.sku in wanted_skus] if product_id not in featured else variants
        payload = product_payload(product, chosen)
        for variant in payload["variants"]:
            tags = list(wanted_skus.get(variant["id"], []))
            if product_id in featured:  # asked by its product id too: that id resolved to this variant as well
                tags.append({"id": product_id, "match": "featured"})
            variant["inputs"] = tags
        products.append(payload)
        found.update(wanted_skus)
        found.update(featured.get(product_id, []))
    return products, [i for i in unique if i not in found]


def get_product(product_id: str, selected: list[tuple[str, str]], preferences: list[str]) -> dict[str, Any] | None:
    """A product by id or SKU: requested/selected variant first, `selected` and option availability."""
    requested: Variant | None = None
    if product_id.startswith("prod_"):
        product = selectors.product_get(public_id=product_id)
    else:
        requested = selectors.variants_by_sku([product_id]).get(product_id)
        product = selectors.product_get(public_id=requested.product.public_id) if requested else None
    if product is None:
        return None
    variants = list(product.variants.all())
    if not variants:
        return None
    wanted = dict(selected)

    def score(v: Variant) -> tuple[int, ...]:
        opts = {str(k): str(val) for k, val in (v.options or {}).items()}
        matches = [1 if opts.get(name) == wanted.get(name) else 0 for name in preferences + list(wanted)]
        return (1 if requested is not None and v.sku == requested.sku else 0, *matches, 1 if v.stock > 0 else 0)

    best = max(variants, key=score) if (requested or wanted) else variants[0]
    ordered = [best, *[v for v in variants if v.pk != best.pk]]
    payload = product_payload(product, ordered)
    chosen = {str(k): str(v) for k, v in (best.options or {}).items()}
    if payload.get("options"):
        payload["selected"] = [{"name": name, "label": label} for name, label in chosen.items()]
        for option in payload["options"]:
            for value in option["values"]:
                combo = {**chosen, option["name"]: value["label"]}
                with_value = [v for v in variants if str((v.options or {}).get(option["name"])) == value["label"]]
                value["available"] = any(_availability(v)["available"] for v in with_value)
                value["exists"] = any({str(k): str(x) for k, x in (v.options or {}).items()} == combo for v in variants)
    return payload
