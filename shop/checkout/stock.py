"""The goods of a checkout: what each line needs of the catalog (cached snapshot, live columns), and the
stock reserved when the buyer commits to paying.

## Catalog snapshot

What a checkout line needs of the catalog, split by how often it changes.

Every evaluation (create, update, complete, the storefront cart) prices its lines; reading the variant, its
product and its photos each time was two queries per request for rows a merchant changes a few times a day.

- The *snapshot* (titles, first photo, product active, requires shipping) is kept in Django's cache (per
  process by default, shared with `REDIS_URL`) under a catalog *version*: any save or delete of a product,
  variant or photo, and the admin's bulk actions, bump the version (now and again after commit, see
  shop/receivers.py), so the next evaluation reads the rows again. With the local-memory cache another process
  cannot hear the bump and sees the change after `CACHE_SECONDS`; with Redis every process sees it at once.
- The variant's own *live* columns (price, stock, active, made to order) decide what is charged and what can
  be sold, so they are never taken from a cache: they come in the one query that reads the stock (`live_of`),
  or annotated on the checkout's lines by the caller (`LIVE_ANNOTATIONS`), which costs no statement at all.

## Stock

Stock: reserved when the buyer commits to paying, never oversold.

Why not at add-to-cart: checkouts are cheap to create, also anonymously by agents over BCP, and live
for hours (SHOP_CHECKOUT_TTL_SECONDS, default 6 h). Reserving at add would let abandoned carts and idle
agents lock the last units for that long. The units are taken when a payment can start: when a Pix charge
is issued for the checkout (create/update with Pix selected, PIX.md §2.2, held for the charge's lifetime,
shop/checkout/charge.py `hold_for_charge`), else at complete (card). A buyer is then refused before paying,
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
import functools
import secrets
import time
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from django.core.cache import cache
from django.db import connection, transaction
from django.db.models import F, Prefetch

from kernel.ops import request_cache
from kernel.rows import kept_cursor
from shop.models import ProductImage, Variant

CACHE_SECONDS = 60  # the bound for processes that cannot hear the bump (local-memory cache)
VERSION_KEY = "shop:catalog:version"
_MISSING = "missing"  # an unknown SKU is cached too: a new variant bumps the version


@dataclass(frozen=True)
class VariantSnapshot:
    pk: int
    sku: str
    title: str  # "Product — Variant", as checkout lines and orders show it
    image_path: str  # the first photo's URL as stored (absolute URLs are joined by the caller)
    product_active: bool
    requires_shipping: bool


@dataclass(frozen=True)
class Live:
    """The variant's columns that decide the sale, read fresh at every evaluation."""

    stock: int
    price: int
    active: bool
    allow_backorder: bool


_LIVE_FIELDS = ("stock", "price", "active", "allow_backorder")
# For `CheckoutLine` querysets: the live columns of each line's variant, in the query that reads the lines.
LIVE_ANNOTATIONS = {f"variant_{name}": F(f"variant__{name}") for name in _LIVE_FIELDS}


def _version() -> int:
    version = request_cache.get(VERSION_KEY)  # once per request: a request sees one catalog version
    if version is None:
        version = _new_version()
        if not cache.add(VERSION_KEY, version, None):  # another process started it first: its number holds
            version = cache.get(VERSION_KEY) or version
        request_cache.remember(VERSION_KEY, version)
    return int(version)


def _new_version() -> int:
    """A version no earlier life of the key had (the cache was flushed, or evicted the key), so no snapshot kept
    under one of those (`_kept`, another process's copy) is ever read as this one's."""
    return secrets.randbits(52)


def catalog_version() -> int:
    """The catalog's version (bumped by every save of a product, variant or photo): a key part for anything
    cached from the catalog, e.g. the storefront's fragments."""
    return _version()


def catalog_cache_bump() -> None:
    """Invalidate every cached snapshot (one key, whatever the number of SKUs)."""
    try:
        version = cache.incr(VERSION_KEY)
    except ValueError:  # no version yet (or evicted): nothing cached under it can be read any more
        version = _new_version()
        cache.set(VERSION_KEY, version, None)
    request_cache.remember(VERSION_KEY, version)  # the rest of this request reads the new one


def _key(version: int, sku: str) -> str:
    return f"shop:catalog:{version}:{sku}"


def _title(variant: Variant) -> str:
    return f"{variant.product.title} — {variant.title}" if variant.title else variant.product.title


def _read(skus: set[str]) -> tuple[dict[str, VariantSnapshot], dict[int, Live]]:
    """Variants with product and photos (2 queries); their live columns come along."""
    images = Prefetch("product__images", queryset=ProductImage.objects.order_by("position", "id"))
    rows = Variant.objects.filter(sku__in=skus).select_related("product").prefetch_related(images)
    snapshots: dict[str, VariantSnapshot] = {}
    live: dict[int, Live] = {}
    for variant in rows:
        photos = list(variant.product.images.all())
        snapshots[variant.sku] = VariantSnapshot(
            pk=variant.pk,
            sku=variant.sku,
            title=_title(variant),
            image_path=photos[0].url if photos else "",
            product_active=variant.product.active,
            requires_shipping=variant.product.requires_shipping,
        )
        live[variant.pk] = Live(*(getattr(variant, name) for name in _LIVE_FIELDS))
    return snapshots, live


def catalog_snapshots(skus: set[str]) -> tuple[dict[str, VariantSnapshot], dict[int, Live] | None]:
    """Snapshots by SKU (unknown SKUs absent) and, when the rows had to be read, their live columns by pk
    (None when every SKU came from the cache: the caller reads the live columns it needs)."""
    if not skus:
        return {}, {}
    version = _version()
    keys = {sku: _key(version, sku) for sku in skus}
    now = time.monotonic()
    found = {key: kept[1] for key in keys.values() if (kept := _kept.get(key)) is not None and kept[0] > now}
    if len(found) < len(skus):
        found |= cache.get_many([key for key in keys.values() if key not in found])
        if len(found) == len(skus):
            _keep(found, now)
    if len(found) == len(skus):
        return {value.sku: value for value in found.values() if value != _MISSING}, None
    snapshots, live = _read(skus)
    written = {keys[sku]: snapshots.get(sku, _MISSING) for sku in skus}
    cache.set_many(written, CACHE_SECONDS)
    _keep(written, now)
    return snapshots, live


# This process's own copy of the snapshots it read (issue 34: a Redis round trip and an unpickling on every
# create, update and complete). Keyed like the shared cache, by catalog version, so a bump makes them unreachable
# as it does there; kept no longer than the shared entry may live (CACHE_SECONDS), so a process that cannot hear
# a bump (local-memory cache) is stale no longer than before.
_kept: dict[str, tuple[float, VariantSnapshot | str]] = {}
_MAX_KEPT = 4096


def _keep(entries: dict[str, VariantSnapshot | str], now: float) -> None:
    if len(_kept) + len(entries) > _MAX_KEPT:
        _kept.clear()
    until = now + CACHE_SECONDS
    for key, value in entries.items():
        _kept[key] = (until, value)


def live_of(pks: set[int]) -> dict[int, Live]:
    """Live columns by variant pk: one query (none for no pks)."""
    if not pks:
        return {}
    if connection.vendor != "postgresql":
        rows = Variant.objects.filter(pk__in=pks).values_list("pk", *_LIVE_FIELDS)
        return {pk: Live(*values) for pk, *values in rows}
    # One SQL text for any number of pks (an array parameter), written once instead of compiled by the ORM on
    # every create, update and complete (issue 34); the columns are plain integers and booleans.
    cursor = kept_cursor()  # the row writes' cursor: no new one made and wrapped per read (issue 34)
    cursor.execute(_live_sql(), [sorted(pks)])
    return {pk: Live(*values) for pk, *values in cursor.fetchall()}


@functools.cache
def _live_sql() -> str:
    """Built once per process, from the model's metadata."""
    quote, meta = connection.ops.quote_name, Variant._meta
    columns = ", ".join(quote(meta.get_field(name).column) for name in ("id", *_LIVE_FIELDS))
    return f"SELECT {columns} FROM {quote(meta.db_table)} WHERE {quote('id')} = ANY(%s)"  # noqa: S608


def live_annotated(line: object) -> Live | None:
    """The live columns a `CheckoutLine` read with `LIVE_ANNOTATIONS` carries (None without them)."""
    values = [getattr(line, f"variant_{name}", None) for name in _LIVE_FIELDS]
    return None if any(value is None for value in values) else Live(*values)  # type: ignore[arg-type]


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


def stock_take_sql(*, variant_pk: int, quantity: int, only_if: str = "") -> tuple[str, list[int]]:
    """The conditional UPDATE that takes one variant's units, returning its id when they were taken: run by
    `stock_reserve`, or as the guard of a caller's own statement (`kernel.rows.update_where`). `only_if`: one more
    SQL condition of that statement (constant text, e.g. `kernel.rows.VERSION_LOCKED`)."""
    table = connection.ops.quote_name(Variant._meta.db_table)
    stock, pk = (connection.ops.quote_name(Variant._meta.get_field(name).column) for name in ("stock", "id"))
    extra = f" AND {only_if}" if only_if else ""
    sql = f"UPDATE {table} SET {stock} = {stock} - %s WHERE {pk} = %s AND {stock} >= %s{extra} RETURNING {pk}"  # noqa: S608
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
