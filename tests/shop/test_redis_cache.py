"""The Redis cache backend production uses with REDIS_URL (kernel/ops/redis_cache.py), on the real Redis.

Django's own backend builds a redis-py client for every operation, and a connection pool for every backend
instance, that is every request under ASGI; ours keeps one client and pool per server for the process.
Behaviour must be Django's: what goes in comes out, timeouts and counters work, each thread has its own
backend.
"""

from __future__ import annotations

import contextvars
import json
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from asgiref.local import Local
from django.core.cache import caches
from django.core.cache.backends.redis import RedisCache

from kernel.ops.redis_cache import KeptClientRedisCache
from tests.bcp_app.live import ROOT, subprocess_env
from tests.shop.test_cache_cross_process import _redis_url


@pytest.fixture
def redis_cache(settings: Any) -> Iterator[KeptClientRedisCache]:
    url = _redis_url()
    settings.CACHES = {"default": {"BACKEND": "kernel.ops.redis_cache.KeptClientRedisCache", "LOCATION": url,
                                   "KEY_PREFIX": f"test-{uuid.uuid4().hex[:8]}"}}  # fmt: skip
    backend = caches["default"]
    assert isinstance(backend, KeptClientRedisCache)
    yield backend
    backend.delete_many(["a", "b", "n", "gone", "short", "thread-0", "thread-1", "thread-2", "thread-3"])


def test_with_redis_url_the_settings_choose_the_kept_client_backend() -> None:
    code = "from django.conf import settings; import json; print(json.dumps(settings.CACHES['default']))"
    out = subprocess.run(
        [sys.executable, "-c", f"import django; django.setup(); {code}"], cwd=ROOT, check=True, capture_output=True,
        text=True, env=subprocess_env(REDIS_URL="redis://127.0.0.1:6379/5", DJANGO_SETTINGS_MODULE="config.settings"),
    )  # fmt: skip
    chosen = json.loads(out.stdout.strip().splitlines()[-1])
    assert chosen == {
        "BACKEND": "kernel.ops.redis_cache.KeptClientRedisCache",
        "LOCATION": "redis://127.0.0.1:6379/5",
        "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 1},
    }


def test_one_client_serves_every_operation(redis_cache: KeptClientRedisCache) -> None:
    client = redis_cache._cache.get_client()
    redis_cache.set("a", {"total": 8580, "lines": ["SKU-CAFE-500G"]}, 60)
    assert redis_cache.get("a") == {"total": 8580, "lines": ["SKU-CAFE-500G"]}
    assert redis_cache._cache.get_client() is client
    assert redis_cache._cache.get_client(write=True) is client  # one server: its one pool, its one client
    # Django's own backend, the reason for ours: a new client for each call
    django_own = RedisCache(redis_cache._servers, {})
    assert django_own._cache.get_client() is not django_own._cache.get_client()


def test_it_behaves_as_djangos_backend(redis_cache: KeptClientRedisCache) -> None:
    assert redis_cache.add("b", "first", 60) is True
    assert redis_cache.add("b", "second", 60) is False
    assert redis_cache.get("b") == "first"
    redis_cache.set_many({"a": 1, "n": 10}, 60)
    assert redis_cache.get_many(["a", "n", "gone"]) == {"a": 1, "n": 10}
    assert redis_cache.incr("n", 5) == 15
    assert redis_cache.touch("n", 120) is True
    assert 60 < redis_cache._cache.get_client().ttl(redis_cache.make_key("n")) <= 120
    redis_cache.set("short", "x", 0)  # a non-positive timeout deletes, as in Django
    assert redis_cache.get("short", "absent") == "absent"
    assert redis_cache.delete("a") is True
    assert redis_cache.get("a") is None


def test_every_thread_has_a_backend_of_its_own_that_works(redis_cache: KeptClientRedisCache) -> None:
    # The backends themselves are kept, not their id(): a thread's backend is freed when its thread ends,
    # and a later thread's backend may then be allocated at the same address.
    seen: dict[int, tuple[Any, Any]] = {}

    def work(n: int) -> None:
        backend = caches["default"]
        for i in range(50):
            backend.set(f"thread-{n}", i, 60)
        seen[n] = (backend, backend.get(f"thread-{n}"))

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert sorted(value for _, value in seen.values()) == [49, 49, 49, 49]
    assert len({id(backend) for backend, _ in seen.values()} | {id(redis_cache)}) == 5


def test_requests_in_contexts_of_their_own_share_one_connection(redis_cache: KeptClientRedisCache) -> None:
    """Under ASGI each request has a context, so a backend instance, of its own: 40 such requests open no
    connection to Redis after the first (with Django's pool per backend instance: one each)."""
    redis_cache.set("a", "warm", 60)  # the process's pool has its connection

    def connections_received() -> int:
        return redis_cache._cache.get_client().info("stats")["total_connections_received"]

    def one_request(n: int) -> tuple[Any, Any]:
        backend = caches["default"]  # a new instance in a new context, as for a new ASGI request
        backend.set(f"thread-{n % 4}", n, 60)
        return backend, backend.get(f"thread-{n % 4}")

    before = connections_received()
    answers = [contextvars.Context().run(one_request, n) for n in range(40)]
    opened = connections_received() - before
    assert [value for _, value in answers] == list(range(40))
    assert len({id(backend) for backend, _ in answers}) == 40  # 40 backend instances…
    assert opened <= 1  # …one pool: at most the connection this count itself used
    first, second = RedisCache(redis_cache._servers, {}), RedisCache(redis_cache._servers, {})
    assert first._cache._get_connection_pool(False) is not second._cache._get_connection_pool(False)  # Django's


def test_requests_in_contexts_of_their_own_share_one_cache_client(redis_cache: KeptClientRedisCache) -> None:
    """Django builds its cache client per backend instance, so per ASGI request, and that constructor asks
    `importlib.metadata` for redis-py's version each time; ours is built once per process and settings."""

    def one_request(n: int) -> tuple[Any, Any, Any]:
        backend = caches["default"]
        backend.set(f"thread-{n % 4}", n, 60)
        return backend, backend._cache, backend.get(f"thread-{n % 4}")

    answers = [contextvars.Context().run(one_request, n) for n in range(40)]  # kept: no id is reused
    assert [value for _, _, value in answers] == list(range(40))
    assert len({id(backend) for backend, _, _ in answers}) == 40
    assert {id(client) for _, client, _ in answers} == {id(redis_cache._cache)}
    other = KeptClientRedisCache(redis_cache._servers, {"OPTIONS": {"socket_timeout": 5}})
    assert other._cache is not redis_cache._cache  # other options, another client
    assert other._cache.get_client().connection_pool.connection_kwargs["socket_timeout"] == 5
    first, second = RedisCache(redis_cache._servers, {}), RedisCache(redis_cache._servers, {})
    assert first._cache is not second._cache  # Django's


def test_served_by_the_asgi_entry_point_requests_share_one_backend(redis_cache: KeptClientRedisCache) -> None:
    """Issue 34: the ASGI server runs each request in a copy of its context in an executor thread, where Django
    built a backend instance per request (`import_string`, settings parsed: ~30 µs of a Get Order); the entry point
    (config/asgi.py) keeps one per process instead, shared by every thread and context, and it works from all."""
    from config.asgi import build_application

    build_application()
    try:
        shared = caches["default"]
        seen: list[tuple[Any, Any]] = []

        def one_request(n: int) -> None:
            backend = caches["default"]
            backend.set(f"thread-{n % 4}", n, 60)
            seen.append((backend, backend.get(f"thread-{n % 4}")))

        for n in range(8):  # requests in contexts of their own, in threads of their own
            thread = threading.Thread(target=contextvars.Context().run, args=(one_request, n))
            thread.start()
            thread.join(30)
        assert [value for _, value in seen] == list(range(8))
        assert {id(backend) for backend, _ in seen} == {id(shared)}
        assert isinstance(shared, KeptClientRedisCache) and shared._cache is redis_cache._cache
    finally:
        caches._connections = Local()  # Django's per-context instances again, as the settings fixture expects
