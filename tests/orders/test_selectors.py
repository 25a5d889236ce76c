"""order_for_bcp reads a whole order with a fixed number of queries (BCP-ORD-04, BCP-ORD-06)."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from orders.models import Adjustment, FulfillmentEvent, Order
from orders.selectors import order_bcp_render, order_for_bcp

pytestmark = pytest.mark.django_db

EXPECTED_QUERIES = 5  # order, lines, expectations, fulfillment events, adjustments


def add_events_and_adjustments(order: Order, count: int) -> None:
    """Append `count` events and adjustments directly (bulk): this test is about reading, not services."""
    lines = list(order.lines.all())
    now = timezone.now()
    FulfillmentEvent.objects.bulk_create(
        FulfillmentEvent(
            order=order,
            type="in_transit",
            line_items=[{"id": lines[i % len(lines)].public_id, "quantity": 1}],
            tracking_number=f"BR{i:09d}BR",
            occurred_at=now,
        )
        for i in range(count)
    )
    Adjustment.objects.bulk_create(
        Adjustment(
            order=order,
            type="credit",
            status="completed",
            totals=[{"type": "total", "amount": -1}],
            amount=-1,
            occurred_at=now,
        )
        for _ in range(count)
    )


@pytest.mark.parametrize("size", [1, 10, 100])
def test_order_for_bcp_query_count_is_fixed(place_order, size):
    # given an order with `size` lines, events and adjustments
    order = place_order(lines=[(f"SKU-{i}", 1000 + i, 1) for i in range(size)])
    add_events_and_adjustments(order, size)
    # when the BCP order is read and rendered from its rows (rows added here bypass the services, so the
    # presentation stored on the order row is not what is measured)
    with CaptureQueriesContext(connection) as queries:
        payload = order_bcp_render(order_for_bcp(order.public_id))
    # then the query count does not depend on the size
    assert len(queries.captured_queries) == EXPECTED_QUERIES
    assert len(payload["line_items"]) == size
    assert len(payload["fulfillment"]["events"]) == size
    assert len(payload["adjustments"]) == size


def test_order_for_bcp_unknown_is_none():
    assert order_for_bcp("order_nope") is None
    assert order_for_bcp("") is None
