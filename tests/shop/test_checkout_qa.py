"""Fixes from the QA pass of the running shop: absolute image URLs, English messages, cart capped at stock,
"Calcular frete" without premature errors, phone shown back in the Brazilian format."""

from __future__ import annotations

import re

import pytest

from shop.cart import cart_items
from shop.checkout.selectors import checkout_view
from shop.checkout.services import checkout_create
from shop.checkout.types import CheckoutInput, LineInput
from shop.models import ProductImage
from tests.shop.checkout_factories import make_location, make_shipping, make_variant, start_checkout

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
    from kernel.br_validation import phone_display

    assert phone_display(stored) == shown


def test_cart_add_is_capped_at_stock_with_a_message(client, shop_ready):
    # given a variant with 2 units on sale
    shop_ready.stock = 2
    shop_ready.save()
    # when the buyer adds 5
    page = client.post("/carrinho/adicionar", {"sku": "SKU-CAFE-500G", "quantity": "5"}, follow=True)
    # then the cart holds 2, says so, and the header counts 2
    html = page.content.decode()
    assert cart_items(client.session) == {"SKU-CAFE-500G": 2}
    assert "Só temos 2 unidades de Café especial 500 g; a quantidade no carrinho foi ajustada." in html
    assert 'data-testid="cart-count">2<' in html
    # and adding more, or changing the quantity above the stock, stays at 2
    client.post("/carrinho/adicionar", {"sku": "SKU-CAFE-500G", "quantity": "1"})
    assert cart_items(client.session) == {"SKU-CAFE-500G": 2}
    page = client.post("/carrinho/alterar", {"sku": "SKU-CAFE-500G", "quantity": "9"}, follow=True)
    assert cart_items(client.session) == {"SKU-CAFE-500G": 2}
    assert "a quantidade no carrinho foi ajustada." in page.content.decode()


def test_cart_backorder_variant_is_not_capped(client, shop_ready):
    shop_ready.stock = 2
    shop_ready.allow_backorder = True
    shop_ready.save()
    page = client.post("/carrinho/adicionar", {"sku": "SKU-CAFE-500G", "quantity": "5"}, follow=True)
    assert cart_items(client.session) == {"SKU-CAFE-500G": 5}
    assert "ajustada" not in page.content.decode()


def test_cart_change_of_a_sold_out_variant_removes_it(client, shop_ready):
    client.post("/carrinho/adicionar", {"sku": "SKU-CAFE-500G", "quantity": "1"})
    shop_ready.stock = 0
    shop_ready.save()
    page = client.post("/carrinho/alterar", {"sku": "SKU-CAFE-500G", "quantity": "3"}, follow=True)
    assert cart_items(client.session) == {}
    assert "Produto esgotado." in page.content.decode()


def test_the_cart_says_a_line_sold_out_since_it_was_added(client, shop_ready):
    """QA walk: the buyer back at the cart saw a sold-out item priced in the estimate without a word; only
    "Pagar" on the checkout said "está sem estoque"."""
    make_variant("SKU-CHA-100G", price=1990, stock=10, title="Chá mate 100 g")
    client.post("/carrinho/adicionar", {"sku": "SKU-CAFE-500G", "quantity": "1"})
    client.post("/carrinho/adicionar", {"sku": "SKU-CHA-100G", "quantity": "1"})
    assert "sem estoque" not in client.get("/carrinho/").content.decode()
    shop_ready.stock = 0
    shop_ready.save()
    html = client.get("/carrinho/").content.decode()
    assert "Café especial 500 g está sem estoque: remova do carrinho para finalizar a compra." in html
    assert "Chá mate" in html and "Chá mate 100 g está sem estoque" not in html
    english = client.get("/carrinho/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert "Café especial 500 g is out of stock: remove it from the cart to check out." in english
    # and a variant sold on order (backorder) is not said sold out
    shop_ready.allow_backorder = True
    shop_ready.save()
    assert "sem estoque" not in client.get("/carrinho/").content.decode()


def test_badge_follows_the_checkout_after_a_stock_adjustment(client, shop_ready):
    # given 5 in the cart while 5 were on sale, and a second product
    make_variant("SKU-CHA-100G", price=1990, stock=10)
    client.post("/carrinho/adicionar", {"sku": "SKU-CAFE-500G", "quantity": "5"})
    client.post("/carrinho/adicionar", {"sku": "SKU-CHA-100G", "quantity": "2"})
    # when the stock drops to 2 before the buyer goes to the checkout
    shop_ready.stock = 2
    shop_ready.save()
    checkout_page = client.get("/checkout/", follow=True)
    # then the checkout adjusted to 2 + 2 and the cart and its badge count the same 4
    html = checkout_page.content.decode()
    assert "a quantidade foi ajustada." in html
    assert cart_items(client.session) == {"SKU-CAFE-500G": 2, "SKU-CHA-100G": 2}
    assert 'data-testid="cart-count">4<' in html


def test_calcular_frete_reports_only_what_the_buyer_filled(client, shop_ready):
    checkout_id = start_checkout(client)
    # when the buyer types only the CEP and presses "Calcular frete"
    response = client.post(f"/checkout/{checkout_id}", {"action": "shipping", "method": "shipping", "cep": "01310-100"})
    # then the options are shown and nothing the buyer has not filled yet is an error
    html = response.content.decode()
    assert errors(response) == {}
    assert 'value="pac"' in html and 'value="sedex"' in html
    # when a filled field is wrong, it is reported
    response = client.post(
        f"/checkout/{checkout_id}", {"action": "shipping", "method": "shipping", "cep": "01310-100", "uf": "RJ"}
    )
    assert errors(response) == {"uf": "A UF não corresponde ao CEP (o CEP é de SP)."}
    # and a bad or missing CEP is reported, since the button needs it
    response = client.post(f"/checkout/{checkout_id}", {"action": "shipping", "method": "shipping", "cep": "1234"})
    assert errors(response) == {"cep": "CEP inválido: use o formato 00000-000."}
    # when the buyer submits for good, every missing field is reported
    response = client.post(f"/checkout/{checkout_id}", {"action": "pay", "method": "shipping", "cep": "01310-100"})
    assert errors(response) == {
        "email": "Informe o e-mail.",
        "first_name": "Informe o nome.",
        "last_name": "Informe o sobrenome.",
        "street": "Informe a rua.",
        "city": "Informe a cidade.",
        "shipping_option": "Escolha a forma de entrega.",
    }


def test_engine_messages_in_english_when_the_checkout_language_is_en_bcp_5_1(shop_ready):
    """BCP §5.1: content is pt-BR by default; a caller that asks for English gets English."""
    from django.utils import translation

    from shop.checkout.types import ContextInput

    with translation.override("pt-br"):
        # when a checkout is created in English (Accept-Language: en, or context.language "en")
        english = checkout_create(data=CheckoutInput(lines=(LineInput("SKU-CAFE-500G", 1),)), language="en")
        by_context = checkout_create(
            data=CheckoutInput(lines=(LineInput("SKU-CAFE-500G", 1),), context=ContextInput(language="en-US"))
        )
        portuguese = checkout_create(data=CheckoutInput(lines=(LineInput("SKU-CAFE-500G", 1),)))
        # then the caller's language is left as it was
        assert translation.get_language() == "pt-br"
    by_path = {m.path: m.content for m in english.messages}
    assert by_path["$.buyer.email"] == "Enter your email."
    assert by_path["$.buyer.first_name"] == "Enter your first name."
    assert by_path["$.buyer.last_name"] == "Enter your last name."
    assert english.checkout.language == "en"
    assert {m.path: m.content for m in by_context.messages}["$.buyer.email"] == "Enter your email."
    assert by_context.checkout.language == "en"
    assert {m.path: m.content for m in portuguese.messages}["$.buyer.email"] == "Informe o e-mail."
    assert portuguese.checkout.language == "pt-br"


def test_english_storefront_checkout_errors_and_labels(client, settings, shop_ready):
    # given a buyer who switched the storefront to English
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "en"
    checkout_id = start_checkout(client)
    # when the empty form is submitted
    response = client.post(f"/checkout/{checkout_id}", {"action": "pay", "method": "shipping"})
    # then the errors and labels are English
    assert errors(response) == {
        "email": "Enter your email.",
        "first_name": "Enter your first name.",
        "last_name": "Enter your last name.",
        "cep": "Enter the delivery address.",
    }
    assert '<label for="id_uf">State (UF)</label>' in response.content.decode()
    # and the cart speaks English too
    page = client.post("/carrinho/adicionar", {"sku": "SKU-CAFE-500G", "quantity": "50"}, follow=True)
    assert "We only have 10 units of Café especial 500 g; the quantity in the cart was adjusted." in (
        page.content.decode()
    )
