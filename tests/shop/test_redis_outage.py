"""Redis unreachable (issue 11 §3): the shop keeps selling from Postgres; the cache answers as a miss.

Everything the shop caches is read-mostly data Postgres still has, so with `REDIS_URL` set and Redis down
(restart, failover) the storefront and the BCP API answer as with a cold cache instead of a 500 on every
request, as Django's Redis backend did. A Redis that accepts connections and answers nothing is a miss
after the socket timeout the settings give it, not a request held for the OS's TCP timeout.
"""

from __future__ import annotations

import logging
import socket
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from django.core.cache import caches
from django.test import Client

from kernel.ops import ratelimit, redis_cache
from kernel.ops.redis_cache import KeptClientRedisCache
from tests.bcp_app.bcp_fixtures import FakePlatform, agent, bcp_settings, fake_platform  # noqa: F401
from tests.bcp_app.rest_helpers import call, catalog
from tests.deploy.test_health import dead_port  # noqa: F401 (fixture: a port that refuses connections)

pytestmark = pytest.mark.django_db
TIMEOUTS = {"socket_connect_timeout": 1, "socket_timeout": 1}  # what the settings give it with REDIS_URL


@pytest.fixture
def silent_port() -> Iterator[int]:
    # Accepts connections and never answers: a hung Redis.
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                accepted.append(server.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join(5)
    for conn in accepted:
        conn.close()
    server.close()


def _redis_down(settings: Any, port: int) -> None:
    settings.CACHES = {"default": {"BACKEND": "kernel.ops.redis_cache.KeptClientRedisCache",
                                   "LOCATION": f"redis://127.0.0.1:{port}/0", "OPTIONS": TIMEOUTS}}  # fmt: skip


@pytest.mark.usefixtures("bcp_settings")
def test_with_redis_down_the_storefront_and_the_api_still_sell(
    settings: Any,
    dead_port: int,  # noqa: F811
    fake_platform: FakePlatform,  # noqa: F811
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    catalog()
    _redis_down(settings, dead_port)
    monkeypatch.setattr(redis_cache, "_last_outage_log", 0.0)  # an earlier test's outage log is not this one
    buyer = Client(raise_request_exception=False)
    with caplog.at_level(logging.WARNING, logger="kernel.ops.redis_cache"):
        home = buyer.get("/")
        cart = buyer.get("/carrinho/")
    assert home.status_code == 200 and "Café especial 500 g" in home.content.decode()
    assert cart.status_code == 200
    assert any("Redis cache unreachable" in record.getMessage() for record in caplog.records)
    agent_client = Client(raise_request_exception=False)
    headers = {**agent(fake_platform.publish()), "Idempotency-Key": "outage-1"}
    body = {"line_items": [{"item": {"id": "SKU-CAFE-500G"}, "quantity": 2}], "buyer": {"email": "ana@example.com.br"}}
    created = call(agent_client, "post", "/checkout-sessions", headers, body)
    assert created.status_code == 201, created.content
    assert created.json()["line_items"][0]["item"]["price"] == 4290
    ready = Client().get("/readyz", HTTP_HOST="127.0.0.1:8000")
    assert ready.status_code == 503 and "cache" in ready.json()["down"]  # and operators are told


def test_every_operation_of_an_unreachable_cache_is_a_miss(settings: Any, dead_port: int) -> None:  # noqa: F811
    _redis_down(settings, dead_port)
    cache = caches["default"]
    assert isinstance(cache, KeptClientRedisCache)
    cache.set("a", 1, 60)
    assert cache.get("a") is None and cache.get("a", "absent") == "absent"
    assert cache.get_many(["a", "b"]) == {}
    assert cache.set_many({"a": 1, "b": 2}, 60) == ["a", "b"]  # Django's contract: the keys not stored
    assert cache.add("a", 1, 60) is False
    assert cache.has_key("a") is False
    assert cache.touch("a", 60) is False
    assert cache.delete("a") is False
    cache.delete_many(["a", "b"])
    with pytest.raises(ValueError):  # a counter that is not there, as Django says it
        cache.incr("a")
    assert cache.get_or_set("a", 7, 60) == 7
    # a read with a rate-limit count (kernel/ops/request_cache.py): nothing read, nothing counted, let through
    assert cache.read_and_count(["a"], "calls", 60) == ({}, None)
    assert ratelimit.hit("1/minute", "test", "caller") is None
    assert ratelimit.hit("1/minute", "test", "caller") is None  # never over: it could not be counted


def test_a_redis_that_never_answers_is_a_miss_after_its_socket_timeout(settings: Any, silent_port: int) -> None:
    _redis_down(settings, silent_port)
    assert caches["default"].get("a", "absent") == "absent"  # without a socket timeout this read never returns
