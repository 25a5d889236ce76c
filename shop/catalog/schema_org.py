"""schema.org `Product` JSON-LD for product pages (seed 002: same vocabulary on every surface).

Prices leave the process here as JSON numbers of reais (42.9) on every surface: the product page's JSON-LD
and the seed 002 tools (`product_offer`) give one shape (seed 002: "a mesma forma", `price: z.number()`);
besides the PSP boundary and the product feeds this is the only place where centavos become decimals.
Availability is always a schema.org URL, never free text.
"""

from __future__ import annotations

from urllib.parse import quote

from kernel.money import format_decimal_point
from shop.catalog.selectors import product_availability
from shop.models import Product, Variant

SCHEMA_ORG = "https://schema.org"
CURRENCY = "BRL"


# Decimal strings for schema.org come from the one money module.
cents_to_decimal_string = format_decimal_point


def availability_url(name: str) -> str:
    return f"{SCHEMA_ORG}/{name}"


def absolute_url(base_url: str, path_or_url: str) -> str:
    if path_or_url.startswith(("http://", "https://")):
        return path_or_url
    return base_url.rstrip("/") + "/" + path_or_url.lstrip("/")


# The checkout engine imports the old private name (shop/checkout/selectors.py, evaluate.py).
_absolute = absolute_url


def variant_url(product_url: str, variant: Variant) -> str:
    return f"{product_url}?sku={quote(variant.sku, safe='')}"


def reais(cents: int) -> float:
    """Centavos → a JSON number of reais for schema.org tools (seed 002: `price: z.number()`). One division of
    an integer by 100 gives the double nearest the two-decimal value, whose repr is that decimal ("54.9")."""
    return cents / 100


def _offer(variant: Variant, *, url: str) -> dict[str, object]:
    return {
        "@type": "Offer",
        "sku": variant.sku,
        "price": reais(variant.price),
        "priceCurrency": CURRENCY,
        "availability": availability_url(variant.availability),
        "url": url,
    }


def product_offer(product: Product, *, url: str, variant: Variant | None = None) -> dict[str, object] | None:
    """One schema.org `Offer` for the product (seed 002 output): the requested `variant`, else the lowest-priced
    available variant (the lowest-priced of all when none is available). `price` is a JSON number in reais."""
    variants = list(product.variants.all())
    if variant is None:
        available = [v for v in variants if v.availability != "OutOfStock"] or variants
        if not available:
            return None
        variant = min(available, key=lambda v: (v.price, v.pk))
    return _offer(variant, url=url if len(variants) <= 1 else variant_url(url, variant))


def product_schema_org(product: Product, *, base_url: str, offers: bool = True) -> dict[str, object]:
    """schema.org Product with one `Offer` (single variant) or an `AggregateOffer` listing each variant
    (`offers=False`: without `offers`, for callers that choose their own offer, see `product_offer`).

    Uses the prefetched active variants and images of `product` (see shop.catalog.selectors), so it runs no query.
    """
    variants = list(product.variants.all())
    url = absolute_url(base_url, product.get_absolute_url())
    data: dict[str, object] = {
        "@context": SCHEMA_ORG,
        "@type": "Product",
        "productID": product.public_id,
        "name": product.title,
        "description": product.description,
        "url": url,
    }
    if variants:
        data["sku"] = variants[0].sku
    images = [absolute_url(base_url, image.url) for image in product.images.all()]
    if images:
        data["image"] = images[0] if len(images) == 1 else images
    if product.brand:
        data["brand"] = {"@type": "Brand", "name": product.brand}
    data["category"] = product.category.name
    if not offers:
        return data
    if len(variants) == 1:
        data["offers"] = _offer(variants[0], url=url)
    elif variants:
        prices = [variant.price for variant in variants]
        data["offers"] = {
            "@type": "AggregateOffer",
            "lowPrice": reais(min(prices)),
            "highPrice": reais(max(prices)),
            "priceCurrency": CURRENCY,
            "offerCount": len(variants),
            "availability": availability_url(product_availability(product)),
            "url": url,
            "offers": [_offer(variant, url=variant_url(url, variant)) for variant in variants],
        }
    return data
