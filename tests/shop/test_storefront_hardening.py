"""Storefront forms against hostile input (issue 13 §3, §5): control characters and lengths beyond the engine's
limits are form errors next to their field (HTTP 400), never a 500, and the checkout is unchanged.
"""

from __future__ import annotations

import pytest

from shop.cart import cart_coupons
from shop.models import Checkout
from tests.shop import test_checkout_storefront
from tests.shop.test_checkout_storefront import ADDRESS, CONTACT, errors, start_checkout

shop_ready = test_checkout_storefront.shop_ready

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("field", "value"),
    [("first_name", "Ana\x00"), ("first_name", "Ana\x07"), ("street", "Rua\x1b[31m"), ("coupon", "BEM\x00VINDO")],
)
def test_control_characters_in_the_checkout_form_are_field_errors(client, shop_ready, field: str, value: str) -> None:
    checkout_id = start_checkout(client)
    response = client.post(f"/checkout/{checkout_id}", {**CONTACT, **ADDRESS, field: value})
    assert response.status_code == 400
    assert field in errors(response), errors(response)
    assert Checkout.objects.get(public_id=checkout_id).buyer_first_name == ""


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("phone", "+55 (11) 9 8765-4321 ramal", "Celular: no máximo 20 caracteres (você digitou 26)."),
        ("coupon", "C" * 41, "Cada cupom tem no máximo 40 caracteres."),
        ("coupon", ", ".join(f"C{n}" for n in range(21)), "No máximo 20 cupons."),
    ],
)
def test_lengths_beyond_the_engines_limits_are_field_errors(
    client, shop_ready, field: str, value: str, message: str
) -> None:
    # Before: the form allowed 30-character phones and 200-character coupons, the engine raised
    # CheckoutInputError and the page answered 500.
    checkout_id = start_checkout(client)
    response = client.post(f"/checkout/{checkout_id}", {**CONTACT, **ADDRESS, field: value})
    assert response.status_code == 400
    assert errors(response)[field].startswith(message), errors(response)


@pytest.mark.parametrize("code", ["BEM\x00VINDO", "C" * 41])
def test_unusable_cart_coupons_are_dropped_and_the_cart_keeps_working(client, shop_ready, code: str) -> None:
    client.post("/carrinho/adicionar", {"sku": "SKU-CAFE-500G", "quantity": "1"})
    client.post("/carrinho/cupom", {"code": "BEMVINDO10"})
    client.post("/carrinho/cupom", {"code": code})
    cart = client.get("/carrinho/")
    checkout = client.get("/checkout/")
    assert cart.status_code == 200
    assert cart_coupons(client.session) == ["BEMVINDO10"]
    assert checkout.status_code == 302 and checkout["Location"].startswith("/checkout/checkout_")


def test_a_session_already_holding_a_nul_coupon_is_not_broken(client, shop_ready) -> None:
    # A cart written before the limits existed (or by hand) must not break /carrinho/ or /checkout/.
    from shop.models import Cart

    client.post("/carrinho/adicionar", {"sku": "SKU-CAFE-500G", "quantity": "1"})
    Cart.objects.filter(public_id=client.session["cart_id"]).update(discount_codes=["BEM\x01", "BEMVINDO10"])
    assert client.get("/carrinho/").status_code == 200
    response = client.get("/checkout/")
    assert response.status_code == 302
    assert client.get(response["Location"]).status_code == 200
