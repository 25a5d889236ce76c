"""The storefront shows the thumbnails made once at upload (issue 15): product cards, the product gallery and
cart lines use the THUMBNAIL_ALIASES sizes with `srcset` (1× and 2×), lazy loading and fixed dimensions,
and a page view never renders or looks a thumbnail up."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from django.core.files.base import ContentFile
from django.test import Client
from PIL import Image

from shop.catalog.images import demo_photo_render, product_image_thumbnail_make
from shop.models import Category, Product, ProductImage, Variant

pytestmark = pytest.mark.django_db


@pytest.fixture
def photographed(settings: Any, tmp_path: Path) -> ProductImage:
    settings.MEDIA_ROOT = tmp_path
    category = Category.objects.create(name="Camisetas", slug="camisetas")
    product = Product.objects.create(title="Camiseta Preta", slug="camiseta-preta", category=category)
    Variant.objects.create(product=product, sku="CAM-P", price=3590, stock=5)
    image = ProductImage(product=product, alt_text="camiseta preta dobrada", is_main=True)
    image.image.save("camiseta.jpg", ContentFile(demo_photo_render(slug="c", title="Camiseta", size=1400)))
    product_image_thumbnail_make(image=image)
    return image


def _img(html: str, alt: str) -> str:
    return re.search(rf'<img [^>]*alt="{alt}"[^>]*>', html).group(0)


def test_every_size_is_made_once_at_upload(photographed: ProductImage, settings: Any) -> None:
    sizes = {alias: options["size"][0] for alias, options in settings.THUMBNAIL_ALIASES[""].items()}
    assert set(photographed.thumbnails) == set(sizes)
    for alias, width in sizes.items():
        with Image.open(Path(settings.MEDIA_ROOT) / photographed.thumbnails[alias]) as picture:
            assert picture.size == (width, width), alias
    made = dict(photographed.thumbnails)
    product_image_thumbnail_make(image=ProductImage.objects.get(pk=photographed.pk))  # a second call: nothing new
    assert ProductImage.objects.get(pk=photographed.pk).thumbnails == made


def test_list_detail_and_cart_use_the_thumbnails_with_srcset(client: Client, photographed: ProductImage) -> None:
    url = photographed.image.storage.url
    card = _img(client.get("/produtos/").content.decode(), "camiseta preta dobrada")
    assert f'src="{url(photographed.thumbnails["card"])}"' in card
    one, two = url(photographed.thumbnails["card"]), url(photographed.thumbnails["card_2x"])
    assert f'srcset="{one} 320w, {two} 640w"' in card
    assert 'loading="lazy"' in card and 'width="320" height="320"' in card and "sizes=" in card
    detail = _img(client.get("/produtos/camiseta-preta/").content.decode(), "camiseta preta dobrada")
    assert f"{url(photographed.thumbnails['detail_2x'])} 1200w" in detail
    assert 'loading="lazy"' not in detail  # the first photo of the gallery is the page's main picture
    upload = photographed.image.url
    assert f'"{upload}"' not in detail and f"{upload} " not in detail  # never the full upload
    client.post("/carrinho/adicionar", {"sku": "CAM-P", "quantity": "1"})
    cart = _img(client.get("/carrinho/").content.decode(), "Camiseta Preta")
    assert f'srcset="{url(photographed.thumbnails["cart"])} 1x, {url(photographed.thumbnails["cart_2x"])} 2x"' in cart


def test_a_page_view_costs_no_thumbnail_lookup(client: Client, photographed: ProductImage, django_assert_num_queries):
    client.get("/produtos/")  # warm caches
    # the list's fixed count (tests/bench/test_product_list.py; the header's menu is cached): nothing more
    with django_assert_num_queries(5):
        assert client.get("/produtos/").status_code == 200
