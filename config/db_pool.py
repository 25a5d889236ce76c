"""The psycopg pool's connection check, made to recover from many dead connections at once.

psycopg_pool checks each connection it lends (`ConnectionPool.check_connection`) but backs off
between failed checks (about 1 s, 2 s, 4 s, …): after a Postgres restart or a `pg_terminate_backend`
sweep, a pool full of dead connections outlasts the pool timeout and requests still fail. Here the
first dead connection found makes the pool test all its idle ones at once (`ConnectionPool.check`),
so the next attempt gets a fresh connection.
"""

from __future__ import annotations

from typing import Any

from psycopg_pool import ConnectionPool


def check_connection(conn: Any) -> None:
    try:
        ConnectionPool.check_connection(conn)
    except Exception:
        _check_idle_connections()
        raise


def _check_idle_connections() -> None:
    from django.db import connections  # noqa: PLC0415 (read by the settings module, before Django can import its database layer)

    for alias in connections:
        pool = getattr(connections[alias], "pool", None)
        if pool is not None:
            pool.check()
