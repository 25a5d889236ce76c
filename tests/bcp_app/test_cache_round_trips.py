"""Redis round trips of an authenticated BCP request (issue 11), on the real Redis production uses with REDIS_URL.

Every agent request presenting an API key reads three cache entries before its operation: the failed-key
count of its IP (BCP_RATE_LIMIT_AUTH_FAILURES), the platform owning the key and the platform's profile.
They were three round trips (two cache GETs and a GET of the limiter's counter); `resolve_context` now reads
them in one MGET, and the limiter's one call counter (EVALSHA) is the only other command. A checkout
operation's own read-mostly entries (store settings, policies, shipping table, catalog version: four GETs)
come in that MGET too. Counted at redis-py's connection, for the Django cache and the `limits` storage alike.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import redis
from django.core.cache import caches
from django.test import Client

from bcp_app import ratelimit
from bcp_app.platforms import platform_create
from shop.ops import ratelimit as counters
from tests.bcp_app.bcp_fixtures import FakePlatform, agent
from tests.bcp_app.rest_helpers import CARD, call, catalog, full_update
from tests.bcp_app.test_rest_order import place_order
from tests.shop.test_cache_cross_process import _redis_url

pytestmark = [pytest.mark.django_db, pytest.mark.postgres, pytest.mark.usefixtures("bcp_settings")]

SENT: list[str] = []  # command names, in the order redis-py sent them


class CountingConnection(redis.Connection):
    def send_packed_command(self, command: Any, check_health: bool = True) -> None:
        chunks = [command] if isinstance(command, bytes | str) else list(command)
        packed = b"".join(chunk if isinstance(chunk, bytes) else chunk.encode() for chunk in chunks)
        SENT.append(packed.split(b"\r\n")[2].decode().upper())  # *N, $len, NAME: the first bulk string
        super().send_packed_command(command, check_health)


@pytest.fixture
def counted_redis(settings: Any) -> Iterator[list[str]]:
    url = _redis_url()
    settings.REDIS_URL = url
    settings.CACHES = {"default": {"BACKEND": "shop.ops.redis_cache.KeptClientRedisCache", "LOCATION": url,
                                   "KEY_PREFIX": f"test-{uuid.uuid4().hex[:8]}",
                                   "OPTIONS": {"connection_class": CountingConnection}}}  # fmt: skip
    counters._limiter.cache_clear()  # the limiter's storage follows REDIS_URL
    storage, _ = counters._limiter()
    storage.storage.connection_pool.connection_class = CountingConnection
    storage.storage.connection_pool.reset()
    yield SENT
    SENT.clear()
    counters._limiter.cache_clear()
    caches["default"].clear()


def test_an_authenticated_get_order_makes_two_redis_round_trips(
    counted_redis: list[str], fake_platform: FakePlatform, settings: Any, django_capture_on_commit_callbacks: Any
) -> None:
    settings.BCP_RATE_LIMIT_AUTH_FAILURES = "3/10minutes"
    settings.BCP_PIX_SANDBOX = True
    settings.PIX_SANDBOX_WEBHOOK_URL = ""
    catalog()
    platform = platform_create(name="Agente", profile_url=fake_platform.publish())
    headers = agent(platform.platform.profile_url, Authorization=f"Bearer {platform.api_key}")
    client = Client(REMOTE_ADDR="198.51.100.7")
    order = place_order(client, headers, django_capture_on_commit_callbacks)
    assert call(client, "get", f"/orders/{order.public_id}", headers).status_code == 200  # caches the entries
    counted_redis.clear()
    for _ in range(3):
        assert call(client, "get", f"/orders/{order.public_id}", headers).json()["id"] == order.public_id
    assert counted_redis == ["EVALSHA", "MGET"] * 3  # the read counter; failures, platform and profile at once

    # the failed-key budget still holds across that one read: 3 wrong keys, then even the right one is refused
    attacker = Client(REMOTE_ADDR="203.0.113.9")
    wrong = {**headers, "Authorization": "Bearer bcp_0123456789ab_" + "x" * 30}
    assert [call(attacker, "get", f"/orders/{order.public_id}", wrong).status_code for _ in range(4)] == [
        401, 401, 401, 429]
    limited = call(attacker, "get", f"/orders/{order.public_id}", headers)
    assert limited.status_code == 429
    assert 1 <= int(limited.headers["retry-after"]) <= 600
    assert call(client, "get", f"/orders/{order.public_id}", headers).status_code == 200  # another address
    assert ratelimit.auth_failures_key("203.0.113.9") != ratelimit.auth_failures_key("198.51.100.7")


def test_a_checkout_flow_reads_the_cache_once_per_request_beside_its_catalog_lines(
    counted_redis: list[str], fake_platform: FakePlatform, settings: Any, django_capture_on_commit_callbacks: Any
) -> None:
    catalog()
    platform = platform_create(name="Agente", profile_url=fake_platform.publish(handlers=fake_platform.with_card()))
    headers = agent(platform.platform.profile_url, Authorization=f"Bearer {platform.api_key}")
    client = Client(REMOTE_ADDR="198.51.100.7")

    def flow() -> dict[str, list[str]]:
        sent: dict[str, list[str]] = {}
        line = {"line_items": [{"item": {"id": "SKU-CAFE-500G"}, "quantity": 1}],
                "buyer": {"email": "ana@example.com.br"}}
        counted_redis.clear()
        created = call(client, "post", "/checkout-sessions", {**headers, "Idempotency-Key": str(uuid.uuid4())},
                       line).json()
        sent["create"] = list(counted_redis)
        addressed = call(client, "put", f"/checkout-sessions/{created['id']}", headers,
                         full_update(created, pix=False)).json()
        body = {**full_update(addressed, pix=False), "payment": {"instruments": [CARD]}}
        counted_redis.clear()
        ready = call(client, "put", f"/checkout-sessions/{created['id']}", headers, body).json()
        sent["update"] = list(counted_redis)
        assert ready["status"] == "ready_for_complete", ready.get("messages")
        counted_redis.clear()
        with django_capture_on_commit_callbacks(execute=False):  # the placed order's task is the worker's
            done = call(client, "post", f"/checkout-sessions/{created['id']}/complete",
                        {**headers, "Idempotency-Key": str(uuid.uuid4())}, {"payment": {"instruments": [CARD]}}).json()
        sent["complete"] = list(counted_redis)
        assert done["status"] == "completed", done.get("messages")
        return sent

    flow()  # every entry cached
    assert flow() == {
        # the write counter; identity and the operation's entries; the create budget; the line's catalog entry
        "create": ["EVALSHA", "MGET", "EVALSHA", "MGET"],
        "update": ["EVALSHA", "MGET", "MGET"],
        "complete": ["EVALSHA", "MGET", "MGET"],
    }
