"""Read-mostly data is cached and a merchant's change is seen by the very next checkout (issue 11).

Shipping methods, rates and pickup locations are cached (shop/checkout/fulfillment.py) and dropped when one of them is
saved or deleted; what a line shows of the catalog (titles, photo, product flags) is cached per SKU under a
catalog version that any product, variant or photo save bumps (shop/checkout/stock.py). The variant's price,
stock and flags decide the sale and are never cached: they come with the stock read or the checkout's lines.
"""

from __future__ import annotations

import time
from unittest.mock import patch

from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext

from shop.checkout.fulfillment import shipping_config_load
from shop.checkout.selectors import checkout_view
from shop.checkout.services import checkout_create, checkout_update
from shop.checkout.types import CheckoutInput, CheckoutResult, LineInput
from shop.invoicing.invoice import build_invoice
from shop.models import Product, ProductImage, ShippingRate, StoreSettings, Variant
from shop.models.store import STORE_ROW_ID
from shop.store.services import store_get
from tests.shop.checkout_factories import BUYER, make_location, make_shipping, make_variant, shipping
from tests.shop.test_ibs_cbs import _paid_order


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


def _line(result: CheckoutResult) -> tuple[str, str, int, int]:
    line = result.checkout.lines.get()
    return line.title, line.image_url, line.unit_price, line.quantity


def test_catalog_is_read_once_and_the_stock_where_it_decides(db) -> None:
    # given a checkout that loaded (and cached) the catalog rows of its SKU
    make_variant()
    make_shipping()
    first = checkout_create(data=_input())
    # when the next evaluation runs, it reads neither products nor photos, and the stock comes with the lines
    with CaptureQueriesContext(connection) as queries:
        checkout_update(checkout_id=first.checkout.public_id, data=_input())
    tables = " ".join(q["sql"] for q in queries)
    assert "shop_product" not in tables.replace("shop_productimage", "x") and "shop_productimage" not in tables
    assert not [q for q in queries if q["sql"].startswith('SELECT "shop_variant"')]
    # and a new checkout of that SKU reads only its stock
    with CaptureQueriesContext(connection) as queries:
        checkout_create(data=_input())
    variant_reads = [q["sql"] for q in queries if 'FROM "shop_variant"' in q["sql"]]
    assert len(variant_reads) == 1 and '"stock"' in variant_reads[0]  # the live columns only (shop/checkout/stock)
    assert "shop_product" not in variant_reads[0]


def test_stock_and_price_changed_without_a_signal_are_seen_at_once(db) -> None:
    """Stock changes by conditional UPDATEs (reservations) and a price may be written by a bulk UPDATE: both
    send no signal, and neither is cached."""
    variant = make_variant(stock=10, price=4290)
    make_shipping()
    created = checkout_create(data=_input(3))
    Variant.objects.filter(pk=variant.pk).update(stock=2, price=3990)
    assert _line(checkout_update(checkout_id=created.checkout.public_id, data=_input(3)))[2:] == (3990, 2)
    assert _line(checkout_create(data=_input(3)))[2:] == (3990, 2)


def test_product_title_and_photo_changes_are_seen_by_the_next_checkout(db) -> None:
    variant = make_variant(title="Café especial")
    make_shipping()
    created = checkout_create(data=_input())
    assert _line(created)[:2] == ("Café especial", "")
    product = variant.product
    product.title = "Café especial torra média"
    product.save()
    ProductImage.objects.create(product=product, source="https://cdn.example.com.br/cafe.jpg", position=0)
    updated = checkout_update(checkout_id=created.checkout.public_id, data=_input())
    assert _line(updated)[:2] == ("Café especial torra média", "https://cdn.example.com.br/cafe.jpg")


def test_a_title_changed_while_the_cache_was_flushed_is_not_served_from_the_process_copy(db) -> None:
    """Issue 34: each process keeps its own copy of the snapshots under the catalog version. A flushed (or
    evicted) version key must not come back as a number an older copy was kept under, or a change whose bump
    was lost with the flush (here: a title written by a bulk UPDATE, which bumps nothing) would be served."""
    variant = make_variant(title="Café especial")
    make_shipping()
    cache.clear()  # the version key starts afresh here, and again below
    created = checkout_create(data=_input())
    assert _line(created)[0] == "Café especial"
    Product.objects.filter(pk=variant.product_id).update(title="Café de origem")
    cache.clear()
    assert _line(checkout_update(checkout_id=created.checkout.public_id, data=_input()))[0] == "Café de origem"


def test_admin_bulk_deactivation_is_seen_by_the_next_checkout(db, rf) -> None:
    """The admin's "Desativar" action is a queryset UPDATE (no post_save): it bumps the catalog itself."""
    from django.contrib.admin.sites import site

    make_variant()
    make_shipping()
    created = checkout_create(data=_input())
    assert not any(m.code == "item_unavailable" for m in created.messages)
    site._registry[Product].make_inactive(rf.post("/"), Product.objects.all())
    updated = checkout_update(checkout_id=created.checkout.public_id, data=_input())
    assert any(m.code == "item_unavailable" for m in updated.messages)


def test_a_sku_unknown_at_first_is_sold_once_created(db) -> None:
    make_variant()
    make_shipping()
    data = CheckoutInput(lines=(LineInput("SKU-CAFE-500G", 1), LineInput("SKU-NOVO", 1)), buyer=BUYER)
    created = checkout_create(data=data)
    assert any(m.code == "item_unavailable" for m in created.messages)  # the miss is cached too
    make_variant("SKU-NOVO", price=1500)
    again = checkout_create(data=data)
    assert not any(m.code == "item_unavailable" for m in again.messages)
    assert sorted(line.unit_price for line in again.checkout.lines.all()) == [1500, 4290]


def test_without_redis_a_worker_sees_the_stores_fiscal_data_saved_elsewhere_within_a_minute(db, settings) -> None:
    """The QA walk's `make run` + `make worker` without REDIS_URL: the admin's save drops only the web process's
    local-memory copy, so the worker's copy must end by its TTL: a minute, not the hour a shared cache allows."""
    settings.REDIS_URL = ""  # the default: each process has its own local-memory cache (config/settings/base.py)
    StoreSettings.objects.create(cnpj="11.222.333/0001-81", state="SP", tax_regime="simples")
    make_variant(price=1000, ncm="09012100")
    order = _paid_order(LineInput("SKU-CAFE-500G", 1))
    assert store_get().trade_name != "Café Bom"
    assert build_invoice(order)[0]["issuer"]["tax_regime"] == "simples"  # this "worker" now keeps the issuer
    # when another process saves the regime (its save cannot reach this process's cache)
    StoreSettings.objects.filter(pk=STORE_ROW_ID).update(tax_regime="normal", trade_name="Café Bom")
    assert build_invoice(order)[0]["issuer"]["tax_regime"] == "simples"  # kept, as designed
    # then 61 seconds later this process builds the note with the saved regime
    later = time.time() + 61
    with patch.object(time, "time", lambda: later):
        assert build_invoice(order)[0]["issuer"]["tax_regime"] == "normal"
        assert store_get().trade_name == "Café Bom"  # the rest of the store settings the worker reads, too
