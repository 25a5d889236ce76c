"""Fixes from the QA walk of the storefront checkout in a browser: no stock promise without a hold, products
taken off sale named to the buyer, a dropped coupon said why, the UF/CEP mismatch where the rates are."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest
from django.utils import timezone

from payments.selectors import pix_charge_active_for_reference
from shop.checkout.selectors import checkout_continue_url
from shop.checkout.services import checkout_create
from shop.checkout.types import InstrumentInput, LineInput, PaymentInput
from shop.models import Checkout, Variant
from tests.shop.checkout_factories import FORM_ADDRESS, FORM_CONTACT, full_input, make_shipping, make_variant

pytestmark = pytest.mark.django_db

PIX = InstrumentInput(id="instr_1", handler_id="pix_recebedor_001", type="pix")


@pytest.fixture
def shop_ready() -> Variant:
    variant = make_variant(price=4290, stock=10, title="Café especial 500 g")
    make_shipping()
    return variant


def start_checkout(client, quantity: str = "1") -> str:
    client.post("/carrinho/adicionar", {"sku": "SKU-CAFE-500G", "quantity": quantity})
    response = client.get("/checkout/")
    assert response.status_code == 302
    return response["Location"].rsplit("/", 1)[1]


def test_a_checkout_without_a_stock_hold_promises_no_reservation(client, shop_ready):
    # given a ready checkout: nothing is held until a payment is generated
    checkout_id = start_checkout(client)
    form = {**FORM_CONTACT, **FORM_ADDRESS, "shipping_option": "pac"}
    response = client.post(f"/checkout/{checkout_id}", {"action": "update", **form})
    checkout = Checkout.objects.get(public_id=checkout_id)
    assert (checkout.status, checkout.stock_reserved) == ("ready_for_complete", False)
    # then the page says when items are held, and no "Reservado até" with the checkout's own expiry
    html = response.content.decode()
    assert "Reservado" not in html and "reservados até" not in html
    assert "Os itens são reservados quando você gera o pagamento." in html
    assert "Reservado" not in client.get(f"/checkout/{checkout_id}").content.decode()


def test_a_checkout_holding_stock_for_its_pix_shows_until_when(
    client, settings, shop_ready, django_capture_on_commit_callbacks
):
    # given an agent's checkout with Pix selected: its charge holds the unit (shop.checkout.charge.hold_for_charge)
    with django_capture_on_commit_callbacks(execute=True):
        result = checkout_create(
            data=replace(full_input(LineInput("SKU-CAFE-500G", 1)), payment=PaymentInput(instruments=(PIX,)))
        )
    checkout = Checkout.objects.get(public_id=result.checkout.public_id)
    charge = pix_charge_active_for_reference(checkout.public_id)
    assert (checkout.status, checkout.stock_reserved, charge is not None) == ("ready_for_complete", True, True)
    # when the buyer opens its continue_url
    html = client.get(checkout_continue_url(checkout).removeprefix(settings.BCP_PUBLIC_URL)).content.decode()
    # then the page shows the hold's end (the charge's expiry), not the checkout's
    held = timezone.localtime(charge.expires_at).strftime("%d/%m %H:%M")
    assert re.search(r'data-testid="stock-held">Itens reservados até ' + re.escape(held) + "<", html), html
    assert "Os itens são reservados quando você gera o pagamento." not in html
