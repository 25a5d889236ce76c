"""The psycopg pool's connection check: without a round trip when the connection has nothing to say, and made
to recover from many dead connections at once.

psycopg_pool checks each connection it lends (`ConnectionPool.check_connection`) but backs off
between failed checks (about 1 s, 2 s, 4 s, …): after a Postgres restart or a `pg_terminate_backend`
sweep, a pool full of dead connections outlasts the pool timeout and requests still fail. Here the
first dead connection found makes the pool test all its idle ones at once (`ConnectionPool.check`),
so the next attempt gets a fresh connection.

psycopg_pool's check is an empty query: a round trip to Postgres for every request, the only one besides its
read for a Get Order (issue 34). A connection lent back idle whose socket has nothing to read gets no query: a
backend ended by a restart, a failover or `pg_terminate_backend` writes its FATAL error and closes the socket,
which makes it readable (a socket poll, no wait). Anything to read, or a connection not idle, gets the round trip
as before. What neither check can see is a backend ended after the check and before the request's statement.
"""

from __future__ import annotations

import select
from typing import Any

from psycopg.pq import TransactionStatus
from psycopg_pool import ConnectionPool


def check_connection(conn: Any) -> None:
    if _quiet(conn):
        return
    try:
        ConnectionPool.check_connection(conn)
    except Exception:
        _check_idle_connections()
        raise


def _quiet(conn: Any) -> bool:
    """Idle, open, and nothing from the server waiting on its socket (no error, no end of stream, no message)."""
    if conn.closed or conn.info.transaction_status != TransactionStatus.IDLE:
        return False
    poller = select.poll()
    poller.register(conn.fileno(), select.POLLIN | select.POLLPRI)  # errors and hang-ups are always reported
    return not poller.poll(0)


def _check_idle_connections() -> None:
    from django.db import connections  # noqa: PLC0415 (read by the settings module, before Django can import its database layer)

    for alias in connections:
        pool = getattr(connections[alias], "pool", None)
        if pool is not None:
            pool.check()
