"""order_for_bcp reads a whole order with a fixed number of queries (BCP-ORD-04, BCP-ORD-06)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from orders.models import Adjustment, FulfillmentEvent, Order, OrderLine, OutboxMessage
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


def _values(rows: object) -> list[dict[str, object]]:
    return [{field.attname: getattr(row, field.attname) for field in row._meta.concrete_fields} for row in rows]  # type: ignore[attr-defined]


@pytest.mark.postgres
def test_a_placements_claim_reads_its_lines_and_adjustments_in_the_same_statement() -> None:
    """Issue 34: a placed order's lines and adjustments (its e-mail and NF-e read them) come in the statement that
    claims the outbox row, in their own order (lines by position, adjustments by occurred_at, not by id) and
    with the values their own read gives; another event of the order reads no relation."""
    order = order_place_from_checkout(
        checkout=make_checkout(lines=[("CAM-P-AZUL", 3000, 1), ("CAM-M-AZUL", 3100, 2), ("CAN-001", 2500, 3)])
    )
    lines = list(order.lines.order_by("id"))
    for position, line in zip((3, 1, 2), lines, strict=True):
        line.position = position
    OrderLine.objects.bulk_update(lines, ["position"])
    now = timezone.now()
    Adjustment.objects.bulk_create(
        Adjustment(order=order, type="credit", status="completed", totals=[{"type": "total", "amount": -days}],
                   amount=-days, description=f"crédito {days}", occurred_at=now - timedelta(days=days))
        for days in (1, 3, 2)
    )  # fmt: skip
    placed = OutboxMessage.objects.get(payload__order_id=order.public_id)
    later = outbox_add(kind=ORDER_CHANGED, key="later", payload={"order_id": order.public_id, "event": "shipped"})
    given: list[Order] = []

    def receiver(sender: object, order: Order, **_: object) -> None:
        given.append(order)

    order_changed.connect(receiver, dispatch_uid="test.claim_reads_the_relations")
    try:
        with CaptureQueriesContext(connection) as queries:
            assert outbox_process(message_id=placed.pk) == "done"
            assert outbox_process(message_id=later.pk) == "done"
    finally:
        order_changed.disconnect(dispatch_uid="test.claim_reads_the_relations")

    relations = ('FROM "orders_orderline"', 'FROM "orders_adjustment"')
    own_reads = [
        q for q in queries if any(r in q["sql"] for r in relations) and not q["sql"].startswith("WITH claimed")
    ]
    assert own_reads == []  # the placement's claim read them
    with CaptureQueriesContext(connection) as reads:
        got_lines, got_adjustments = list(given[0].lines.all()), list(given[0].adjustments.all())
    assert len(reads) == 0  # prefetched
    assert [line.sku for line in got_lines] == ["CAM-M-AZUL", "CAN-001", "CAM-P-AZUL"]
    assert [adjustment.amount for adjustment in got_adjustments] == [-3, -2, -1]
    expected = order_for_side_effects(order.public_id)
    assert expected is not None
    assert _values(got_lines) == _values(expected.lines.all())
    assert _values(got_adjustments) == _values(expected.adjustments.all())
    assert all(line.order is given[0] for line in got_lines) and all(a.order is given[0] for a in got_adjustments)
    assert not hasattr(given[1], "_prefetched_objects_cache")  # a shipment's event: the order's row alone
