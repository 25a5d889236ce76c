"""Killed database backends do not turn into 500s (issue 13 §11).

Before, the psycopg pool handed out connections without checking them: after the backends were
terminated (a Postgres restart, a failover, an admin's pg_terminate_backend) the next requests
answered 500 until the dead connections were used up. Now the pool checks each one it lends.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import psycopg
import pytest
from django.db import connection, connections

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
        url = database_url().replace("postgres://", "postgresql://", 1)
        with psycopg.connect(url, autocommit=True) as admin:
            killed = admin.execute(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                "WHERE datname = current_database() AND pid <> pg_backend_pid()"
            ).fetchone()
        assert killed is not None and killed[0] >= 1
        # then the next requests all answer 200
        after = [httpx.get(f"{server.url}/", timeout=30).status_code for _ in range(10)]
    finally:
        server.stop()
    assert after == [200] * 10
