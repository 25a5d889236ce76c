"""Concurrent placements: one checkout gives one order; numbers from the sequence never collide."""

from __future__ import annotations

import threading

import pytest
from django.db import connection

from orders.models import Adjustment, Order, ReturnRequest
from orders.services import (
    fulfillment_event_create,
    order_cancel_requested,
    order_place_from_checkout,
    order_ship,
    return_request_create,
)
from orders.types import LineQuantity
from tests.orders.conftest import make_checkout

THREADS = 8


def _run_concurrently(target) -> list[object]:
    barrier = threading.Barrier(THREADS)
    results: list[object] = []

    def worker(index: int) -> None:
        try:
            barrier.wait(timeout=30)
            results.append(target(index))
        except Exception as error:  # collected and asserted on below
            results.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return results


@pytest.mark.postgres
def test_same_checkout_placed_concurrently_gives_one_order(transactional_db):
    # given one settled checkout delivered to 8 workers at once (webhook + reconcile + retries)
    checkout = make_checkout()
    # when they all place it
    results = _run_concurrently(lambda i: order_place_from_checkout(checkout=checkout).public_id)
    # then every worker got the same order and only one exists
    assert [r for r in results if isinstance(r, Exception)] == []
    assert len(set(results)) == 1
    assert Order.objects.filter(checkout_id=checkout.checkout_id).count() == 1


@pytest.mark.postgres
def test_numbers_are_unique_under_concurrency(transactional_db):
    checkouts = [make_checkout() for _ in range(THREADS)]
    results = _run_concurrently(lambda i: order_place_from_checkout(checkout=checkouts[i]).number)
    assert [r for r in results if isinstance(r, Exception)] == []
    assert len(set(results)) == THREADS


@pytest.mark.postgres
def test_concurrent_buyer_and_agent_cancels_refund_once(transactional_db):
    # issue 35: the page, a second tab and the agent cancel the same order at once: one cancel, one refund
    order = order_place_from_checkout(checkout=make_checkout(lines=[("CAM", 3000, 2)]))
    results = _run_concurrently(lambda i: order_cancel_requested(order_id=order.public_id).public_id)
    assert sum(1 for r in results if isinstance(r, str)) == 1
    assert {getattr(r, "code", None) for r in results if not isinstance(r, str)} == {"order_canceled"}
    assert [-a.amount for a in Adjustment.objects.filter(order=order, type="refund")] == [order.paid_amount]


@pytest.mark.postgres
def test_concurrent_return_requests_never_ask_more_than_was_delivered(transactional_db):
    order = order_place_from_checkout(checkout=make_checkout(lines=[("CAM", 3000, 3)]))
    order_ship(order_id=order.public_id, tracking_number="BR123456785BR")
    fulfillment_event_create(order_id=order.public_id, type="delivered")
    line = order.lines.get()
    results = _run_concurrently(
        lambda i: (
            return_request_create(
                order_id=order.public_id, lines=[LineQuantity(line.public_id, 1)], reason_code="defective"
            ).public_id
        )
    )
    assert sum(1 for r in results if isinstance(r, str)) == 3  # 3 delivered units, one per request
    assert {getattr(r, "code", None) for r in results if not isinstance(r, str)} == {"quantity_exceeded"}
    assert ReturnRequest.objects.filter(order=order).count() == 3
