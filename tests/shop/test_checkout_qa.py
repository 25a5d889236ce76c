"""Fixes from the QA pass of the running shop: absolute image URLs, English messages, cart capped at stock,
"Calcular frete" without premature errors, phone shown back in the Brazilian format."""

from __future__ import annotations

import re

import pytest

from shop.checkout_selectors import checkout_view
from shop.checkout_types import CheckoutInput, LineInput
from shop.models import ProductImage
from shop.services import checkout_create
from tests.shop.checkout_factories import make_location, make_shipping, make_variant

pytestmark = pytest.mark.django_db

CONTACT = {"email": "ana@example.com.br", "first_name": "Ana", "last_name": "Souza", "phone": "(11) 98765-4321"}
ADDRESS = {
    "method": "shipping",
    "cep": "01310-100",
    "street": "Rua das Flores",
    "number": "123",
    "city": "São Paulo",
    "uf": "SP",
}


@pytest.fixture
def shop_ready():
    variant = make_variant(price=4290, stock=10, title="Café especial 500 g")
    make_shipping()
    make_location()
    return variant


def errors(response) -> dict[str, str]:
    html = response.content.decode()
    return {m.group(1): m.group(2) for m in re.finditer(r'data-testid="error-(\w+)">([^<]*)<', html)}


def start_checkout(client, quantity: str = "2") -> str:
    client.post("/carrinho/adicionar", {"sku": "SKU-CAFE-500G", "quantity": quantity})
    response = client.get("/checkout/")
    assert response.status_code == 302
    return response["Location"].rsplit("/", 1)[1]


def test_line_image_url_is_absolute_bcp_chk_item_image(settings, shop_ready):
    """BCP item schema: `image_url` is a URI, so a static path is joined to BCP_PUBLIC_URL."""
    settings.BCP_PUBLIC_URL = "https://loja.example.com.br"
    ProductImage.objects.create(product=shop_ready.product, source="shop/demo/cafe-especial-500g.svg")
    # when a checkout is created with the product
    result = checkout_create(data=CheckoutInput(lines=(LineInput("SKU-CAFE-500G", 1),)))
    # then the line image is absolute, stored and shown
    line = checkout_view(result.checkout).lines[0]
    assert line.image_url == "https://loja.example.com.br/static/shop/demo/cafe-especial-500g.svg"
    assert result.checkout.lines.get().image_url == line.image_url


def test_line_image_url_stored_relative_is_shown_absolute(settings, shop_ready):
    settings.BCP_PUBLIC_URL = "https://loja.example.com.br"
    result = checkout_create(data=CheckoutInput(lines=(LineInput("SKU-CAFE-500G", 1),)))
    result.checkout.lines.update(image_url="/static/shop/demo/old.svg")
    result.checkout.refresh_from_db()
    assert checkout_view(result.checkout).lines[0].image_url == "https://loja.example.com.br/static/shop/demo/old.svg"


def test_phone_is_stored_e164_and_shown_back_formatted(client, shop_ready):
    # given a buyer who types the phone the Brazilian way
    checkout_id = start_checkout(client)
    response = client.post(f"/checkout/{checkout_id}", {"action": "update", **CONTACT, **ADDRESS})
    # then the engine keeps E.164 and the form shows it back as typed
    from shop.models import Checkout

    assert Checkout.objects.get(public_id=checkout_id).buyer_phone == "+5511987654321"
    assert 'name="phone" type="tel" value="(11) 98765-4321"' in response.content.decode()
    assert 'name="phone" type="tel" value="(11) 98765-4321"' in client.get(f"/checkout/{checkout_id}").content.decode()


@pytest.mark.parametrize(
    ("stored", "shown"),
    [
        ("+5511987654321", "(11) 98765-4321"),
        ("+551133334444", "(11) 3333-4444"),
        ("+14155550100", "+14155550100"),
        ("", ""),
    ],
)
def test_phone_display(stored, shown):
    from shop.br_validation import phone_display

    assert phone_display(stored) == shown
