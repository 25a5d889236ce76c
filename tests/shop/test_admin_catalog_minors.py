"""Issue 33, catalog admin minors: a variant priced R$ 0,00 needs a confirmation, and a price past
R$ 1.000.000,00 (a typo adding zeros, R$ 99.999.999.999,99 was accepted) is refused on the field; nothing is
saved until the form is right. Photos and shipping rates are titled for people, not by path or code."""

from __future__ import annotations

import pytest
from django.test import Client

from shop.models import Category, Product, ProductImage, ShippingMethod, ShippingRate, Variant
from tests.shop.test_admin_catalog_forms import _product_post, _variant

pytestmark = pytest.mark.django_db

ZERO = "Preço R$ 0,00: a variante sairá de graça na loja e para os agentes."


@pytest.fixture
def category() -> Category:
    return Category.objects.create(name="Camisetas", slug="camisetas")


def test_a_price_of_zero_asks_for_a_confirmation_then_saves(admin_client: Client, category: Category) -> None:
    # given a new product whose only variant costs R$ 0,00
    data = _product_post(category, [_variant(0, "BRINDE-1", "0,00")], [])
    # when it is saved, the form comes back with the warning on the price and a checkbox to confirm
    response = admin_client.post("/admin/shop/product/add/", data)
    html = response.content.decode()
    assert response.status_code == 200
    assert ZERO in html
    assert 'type="checkbox" name="variants-0-confirm_free"' in html
    assert not Product.objects.exists()
    # when the merchant confirms, it is saved at R$ 0,00
    response = admin_client.post("/admin/shop/product/add/", {**data, "variants-0-confirm_free": "on"})
    assert response.status_code == 302
    assert Variant.objects.get(sku="BRINDE-1").price == 0


def test_a_variant_already_at_zero_is_not_asked_again_when_another_field_changes(
    admin_client: Client, category: Category
) -> None:
    product = Product.objects.create(title="Brinde", slug="brinde", category=category)
    variant = Variant.objects.create(product=product, sku="BRINDE-2", price=0, stock=1)
    form = {
        "product": str(product.pk),
        "sku": "BRINDE-2",
        "title": "",
        "price": "0,00",
        "compare_at_price": "",
        "stock": "9",
        "low_stock_threshold": "3",
        "active": "on",
        "position": "0",
        **{f"options_{n}": "" for n in range(6)},
    }
    response = admin_client.post(f"/admin/shop/variant/{variant.pk}/change/", form)
    assert response.status_code == 302, response.content.decode()[:2000]
    variant.refresh_from_db()
    assert (variant.price, variant.stock) == (0, 9)


@pytest.mark.parametrize(
    ("price", "compare", "field", "message"),
    [
        ("99.999.999.999,99", "", "price", "O preço passa do máximo de R$ 1.000.000,00: confira se não sobrou um"),
        ("10,00", "1.000.000,01", "compare_at_price", "O preço “de” passa do máximo de R$ 1.000.000,00"),
    ],
)
def test_a_price_past_the_maximum_is_refused_on_its_field(
    admin_client: Client, category: Category, price: str, compare: str, field: str, message: str
) -> None:
    data = _product_post(category, [_variant(0, "CARO-1", price, compare)], [])
    response = admin_client.post("/admin/shop/product/add/", data)
    assert response.status_code == 200
    errors = response.context["inline_admin_formsets"][0].formset.forms[0].errors
    assert message in " ".join(errors[field])
    assert not Product.objects.exists()


def test_the_maximum_itself_is_accepted(admin_client: Client, category: Category) -> None:
    data = _product_post(category, [_variant(0, "CARO-2", "R$ 1.000.000,00")], [])
    assert admin_client.post("/admin/shop/product/add/", data).status_code == 302
    assert Variant.objects.get(sku="CARO-2").price == 100_000_000


def test_photos_and_shipping_rates_are_titled_for_people(category: Category) -> None:
    product = Product.objects.create(title="Caneca", slug="caneca", category=category)
    described = ProductImage(product=product, image="produtos/prod_x/frente.jpg", alt_text="Caneca azul de frente")
    bare = ProductImage(product=product, image="produtos/prod_x/costas.jpg")
    assert (str(described), str(bare)) == ("Caneca azul de frente", "Foto costas.jpg")
    pac = ShippingMethod.objects.create(code="pac", title="PAC")
    motoboy = ShippingMethod.objects.create(code="motoboy", title="Motoboy")
    assert str(ShippingRate(method=pac, uf="SP", price=1990)) == "PAC — SP"
    ranged = ShippingRate(method=motoboy, cep_start=1000000, cep_end=5999999, price=1500)
    assert str(ranged) == "Motoboy — CEP 01000-000 a 05999-999"
