"""Killed database backends do not turn into 500s (issue 13 §11).

Before, the psycopg pool handed out connections without checking them: after the backends were
terminated (a Postgres restart, a failover, an admin's pg_terminate_backend) the next requests
answered 500 until the dead connections were used up. Now the pool checks each one it lends.
"""

from __future__ import annotations

import select
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import psycopg
import pytest
from django.db import connection, connections
from psycopg_pool import ConnectionPool

from config.db_pool import check_connection
from tests.bcp_app.live import LiveServer, database_url

pytestmark = [pytest.mark.postgres, pytest.mark.e2e]


def test_requests_after_backends_are_terminated_answer_200(transactional_db: Any) -> None:
    from config.asgi import django_app

    if connection.pool is None:
        pytest.skip("needs the psycopg connection pool (PostgreSQL)")
    server = LiveServer(django_app).start()
    try:
        # given a warm pool: several connections opened by concurrent page views
        with ThreadPoolExecutor(max_workers=5) as pool:
            warm = list(pool.map(lambda _: httpx.get(f"{server.url}/", timeout=30).status_code, range(10)))
        assert warm == [200] * 10
        connections.close_all()  # this thread's connection goes back to the pool too
        # when every backend of the test database is terminated
        with psycopg.connect(_conninfo(), autocommit=True) as admin:
            killed = [
                pid
                for pid, ended in admin.execute(
                    "SELECT pid, pg_terminate_backend(pid) FROM pg_stat_activity "
                    "WHERE datname = current_database() AND pid <> pg_backend_pid()"
                )
                if ended
            ]
            assert killed
            _wait_until_gone(admin, killed)
        # then the next requests all answer 200
        after = [httpx.get(f"{server.url}/", timeout=30).status_code for _ in range(10)]
    finally:
        server.stop()
    assert after == [200] * 10


def _wait_until_gone(admin: psycopg.Connection[Any], pids: list[int]) -> None:
    """`pg_terminate_backend` only signals: wait until those backends have exited (the restart has happened)."""
    for _ in range(200):
        row = admin.execute("SELECT count(*) FROM pg_stat_activity WHERE pid = ANY(%s)", [pids]).fetchone()
        if row is not None and row[0] == 0:
            return
        time.sleep(0.05)
    raise AssertionError("the terminated backends are still there after 10 s")


def _conninfo() -> str:
    return database_url().replace("postgres://", "postgresql://", 1)


def _readable(conn: psycopg.Connection[Any]) -> bool:
    return bool(select.select([conn.fileno()], [], [], 5)[0])


def test_the_pool_check_asks_postgres_only_when_the_connection_has_something_to_say(
    transactional_db: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """config/db_pool.py: an idle connection with nothing on its socket is lent without a query; one whose backend
    was terminated, or with a message waiting (a notification), gets psycopg_pool's round trip, which fails for
    the dead one (and tests every idle connection of the pool) and passes for the live one."""
    round_trips: list[object] = []
    real_check = ConnectionPool.check_connection
    monkeypatch.setattr(
        ConnectionPool, "check_connection", staticmethod(lambda conn: (round_trips.append(conn), real_check(conn)))
    )
    with psycopg.connect(_conninfo(), autocommit=True) as quiet, psycopg.connect(_conninfo(), autocommit=True) as admin:
        # a healthy idle connection: no round trip
        check_connection(quiet)
        assert round_trips == []
        # a message waiting on the socket: the round trip, which reads it and passes
        quiet.execute("LISTEN pool_check")
        admin.execute("NOTIFY pool_check")
        assert _readable(quiet)
        check_connection(quiet)
        assert round_trips == [quiet]
        # a terminated backend: its socket is readable, the round trip fails
        pid = quiet.info.backend_pid
        admin.execute("SELECT pg_terminate_backend(%s)", [pid])
        assert _readable(quiet)
        with pytest.raises(psycopg.OperationalError):
            check_connection(quiet)
        # (then the pool's own idle connections were each tested: the recovery of config/db_pool.py)
        assert round_trips[:2] == [quiet, quiet]
        assert quiet not in round_trips[2:]
