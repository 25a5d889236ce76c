"""Stock: reserved when the buyer commits to paying, never oversold.

Why not at add-to-cart: checkouts are cheap to create, also anonymously by agents over BCP, and live
for hours (SHOP_CHECKOUT_TTL_SECONDS, default 6 h). Reserving at add would let abandoned carts and idle
agents lock the last units for that long. The units are taken when a payment can start: when a Pix charge
is issued for the checkout (create/update with Pix selected, PIX.md §2.2, held for the charge's lifetime,
shop/checkout/hold.py `hold_for_charge`), else at complete (card). A buyer is then refused before paying,
never charged and refunded (issue 31). Until then every evaluation checks availability and reports
`out_of_stock` / `quantity_adjusted` (a checkout's own held units count as available to it). A paid Pix
always has its goods, or the payment is refunded when its reservation had lapsed and the units are gone.

How: one conditional `UPDATE variant SET stock = stock - q WHERE id = … AND stock >= q` per
variant, in primary-key order (a fixed lock order, so concurrent reservations cannot deadlock),
inside the caller's transaction. A zero row count means not enough stock: the caller's savepoint
rolls back the units taken so far. Releasing adds the quantities back in the same order.
Variants that accept backorders (`allow_backorder`) are made to order and are not decremented.
"""

from __future__ import annotations

import contextlib
from collections import defaultdict
from collections.abc import Iterable

from django.db import connection, transaction
from django.db.models import F

from shop.models import Variant


class StockUnavailable(Exception):
    """Not enough stock for some variants (pks); nothing was taken."""

    def __init__(self, variant_pks: list[int]) -> None:
        super().__init__(f"insufficient stock for variants {variant_pks}")
        self.variant_pks = variant_pks


def _aggregate(items: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    totals: dict[int, int] = defaultdict(int)
    for variant_pk, quantity in items:
        totals[variant_pk] += quantity
    return sorted(totals.items())


def stock_reserve(
    *, items: Iterable[tuple[int, int]], backorder: set[int] | None = None, savepoint: bool = True
) -> None:
    """Take `(variant_pk, quantity)` units all-or-nothing; raises StockUnavailable.

    `backorder`: the variants among them made to order, when the caller has them in hand (else read).
    `savepoint=False` when the caller's own savepoint already undoes the units taken on failure, or when at
    most one variant is taken (a failed conditional UPDATE takes nothing); it needs an open transaction."""
    wanted = _aggregate(items)
    if backorder is None:
        backorder = set(
            Variant.objects.filter(pk__in=[pk for pk, _ in wanted], allow_backorder=True).values_list("pk", flat=True)
        )
    failed: list[int] = []
    # savepoint=False: no atomic block at all (leaving one by exception would doom the caller's transaction)
    with transaction.atomic() if savepoint else contextlib.nullcontext(), connection.cursor() as cursor:
        for variant_pk, quantity in stock_to_take(wanted, backorder):
            cursor.execute(*stock_take_sql(variant_pk=variant_pk, quantity=quantity))
            if cursor.fetchone() is None:
                failed.append(variant_pk)
        if failed:
            # Leave the atomic block by exception so the savepoint undoes the units taken above.
            raise StockUnavailable(failed)


def stock_to_take(items: Iterable[tuple[int, int]], backorder: set[int]) -> list[tuple[int, int]]:
    """What a reservation of `items` takes: one `(variant_pk, quantity)` per variant, in primary-key order
    (the lock order), the variants made to order left out."""
    return [(pk, quantity) for pk, quantity in _aggregate(items) if pk not in backorder]


def stock_take_sql(*, variant_pk: int, quantity: int) -> tuple[str, list[int]]:
    """The conditional UPDATE that takes one variant's units, returning its id when they were taken: run by
    `stock_reserve`, or as the guard of a caller's own statement (`kernel.rows.update_where`)."""
    table = connection.ops.quote_name(Variant._meta.db_table)
    stock, pk = (connection.ops.quote_name(Variant._meta.get_field(name).column) for name in ("stock", "id"))
    sql = f"UPDATE {table} SET {stock} = {stock} - %s WHERE {pk} = %s AND {stock} >= %s RETURNING {pk}"  # noqa: S608
    return sql, [quantity, variant_pk, quantity]


def stock_release(*, items: Iterable[tuple[int, int]]) -> None:
    """Give back units taken by `stock_reserve` (cancel, expiry, failed payment, restock)."""
    wanted = _aggregate(items)
    backorder = set(
        Variant.objects.filter(pk__in=[pk for pk, _ in wanted], allow_backorder=True).values_list("pk", flat=True)
    )
    for variant_pk, quantity in wanted:
        if variant_pk not in backorder:
            Variant.objects.filter(pk=variant_pk).update(stock=F("stock") + quantity)
