"""Catalog admin: pages load for staff, anonymous users are sent to the login page, stock filters are exact."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from shop.demo.seed import seed_catalog
from shop.models import Category, Product, Variant

pytestmark = pytest.mark.django_db


@pytest.fixture
def demo() -> None:
    seed_catalog()


def _result_rows(html: str) -> list[str]:
    # First link of each changelist row (the object's __str__ or first column).
    return re.findall(r'<th class="field-[a-z_]+"><a href="[^"]+">(.*?)</a></th>', html)


def _admin_urls() -> list[str]:
    product = Product.objects.get(slug="camiseta-basica-preta")
    variant = Variant.objects.get(sku="CAM-BAS-PRETA-M")
    category = Category.objects.get(slug="cafes")
    return [
        "/admin/",
        "/admin/shop/product/",
        "/admin/shop/product/add/",
        f"/admin/shop/product/{product.pk}/change/",
        "/admin/shop/variant/",
        f"/admin/shop/variant/{variant.pk}/change/",
        "/admin/shop/category/",
        f"/admin/shop/category/{category.pk}/change/",
    ]


def test_catalog_admin_pages_load_for_staff(admin_client: Client, demo: None) -> None:
    for url in _admin_urls():
        response = admin_client.get(url)
        assert response.status_code == 200, url


def test_catalog_admin_redirects_anonymous_to_login(client: Client, demo: None) -> None:
    for url in _admin_urls():
        response = client.get(url)
        assert response.status_code == 302, url
        assert response["Location"].startswith("/admin/login/?next="), url


def test_product_change_page_has_variant_and_image_inlines(admin_client: Client, demo: None) -> None:
    product = Product.objects.get(slug="camiseta-basica-preta")
    html = admin_client.get(f"/admin/shop/product/{product.pk}/change/").content.decode()
    for sku in ("CAM-BAS-PRETA-P", "CAM-BAS-PRETA-M", "CAM-BAS-PRETA-G"):
        assert f'value="{sku}"' in html
    assert 'href="/media/demo/camiseta-basica-preta.jpg"' in html  # the current photo's link


def test_product_changelist_shows_formatted_price_and_searches_by_sku(admin_client: Client, demo: None) -> None:
    html = admin_client.get("/admin/shop/product/?q=PIXEL-10-PRO").content.decode()
    assert _result_rows(html) == ["Pixel 10 Pro"]
    assert '<td class="field-price_display"><span class="nowrap">R$ 6.999,00</span></td>' in html


def test_searching_one_sku_still_sums_every_variant_stock(admin_client: Client, demo: None) -> None:
    html = admin_client.get("/admin/shop/product/?q=CAM-BAS-PRETA-M").content.decode()
    assert _result_rows(html) == ["Camiseta Básica Preta"]
    assert '<td class="field-stock_total">58</td>' in html  # P 18 + M 40 + G 0


def test_product_stock_state_filters(admin_client: Client, demo: None) -> None:
    out = _result_rows(admin_client.get("/admin/shop/product/?stock_state=out").content.decode())
    assert set(out) == {
        "Agenda 2027 Semanal",
        "Cabo USB-C Trançado 2 m",
        "Camiseta Infantil Arara",
        "Café Orgânico Sul de Minas 500 g",
        "Cápsulas de café Espresso (10 un.)",
        "Panela de Barro Capixaba 24 cm",
        "Planner Mensal Mandacaru",
    }
    assert len(out) == 7
    low = _result_rows(admin_client.get("/admin/shop/product/?stock_state=low").content.decode())
    assert set(low) == {
        "Caixa de Som Portátil à Prova d&#x27;Água",
        "Camiseta Básica Branca",
        "Camiseta Estampa Ipê Amarelo",
        "Caneca de Cerâmica Esmaltada 350 ml",
        "Café Bourbon Amarelo 250 g",
        "Fone Bluetooth Samba",
    }
    assert len(low) == 6
    in_stock = _result_rows(admin_client.get("/admin/shop/product/?stock_state=in").content.decode())
    assert len(in_stock) == 22


def test_low_stock_variant_list(admin_client: Client, demo: None) -> None:
    html = admin_client.get("/admin/shop/variant/?stock_state=low").content.decode()
    assert _result_rows(html) == [
        "FONE-SAMBA-BRANCO",
        "CAF-BOURBON-MOIDO",
        "CAIXA-SOM-IPX7",
        "CAM-IPE-GG",
        "CAN-CER-AZUL",
        "CAM-BAS-BRANCA-GG",
    ]


def test_product_filters_by_category_and_active(admin_client: Client, demo: None) -> None:
    category = Category.objects.get(slug="eletronicos")
    Product.objects.filter(slug="cabo-usb-c-trancado-2m").update(active=False)
    html = admin_client.get(f"/admin/shop/product/?category__id__exact={category.pk}&active__exact=0").content.decode()
    assert _result_rows(html) == ["Cabo USB-C Trançado 2 m"]
