"""Freight before checkout (issue 16, item 3): "Calcular frete" on the product page and the cart gives the
options the checkout will offer (same engine, `shop/checkout/fulfillment.py`), with the free-shipping threshold shown.
"""

from __future__ import annotations

import re

import pytest

from shop.checkout.fulfillment import freight_quote
from shop.checkout.selectors import checkout_view
from shop.checkout.services import checkout_create
from shop.checkout.types import CheckoutInput, LineInput
from shop.store.services import store_row
from tests.shop.checkout_factories import (
    BUYER,
    FORM_ADDRESS,
    FORM_CONTACT,
    make_shipping,
    make_variant,
    shipping,
    start_checkout,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def shop_ready() -> None:
    make_variant(price=4290, stock=10, title="Café especial 500 g")  # slug sku-cafe-500g
    make_variant("EBOOK-1", price=2990, stock=99, title="E-book", requires_shipping=False)
    make_shipping()  # PAC free from R$ 200,00


def box(html: str) -> list[tuple[str, str, str]]:
    """(option id, estimate, price) of the freight box."""
    return re.findall(
        r'<li data-option="(\w+)">.*?class="option-desc">([^<]*)<.*?class="option-price money">([^<]*)<', html
    )


def test_product_page_shows_every_option_and_what_is_missing_for_free_shipping(client, shop_ready) -> None:
    html = client.get("/produtos/sku-cafe-500g/").content.decode()
    # before a CEP: the box and the notice
    assert 'data-testid="freight-box"' in html
    assert "Frete grátis no PAC acima de R$ 200,00" in html  # only PAC is free (issue 33)
    # when the buyer types a São Paulo CEP
    html = client.get("/produtos/sku-cafe-500g/", {"variante": "SKU-CAFE-500G", "cep": "01310100"}).content.decode()
    assert box(html) == [
        ("pac", "Chega em 3 a 5 dias úteis", "R$ 18,90"),
        ("sedex", "Chega em 1 a 2 dias úteis", "R$ 32,90"),
        ("motoboy", "Chega em 1 dia útil", "R$ 15,00"),
    ]
    assert "Entrega para o CEP 01310-100 (SP)" in html
    assert "Faltam R$ 157,10 para o frete grátis no PAC." in html  # 200,00 - 42,90
    assert 'value="01310100"' in html  # the CEP stays in the box
    assert 'name="variante" value="SKU-CAFE-500G"' in html


def test_cart_reaches_free_shipping_and_matches_the_checkout(client, shop_ready) -> None:
    client.post("/carrinho/adicionar", {"sku": "SKU-CAFE-500G", "quantity": "5"})  # R$ 214,50
    html = client.get("/carrinho/", {"cep": "20040-002"}).content.decode()
    assert box(html) == [
        ("pac", "Chega em 5 a 8 dias úteis", "Grátis"),
        ("sedex", "Chega em 1 a 3 dias úteis", "R$ 41,90"),
    ]
    assert "Faltam" not in html
    # the checkout offers exactly the same for the same cart and CEP
    data = CheckoutInput(lines=(LineInput("SKU-CAFE-500G", 5),), buyer=BUYER, fulfillment=shipping())
    result = checkout_create(data=data)
    view = checkout_view(result.checkout)
    quote = freight_quote(cep="01310-100", subtotal_after_discounts=21450)
    assert [(o.id, o.amount, o.description) for o in quote.options] == [
        (o.id, o.amount, o.description) for o in view.fulfillment_methods[0].groups[0].options
    ]


@pytest.mark.parametrize(
    ("cep", "message"),
    [
        ("123", "CEP inválido: use o formato 00000-000."),
        ("00000-000", "CEP 00000-000 não existe."),
    ],
)
def test_bad_cep_is_a_clear_message_next_to_the_box(client, shop_ready, cep, message) -> None:
    response = client.get("/produtos/sku-cafe-500g/", {"cep": cep})
    assert response.status_code == 200
    assert f'data-testid="freight-error">{message}<' in response.content.decode()


def test_cep_nobody_serves_says_so(client, shop_ready) -> None:
    html = client.get("/produtos/sku-cafe-500g/", {"cep": "69900-000"}).content.decode()  # Acre: no rate
    assert box(html) == []
    assert "Ainda não entregamos neste CEP." in html


def test_in_english(client, shop_ready) -> None:
    client.cookies["django_language"] = "en"
    html = client.get("/produtos/sku-cafe-500g/", {"cep": "01310-100"}).content.decode()
    assert box(html)[0] == ("pac", "Arrives in 3 to 5 business days", "R$18.90")
    assert "Free shipping by PAC over R$200.00" in html
    assert "R$157.10 more for free shipping by PAC." in html


def test_no_freight_box_for_what_is_not_shipped(client, shop_ready) -> None:
    assert 'data-testid="freight-box"' not in client.get("/produtos/ebook-1/").content.decode()
    client.post("/carrinho/adicionar", {"sku": "EBOOK-1", "quantity": "1"})
    assert 'data-testid="freight-box"' not in client.get("/carrinho/").content.decode()


def test_the_stores_prazo_de_postagem_is_said_beside_the_carriers_days(client, shop_ready) -> None:
    """QA walk of a new shop: with a prazo de postagem of 2 days the checkout offered the motoboy "Chega em 1 dia
    útil" and the order page then said "Chega entre 09/12 e 10/12"; the options now say their days count from
    the posting, and when it comes, on the product page, the cart and the checkout alike."""
    note = "Os prazos contam a partir da postagem: a loja posta em até 2 dias úteis após o pagamento."
    html = client.get("/produtos/sku-cafe-500g/", {"cep": "01310100"}).content.decode()
    assert "Os prazos contam" not in html  # 0, the default: the days are the whole story
    row = store_row()
    row.handling_days = 2
    row.save()
    html = client.get("/produtos/sku-cafe-500g/", {"cep": "01310100"}).content.decode()
    assert box(html)[0] == ("pac", "Chega em 3 a 5 dias úteis", "R$ 18,90")
    assert f'data-testid="handling-note">{note}<' in html
    checkout_id = start_checkout(client, quantity="1")
    assert note in client.get("/carrinho/", {"cep": "01310-100"}).content.decode()
    page = client.post(f"/checkout/{checkout_id}", {"action": "shipping", **FORM_CONTACT, **FORM_ADDRESS})
    options = page.content.decode().split('data-testid="shipping-options"')[1].split("</div>")[0]
    assert "Chega em 3 a 5 dias úteis" in options and note in options
    client.cookies["django_language"] = "en"
    english = client.get("/produtos/sku-cafe-500g/", {"cep": "01310100"}).content.decode()
    assert "Delivery times count from posting: the shop posts within 2 business days of payment." in english
