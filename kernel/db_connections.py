"""Hand the database connection back to the pool before waiting on the network.

A request that waits on a slow peer (a PSP, an agent profile server) while holding its pooled
connection starves everyone else: enough of them in flight empty the pool and the storefront answers
500 (`PoolTimeout`). Callers make their outbound calls with no transaction open; the next query takes a
connection again. Inside a transaction (only a test's own, or a caller's bug) the connection is kept,
since closing it would lose the transaction.
"""

from __future__ import annotations

from django.db import connection


def release_db_connection() -> None:
    if not connection.in_atomic_block:
        connection.close()
