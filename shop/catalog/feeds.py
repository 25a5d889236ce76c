"""Product feeds: Google Merchant Center (RSS 2.0 with the `g:` namespace) and a schema.org `DataFeed` in JSON for
agents' bulk discovery. Both are built on request from the catalog rows (no cache of their own), so availability
and price are those of the stock at that moment.

Merchant Center format followed: "Product data specification" and "RSS 2.0 / XML data sources"
(support.google.com/merchants/answer/7052112 and /160589): one `<item>` per variant, `g:id` the SKU, price as
"42.90 BRL", `g:item_group_id` shared by the variants of one product, `availability` one of in_stock,
out_of_stock, preorder, backorder (the last two need `availability_date`, answer/6324470).
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.utils import timezone
from django.utils.xmlutils import SimplerXMLGenerator

from kernel.money import format_decimal_point
from shop.catalog.schema_org import SCHEMA_ORG, absolute_url, product_schema_org, variant_url
from shop.models import Product, Variant

GOOGLE_NS = "http://base.google.com/ns/1.0"
CURRENCY = "BRL"
# XML 1.0 forbids these characters; a product text pasted with one must not break the whole feed.
_XML_ILLEGAL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
# Option names the merchants use for Merchant Center's variant attributes (shop options are free text).
_OPTION_ATTRIBUTES = {"cor": "color", "color": "color", "tamanho": "size", "size": "size"}
# Merchant Center's limits (characters): title 150, description 5000.
TITLE_MAX = 150
DESCRIPTION_MAX = 5000

GOOGLE_AVAILABILITY = {"InStock": "in_stock", "OutOfStock": "out_of_stock", "PreOrder": "backorder"}


def google_price(cents: int) -> str:
    """4290 → "42.90 BRL" (Merchant Center's price format: number, space, ISO 4217 code)."""
    return f"{format_decimal_point(cents)} {CURRENCY}"


def _clean(text: str, limit: int | None = None) -> str:
    text = _XML_ILLEGAL.sub("", text).strip()
    return text[:limit] if limit else text


@dataclass(frozen=True)
class FeedItem:
    """One Merchant Center item (a variant), in the feed's own vocabulary."""

    id: str
    title: str
    description: str
    link: str
    image_link: str
    additional_image_links: tuple[str, ...]
    availability: str
    availability_date: str
    price: str
    sale_price: str
    brand: str
    gtin: str
    mpn: str
    item_group_id: str
    product_type: str
    attributes: tuple[tuple[str, str], ...]  # (color|size, value)
    shipping_weight: str

    @property
    def identifier_exists(self) -> bool:
        """Merchant Center: "no" for products without a GTIN and without a brand + MPN pair (handmade, custom)."""
        return bool(self.gtin or (self.brand and self.mpn))


def _item(product: Product, variant: Variant, *, base_url: str, backorder_date: datetime) -> FeedItem:
    variants = list(product.variants.all())
    url = absolute_url(base_url, product.get_absolute_url())
    grouped = len(variants) > 1
    title = f"{product.title} — {variant.title}" if grouped and variant.title else product.title
    images = [absolute_url(base_url, image.url) for image in product.images.all()]
    availability = GOOGLE_AVAILABILITY[variant.availability]
    on_sale = variant.compare_at_price is not None and variant.compare_at_price > variant.price
    attributes = tuple(
        (_OPTION_ATTRIBUTES[key.strip().lower()], str(value))
        for key, value in (variant.options or {}).items()
        if key.strip().lower() in _OPTION_ATTRIBUTES and str(value).strip()
    )
    return FeedItem(
        id=variant.sku,
        title=_clean(title, TITLE_MAX),
        description=_clean(product.description or product.title, DESCRIPTION_MAX),
        link=variant_url(url, variant) if grouped else url,
        image_link=images[0] if images else "",
        additional_image_links=tuple(images[1:11]),
        availability=availability,
        availability_date=backorder_date.strftime("%Y-%m-%dT%H:%MZ") if availability == "backorder" else "",
        # A struck-through "de" price is the regular price; the price charged is the sale price.
        price=google_price(variant.compare_at_price if on_sale else variant.price),  # type: ignore[arg-type]
        sale_price=google_price(variant.price) if on_sale else "",
        brand=_clean(product.brand),
        gtin=variant.gtin,
        mpn=_clean(variant.mpn),
        item_group_id=product.public_id if grouped else "",
        product_type=_clean(product.category.name),
        attributes=attributes,
        shipping_weight=f"{variant.shipping_weight_grams} g",
    )


def feed_items(products: list[Product], *, base_url: str, now: datetime | None = None) -> list[FeedItem]:
    """One item per active variant of `products` (prefetched: `shop.catalog.selectors.feed_products`). A product
    without a photo is left out: Merchant Center disapproves an item without `image_link` (and forbids
    placeholder images), so listing it would only add an error to the merchant's account."""
    now = now or timezone.now()
    backorder_date = now.astimezone(UTC) + timedelta(days=settings.SHOP_FEED_BACKORDER_DAYS)
    return [
        _item(product, variant, base_url=base_url, backorder_date=backorder_date)
        for product in products
        if product.images.all()
        for variant in product.variants.all()
    ]


def merchant_feed_xml(items: list[FeedItem], *, title: str, link: str, description: str) -> bytes:
    """The Merchant Center RSS 2.0 document for `items` (UTF-8)."""
    out = io.StringIO()
    xml = SimplerXMLGenerator(out, "utf-8", short_empty_elements=True)
    xml.startDocument()
    xml.startElement("rss", {"version": "2.0", "xmlns:g": GOOGLE_NS})
    xml.startElement("channel", {})
    xml.addQuickElement("title", _clean(title))
    xml.addQuickElement("link", link)
    xml.addQuickElement("description", _clean(description))
    for item in items:
        xml.startElement("item", {})
        fields: list[tuple[str, str]] = [
            ("g:id", item.id),
            ("g:title", item.title),
            ("g:description", item.description),
            ("g:link", item.link),
            ("g:image_link", item.image_link),
            *(("g:additional_image_link", link) for link in item.additional_image_links),
            ("g:availability", item.availability),
            ("g:availability_date", item.availability_date),
            ("g:price", item.price),
            ("g:sale_price", item.sale_price),
            ("g:condition", "new"),
            ("g:brand", item.brand),
            ("g:gtin", item.gtin),
            ("g:mpn", item.mpn),
            ("g:identifier_exists", "" if item.identifier_exists else "no"),
            ("g:item_group_id", item.item_group_id),
            *((f"g:{name}", _clean(value, 100)) for name, value in item.attributes),
            ("g:product_type", item.product_type),
            ("g:shipping_weight", item.shipping_weight),
        ]
        for name, value in fields:
            if value:
                xml.addQuickElement(name, value)
        xml.endElement("item")
    xml.endElement("channel")
    xml.endElement("rss")
    xml.endDocument()
    return out.getvalue().encode()


def _feed_element(product: Product, *, base_url: str) -> dict[str, object]:
    data = product_schema_org(product, base_url=base_url)
    identified = {v.sku: v for v in product.variants.all() if v.gtin or v.mpn}
    offers = data.get("offers")
    if identified and isinstance(offers, dict):
        # schema.org Offer carries gtin/mpn per variant; only in the feed (the page's JSON-LD keeps the seed's shape).
        for offer in offers.get("offers", [offers]):  # type: ignore[union-attr]
            variant = identified.get(offer["sku"])
            if variant is not None:
                offer.update({k: v for k, v in (("gtin", variant.gtin), ("mpn", variant.mpn)) if v})
    return {
        "@type": "DataFeedItem",
        "dateModified": product.updated_at.isoformat().replace("+00:00", "Z"),
        "item": data,
    }


def catalog_feed_json(products: list[Product], *, base_url: str, name: str, url: str) -> dict[str, object]:
    """schema.org `DataFeed` of every sellable product, each `item` the same Product JSON-LD as its page
    (seed 002: one vocabulary on every surface); prices are JSON numbers of reais, availability schema.org URLs."""
    modified = max((p.updated_at for p in products), default=None)
    feed: dict[str, object] = {
        "@context": SCHEMA_ORG,
        "@type": "DataFeed",
        "name": name,
        "url": url,
        "dataFeedElement": [_feed_element(p, base_url=base_url) for p in products],
    }
    if modified is not None:
        feed["dateModified"] = modified.isoformat().replace("+00:00", "Z")
    return feed
