"""Storefront forms against hostile input (issue 13 §3, §5): control characters and lengths beyond the engine's
limits are form errors next to their field (HTTP 400), never a 500, and the checkout is unchanged.
"""

from __future__ import annotations

import pytest

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
