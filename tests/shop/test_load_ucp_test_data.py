"""`manage.py load_ucp_test_data` (issue 35): the UCP conformance suite's flower shop loaded into the catalog, from
the suite vendored in tests/ucp_conformance/vendor (conformance @ fdced3a, Apache-2.0)."""

from __future__ import annotations

import re
import shutil
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from shop.models import Category, Coupon, Product, ProductImage, Variant

pytestmark = pytest.mark.django_db
VENDOR = Path(__file__).resolve().parent.parent / "ucp_conformance" / "vendor"
DATA = VENDOR / "test_data" / "flower_shop"
EXPECTED = {  # products.csv and inventory.csv
    "bouquet_roses": ("Bouquet of Red Roses", 3500, 1000, "https://example.com/roses.jpg"),
    "pot_ceramic": ("Ceramic Pot", 1500, 2000, "https://example.com/pot.jpg"),
    "bouquet_sunflowers": ("Sunflower Bundle", 2500, 500, "https://example.com/sunflowers.jpg"),
    "bouquet_tulips": ("Spring Tulips", 3000, 1500, "https://example.com/tulips.jpg"),
    "orchid_white": ("White Orchid", 4500, 800, "https://example.com/orchid.jpg"),
    "gardenias": ("Gardenias", 2000, 0, "https://example.com/gardenias.jpg"),
}


def _load(data_dir: Path = DATA) -> str:
    out = StringIO()
    call_command("load_ucp_test_data", str(data_dir), stdout=out)
    return out.getvalue()


def _catalog() -> dict[str, tuple[str, int, int, str]]:
    return {
        v.sku: (v.product.title, v.price, v.stock, v.product.images.get(is_main=True).source)
        for v in Variant.objects.select_related("product")
    }


def test_loads_products_stock_photos_and_coupons() -> None:
    # when
    output = _load()
    # then each item id is a SKU (the UCP item.id), with the files' price and stock
    assert _catalog() == EXPECTED
    assert "products: 6, variants: 6, coupons: 3" in output
    assert set(Product.objects.values_list("category__slug", flat=True)) == {"ucp-flower-shop"}
    assert Product.objects.get(slug="bouquet_roses").active
    coupons = {c.code: (c.kind, c.percent, c.amount, c.stackable, c.title) for c in Coupon.objects.all()}
    assert coupons == {
        "10OFF": ("percent", 10, None, True, "10% Off"),
        "WELCOME20": ("percent", 20, None, True, "20% Off"),
        "FIXED500": ("fixed", None, 500, True, "$5.00 Off"),
    }


def test_a_second_run_writes_nothing_and_a_later_one_restores_price_and_stock(django_assert_max_num_queries) -> None:
    # given a loaded shop
    _load()
    # when it is loaded again, nothing is written or duplicated (one category read, 2 reads per product and
    # 1 per coupon, 1 per default shipping rate, the transaction)
    with django_assert_max_num_queries(20):
        assert "products: 0, variants: 0, coupons: 0, shipping: 0" in _load()
    assert (Product.objects.count(), Variant.objects.count(), ProductImage.objects.count()) == (6, 6, 6)
    # and after sales and a price change, a run brings the files' values back
    Variant.objects.filter(sku="bouquet_roses").update(stock=3, price=9999)
    Coupon.objects.filter(code="10OFF").update(active=False)
    assert "products: 0, variants: 1, coupons: 1" in _load()
    assert _catalog()["bouquet_roses"] == EXPECTED["bouquet_roses"]
    assert Coupon.objects.get(code="10OFF").active


@pytest.mark.parametrize(
    ("file", "content", "message"),
    [
        ("products.csv", "id,title,price,image_url\nx,X,12.5,\n", "products.csv, linha 2, coluna price"),
        ("products.csv", "id,title,image_url\nx,X,\n", "products.csv: faltam as colunas price."),
        ("inventory.csv", "product_id,quantity\nnope,1\n", "inventory.csv, linha 2: produto desconhecido 'nope'."),
        ("inventory.csv", "product_id,quantity\npot_ceramic,-1\n", "inventory.csv, linha 2, coluna quantity"),
        ("discounts.csv", "code,type,value,description\nX,bogo,1,\n", "use percentage ou fixed_amount"),
        ("discounts.csv", "code,type,value,description\nX,percentage,101,\n", "percentual acima de 100"),
    ],
)
def test_bad_data_is_refused_in_portuguese_and_changes_nothing(
    tmp_path: Path, file: str, content: str, message: str
) -> None:
    # given a copy of the data with one bad file
    data = tmp_path / "flower_shop"
    shutil.copytree(DATA, data)
    (data / file).write_text(content)
    # when / then
    with pytest.raises(CommandError, match=re.escape(message)):
        _load(data)
    assert not Product.objects.exists() and not Coupon.objects.exists() and not Category.objects.exists()


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    data = tmp_path / "flower_shop"
    shutil.copytree(DATA, data)
    (data / "customers.csv").unlink()
    with pytest.raises(CommandError, match=re.escape("Arquivo customers.csv não encontrado")):
        _load(data)


def test_the_vendored_copy_carries_its_licence() -> None:
    assert "Apache License" in (VENDOR / "LICENSE").read_text()
    assert "fdced3ad4d92637a55de8f4b71a6dead5a2621c0" in (VENDOR / "VERSION.md").read_text()
