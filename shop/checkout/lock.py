"""The one lock every checkout write takes (`lock`, `lock_if_free` for the sweeps) and the deadlock net under
it (`retried_on_deadlock`). The lock order is in `payments/locks.py`."""

from __future__ import annotations

import functools
import logging
import random
import time
from collections.abc import Callable

from django.db import OperationalError, connection

from orders.services import order_number_sql
from payments.locks import reference_lock_where
from payments.services import card_payment_brief_sql
from shop.checkout.access import CheckoutOwner
from shop.checkout.catalog import LIVE_ANNOTATIONS
from shop.checkout.selectors import CheckoutNotFound, with_lines
from shop.checkout.types import STATUS_READY
from shop.models import Checkout, CheckoutLine

logger = logging.getLogger(__name__)

DEADLOCK_ATTEMPTS = 3
DEADLOCK = "40P01"  # PostgreSQL's deadlock_detected


def retried_on_deadlock[**P, R](func: Callable[P, R]) -> Callable[P, R]:
    """Run `func` again when PostgreSQL chose its transaction as a deadlock's victim (up to DEADLOCK_ATTEMPTS
    runs). For a function whose writes are one transaction of its own, opened by itself, and whose work
    before the failure is only that transaction (no network I/O, which our transactions never hold): the
    victim's transaction was rolled back whole, so running it again is running it once.

    The lock order (`lock`, `payments.locks`) leaves no cycle we know of among our own locks; this is the
    net under it, for the ones PostgreSQL takes by itself (foreign-key checks, unique-index waits). Inside
    an outer transaction nothing can be re-run: the error goes to its owner."""

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        for attempt in range(1, DEADLOCK_ATTEMPTS + 1):
            try:
                return func(*args, **kwargs)
            except OperationalError as exc:
                victim = getattr(exc.__cause__, "sqlstate", None) == DEADLOCK
                if not victim or connection.in_atomic_block or attempt == DEADLOCK_ATTEMPTS:
                    raise
                logger.info("deadlock victim in %s; running it again (attempt %d)", func.__qualname__, attempt + 1)
                time.sleep(random.uniform(0.005, 0.05) * attempt)  # so the writers that met do not meet again at once
        raise AssertionError("unreachable")

    return wrapper


ANY_OWNER = object()  # `lock(owner=…)` default: the shop itself (storefront, admin, sweeps) may touch any checkout


def lock(
    checkout_id: str,
    *,
    owner: object = ANY_OWNER,
    card_brief: bool = False,
    number: bool = False,
    lines: bool = False,
) -> Checkout:
    """Row-lock the checkout, after its reference lock (`payments.locks`), in one statement.

    Settlement locks a Pix charge and then (through charge_settled) the checkout, and a charge can become
    active while a writer holds the checkout; both take the reference lock first, so neither can hold one
    of the rows the other waits for.
    `owner`: a BCP caller (`access.CheckoutOwner`); a checkout it does not own (another platform's, another
    anonymous caller's) is `CheckoutNotFound` (checked under the lock, so the write needs no ownership read).
    `card_brief`: also read, in the same statement, what payments knows of a card payment for this
    checkout (`checkout.card_payment_brief`, see `payments.services.card_payment_brief_sql`).
    `number`: a checkout ready for complete without an order number gets one reserved in the same statement
    (`checkout.reserved_number`; complete stores it, so placement draws none and a retry keeps it).
    `lines`: the lines come in the same statement (`checkout.lines.all()`, in position order, each with its
    variant's live columns, `LIVE_ANNOTATIONS`); the checkout's row is the one locked.

    A statement that waited reads everything but the locked row as it was when it began (READ COMMITTED:
    only the locked row is read again after the wait). When the row changed meanwhile, the writer it waited
    for may have changed the lines or the card payment too, so they are read once more, now under the lock.
    """
    checkout = _locked(checkout_id, owner=owner, card_brief=card_brief, number=number, lines=lines, wait=True)
    if checkout is None:  # only a sweep's `lock_if_free` finds nothing without raising
        raise CheckoutNotFound(checkout_id)
    return checkout


def lock_if_free(checkout_id: str) -> Checkout | None:
    """`lock` for the sweeps: None, at once, when another transaction holds the checkout or its reference
    lock (it is looked at again on the next run)."""
    return _locked(checkout_id, owner=ANY_OWNER, card_brief=False, number=False, lines=False, wait=False)


def _locked(
    checkout_id: str, *, owner: object, card_brief: bool, number: bool, lines: bool, wait: bool
) -> Checkout | None:
    found = _locking_statement(checkout_id, card_brief=card_brief, number=number, lines=lines, wait=wait)
    if found and getattr(found[0], "lock_waited_past_a_change", False):
        reserved = getattr(found[0], "reserved_number", None)
        found = _locking_statement(checkout_id, card_brief=card_brief, number=False, lines=lines, wait=True)
        if number:
            for row in found:
                row.reserved_number = reserved  # drawn by the first statement; a second draw would leave a gap
    if not found:
        if not wait:
            return None
        if lines:  # no lines (rare: removing every line cancels): lock the checkout alone
            return with_lines(lock(checkout_id, owner=owner, card_brief=card_brief, number=number), [])
        raise CheckoutNotFound(checkout_id)
    if not lines:
        checkout = found[0]
        _check_owner(checkout, owner)
        return checkout
    checkout = found[0].checkout
    for name in ("card_payment_brief", "reserved_number"):
        if hasattr(found[0], name):
            setattr(checkout, name, getattr(found[0], name))
    for line in found:
        line.checkout = checkout  # one instance for all of them, as a prefetch would give
    _check_owner(checkout, owner)
    return with_lines(checkout, found)


def _locking_statement(checkout_id: str, *, card_brief: bool, number: bool, lines: bool, wait: bool) -> list:
    """The rows of `lock`'s one statement: the checkout, or its lines with the checkout joined."""
    if lines:
        rows = (
            CheckoutLine.objects.select_for_update(of=("checkout",))
            .select_related("checkout")
            .filter(checkout__public_id=checkout_id)
            .annotate(**LIVE_ANNOTATIONS)
            .order_by("position", "id")
        )
    else:
        rows = Checkout.objects.select_for_update(skip_locked=not wait).filter(public_id=checkout_id)
    table = connection.ops.quote_name(Checkout._meta.db_table)
    if (reference_lock := reference_lock_where(wait=wait)) is not None:
        rows = rows.extra(where=[reference_lock], params=[checkout_id])  # noqa: S610 — constant SQL
        # The subquery reads the row as of the statement's start; the row itself is locked as it is now.
        rows = rows.extra(  # noqa: S610 — constant SQL
            select={"lock_waited_past_a_change": f"{table}.xmin <> (SELECT as_begun.xmin FROM {table}"  # noqa: S608
                                                  f" AS as_begun WHERE as_begun.id = {table}.id)"},
        )  # fmt: skip
    if card_brief:
        rows = rows.extra(select={"card_payment_brief": card_payment_brief_sql()}, select_params=[checkout_id])  # noqa: S610
    if number and (next_number := order_number_sql()) is not None:
        # CASE evaluates nextval only for the row that needs it: no number is drawn for a refused status.
        rows = rows.extra(  # noqa: S610 — constant SQL, the status is a parameter
            select={
                "reserved_number": f"CASE WHEN {table}.order_number IS NULL AND {table}.status = %s"
                f" THEN {next_number} END"
            },
            select_params=[STATUS_READY],
        )
    return list(rows)


def _check_owner(checkout: Checkout, owner: object) -> None:
    if owner is not ANY_OWNER and not (isinstance(owner, CheckoutOwner) and owner.owns(checkout)):
        raise CheckoutNotFound(checkout.public_id)
