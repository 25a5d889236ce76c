"""The operations the agent tools share (issue 14: "every transport goes through bcp_app/service/operations"):
one stock check for `inventory.check` and `order.intent`, one order-state derivation for `order.status`."""

from __future__ import annotations

import pytest

from bcp_app.service.operations import StockLine, order_state, stock_check
from tests.shop.checkout_factories import make_variant

pytestmark = pytest.mark.django_db


def test_stock_check_per_item_and_together():
    make_variant("SKU-A", stock=2)
    make_variant("SKU-B", stock=0)
    items = [("SKU-A", 2), ("SKU-A", 1), ("SKU-B", 1), ("NOPE", 1)]
    assert stock_check(items) == [
        StockLine("SKU-A", 2, True, "InStock", 2, True),
        StockLine("SKU-A", 1, True, "InStock", 2, True),
        StockLine("SKU-B", 1, True, "OutOfStock", 0, False),
        StockLine("NOPE", 1, False, "", 0, False),
    ]
    # one order takes both SKU-A lines: 3 > 2
    assert [line.can_fulfill for line in stock_check(items, together=True)] == [False, False, False, False]


@pytest.mark.parametrize(
    ("statuses", "state"),
    [
        (["removed"], "canceled"),
        (["fulfilled", "removed"], "fulfilled"),
        (["fulfilled", "processing"], "partial"),
        (["partial"], "partial"),
        (["processing"], "processing"),
    ],
)
def test_order_state_from_line_statuses_bcp_7(statuses: list[str], state: str):
    assert order_state({"line_items": [{"status": s} for s in statuses]}) == state
