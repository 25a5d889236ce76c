"""Load the UCP conformance suite's `test_data/flower_shop` into the catalog (idempotent), for `make ucp-conformance`.

Written beside h35a's `load_ucp_test_data` (not yet on its branch when this was needed; issue 35 item 2): the lead
keeps one of the two on merge. What maps and what does not:

* `products.csv` + `inventory.csv` → one product with one variant per row, SKU = the suite's item id, price in
  centavos (the suite's minor units, read as BRL: the shop sells in reais only), stock from the inventory.
* `discounts.csv` → coupons (`percentage` → percent, `fixed_amount` → fixed), stackable (the suite stacks two).
* `shipping_rates.csv` → shipping methods with a flat price (code = the rate id); `promotions.csv`'s
  `free_shipping` above a subtotal → `free_above` on them. Country-specific rates (`US`) and the per-item free
  shipping promotion have no counterpart: the shop ships inside Brazil by CEP.
* `customers.csv`, `addresses.csv`, `payment_instruments.csv`: nothing to load (no stored buyer accounts; the
  instruments are the platform's, and the sandbox card gateway already pays `success_token` and declines
  `fail_token`).
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from shop.models import Category, Coupon, Product, ShippingMethod, Variant

DEFAULT_DIR = Path(settings.BASE_DIR) / "tests" / "ucp_conformance" / "vendor" / "test_data" / "flower_shop"


def _rows(directory: Path, name: str) -> list[dict[str, str]]:
    path = directory / name
    if not path.exists():
        return []
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


@transaction.atomic
def load_flower_shop(directory: Path) -> dict[str, int]:
    products = _rows(directory, "products.csv")
    if not products:
        raise CommandError(f"products.csv não encontrado em {directory}")
    stock = {row["product_id"]: int(row["quantity"]) for row in _rows(directory, "inventory.csv")}
    category, _ = Category.objects.update_or_create(slug="flores", defaults={"name": "Flores"})
    for position, row in enumerate(products):
        product, _ = Product.objects.update_or_create(
            slug=f"ucp-{row['id'].replace('_', '-')}",
            defaults={"title": row["title"], "category": category, "active": True, "requires_shipping": True},
        )
        Variant.objects.update_or_create(
            sku=row["id"],
            defaults={
                "product": product,
                "title": row["title"],
                "price": int(row["price"]),
                "stock": stock.get(row["id"], 0),
                "active": True,
                "position": position,
            },
        )
    for row in _rows(directory, "discounts.csv"):
        values: dict[str, Any] = {
            "title": row["description"],
            "stackable": True,
            "active": True,
            "starts_at": None,
            "ends_at": None,
            "min_subtotal": 0,
        }
        if row["type"] == "percentage":
            values |= {"kind": "percent", "percent": int(row["value"]), "amount": None}
        else:
            values |= {"kind": "fixed", "percent": None, "amount": int(row["value"])}
        Coupon.objects.update_or_create(code=row["code"], defaults=values)
    free_above = min(
        (
            int(p["min_subtotal"])
            for p in _rows(directory, "promotions.csv")
            if p["type"] == "free_shipping" and p["min_subtotal"]
        ),
        default=None,
    )
    rates = [r for r in _rows(directory, "shipping_rates.csv") if r["country_code"] == "default"]
    for position, row in enumerate(rates):
        ShippingMethod.objects.update_or_create(
            code=row["id"],
            defaults={
                "title": row["title"],
                "kind": ShippingMethod.KIND_SHIPPING,
                "flat_price": int(row["price"]),
                "free_above": free_above if row["service_level"] == "standard" else None,
                "active": True,
                "position": position,
            },
        )
    return {"products": len(products), "coupons": len(_rows(directory, "discounts.csv")), "shipping": len(rates)}


class Command(BaseCommand):
    help = "Load the UCP conformance suite's flower_shop test data (products, stock, coupons, shipping)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--data-dir", default=str(DEFAULT_DIR), help="Folder with the suite's CSV files.")

    def handle(self, *args: object, **options: Any) -> None:
        counts = load_flower_shop(Path(options["data_dir"]))
        self.stdout.write(self.style.SUCCESS(f"flower_shop loaded: {counts}"))
