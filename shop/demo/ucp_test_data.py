"""The UCP conformance suite's shop (`test_data/flower_shop` of github.com/Universal-Commerce-Protocol/conformance)
loaded into our catalog, for `manage.py load_ucp_test_data`.

Format followed: the suite's CSV files as the reference merchant reads them (samples `rest/python/server/
import_csv.py`): `products.csv` (id,title,price,image_url; price in minor units), `inventory.csv`
(product_id,quantity), `discounts.csv` (code,type,value,description; type `percentage` | `fixed_amount`).

What lands where: each product becomes a Product with one Variant whose SKU is the suite's item id (the UCP
`item.id`), price and stock as given (amounts are taken as centavos: the shop sells in BRL); the image URL becomes
the main photo; each discount becomes a stackable coupon (the suite applies 10OFF and WELCOME20 together). A
re-run restores the files' prices and stock (a conformance run starts from them), matching rows by SKU, slug and
code, so nothing is duplicated. The `default` rows of `shipping_rates.csv` become shipping methods with a flat
price (code = the rate id), and `promotions.csv`'s `free_shipping` above a subtotal becomes `free_above` on the
standard one; country-specific (US/CA) rates, `customers.csv`, `addresses.csv` and `payment_instruments.csv` are
checked for their columns but not loaded (the shop ships inside Brazil by CEP, keeps no buyer accounts, and the
sandbox card gateway already pays `success_token` and declines `fail_token`).
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

from django.db import models, transaction
from django.utils.translation import gettext as _

from shop.models import Category, Coupon, Product, ProductImage, ShippingMethod, Variant

CATEGORY_SLUG = "ucp-flower-shop"
CATEGORY_NAME = "Flores (UCP)"
# Columns each file must have (the suite's own header rows).
COLUMNS: dict[str, tuple[str, ...]] = {
    "products.csv": ("id", "title", "price", "image_url"),
    "inventory.csv": ("product_id", "quantity"),
    "discounts.csv": ("code", "type", "value", "description"),
    "shipping_rates.csv": ("id", "country_code", "service_level", "price", "title"),
    "promotions.csv": ("id", "type", "min_subtotal", "eligible_item_ids", "description"),
    "customers.csv": ("id", "name", "email"),
    "addresses.csv": ("id", "customer_id", "street_address", "city", "state", "postal_code", "country"),
    "payment_instruments.csv": ("id", "type", "brand", "last_digits", "token", "handler_id"),
}
DISCOUNT_KINDS = {"percentage": Coupon.KIND_PERCENT, "fixed_amount": Coupon.KIND_FIXED}


class UcpTestDataError(ValueError):
    """The data directory is not the suite's format; the message (Portuguese) names the file, line and column."""


@dataclass(frozen=True)
class LoadedCounts:
    products: int
    variants: int
    coupons: int
    shipping: int = 0

    def as_dict(self) -> dict[str, int]:
        return {
            "products": self.products,
            "variants": self.variants,
            "coupons": self.coupons,
            "shipping": self.shipping,
        }


def _rows(data_dir: Path, name: str) -> list[dict[str, str]]:
    path = data_dir / name
    if not path.is_file():
        raise UcpTestDataError(_("Arquivo %(file)s não encontrado em %(dir)s.") % {"file": name, "dir": data_dir})
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        missing = [column for column in COLUMNS[name] if column not in (reader.fieldnames or [])]
        if missing:
            raise UcpTestDataError(
                _("%(file)s: faltam as colunas %(columns)s.") % {"file": name, "columns": ", ".join(missing)}
            )
        return [{key: (value or "").strip() for key, value in row.items() if key} for row in reader]


def _integer(value: str, *, file: str, line: int, column: str, minimum: int = 0) -> int:
    try:
        number = int(value)
    except ValueError:
        number = minimum - 1
    if number < minimum:
        raise UcpTestDataError(
            _("%(file)s, linha %(line)d, coluna %(column)s: esperado um inteiro ≥ %(min)d, veio %(value)r.")
            % {"file": file, "line": line, "column": column, "min": minimum, "value": value}
        )
    return number


def _read(data_dir: Path) -> tuple[list[dict[str, str]], dict[str, int], list[dict[str, str]]]:
    for name in COLUMNS:
        _rows(data_dir, name)  # every file present with its columns, loaded or not
    products = _rows(data_dir, "products.csv")
    for line, row in enumerate(products, start=2):
        if not row["id"] or not row["title"]:
            raise UcpTestDataError(_("products.csv, linha %(line)d: id e title são obrigatórios.") % {"line": line})
        _integer(row["price"], file="products.csv", line=line, column="price")
    known = {row["id"] for row in products}
    stock: dict[str, int] = {}
    for line, row in enumerate(_rows(data_dir, "inventory.csv"), start=2):
        if row["product_id"] not in known:
            raise UcpTestDataError(
                _("inventory.csv, linha %(line)d: produto desconhecido %(id)r.")
                % {"line": line, "id": row["product_id"]}
            )
        stock[row["product_id"]] = _integer(row["quantity"], file="inventory.csv", line=line, column="quantity")
    discounts = _rows(data_dir, "discounts.csv")
    for line, row in enumerate(discounts, start=2):
        if row["type"] not in DISCOUNT_KINDS:
            raise UcpTestDataError(
                _("discounts.csv, linha %(line)d, coluna type: use percentage ou fixed_amount, veio %(value)r.")
                % {"line": line, "value": row["type"]}
            )
        value = _integer(row["value"], file="discounts.csv", line=line, column="value", minimum=1)
        if row["type"] == "percentage" and value > 100:
            raise UcpTestDataError(
                _("discounts.csv, linha %(line)d, coluna value: percentual acima de 100.") % {"line": line}
            )
    return products, stock, discounts


def _save(obj: models.Model, values: dict[str, object]) -> bool:
    """Set `values` on `obj` and save it when one differs (or it is new); True when written."""
    changed = [name for name, value in values.items() if getattr(obj, name) != value]
    if obj.pk is not None and not changed:
        return False
    for name in changed:
        setattr(obj, name, values[name])
    obj.save()
    return True


@transaction.atomic
def ucp_test_data_load(*, data_dir: Path) -> LoadedCounts:
    """Load (or restore) the suite's products, stock and discounts; all or nothing."""
    products, stock, discounts = _read(data_dir)
    category = Category.objects.filter(slug=CATEGORY_SLUG).first() or Category(slug=CATEGORY_SLUG)
    _save(category, {"name": CATEGORY_NAME, "parent_id": None})
    written = {"products": 0, "variants": 0, "coupons": 0}
    for row in products:
        variant = Variant.objects.select_related("product").filter(sku=row["id"]).first()
        product = variant.product if variant else Product.objects.filter(slug=row["id"]).first() or Product()
        written["products"] += _save(
            product,
            {
                "slug": row["id"],
                "title": row["title"],
                "description": row["title"],
                "category_id": category.pk,
                "active": True,
            },
        )
        variant = variant or Variant(product=product, sku=row["id"])
        written["variants"] += _save(
            variant,
            {
                "price": int(row["price"]),
                "stock": stock.get(row["id"], 0),
                "active": True,
                "title": "",
                "compare_at_price": None,
                "allow_backorder": False,
            },
        )
        if row["image_url"] and not product.images.filter(source=row["image_url"]).exists():
            product.images.update(is_main=False)
            ProductImage.objects.create(product=product, source=row["image_url"], alt_text=row["title"], is_main=True)
    for row in discounts:
        code = row["code"].upper()
        coupon = Coupon.objects.filter(code=code).first() or Coupon(code=code)
        percent = int(row["value"]) if row["type"] == "percentage" else None
        amount = int(row["value"]) if row["type"] == "fixed_amount" else None
        written["coupons"] += _save(
            coupon,
            {
                "title": row["description"] or code,
                "kind": DISCOUNT_KINDS[row["type"]],
                "percent": percent,
                "amount": amount,
                "min_subtotal": 0,
                "stackable": True,
                "active": True,
                "starts_at": None,
                "ends_at": None,
                "usage_limit": None,
                "usage_limit_per_email": None,
            },
        )
    written["shipping"] = _load_shipping(data_dir)
    return LoadedCounts(**written)


def _load_shipping(data_dir: Path) -> int:
    free_above = min(
        (
            _integer(row["min_subtotal"], file="promotions.csv", line=line, column="min_subtotal")
            for line, row in enumerate(_rows(data_dir, "promotions.csv"), start=2)
            if row.get("type") == "free_shipping" and row.get("min_subtotal")
        ),
        default=None,
    )
    written = 0
    rates = [row for row in _rows(data_dir, "shipping_rates.csv") if row["country_code"] == "default"]
    for position, row in enumerate(rates):
        line = position + 2
        method = ShippingMethod.objects.filter(code=row["id"]).first() or ShippingMethod(code=row["id"])
        written += _save(
            method,
            {
                "title": row["title"],
                "kind": ShippingMethod.KIND_SHIPPING,
                "flat_price": _integer(row["price"], file="shipping_rates.csv", line=line, column="price"),
                "free_above": free_above if row["service_level"] == "standard" else None,
                "active": True,
                "position": position,
            },
        )
    return written
