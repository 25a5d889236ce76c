"""`manage.py seed_demo`: a believable demo shop, idempotent (a re-run writes nothing)."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.files.storage import default_storage
from django.core.management import call_command
from PIL import Image

from shop.models import Category, Coupon, PickupLocation, Product, ProductImage, Variant

pytestmark = pytest.mark.django_db


def _snapshot() -> dict[str, object]:
    return {
        "counts": (
            Category.objects.count(),
            Product.objects.count(),
            Variant.objects.count(),
            ProductImage.objects.count(),
        ),
        "updated_at": dict(Product.objects.values_list("slug", "updated_at")),
        "variants": sorted(Variant.objects.values_list("sku", "price", "stock", "compare_at_price", "options")),
    }


def test_seed_demo_twice_changes_nothing() -> None:
    # given a first run
    out = StringIO()
    call_command("seed_demo", stdout=out)
    first = _snapshot()
    # when it runs again
    out = StringIO()
    call_command("seed_demo", stdout=out)
    # then the same rows exist, none was saved again, and the command says it wrote nothing
    assert _snapshot() == first
    assert "nothing written" in out.getvalue()
    # and even asked to re-create what is missing, nothing is missing
    out = StringIO()
    call_command("seed_demo", again=True, stdout=out)
    assert _snapshot() == first
    assert (
        "categories: 0, products: 0, variants: 0, images: 0, synonyms: 0, shipping_methods: 0, shipping_rates: 0, "
        "packaging_boxes: 0, pickup_locations: 0, coupons: 0" in out.getvalue()
    )


def test_demo_rows_the_merchant_deleted_stay_deleted() -> None:
    """QA walk: the Loja Pinheiros pickup point, the FRETE5 coupon and a demo product, deleted in the admin, came
    back on the next `make run` (which runs seed_demo)."""
    call_command("seed_demo", stdout=StringIO())
    PickupLocation.objects.all().delete()
    Coupon.objects.filter(code="FRETE5").delete()
    Product.objects.filter(slug="caneca-ceramica-esmaltada").delete()
    call_command("seed_demo", stdout=StringIO())
    assert not PickupLocation.objects.exists()
    assert not Coupon.objects.filter(code="FRETE5").exists()
    assert not Product.objects.filter(slug="caneca-ceramica-esmaltada").exists()
    # `--again` is the way back
    call_command("seed_demo", again=True, stdout=StringIO())
    assert PickupLocation.objects.exists() and Coupon.objects.filter(code="FRETE5").exists()
    assert Product.objects.filter(slug="caneca-ceramica-esmaltada").exists()


def test_seed_demo_keeps_stock_moved_by_sales() -> None:
    call_command("seed_demo", stdout=StringIO())
    Variant.objects.filter(sku="SKU-CAFE-500G").update(stock=7)
    call_command("seed_demo", stdout=StringIO())
    assert Variant.objects.get(sku="SKU-CAFE-500G").stock == 7


def test_seed_demo_keeps_the_merchants_price_title_and_photos() -> None:
    call_command("seed_demo", stdout=StringIO())
    Variant.objects.filter(sku="SKU-CAFE-500G").update(price=4590)
    product = Variant.objects.get(sku="SKU-CAFE-500G").product
    Product.objects.filter(pk=product.pk).update(title="Café da Casa 500 g")
    product.images.all().delete()
    call_command("seed_demo", stdout=StringIO())
    assert Variant.objects.get(sku="SKU-CAFE-500G").price == 4590
    product.refresh_from_db()
    assert (product.title, product.images.count()) == ("Café da Casa 500 g", 0)


def test_seed_demo_content_is_a_believable_shop() -> None:
    call_command("seed_demo", stdout=StringIO())
    assert Product.objects.filter(active=True).count() >= 24
    assert Category.objects.count() >= 4
    assert Variant.objects.filter(stock=0, allow_backorder=False).count() >= 3
    assert Variant.objects.filter(stock=0, allow_backorder=True).exists()
    # the fixtures other engineers and the BCP examples rely on
    cafe = Variant.objects.select_related("product").get(sku="SKU-CAFE-500G")
    assert (cafe.product.title, cafe.price) == ("Café especial 500 g", 4290)
    pixel = Variant.objects.select_related("product").get(sku="PIXEL-10-PRO")
    assert pixel.product.title == "Pixel 10 Pro"
    assert sorted(
        Variant.objects.filter(product__title="Camiseta Básica Preta").values_list("sku", "options__tamanho")
    ) == [("CAM-BAS-PRETA-G", "G"), ("CAM-BAS-PRETA-M", "M"), ("CAM-BAS-PRETA-P", "P")]


def test_seed_demo_photos_are_raster_jpegs_with_a_thumbnail() -> None:
    """Demo products get a real photo (JPEG drawn at seed time), marked main, thumbnail made once."""
    call_command("seed_demo", stdout=StringIO())
    photos = list(ProductImage.objects.select_related("product"))
    assert len(photos) == Product.objects.count()
    for photo in photos:
        assert photo.is_main is True
        assert photo.image.name == f"demo/{photo.product.slug}.jpg"
        assert photo.url == f"/media/demo/{photo.product.slug}.jpg"
        with Image.open(photo.image.path) as picture:
            assert (picture.format, picture.size) == ("JPEG", (800, 800))
        with Image.open(default_storage.path(photo.thumbnail)) as thumb:
            assert thumb.size == (480, 480)
    # a re-seed reuses the files and the thumbnails: nothing new is written
    names = sorted(default_storage.listdir("demo")[1])
    call_command("seed_demo", stdout=StringIO())
    assert sorted(default_storage.listdir("demo")[1]) == names
