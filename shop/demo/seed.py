"""The demo shop ("Loja Exemplo"): categories, products, variants and images for `manage.py seed_demo`.

Written once: rows are matched by slug (categories, products) and SKU (variants) and created only when
missing, never saved again, so the merchant's edits (a price, a title, a photo removed) survive every
`make run`, and a second run writes nothing. A demo product's photo comes with the product only. Other
engineers' tests and the BCP examples rely on `CAM-BAS-PRETA-M`, `SKU-CAFE-500G` (R$ 42,90) and `PIXEL-10-PRO`
as seeded on an empty database.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.staticfiles import finders
from django.core.files.base import ContentFile
from django.db import models, transaction
from django.utils.translation import gettext_noop

from shop.catalog.images import demo_photo_ensure, product_image_thumbnail_make
from shop.demo.catalog import CATEGORIES, DEMO_NCM, DEMO_PACKAGE_CM, DEMO_STORE_FISCAL, DEMO_SYNONYMS, PRODUCTS
from shop.models import Category, Product, ProductImage, SearchSynonym, Variant
from shop.models.store import STORE_ROW_ID, StoreSettings


def _create_missing[M: models.Model](model: type[M], lookup: dict[str, Any], values: dict[str, Any]) -> tuple[M, bool]:
    """The row matched by `lookup`, created with `values` when missing; an existing row is left as it is."""
    return model._default_manager.get_or_create(**lookup, defaults=values)


def _seed_photo(product: Product, slug: str, title: str) -> int:
    """The demo photo (a real JPEG drawn with Pillow) as the main image of a product created now."""
    name = demo_photo_ensure(slug=slug, title=title)
    photo, created = _create_missing(
        ProductImage, {"product": product, "image": name}, {"alt_text": title, "position": 0, "is_main": True}
    )
    product_image_thumbnail_make(image=photo)  # once: a no-op when every size exists
    return int(created)


@transaction.atomic
def seed_catalog() -> dict[str, int]:
    """Create what is missing of the demo catalog; returns how many rows were written per kind (0 on a re-run)."""
    written = {"categories": 0, "products": 0, "variants": 0, "images": 0, "synonyms": 0}
    categories: dict[str, Category] = {}
    for position, (slug, name, description) in enumerate(CATEGORIES):
        categories[slug], was_written = _create_missing(
            Category, {"slug": slug}, {"name": name, "description": description, "position": position, "parent": None}
        )
        written["categories"] += was_written
    for item in PRODUCTS:
        product, was_written = _create_missing(
            Product,
            {"slug": item.slug},
            {
                "title": item.title,
                "description": item.description,
                "brand": item.brand,
                "category": categories[item.category],
                "weight_grams": item.weight_grams,
                "requires_shipping": item.requires_shipping,
                **dict(
                    zip(
                        ("length_cm", "width_cm", "height_cm"),
                        item.package_cm or DEMO_PACKAGE_CM[item.category],
                        strict=True,
                    )
                ),
                "ncm": DEMO_NCM[item.category],
                "active": True,
            },
        )
        written["products"] += was_written
        if was_written:
            written["images"] += _seed_photo(product, item.slug, item.title)
        for position, variant in enumerate(item.variants):
            _, was_written = _create_missing(
                Variant,
                {"sku": variant.sku},
                {
                    "product": product,
                    "title": variant.title,
                    "options": variant.options,
                    "price": variant.price,
                    "compare_at_price": variant.compare_at_price,
                    "low_stock_threshold": variant.low_stock_threshold,
                    "allow_backorder": variant.allow_backorder,
                    "active": True,
                    "position": position,
                    "stock": variant.stock,
                },
            )
            written["variants"] += was_written
    for words in DEMO_SYNONYMS:
        written["synonyms"] += _create_missing(SearchSynonym, {"words": words}, {})[1]
    return written


# Marked for the catalog: the home translates this line (the demo's English home reads it in English).
DEMO_HOME_TAGLINE = gettext_noop(
    "Boas-vindas! Produtos brasileiros escolhidos com carinho. Pague com Pix e receba em todo o Brasil."
)
DEMO_HOME_IMAGE = "shop/hero.svg"  # a static file: the coffee bag, T-shirt and mug


def seed_store_home() -> bool:
    """The demo's home hero (its line and its picture of the demo products) where the merchant set none: a shop
    without the demo has neither (QA walk: a new shop's home showed the demo's coffee, T-shirt and mug)."""
    store = StoreSettings.objects.filter(pk=STORE_ROW_ID).first() or StoreSettings(trade_name=settings.SHOP_NAME)
    changed = False
    if not store.home_tagline:
        store.home_tagline = DEMO_HOME_TAGLINE
        changed = True
    if not store.home_image:
        found = finders.find(DEMO_HOME_IMAGE)
        content = Path(found if isinstance(found, str) else found[0]).read_bytes()
        store.home_image.save("hero-demo.svg", ContentFile(content), save=False)
        changed = True
    if changed:
        store.save()
    return changed


def seed_store_fiscal() -> bool:
    """Fill the store's fiscal identity where it is empty (never overwrites what the merchant typed)."""
    store = StoreSettings.objects.filter(pk=STORE_ROW_ID).first() or StoreSettings()
    changed = False
    for field, value in DEMO_STORE_FISCAL.items():
        if not getattr(store, field):
            setattr(store, field, value)
            changed = True
    if changed:
        store.save()
    return changed
