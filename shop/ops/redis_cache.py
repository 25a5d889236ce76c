"""Django's Redis cache backend, with its redis-py client built once instead of on every operation.

Django's `RedisCacheClient.get_client` wraps the (kept) connection pool in a new `redis.Redis` for each
get, set or delete, and a redis-py 7 client fills a dict of some 165 response callbacks when it is built.
A checkout flow reads the cache about 50 times (store settings, shipping table, policies, catalog
versions, the platform by API key), so with `REDIS_URL` set that construction alone was about 40 ms of
CPU per create → update → complete, more than every SQL statement of it. A `redis.Redis` is safe to
share between threads (each command takes a connection from the pool), and Django already keeps one
backend instance per thread. Everything else (serialization, timeouts, errors) is Django's own.
"""

from __future__ import annotations

from typing import Any

from django.core.cache.backends.redis import RedisCache, RedisCacheClient


class _KeptClient(RedisCacheClient):
    def __init__(self, servers: list[str], **options: Any) -> None:
        super().__init__(servers, **options)
        self._clients: dict[int, Any] = {}  # id of a pool (kept by Django for the process) → its redis.Redis

    def get_client(self, key: str | None = None, *, write: bool = False) -> Any:
        pool = self._get_connection_pool(write)  # a replica is still drawn per read, as Django does
        client = self._clients.get(id(pool))
        if client is None:
            client = self._clients[id(pool)] = self._client(connection_pool=pool)
        return client


class KeptClientRedisCache(RedisCache):
    """`django.core.cache.backends.redis.RedisCache` with the client kept (see the module docstring)."""

    def __init__(self, server: str | list[str], params: dict[str, Any]) -> None:
        super().__init__(server, params)
        self._class = _KeptClient
