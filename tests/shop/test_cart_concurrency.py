"""No lost cart update: buyers' tabs adding to one cart at once on real Postgres (the lines are read under
the cart's row lock). Issue 31: 20 concurrent "adicionar" of 1 unit on a cart of 1 left 4 units, not 21."""

from __future__ import annotations

import pytest
from django.contrib.sessions.backends.signed_cookies import SessionStore
from django.db import connection

from shop.cart import CART_KEY, cart_add, cart_items, cart_set
from tests.shop.checkout_factories import make_variant
from tests.shop.test_stock_concurrency import _race


def _session_of(cart_id: str) -> SessionStore:
    # each request has its own session object naming the same cart, as the storefront's do
    session = SessionStore()
    session[CART_KEY] = cart_id
    return session


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_twenty_concurrent_adds_on_one_cart_all_count():
    # given a cart holding 1 unit, with stock for all
    assert connection.vendor == "postgresql"
    make_variant(stock=50)
    first = SessionStore()
    cart_add(first, sku="SKU-CAFE-500G", quantity="1")
    cart_id = first[CART_KEY]
    # when 20 requests add 1 unit each at the same time
    results = _race(lambda i: cart_add(_session_of(cart_id), sku="SKU-CAFE-500G", quantity="1").quantity, 20)
    # then every add counted: 21 units, and the answers are 2…21, each once
    assert [r for r in results if isinstance(r, Exception)] == []
    assert cart_items(_session_of(cart_id)) == {"SKU-CAFE-500G": 21}
    assert sorted(results) == list(range(2, 22))


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_concurrent_adds_of_different_products_keep_every_line():
    # given a cart with one product and ten others on sale
    make_variant(stock=50)
    skus = [f"SKU-{n}" for n in range(10)]
    for sku in skus:
        make_variant(sku, stock=5)
    first = SessionStore()
    cart_add(first, sku="SKU-CAFE-500G", quantity="1")
    cart_id = first[CART_KEY]
    # when ten requests each add another product while one changes the first line's quantity
    work = [lambda sku=sku: cart_add(_session_of(cart_id), sku=sku, quantity="2") for sku in skus]
    work.append(lambda: cart_set(_session_of(cart_id), sku="SKU-CAFE-500G", quantity="3"))
    results = _race(lambda i: work[i](), len(work))
    # then no line was lost and the change stood
    assert [r for r in results if isinstance(r, Exception)] == []
    assert cart_items(_session_of(cart_id)) == {"SKU-CAFE-500G": 3, **dict.fromkeys(skus, 2)}
