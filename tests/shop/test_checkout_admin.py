"""Checkout admin: read-only checkouts with a cancel action; shipping and coupon admin pages render."""

import pytest

from shop.checkout.services import checkout_create
from shop.checkout.types import CheckoutInput, LineInput
from shop.models import Checkout, CheckoutEvent
from tests.shop.checkout_factories import make_coupon, make_location, make_shipping, make_variant

pytestmark = pytest.mark.django_db


def test_admin_pages_render_and_cancel_action_releases_checkout(admin_client):
    make_variant()
    methods = make_shipping()
    make_location()
    make_coupon("DEZ")
    checkout = checkout_create(data=CheckoutInput(lines=(LineInput("SKU-CAFE-500G", 1),))).checkout
    for url in [
        "/admin/shop/checkout/",
        f"/admin/shop/checkout/{checkout.pk}/change/",
        "/admin/shop/shippingmethod/",
        f"/admin/shop/shippingmethod/{methods['pac'].pk}/change/",
        "/admin/shop/pickuplocation/",
        "/admin/shop/coupon/",
        "/admin/shop/couponredemption/",
    ]:
        assert admin_client.get(url).status_code == 200, url
    assert admin_client.get("/admin/shop/checkout/add/").status_code == 403
    response = admin_client.post(
        "/admin/shop/checkout/", {"action": "cancel_checkouts", "_selected_action": [checkout.pk]}, follow=True
    )
    assert response.status_code == 200
    assert Checkout.objects.get(pk=checkout.pk).status == "canceled"


def test_checkout_page_names_events_and_statuses_in_words(admin_client):
    """Merchant walk: the checkout's events read "created", "incomplete", "consent_changed"."""
    make_variant()
    checkout = checkout_create(data=CheckoutInput(lines=(LineInput("SKU-CAFE-500G", 1),))).checkout
    CheckoutEvent.objects.create(
        checkout=checkout, kind="consent_changed", from_status="incomplete", to_status="incomplete"
    )
    page = admin_client.get(f"/admin/shop/checkout/{checkout.pk}/change/").content.decode()
    events = page[page.index('id="events-group"') :]
    for words in ("Checkout criado", "Consentimento de e-mails alterado", "Incompleto"):
        assert words in events, words
    for code in (">created<", ">consent_changed<", ">incomplete<"):
        assert code not in events, code
    admin_client.cookies["django_language"] = "en"
    english = admin_client.get(f"/admin/shop/checkout/{checkout.pk}/change/", headers={"accept-language": "en"})
    events = english.content.decode()[english.content.decode().index('id="events-group"') :]
    assert "Checkout created" in events and "Email consent changed" in events
