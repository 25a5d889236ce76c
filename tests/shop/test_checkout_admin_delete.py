"""Deleting checkouts in the admin (issue 13 §15): one holding stock or awaiting its Pix is refused (cancel
releases it); before, the delete succeeded and its reserved units were never given back.
"""

from __future__ import annotations

import pytest

from shop.checkout.services import checkout_cancel, checkout_complete, checkout_create
from shop.checkout.types import CompleteInput, InstrumentInput, LineInput, PaymentInput
from shop.models import Checkout, Variant
from tests.shop.checkout_factories import full_input, make_shipping, make_variant

pytestmark = pytest.mark.django_db

PIX = InstrumentInput(id="instr_1", handler_id="pix_recebedor_001", type="pix")


def in_progress_checkout() -> Checkout:
    make_variant(price=4290, stock=10)
    make_shipping()
    checkout = checkout_create(data=full_input(LineInput("SKU-CAFE-500G", 2), option="pac")).checkout
    result = checkout_complete(
        checkout_id=checkout.public_id, data=CompleteInput(payment=PaymentInput(instruments=(PIX,)))
    )
    assert result.checkout.status == "complete_in_progress"
    return result.checkout


def stock() -> int:
    return Variant.objects.get(sku="SKU-CAFE-500G").stock


def test_an_in_progress_checkout_cannot_be_deleted(admin_client) -> None:
    checkout = in_progress_checkout()
    assert stock() == 8
    page = admin_client.get(f"/admin/shop/checkout/{checkout.pk}/delete/")
    posted = admin_client.post(f"/admin/shop/checkout/{checkout.pk}/delete/", {"post": "yes"})
    bulk = admin_client.post(
        "/admin/shop/checkout/", {"action": "delete_selected", "_selected_action": [checkout.pk], "post": "yes"}
    )
    assert (page.status_code, posted.status_code) == (403, 403)
    assert bulk.status_code in (200, 302, 403)
    assert Checkout.objects.filter(pk=checkout.pk).exists()
    assert stock() == 8  # still held for the awaited Pix, and still accounted for


def test_a_canceled_checkout_can_be_deleted_and_its_stock_is_back(admin_client) -> None:
    checkout = in_progress_checkout()
    checkout_cancel(checkout_id=checkout.public_id)
    assert stock() == 10
    response = admin_client.post(f"/admin/shop/checkout/{checkout.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302
    assert not Checkout.objects.filter(pk=checkout.pk).exists()
    assert stock() == 10
