"""Benchmark: orders.selectors.order_for_bcp for orders with 1, 10 and 100 lines and events (`make bench`).

Prints query counts (which must not grow) and the time per read next to a baseline measured in the same
run: one bare `SELECT` of the order row. Only the query counts are asserted, never the time.
"""

from __future__ import annotations

import time

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from orders.models import Order
from orders.selectors import order_bcp_payload, order_for_bcp
from orders.services import order_place_from_checkout
from tests.orders.conftest import make_checkout
from tests.orders.test_selectors import EXPECTED_QUERIES, add_events_and_adjustments

SIZES = (1, 10, 100)
ROUNDS = 200


def _per_call(fn, rounds: int = ROUNDS) -> float:
    for _ in range(10):
        fn()
    started = time.perf_counter()
    for _ in range(rounds):
        fn()
    return (time.perf_counter() - started) / rounds


@pytest.mark.django_db
def test_order_for_bcp_scaling() -> None:
    orders = {}
    for size in SIZES:
        order = order_place_from_checkout(checkout=make_checkout(lines=[(f"SKU-{i}", 1000, 1) for i in range(size)]))
        add_events_and_adjustments(order, size)
        orders[size] = order.public_id

    baseline = _per_call(lambda: Order.objects.filter(public_id=orders[1]).first())
    print(f"\nbaseline (bare order row SELECT): {baseline * 1e3:.3f} ms")
    print(f"{'lines+events':>13} {'queries':>8} {'ms/read':>9} {'× baseline':>11}")
    counts = []
    for size in SIZES:
        order_id = orders[size]
        with CaptureQueriesContext(connection) as queries:
            order_bcp_payload(order_for_bcp(order_id))
        counts.append(len(queries.captured_queries))
        elapsed = _per_call(lambda order_id=order_id: order_bcp_payload(order_for_bcp(order_id)))
        print(f"{size:>13} {counts[-1]:>8} {elapsed * 1e3:>9.3f} {elapsed / baseline:>11.1f}")
    assert counts == [EXPECTED_QUERIES] * len(SIZES)
