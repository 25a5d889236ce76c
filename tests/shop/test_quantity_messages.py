"""Issue 33: quantities are never changed or refused silently; the cart says what happened (50 with stock 3 → 3,
999, -1, 1.5), and the browser's own number checks do not stop the form before the shop can say it."""

from __future__ import annotations

import pytest

from shop.cart import cart_items
from tests.shop.checkout_factories import make_variant

pytestmark = pytest.mark.django_db


@pytest.fixture
def mug():
    return make_variant("SKU-CANECA", price=3500, stock=3, title="Caneca esmaltada")


def flash(response) -> list[str]:
    html = response.content.decode()
    start = html.find('<ul class="flash"')
    return [] if start < 0 else [part.split("</li>")[0] for part in html[start:].split("<li")[1:] if "</li>" in part]


def test_adding_more_than_the_stock_says_how_many_are_in_the_cart(client, mug):
    response = client.post("/carrinho/adicionar", {"sku": "SKU-CANECA", "quantity": "50"}, follow=True)
    assert [text.split(">", 1)[1] for text in flash(response)] == [
        "Só temos 3 unidades de Caneca esmaltada; a quantidade no carrinho foi ajustada."
    ]
    assert cart_items(client.session) == {"SKU-CANECA": 3}


@pytest.mark.parametrize(
    ("typed", "said"),
    [
        # each names its product: the cart page lists every line under one message (QA walk)
        ("999", "Caneca esmaltada: a quantidade deve estar entre 0 e 99."),
        ("-1", "Caneca esmaltada: a quantidade deve estar entre 0 e 99."),
        ("1.5", "Caneca esmaltada: informe a quantidade em unidades inteiras, como 1 ou 2."),
        ("1,5", "Caneca esmaltada: informe a quantidade em unidades inteiras, como 1 ou 2."),
        ("dois", "Caneca esmaltada: quantidade inválida."),
        ("", "Informe a quantidade de Caneca esmaltada (0 remove o item)."),  # the field left empty
    ],
)
def test_a_quantity_the_cart_cannot_take_is_refused_with_the_reason(client, mug, typed, said):
    client.post("/carrinho/adicionar", {"sku": "SKU-CANECA", "quantity": "2"}, follow=True)
    response = client.post("/carrinho/alterar", {"sku": "SKU-CANECA", "quantity": typed}, follow=True)
    assert [text.split(">", 1)[1] for text in flash(response)] == [said]
    assert cart_items(client.session) == {"SKU-CANECA": 2}  # unchanged, and the page said why


def test_the_quantity_forms_let_the_shop_answer(client, mug):
    """A number field's min/max/step would make the browser stop the submit with its own (English, easily
    missed) bubble: the forms are `novalidate`, so the shop's Portuguese message is what the buyer reads."""
    client.post("/carrinho/adicionar", {"sku": "SKU-CANECA", "quantity": "1"})
    cart = client.get("/carrinho/").content.decode()
    product = client.get("/produtos/sku-caneca/").content.decode()
    assert 'class="inline-form" novalidate' in cart
    assert 'data-testid="add-to-cart-form" novalidate' in product


def test_each_rows_quantity_field_and_buttons_name_their_product(client, mug):
    """QA walk with a screen reader's ears: every row read "Quantidade", "Atualizar", "Remover", the lines told apart
    by nothing. The field's label and the buttons' names carry the product (the visible words stay short)."""
    make_variant("SKU-COADOR", price=1990, stock=5, title="Coador de pano")
    client.post("/carrinho/adicionar", {"sku": "SKU-CANECA", "quantity": "1"})
    client.post("/carrinho/adicionar", {"sku": "SKU-COADOR", "quantity": "1"})
    cart = client.get("/carrinho/").content.decode()
    for product in ("Caneca esmaltada", "Coador de pano"):
        assert f'">Quantidade de {product}</label>' in cart
        assert f'aria-label="Atualizar a quantidade de {product}">Atualizar</button>' in cart
        assert f'aria-label="Remover {product} do carrinho">Remover</button>' in cart
