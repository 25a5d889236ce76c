"""No overselling: 20 buyers racing for the last 5 units on real Postgres (conditional UPDATE, pk order)."""

from __future__ import annotations

import threading
from dataclasses import replace

import pytest
from django.db import connection, connections

from orders.models import Order
from shop.checkout.services import checkout_complete, checkout_create
from shop.checkout.stock import StockUnavailable, stock_release, stock_reserve
from shop.checkout.types import CompleteInput, InstrumentInput, LineInput, PaymentInput
from shop.models import Checkout, Variant
from tests.shop.checkout_factories import full_input, make_shipping, make_variant

CARD = InstrumentInput(
    id="i1", handler_id="gpay", type="card", credential={"type": "PAYMENT_GATEWAY", "token": "success_token"}
)


def _race(target, n: int) -> list[object]:
    barrier = threading.Barrier(n)
    results: list[object] = [None] * n

    def run(index: int) -> None:
        try:
            barrier.wait()
            results[index] = target(index)
        except Exception as exc:  # a crash must fail the test, not vanish in the thread
            results[index] = exc
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_twenty_buyers_last_five_units_exactly_five_orders():
    # given 5 units and 20 ready checkouts of 1 unit each
    assert connection.vendor == "postgresql"
    make_variant(stock=5)
    make_shipping()
    ids = [
        checkout_create(data=full_input(LineInput("SKU-CAFE-500G", 1), option="pac")).checkout.public_id
        for _ in range(20)
    ]
    assert set(Checkout.objects.values_list("status", flat=True)) == {"ready_for_complete"}
    # when the 20 complete at the same time
    data = CompleteInput(payment=PaymentInput(instruments=(CARD,)))
    results = _race(lambda i: checkout_complete(checkout_id=ids[i], data=data).checkout.status, 20)
    # then exactly 5 succeed, stock is 0 and never negative, the others are told why
    assert [r for r in results if isinstance(r, Exception)] == []
    assert results.count("completed") == 5
    assert results.count("incomplete") == 15
    assert Variant.objects.get(sku="SKU-CAFE-500G").stock == 0
    assert Order.objects.count() == 5
    for checkout in Checkout.objects.filter(status="incomplete"):
        assert ("out_of_stock", "$.line_items[0]") in [(m["code"], m["path"]) for m in checkout.messages]


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_concurrent_multi_variant_reservations_do_not_deadlock_or_oversell():
    a = make_variant("SKU-A", stock=10)
    b = make_variant("SKU-B", stock=10)

    def reserve(index: int) -> bool:
        # half take (A, B), half (B, A): the service orders by primary key, so no deadlock
        items = [(a.pk, 1), (b.pk, 1)] if index % 2 else [(b.pk, 1), (a.pk, 1)]
        try:
            stock_reserve(items=items)
        except StockUnavailable:
            return False
        return True

    results = _race(reserve, 20)
    assert [r for r in results if isinstance(r, Exception)] == []
    assert results.count(True) == 10
    assert list(Variant.objects.order_by("sku").values_list("stock", flat=True)) == [0, 0]
    stock_release(items=[(a.pk, 3), (b.pk, 2)])
    assert list(Variant.objects.order_by("sku").values_list("stock", flat=True)) == [3, 2]


def test_reserve_is_all_or_nothing(db):
    a = make_variant("SKU-A", stock=5)
    b = make_variant("SKU-B", stock=1)
    with pytest.raises(StockUnavailable) as caught:
        stock_reserve(items=[(a.pk, 2), (b.pk, 2)])
    assert caught.value.variant_pks == [b.pk]
    assert list(Variant.objects.order_by("sku").values_list("stock", flat=True)) == [5, 1]


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_payment_settling_while_complete_runs_places_one_order_pix_3():
    """Settlement (charge → checkout locks) racing complete (same order): no deadlock, one order."""
    from payments.sandbox.services import PayOptions, pay
    from payments.selectors import pix_charge_active_for_reference

    make_variant(stock=50)
    make_shipping()
    pix = InstrumentInput(id="instr_1", handler_id="pix_recebedor_001", type="pix")
    for _ in range(3):
        base = full_input(LineInput("SKU-CAFE-500G", 1), option="pac")
        data = replace(base, payment=PaymentInput(instruments=(pix,)))
        checkout_id = checkout_create(data=data).checkout.public_id
        txid = pix_charge_active_for_reference(checkout_id).txid

        def act(index: int, checkout_id: str = checkout_id, txid: str = txid) -> str:
            if index == 0:
                complete = CompleteInput(payment=PaymentInput(instruments=(pix,)))
                return checkout_complete(checkout_id=checkout_id, data=complete).checkout.status
            pay(txid=txid, options=PayOptions())
            return "paid"

        results = _race(act, 2)
        assert [r for r in results if isinstance(r, Exception)] == []
        assert Checkout.objects.get(public_id=checkout_id).status == "completed"
        assert Order.objects.filter(checkout_id=checkout_id).count() == 1
