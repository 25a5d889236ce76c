"""order_for_bcp reads a whole order with a fixed number of queries (BCP-ORD-04, BCP-ORD-06)."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from orders.models import Adjustment, FulfillmentEvent, Order, OutboxMessage
from orders.selectors import order_bcp_render, order_for_bcp, order_for_side_effects
from orders.services import order_place_from_checkout
from orders.services.dispatch import outbox_process
from orders.services.outbox import ORDER_CHANGED, outbox_add
from orders.signals import order_changed
from tests.orders.conftest import make_checkout

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


def _columns(order: Order) -> dict[str, object]:
    return {field.attname: getattr(order, field.attname) for field in Order._meta.concrete_fields}


@pytest.mark.postgres
def test_the_outbox_claim_reads_the_order_as_its_own_read_does() -> None:
    """Issue 34: an order_changed row's claim reads the order's row in its own statement; the order every
    receiver gets is the one `order_for_side_effects` reads (same values, lines and adjustments prefetched)."""
    order = order_place_from_checkout(checkout=make_checkout())
    message = OutboxMessage.objects.get(payload__order_id=order.public_id)
    given: list[Order | None] = []

    def receiver(sender: object, order: Order | None = None, **_: object) -> None:
        given.append(order)

    order_changed.connect(receiver, dispatch_uid="test.claim_reads_the_order")
    try:
        with CaptureQueriesContext(connection) as queries:
            assert outbox_process(message_id=message.pk) == "done"
        # an event of an order that is not there: the receivers get None, as from the order's own read
        ghost = outbox_add(
            kind=ORDER_CHANGED, key="ghost", payload={"order_id": "order_nao_existe", "event": "shipped"}
        )
        assert outbox_process(message_id=ghost.pk) == "done"
    finally:
        order_changed.disconnect(dispatch_uid="test.claim_reads_the_order")

    assert queries[0]["sql"].startswith("WITH claimed AS (UPDATE") and 'LEFT JOIN "orders_order"' in queries[0]["sql"]
    own_reads = [q for q in queries if q["sql"].startswith('SELECT "orders_order"."id"')]
    assert own_reads == []  # the claim's read serves every receiver
    expected = order_for_side_effects(order.public_id)
    assert given[0] is not None and expected is not None
    assert _columns(given[0]) == _columns(expected)
    assert [line.pk for line in given[0].lines.all()] == [line.pk for line in expected.lines.all()]
    assert list(given[0].adjustments.all()) == list(expected.adjustments.all())
    assert given[1] is None
