"""The reference lock: one PostgreSQL advisory lock per payment reference (a checkout's public id), taken
first by every transaction that may lock more than one of that reference's rows.

Lock order for one reference:

    card payment row → reference lock → Pix charge rows → the checkout → stock, coupons, order rows

Why a lock of its own: a Pix charge issued after a PSP call becomes active outside any checkout lock, so
no order among the rows themselves can be kept. Settlement starts from the charge, a checkout write from
the checkout; both take this lock first, so for one reference at most one of them holds rows at a time.
A transaction that holds a single one of these rows and waits for nothing else (a charge revoked or
expired on its own, the card step that writes its payment row) needs no reference lock: it ends without
waiting on anyone who holds it.

The lock goes into the statement that takes the first row lock (an uncorrelated subquery: PostgreSQL runs
it as an InitPlan before the rows are scanned), so it costs no statement of its own. PostgreSQL releases
it at commit or rollback; taking it again in the same transaction (settlement → the shop's `lock`)
returns at once.
"""

from __future__ import annotations

from django.db import connection

from payments.models import PixCharge

# pg_advisory_xact_lock(int4, int4): this class keeps our keys apart from any other advisory lock user.
REFERENCE_LOCK_CLASS = 0x42435000  # "BCP\0"


def reference_lock_where(*, wait: bool = True) -> str | None:
    """A WHERE condition taking the reference lock of the reference given as its one parameter; None where
    there are no advisory locks (SQLite runs one writer at a time anyway). `wait=False`: the condition is
    false, and the statement finds nothing, when another transaction holds the lock (for the sweeps, which
    take `SKIP LOCKED` rows too)."""
    if connection.vendor != "postgresql":
        return None
    if wait:
        return (
            "(SELECT count(*) FROM (SELECT pg_advisory_xact_lock("  # noqa: S608 — constant SQL
            f"{REFERENCE_LOCK_CLASS}, hashtext(%s))) AS reference_lock) = 1"
        )
    return f"(SELECT pg_try_advisory_xact_lock({REFERENCE_LOCK_CLASS}, hashtext(%s)))"


def pix_charge_lock(*, txid: str) -> PixCharge | None:
    """The charge `txid`, row-locked after its reference's lock (one statement), for settlement."""
    rows = PixCharge.objects.select_for_update().filter(txid=txid)
    if connection.vendor == "postgresql":
        charges = PixCharge._meta.db_table
        # The reference is read by txid inside the same statement: it never changes once a charge exists.
        rows = rows.extra(  # noqa: S610 — constant SQL, the txid is a parameter
            where=[
                "(SELECT count(*) FROM (SELECT pg_advisory_xact_lock("  # noqa: S608
                f"{REFERENCE_LOCK_CLASS}, hashtext(locking.reference)) FROM {charges} AS locking"
                " WHERE locking.txid = %s) AS reference_lock) >= 0"
            ],
            params=[txid],
        )
    return rows.first()
