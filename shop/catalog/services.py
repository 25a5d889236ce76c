"""Catalog writes that are not a single admin form: the bulk import of a spreadsheet."""

from __future__ import annotations

from dataclasses import dataclass

from django.db import transaction

from shop.catalog.spreadsheet import ImportPlan
from shop.models import Product, ProductImage, Variant


@dataclass(frozen=True)
class ImportResult:
    products_created: int
    products_updated: int
    variants_created: int
    variants_updated: int
    photos_added: int


class ImportRefused(ValueError):
    """The plan has errors: nothing was written."""


@transaction.atomic
def catalog_import_apply(*, plan: ImportPlan) -> ImportResult:
    """Write a checked plan (`shop.catalog.spreadsheet.import_plan`), all of it or nothing, in one transaction.

    Existing variants are locked in primary-key order first: a sale running beside the import cannot see half of
    it, and the stock the file states is what stays. Saves go through the models, so the catalog cache and the
    search follow. Statements: the lock, then about two per changed row.
    """
    if plan.errors:
        raise ImportRefused(plan.errors[0].message)
    locked = [change.variant.pk for change in plan.variants if change.variant is not None]
    if locked:
        list(Variant.objects.select_for_update().filter(pk__in=locked).order_by("pk").values_list("pk", flat=True))
    products: dict[str, Product] = {}
    created = updated = photos = 0
    for slug, change in plan.products.items():
        product = change.product
        if product is None:
            product = Product(slug=slug, **change.values)
            product.save()
            created += 1
        elif change.values:
            for name, value in change.values.items():
                setattr(product, name, value)
            product.save(update_fields=[*change.values, "updated_at"])
            updated += 1
        products[slug] = product
        if change.photos:
            start = max((image.position for image in product.images.all()), default=-1) + 1 if change.product else 0
            has_main = change.product is not None and any(image.is_main for image in product.images.all())
            for i, url in enumerate(change.photos):  # saved one by one: the catalog cache hears each (post_save)
                ProductImage.objects.create(
                    product=product, source=url, position=start + i, is_main=not has_main and i == 0
                )
            photos += len(change.photos)
            if change.product is not None and not change.values:
                updated += 1
    variants_created = variants_updated = 0
    for line in plan.variants:
        if line.variant is None:
            values = dict(line.values)
            if not values.get("title") and values.get("options"):
                # As the admin form does: "M / Preta" names the variant in carts, orders and NF-e.
                values["title"] = " / ".join(values["options"].values())[:120]
            Variant.objects.create(product=products[line.product_slug], sku=line.sku, **values)
            variants_created += 1
        elif line.values:
            variant = line.variant
            for name, value in line.values.items():
                setattr(variant, name, value)
            variant.save(update_fields=list(line.values))
            variants_updated += 1
    return ImportResult(created, updated, variants_created, variants_updated, photos)
