"""Read-mostly data is cached and a merchant's change is seen by the very next checkout (issue 11).

Shipping methods, rates and pickup locations are cached (shop/shipping.py) and dropped when one of them is
saved or deleted; prices and stock are read from the database at every evaluation.
"""

from __future__ import annotations

from django.db import connection
from django.test.utils import CaptureQueriesContext

from shop.checkout.selectors import checkout_view
from shop.checkout.types import CheckoutInput, CheckoutResult, LineInput
from shop.models import ShippingRate
from shop.services import checkout_create, checkout_update
from shop.shipping import shipping_config_load
from tests.shop.checkout_factories import BUYER, make_location, make_shipping, make_variant, shipping


def _options(result: CheckoutResult) -> list[tuple[str, int]]:
    view = checkout_view(result.checkout)
    return [(o.id, o.amount) for o in view.fulfillment_methods[0].groups[0].options]


def _input(quantity: int = 1) -> CheckoutInput:
    return CheckoutInput(lines=(LineInput("SKU-CAFE-500G", quantity),), buyer=BUYER, fulfillment=shipping())


def test_shipping_is_read_once_and_a_rate_change_is_seen_by_the_next_checkout(db) -> None:
    # given a checkout that loaded (and cached) the shipping table
    make_variant()
    make_shipping()
    first = checkout_create(data=_input())
    assert ("pac", 1890) in _options(first)
    # when the next evaluation runs, it reads no shipping table
    with CaptureQueriesContext(connection) as queries:
        checkout_update(checkout_id=first.checkout.public_id, data=_input())
    tables = " ".join(q["sql"] for q in queries)
    assert "shop_shippingrate" not in tables and "shop_shippingmethod" not in tables
    assert "shop_pickuplocation" not in tables
    # and once the merchant changes the PAC rate for SP (as the admin's save does)
    rate = ShippingRate.objects.get(method__code="pac", uf="SP")
    rate.price = 2190
    rate.save()
    # then the very next checkout quotes the new price
    again = checkout_update(checkout_id=first.checkout.public_id, data=_input())
    assert ("pac", 2190) in _options(again)
    assert ("pac", 2190) in _options(checkout_create(data=_input()))


def test_new_pickup_location_is_offered_at_once(db) -> None:
    make_variant()
    make_shipping()
    checkout_create(data=_input())
    location = make_location()
    assert [loc.public_id for loc in shipping_config_load().pickup_locations] == [location.public_id]


def test_admin_price_change_is_seen_by_the_next_checkout(db) -> None:
    # given a checkout at the old price
    variant = make_variant(price=4290)
    make_shipping()
    created = checkout_create(data=_input(2))
    assert [line.unit_price for line in created.checkout.lines.all()] == [4290]
    # when the merchant changes the price (as the admin's save does)
    variant.price = 3990
    variant.save()
    # then the next evaluation of that checkout, and a new checkout, use the new price
    updated = checkout_update(checkout_id=created.checkout.public_id, data=_input(2))
    assert [line.unit_price for line in updated.checkout.lines.all()] == [3990]
    assert checkout_create(data=_input(1)).checkout.lines.get().unit_price == 3990
