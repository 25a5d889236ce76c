"""What the buyer paid for part of an order: list price less its share of the order's discount.

One rule for the three places that must agree on it: a return's default refund, the refund of a cancellation after
part of the order shipped, and the NF-e's per-item discount (vDesc). Each line's share of the discount is
`kernel.money.apportion`'s, weighted by what was bought (so the shares sum to the discount whatever was cancelled
or returned since); part of a line takes that share pro rata, rounded half up.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kernel.money import apportion


def item_discount(totals: Sequence[Mapping[str, Any]]) -> int:
    """The order's discount on its items, in positive centavos: its `discount` totals (coupons, the Pix discount;
    freight is never discounted per item)."""
    return -sum(int(entry.get("amount", 0)) for entry in totals if entry.get("type") == "discount")


def prorated(share: int, part: int, whole: int) -> int:
    """`share` × `part` / `whole`, rounded half up: the part of a line's share that `part` of its `whole` units
    carry. All the units carry exactly the share."""
    if not whole:
        return 0
    return (2 * share * part + whole) // (2 * whole)


def line_discount_shares(lines: Sequence[tuple[int, int]], discount: int) -> list[int]:
    """Each line's share of the item `discount`; `lines`: (unit price, quantity bought) in the order's order."""
    return apportion(max(discount, 0), [price * bought for price, bought in lines])


def lines_net_value(lines: Sequence[tuple[str, int, int]], discount: int, quantities: Mapping[str, int]) -> int:
    """What the buyer paid for `quantities` ({line id: units}) of the order's `lines` ((id, unit price, quantity
    bought)): their list value less their share of the item `discount`; returning every unit of a line gives
    exactly its share back."""
    shares = line_discount_shares([(price, bought) for _, price, bought in lines], discount)
    value = 0
    for (line_id, price, bought), share in zip(lines, shares, strict=True):
        quantity = quantities.get(line_id, 0)
        if quantity and bought:
            value += price * quantity - prorated(share, quantity, bought)
    return value
