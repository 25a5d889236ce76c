"""A checkout's lines as parcels: each unit's weight and size (variant, else product, else the store's default)
packed into the store's boxes by the carriers' packing rule (carriers/packing.py)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from carriers import Box, Item, Parcel, pack
from kernel.ops import request_cache
from shop.models import PackagingBox, Variant
from shop.store.services import store_get

BOXES_CACHE_KEY = "shop:freight:boxes:v1"
BOXES_CACHE_SECONDS = 300  # saving or deleting a box drops it (shop/receivers.py); the TTL bounds a missed drop


@dataclass(frozen=True)
class FreightLine:
    """One line of what is being shipped: the variant's SKU, how many, and the unit price (declared value)."""

    sku: str
    quantity: int
    unit_price: int = 0


def boxes() -> tuple[Box, ...]:
    """The active packaging boxes (one query when not cached)."""
    cached = request_cache.get(BOXES_CACHE_KEY)
    if isinstance(cached, tuple):
        return cached
    loaded = tuple(
        Box(b.name, b.length_cm, b.width_cm, b.height_cm, b.weight_grams, b.max_weight_grams)
        for b in PackagingBox.objects.filter(active=True)
    )
    request_cache.set(BOXES_CACHE_KEY, loaded, BOXES_CACHE_SECONDS)
    return loaded


def boxes_cache_clear() -> None:
    request_cache.forget(BOXES_CACHE_KEY)


def items_for(lines: Sequence[FreightLine]) -> list[Item]:
    """One query for the variants (with their products); lines of goods that ship nothing are left out."""
    skus = {line.sku for line in lines}
    variants = {v.sku: v for v in Variant.objects.select_related("product").filter(sku__in=skus)} if skus else {}
    weight_d, length_d, width_d, height_d = store_get().default_package
    items: list[Item] = []
    for line in lines:
        variant = variants.get(line.sku)
        if variant is None or line.quantity <= 0 or not variant.product.requires_shipping:
            continue
        product = variant.product
        weight = variant.weight_grams if variant.weight_grams is not None else product.weight_grams
        items.append(
            Item(
                weight_g=weight or weight_d,
                length_cm=variant.length_cm or product.length_cm or length_d,
                width_cm=variant.width_cm or product.width_cm or width_d,
                height_cm=variant.height_cm or product.height_cm or height_d,
                quantity=line.quantity,
                unit_value=line.unit_price or variant.price,
            )
        )
    return items


def parcels_for(lines: Sequence[FreightLine]) -> tuple[Parcel, ...]:
    return pack(items_for(lines), boxes())
