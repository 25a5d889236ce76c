"""The demo shop ("Loja Exemplo"): categories, products, variants and images for `manage.py seed_demo`.

Idempotent: rows are matched by slug (categories, products) and SKU (variants) and saved only when a
value differs, so a second run writes nothing and `updated_at` stays as it was. Other engineers'
tests and the BCP examples rely on `CAM-BAS-PRETA-M`, `SKU-CAFE-500G` (R$ 42,90) and `PIXEL-10-PRO`.
"""

from __future__ import annotations

from typing import Any

from django.db import models, transaction

from shop.catalog.images import demo_photo_ensure, product_image_thumbnail_make
from shop.demo.catalog import CATEGORIES, DEMO_NCM, DEMO_PACKAGE_CM, DEMO_STORE_FISCAL, PRODUCTS
from shop.models import Category, Product, ProductImage, Variant
from shop.models.store import STORE_ROW_ID, StoreSettings


def _upsert[M: models.Model](
    model: type[M], lookup: dict[str, Any], values: dict[str, Any], create_only: dict[str, Any] | None = None
) -> tuple[M, bool]:
    """Create, or update only the fields of `values` that differ; returns (object, written).

    `create_only` values are set on creation and never overwritten (stock moves with real sales).
    """
    obj = model._default_manager.filter(**lookup).first()
    if obj is None:
        return model._default_manager.create(**lookup, **values, **(create_only or {})), True
    changed = [name for name, value in values.items() if getattr(obj, name) != value]
    if not changed:
        return obj, False
    for name in changed:
        setattr(obj, name, values[name])
    # auto_now fields (updated_at) must be saved too, or they would not move on a real change.
    auto_now = [f.name for f in model._meta.concrete_fields if getattr(f, "auto_now", False)]
    obj.save(update_fields=[*changed, *auto_now])
    return obj, True


def _seed_photo(product: Product, slug: str, title: str) -> int:
    """The demo photo (a real JPEG drawn with Pillow) as the main image; older SVG rows stay behind it."""
    name = demo_photo_ensure(slug=slug, title=title)
    has_main = product.images.filter(is_main=True).exclude(image=name).exists()
    photo, was_written = _upsert(
        ProductImage,
        {"product": product, "image": name},
        {"alt_text": title, "position": 0},
        create_only={"is_main": not has_main},  # a main photo the merchant chose stays main
    )
    product_image_thumbnail_make(image=photo)  # once: a no-op when every size exists
    return int(was_written)


@transaction.atomic
def seed_catalog() -> dict[str, int]:
    """Create or refresh the demo catalog; returns how many rows were written per kind (0 on a re-run)."""
    written = {"categories": 0, "products": 0, "variants": 0, "images": 0}
    categories: dict[str, Category] = {}
    for position, (slug, name, description) in enumerate(CATEGORIES):
        categories[slug], was_written = _upsert(
            Category, {"slug": slug}, {"name": name, "description": description, "position": position, "parent": None}
        )
        written["categories"] += was_written
    for item in PRODUCTS:
        product, was_written = _upsert(
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
        written["images"] += _seed_photo(product, item.slug, item.title)
        for position, variant in enumerate(item.variants):
            _, was_written = _upsert(
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
                },
                create_only={"stock": variant.stock},
            )
            written["variants"] += was_written
    return written


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
