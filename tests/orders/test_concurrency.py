"""Concurrent placements: one checkout gives one order; numbers from the sequence never collide."""

from __future__ import annotations

import threading

import pytest
from django.db import connection

from orders.models import Order
from orders.services import order_place_from_checkout
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
