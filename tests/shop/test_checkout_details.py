"""Checkout details a buyer trips over (issue 16, item 8): coupon actions report only coupon messages, refused
coupons leave the cart after their message, a new CEP brings its own UF, phones typed the Brazilian way.
"""

from __future__ import annotations

import re

import pytest

from kernel.br_validation import phone_normalize, phone_valid
from shop.cart import cart_coupons
from shop.models import Checkout
from tests.shop.checkout_factories import (
    FORM_ADDRESS,
    FORM_CONTACT,
    make_coupon,
    make_location,
    make_shipping,
    make_variant,
)

pytestmark = pytest.mark.django_db

CONTACT = FORM_CONTACT
ADDRESS = FORM_ADDRESS


@pytest.fixture
def shop_ready() -> None:
    make_variant(price=4290, stock=10, title="Café especial 500 g")
    make_shipping()
    make_location()
    make_coupon("BEMVINDO10", percent=10)


def errors(response) -> dict[str, str]:
    html = response.content.decode()
    return {m.group(1): m.group(2) for m in re.finditer(r'data-testid="error-(\w+)">([^<]*)<', html)}


def start_checkout(client) -> str:
    client.post("/carrinho/adicionar", {"sku": "SKU-CAFE-500G", "quantity": "2"})
    return client.get("/checkout/")["Location"].rsplit("/", 1)[1]


def test_applying_a_valid_coupon_flags_no_other_field(client, shop_ready) -> None:
    # given a checkout with nothing filled in yet
    checkout_id = start_checkout(client)
    # when the buyer only types a coupon and clicks "Aplicar cupom"
    response = client.post(
        f"/checkout/{checkout_id}", {"action": "coupon", "method": "shipping", "coupon": "BEMVINDO10"}
    )
    # then no address, contact or shipping field is flagged, and the discount is in the totals
    html = response.content.decode()
    assert errors(response) == {}
    assert 'class="alert alert-error"' not in html
    assert 'data-testid="total">R$ 77,22<' in html  # 85,80 - 8,58, no shipping yet
    assert Checkout.objects.get(public_id=checkout_id).discount_codes == ["BEMVINDO10"]


def test_a_refused_coupon_is_reported_once_then_dropped(client, shop_ready) -> None:
    checkout_id = start_checkout(client)
    # when the buyer applies a code that does not exist
    response = client.post(f"/checkout/{checkout_id}", {"action": "coupon", "method": "shipping", "coupon": "NADA"})
    # then only the coupon message shows, and the field no longer carries the code
    assert errors(response) == {"coupon": "O cupom NADA não foi encontrado."}
    assert re.search(r'name="coupon"[^>]*value=""', response.content.decode())
    assert cart_coupons(client.session) == []
    # when the buyer then fills the form and submits, the refused code does not come back
    response = client.post(
        f"/checkout/{checkout_id}", {"action": "update", **CONTACT, **ADDRESS, "shipping_option": "pac", "coupon": ""}
    )
    assert errors(response) == {}
    assert Checkout.objects.get(public_id=checkout_id).status == "ready_for_complete"


def test_the_cart_drops_a_refused_coupon_after_showing_why(client, shop_ready) -> None:
    client.post("/carrinho/adicionar", {"sku": "SKU-CAFE-500G", "quantity": "1"})
    client.post("/carrinho/cupom", {"code": "NADA"})
    first = client.get("/carrinho/").content.decode()
    assert "O cupom NADA não foi encontrado." in first
    # the next visit (or action) is clean
    second = client.get("/carrinho/").content.decode()
    assert "NADA" not in second
    # and a valid coupon stays
    client.post("/carrinho/cupom", {"code": "BEMVINDO10"})
    client.get("/carrinho/")
    assert "BEMVINDO10" in client.get("/carrinho/").content.decode()


def test_a_new_cep_in_another_state_brings_its_own_uf(client, shop_ready) -> None:
    checkout_id = start_checkout(client)
    client.post(f"/checkout/{checkout_id}", {"action": "update", **CONTACT, **ADDRESS, "shipping_option": "pac"})
    # when the buyer changes the CEP to Rio but the UF field still says SP (no JavaScript)
    rio = {**ADDRESS, "cep": "20040-002", "city": "Rio de Janeiro", "uf": "SP"}
    response = client.post(f"/checkout/{checkout_id}", {"action": "shipping", **CONTACT, **rio})
    # then no "A UF não corresponde ao CEP" error: the UF follows the new CEP
    assert "uf" not in errors(response)
    checkout = Checkout.objects.get(public_id=checkout_id)
    assert (checkout.ship_cep, checkout.ship_uf) == ("20040-002", "RJ")


@pytest.mark.parametrize(
    "typed",
    [
        "(11) 98765-4321",
        "11 98765-4321",
        "11987654321",
        "(11)98765-4321",
        "011 98765-4321",
        "0 21 11 98765-4321",
        "55 11 98765-4321",
        "+55 (11) 98765-4321",
        "+5511987654321",
    ],
)
def test_phone_typed_the_brazilian_way_is_accepted(typed) -> None:
    assert phone_normalize(typed) == "+5511987654321"
    assert phone_valid(phone_normalize(typed))


def test_landline_with_trunk_prefix_and_a_bad_number() -> None:
    assert phone_normalize("(011) 3123-4567") == "+551131234567"
    assert not phone_valid(phone_normalize("98765-4321"))


def test_an_invalid_phone_is_explained_in_the_format_the_buyer_types(client, shop_ready) -> None:
    checkout_id = start_checkout(client)
    response = client.post(
        f"/checkout/{checkout_id}", {"action": "update", **CONTACT, "phone": "98765-4321", **ADDRESS}
    )
    assert errors(response)["phone"] == "Celular inválido: informe DDD e número, como (11) 98765-4321."
    # and an accepted phone is shown back the same way
    response = client.post(
        f"/checkout/{checkout_id}", {"action": "update", **CONTACT, "phone": "011987654321", **ADDRESS}
    )
    assert "phone" not in errors(response)
    assert 'value="(11) 98765-4321"' in response.content.decode()


def applied(response) -> list[str]:
    return re.findall(r'data-testid="applied-coupon">([^<]*)<', response.content.decode())


def test_a_code_typed_in_lower_case_shows_as_the_coupon_is_named(client, shop_ready) -> None:
    """QA walk: "primeira10" typed in the cart read "primeira10 Cupom PRIMEIRA10 aplicado" in the cart and
    "primeira10 remover" beside "Cupom PRIMEIRA10" at checkout."""
    client.post("/carrinho/adicionar", {"sku": "SKU-CAFE-500G", "quantity": "2"})
    cart = client.post("/carrinho/cupom", {"code": "bemvindo10"}, follow=True).content.decode()
    assert re.findall(r'data-testid="cart-coupon">([^<]*)<', cart) == ["BEMVINDO10"]
    checkout_id = start_checkout(client)
    assert applied(client.get(f"/checkout/{checkout_id}")) == ["BEMVINDO10"]
    removed = client.post(
        f"/checkout/{checkout_id}", {"method": "shipping", "coupon": "", "remove_coupon": "bemvindo10"}
    )
    assert applied(removed) == []


def test_a_second_wrong_code_keeps_the_applied_one(client, shop_ready) -> None:
    # given BEMVINDO10 applied at checkout
    checkout_id = start_checkout(client)
    url = f"/checkout/{checkout_id}"
    first = client.post(url, {"action": "coupon", "method": "shipping", "coupon": "BEMVINDO10"})
    assert applied(first) == ["BEMVINDO10"]
    assert re.search(r'name="coupon"[^>]*value=""', first.content.decode())  # the field is for a new code
    # when the buyer types a second, unknown code
    second = client.post(url, {"action": "coupon", "method": "shipping", "coupon": "FAKE"})
    # then the error concerns FAKE only, and BEMVINDO10 still discounts
    assert errors(second) == {"coupon": "O cupom FAKE não foi encontrado."}
    assert applied(second) == ["BEMVINDO10"]
    assert 'data-testid="total">R$ 77,22<' in second.content.decode()
    assert Checkout.objects.get(public_id=checkout_id).discount_codes == ["BEMVINDO10", "FAKE"]  # reported once
    assert cart_coupons(client.session) == ["BEMVINDO10"]
    # and the next step keeps it without repeating FAKE's message; "remover" takes it off
    again = client.post(url, {"action": "coupon", "method": "shipping", "coupon": ""})
    assert errors(again) == {} and applied(again) == ["BEMVINDO10"]
    removed = client.post(url, {"method": "shipping", "coupon": "", "remove_coupon": "BEMVINDO10"})
    assert applied(removed) == [] and errors(removed) == {}
    assert Checkout.objects.get(public_id=checkout_id).discount_codes == []
    assert cart_coupons(client.session) == []
