"""The presented BCP order stored on the order row stays in step with a fresh rendering (issue 11, BCP §7).

After every order service, `order_bcp_payload` of the row alone (what Get Order reads, one query) equals
the rendering from the order's relations.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from orders.models import Adjustment, Order
from orders.selectors import order_bcp_payload, order_bcp_render, order_for_bcp, order_presented, order_row
from orders.services import (
    adjustment_mark_refund_result,
    expectation_merge,
    expectation_split,
    expectation_update,
    order_cancel,
    order_mark_delivered,
    order_payment_confirm,
    order_refund,
    order_return,
    order_ship,
)
from orders.types import LineQuantity

pytestmark = pytest.mark.django_db


def _assert_in_step(order_id: str) -> dict[str, Any]:
    stored = Order.objects.get(public_id=order_id)
    assert stored.bcp_json
    fresh = order_bcp_render(order_for_bcp(order_id))
    assert order_bcp_payload(stored) == fresh
    assert list(order_bcp_payload(stored)) == list(fresh)  # same key order on the wire
    return fresh


def test_placement_and_fulfillment_services_keep_it_in_step(place_order: Callable[..., Order]) -> None:
    order = place_order(lines=[("CAM", 3000, 2), ("CANECA", 4500, 1)])
    oid = order.public_id
    _assert_in_step(oid)
    lines = {line.sku: line for line in order.lines.all()}
    first = order.expectations.get()
    split = expectation_split(
        order_id=oid,
        expectation_id=first.public_id,
        lines=[LineQuantity(lines["CANECA"].public_id, 1)],
        description="Segunda remessa",
    )
    _assert_in_step(oid)
    expectation_update(order_id=oid, expectation_id=split.public_id, description="Sai amanhã")
    _assert_in_step(oid)
    expectation_merge(order_id=oid, expectation_ids=[first.public_id, split.public_id])
    _assert_in_step(oid)
    order_ship(order_id=oid, tracking_number="BR123456785BR", lines=[LineQuantity(lines["CAM"].public_id, 1)])
    _assert_in_step(oid)
    order_mark_delivered(order_id=oid, lines=[LineQuantity(lines["CAM"].public_id, 1)])
    payload = _assert_in_step(oid)
    assert [e["type"] for e in payload["fulfillment"]["events"]] == ["shipped", "delivered"]


def test_money_services_keep_it_in_step(place_order: Callable[..., Order]) -> None:
    unpaid = place_order(lines=[("CAM", 3000, 1)], freight=800, paid=False)
    order_payment_confirm(order_id=unpaid.public_id, paid_amount=3800)
    _assert_in_step(unpaid.public_id)

    order = place_order(lines=[("CAM", 3000, 2)], freight=800)
    oid = order.public_id
    line = order.lines.get()
    refund = order_refund(order_id=oid, amount=1000, reason="Item com defeito")
    _assert_in_step(oid)
    adjustment_mark_refund_result(adjustment_id=refund.public_id, status="completed")
    _assert_in_step(oid)
    order_ship(order_id=oid, tracking_number="BR123456785BR", lines=[LineQuantity(line.public_id, 1)])
    order_mark_delivered(order_id=oid, lines=[LineQuantity(line.public_id, 1)])
    order_return(order_id=oid, lines=[LineQuantity(line.public_id, 1)], reason="Tamanho errado", refund_amount=500)
    _assert_in_step(oid)
    order_cancel(order_id=oid, reason="Cliente desistiu")
    payload = _assert_in_step(oid)
    assert {a["type"] for a in payload["adjustments"]} >= {"refund", "return", "cancellation"}
    assert Adjustment.objects.filter(order__public_id=oid).count() == len(payload["adjustments"])


def test_get_order_reads_one_row(place_order: Callable[..., Order]) -> None:
    order = place_order()
    with CaptureQueriesContext(connection) as queries:
        presented = order_presented(order.public_id)
        payload = order_bcp_payload(presented)
    assert len(queries) == 1
    assert payload["permalink_url"] == order.permalink_url
    assert payload == order_bcp_render(order_for_bcp(order.public_id))


def test_the_precompiled_order_read_builds_the_same_model_as_the_queryset(place_order: Callable[..., Order]) -> None:
    """order_presented's SELECT is compiled once per process; every field must come back as the ORM gives it
    (JSON, dates and choices through the same converters), and an unknown id is None."""
    order = place_order()
    presented = order_presented(order.public_id)
    expected = Order.objects.get(public_id=order.public_id)
    assert presented is not None and not presented._state.adding and presented._state.db == "default"
    for field in Order._meta.concrete_fields:
        assert getattr(presented, field.attname) == getattr(expected, field.attname), field.name
        assert type(getattr(presented, field.attname)) is type(getattr(expected, field.attname)), field.name
    assert order_presented("order_does_not_exist") is None


def test_get_orders_row_gives_the_columns_and_the_model_of_the_precompiled_read(
    place_order: Callable[..., Order],
) -> None:
    """order_row (issue 34): one statement; its columns are the model's (the policy snapshot as jsonb's text of it),
    and the model it builds on demand is order_presented's."""
    order = place_order()
    with CaptureQueriesContext(connection) as queries:
        row = order_row(order.public_id)
    assert len(queries) == 1 and row is not None
    expected = order_presented(order.public_id)
    assert expected is not None
    assert (row.public_id, row.platform_id, row.bcp_json, row.language, row.permalink_url) == (
        expected.public_id,
        expected.platform_id,
        expected.bcp_json,
        expected.language,
        expected.permalink_url,
    )
    assert row.policies_text is not None and json.loads(row.policies_text) == expected.policies
    built = row.order()
    assert built is not None
    for field in Order._meta.concrete_fields:
        assert getattr(built, field.attname) == getattr(expected, field.attname), field.name
    assert order_row("order_does_not_exist") is None and order_row("") is None


def test_get_orders_presented_row_reads_only_what_the_stored_body_is_made_of(
    place_order: Callable[..., Order],
) -> None:
    """order_row(whole=False) (issue 34): one statement naming only the presented columns (and the key); the same
    values as the whole row's, and a model of them on demand whose stored body is the whole model's. An order
    without a stored presentation still comes whole, with its relations (rendered from them)."""
    order = place_order()
    with CaptureQueriesContext(connection) as queries:
        row = order_row(order.public_id, whole=False)
    assert len(queries) == 1 and row is not None
    selected = queries[0]["sql"].partition(" FROM ")[0]
    assert "placed_at" not in selected and "buyer_email" not in selected and "totals" not in selected
    whole = order_row(order.public_id)
    assert whole is not None
    assert (row.public_id, row.platform_id, row.bcp_json, row.language, row.permalink_url, row.policies_text) == (
        whole.public_id,
        whole.platform_id,
        whole.bcp_json,
        whole.language,
        whole.permalink_url,
        whole.policies_text,
    )
    presented = order_presented(order.public_id)
    assert presented is not None
    expected = order_bcp_payload(presented)
    with CaptureQueriesContext(connection) as queries:
        built = row.order()
        assert built is not None and order_bcp_payload(built) == expected
        assert built.policies == order.policies and built.language == order.language
    assert queries.captured_queries == []  # the presented fields are all a stored body reads
    Order.objects.filter(pk=order.pk).update(bcp_json="")
    bare = order_row(order.public_id, whole=False)
    assert bare is not None and bare.bcp_json == ""
    rendered = bare.order()
    assert rendered is not None and rendered.buyer_email == order.buyer_email
    with_relations = order_for_bcp(order.public_id)
    assert with_relations is not None and order_bcp_payload(rendered) == order_bcp_render(with_relations)
    assert order_row("order_does_not_exist", whole=False) is None
