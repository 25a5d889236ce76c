"""Benchmark: checkout create+update with N lines (run with `make bench`; prints, never asserts time).

Reports queries per operation for 1, 10 and 50 lines (must not grow with N: asserted, it is not a
timing) and operations per second against a bare-insert baseline measured in the same run.
"""

from __future__ import annotations

import time

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from shop.checkout.services import checkout_create, checkout_update
from shop.checkout.types import CheckoutInput, LineInput
from shop.models import Category, Checkout, Product, Variant
from tests.shop.checkout_factories import BUYER, make_coupon, make_location, make_shipping, shipping

ROUNDS = 30


def _variants(n: int) -> list[str]:
    category = Category.objects.create(name="Bench", slug="bench-checkout")
    products = Product.objects.bulk_create(
        [Product(title=f"Item {i}", slug=f"bench-item-{i}", category=category) for i in range(n)]
    )
    variants = Variant.objects.bulk_create(
        [Variant(product=p, sku=f"BENCH-CHK-{i:03d}", price=1000 + i, stock=10_000) for i, p in enumerate(products)]
    )
    return [v.sku for v in variants]


def _data(skus: list[str], line_ids: list[str] | None = None, quantity: int = 1) -> CheckoutInput:
    ids = line_ids or [None] * len(skus)
    return CheckoutInput(
        lines=tuple(LineInput(sku, quantity, lid) for sku, lid in zip(skus, ids, strict=True)),
        buyer=BUYER,
        fulfillment=shipping(option="pac"),
        discount_codes=("BEMVINDO10",),
    )


def _create_update(skus: list[str]) -> tuple[int, int]:
    with CaptureQueriesContext(connection) as created_q:
        result = checkout_create(data=_data(skus))
    ids = [line.public_id for line in result.checkout.lines.all()]
    with CaptureQueriesContext(connection) as updated_q:
        updated = checkout_update(checkout_id=result.checkout.public_id, data=_data(skus, ids, quantity=2))
    assert updated.checkout.status == "ready_for_complete"
    return len(created_q.captured_queries), len(updated_q.captured_queries)


@pytest.mark.django_db
def test_checkout_create_update_queries_constant_and_rate():
    make_shipping()
    make_location()
    make_coupon("BEMVINDO10", percent=10)
    skus = _variants(50)
    # steady state: the shipping table, store settings and every SKU's catalog snapshot are cached after one
    _create_update(skus)
    counts = {n: _create_update(skus[:n]) for n in (1, 10, 50)}
    print("\ncheckout engine — queries per operation (create, update):")
    for n, (c, u) in counts.items():
        print(f"  {n:>2} lines: create {c:>3}  update {u:>3}")
    assert counts[1] == counts[10] == counts[50], counts

    ten = skus[:10]
    started = time.perf_counter()
    for _ in range(ROUNDS):
        _create_update(ten)
    engine_s = (time.perf_counter() - started) / ROUNDS

    started = time.perf_counter()
    for _ in range(ROUNDS):
        # Baseline: the bare rows of a checkout with 10 lines, no evaluation, no messages.
        checkout = Checkout.objects.create()
        checkout.lines.model.objects.bulk_create(
            [checkout.lines.model(checkout=checkout, sku=s, quantity=1, unit_price=1000) for s in ten]
        )
    baseline_s = (time.perf_counter() - started) / ROUNDS
    print(f"  create+update (10 lines): {1 / engine_s:8.1f} ops/s  ({engine_s * 1000:.1f} ms)")
    print(f"  bare insert   (10 lines): {1 / baseline_s:8.1f} ops/s  ({baseline_s * 1000:.1f} ms)")
    print(f"  ratio engine/baseline: {engine_s / baseline_s:.1f}x slower")
