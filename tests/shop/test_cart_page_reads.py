"""Issue 34: the cart page's reads. Its lines (variant, product, main photo) and coupon codes are one hand-written
statement, the session one more (shop/storefront/sessions.py, still in Postgres: a cart outlives a Redis flush),
and what they return is what the ORM reads gave."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.sessions.models import Session
from django.core.cache import cache
from django.utils import timezone

from shop.cart import CART_KEY, CartPage, cart_coupons, cart_page
from shop.models import Cart, ProductImage, Variant
from shop.storefront.sessions import SessionStore
from tests.shop.checkout_factories import make_variant

pytestmark = pytest.mark.django_db


def _cart_of(client) -> SessionStore:
    return SessionStore(client.cookies["sessionid"].value)


def test_the_lines_come_with_their_product_and_main_photo_in_one_statement(client, django_assert_num_queries):
    cafe = make_variant("SKU-CAFE", price=4290, stock=5, title="Café")
    cha = make_variant("SKU-CHA", price=1890, stock=5, title="Chá")
    ProductImage.objects.create(product=cafe.product, source="shop/a.jpg", position=0)
    main = ProductImage.objects.create(product=cafe.product, source="shop/b.jpg", position=5, is_main=True)
    Variant.objects.filter(pk=cha.pk).update(options={"peso": "100 g"})
    for sku, quantity in (("SKU-CHA", "2"), ("SKU-CAFE", "1")):
        client.post("/carrinho/adicionar", {"sku": sku, "quantity": quantity})
    session = _cart_of(client)
    assert session.get(CART_KEY)  # the session read first
    Cart.objects.filter(public_id=session[CART_KEY]).update(discount_codes=["BEMVINDO10", "x" * 41, "FRETE"])
    with django_assert_num_queries(1):
        page = cart_page(session)
    lines = page.lines
    assert page.coupons == ["BEMVINDO10", "FRETE"] == cart_coupons(session)  # an unusable code dropped, as there
    assert [(line.variant.sku, line.quantity) for line in lines] == [("SKU-CHA", 2), ("SKU-CAFE", 1)]
    assert lines[0].variant.options == {"peso": "100 g"}  # JSON decoded as the ORM does
    assert lines[0].variant.product.title == "Chá" and lines[0].photo is None
    assert lines[1].photo == main and lines[1].photo.is_main is True
    assert lines[1].variant.product.requires_shipping is True


def test_an_unsellable_line_is_dropped_from_the_cart(client):
    cafe = make_variant("SKU-CAFE", stock=5)
    make_variant("SKU-CHA", stock=5)
    for sku in ("SKU-CAFE", "SKU-CHA"):
        client.post("/carrinho/adicionar", {"sku": sku, "quantity": "1"})
    cafe.product.active = False
    cafe.product.save()
    session = _cart_of(client)
    assert [line.variant.sku for line in cart_page(session).lines] == ["SKU-CHA"]
    assert [line.variant.sku for line in cart_page(session).lines] == ["SKU-CHA"]  # and stays out


def test_a_cart_without_lines_still_reads_its_codes(client, django_assert_num_queries):
    make_variant("SKU-CAFE", stock=5)
    client.post("/carrinho/adicionar", {"sku": "SKU-CAFE", "quantity": "1"})
    session = _cart_of(client)
    cart = Cart.objects.get(public_id=session[CART_KEY])
    cart.lines.all().delete()
    Cart.objects.filter(pk=cart.pk).update(discount_codes=["BEMVINDO10"])
    with django_assert_num_queries(1):
        assert cart_page(session) == CartPage(lines=[], coupons=["BEMVINDO10"])
    Cart.objects.filter(pk=cart.pk).update(status=Cart.STATUS_CANCELED)
    with django_assert_num_queries(1):
        assert cart_page(session) == CartPage(lines=[], coupons=[])  # no active cart: nothing


def test_the_cart_page_reads_its_session_and_cart_in_two_statements(client, django_assert_max_num_queries):
    make_variant("SKU-CAFE", stock=5)
    client.post("/carrinho/adicionar", {"sku": "SKU-CAFE", "quantity": "1"})
    client.get("/carrinho/")  # caches warm
    with django_assert_max_num_queries(2):  # the session; the lines with the coupon codes
        assert client.get("/carrinho/").status_code == 200


def test_the_cart_outlives_a_cache_flush(client):
    make_variant("SKU-CAFE", stock=5, title="Café torrado")
    client.post("/carrinho/adicionar", {"sku": "SKU-CAFE", "quantity": "2"})
    cache.clear()
    page = client.get("/carrinho/").content.decode()
    assert 'data-sku="SKU-CAFE"' in page and 'value="2"' in page


def test_an_expired_or_unknown_session_reads_as_empty_and_takes_a_new_key():
    store = SessionStore()
    store[CART_KEY] = "cart_x"
    store.save()
    key = store.session_key
    assert SessionStore(key).load() == {CART_KEY: "cart_x"}
    Session.objects.filter(session_key=key).update(expire_date=timezone.now() - timedelta(seconds=1))
    expired = SessionStore(key)
    assert expired.load() == {} and expired.session_key is None
    unknown = SessionStore("x" * 32)
    assert unknown.load() == {} and unknown.session_key is None
    assert SessionStore("abc\x00defghijk").load() == {}
