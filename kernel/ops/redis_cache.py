"""Django's Redis cache backend, with one redis-py client and connection pool per server for the process.

Django's `RedisCacheClient.get_client` wraps its connection pool in a new `redis.Redis` for each get, set
or delete, and a redis-py 7 client fills a dict of some 165 response callbacks when it is built. A
checkout flow reads the cache about 50 times (store settings, shipping table, policies, catalog versions,
the platform by API key), so with `REDIS_URL` set that construction alone was about 40 ms of CPU per
create → update → complete, more than every SQL statement of it.

The pool itself is Django's per backend instance, and Django keeps a backend instance per thread *and per
context*: under ASGI every request runs in a context of its own, so each request built a new pool and
opened a new TCP connection to Redis (300 GET orders, 300 connections: a millisecond of CPU each). It also
built a new `RedisCacheClient`, whose constructor asks `importlib.metadata` for redis-py's version (a
directory scan and an e-mail-header parse of its METADATA, about a third of a millisecond: a tenth of a GET
order's CPU). Here the `RedisCacheClient`, the `redis.Redis` and its pool live for the process, one per
server and options: a `redis.Redis` is safe to share between threads (each command takes a connection from
the pool), a pool reconnects after a fork, and the cache client keeps no state of its own beyond its
settings. Everything else (serialization, timeouts) is Django's own.

Redis unreachable is a cache miss here, not an error: everything cached is read-mostly data Postgres still
has (the store settings, the shipping table, catalog snapshots, profiles, platforms), and a counter that
cannot be read lets the call through as the rate limiter does. Django's backend raised instead, so a Redis
restart answered every storefront page and agent call with a 500. The outage is logged (at most every
`OUTAGE_LOG_SECONDS`) and `/readyz` still reports the cache down: its write is not read back.
"""

from __future__ import annotations

import logging
import os
import select
import threading
import time
from collections.abc import Callable
from functools import cached_property
from types import SimpleNamespace
from typing import Any

from django.core.cache import caches
from django.core.cache.backends.base import DEFAULT_TIMEOUT
from django.core.cache.backends.redis import RedisCache, RedisCacheClient
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

logger = logging.getLogger(__name__)
OUTAGE = (RedisConnectionError, RedisTimeoutError)
OUTAGE_LOG_SECONDS = 10.0
_last_outage_log = 0.0

# `count_and_read`: a rate-limit counter counted once, its expiry set if it has none, and entries read with it, as
# three plain commands sent together (one write, one round trip) on the thread's connection. Redis runs them one
# after the other; another client's commands may come between them, which a counter does not mind: every call
# still adds exactly one, and `EXPIRE … NX` (Redis ≥ 7.0) sets the window on a counter without one whichever call
# created it, so a counter whose EXPIRE was lost (the client gone between two commands) gets its window from the
# next call instead of living for ever. It replaced a Lua script run by EVALSHA (INCR, EXPIRE when 1, MGET), which
# cost Redis about 25 µs of CPU a call against about 14 µs for these three (single-threaded and shared by every
# process, so its time counts at 8 clients) and redis-py as much or more (issue 34). An older Redis refuses the NX
# option: the window is then set by a plain EXPIRE when the call created the counter (count 1).
_INCR, _EXPIRE, _MGET, _NX = b"INCR", b"EXPIRE", b"MGET", b"NX"


def _packed(*parts: bytes) -> bytes:
    """One RESP command (an array of bulk strings)."""
    # a list comprehension, inlined by Python 3.12+, not a generator resumed once per part; each part's bulk
    # string remembered (the same command, key count, keys and timeout on every agent request: formatting them
    # was some 13 k instructions a request, issue 34)
    bulks = _BULKS
    return b"".join([b"*%d\r\n" % len(parts), *[bulks.get(part) or _bulk(part) for part in parts]])


def _commands(counter: bytes, entries: list[bytes], timeout: int) -> bytes:
    """`count_and_read`'s three commands packed, remembered: the same counter and entries come on every agent
    request of a window, so packing them again was work for nothing. Bounded like `_BULKS`."""
    key: tuple[bytes | int, ...] = (counter, *entries, timeout)
    packed = _COMMANDS.get(key)
    if packed is None:
        if len(_COMMANDS) >= _BULKS_MAX:
            _COMMANDS.clear()
        packed = _COMMANDS[key] = b"".join(
            [
                _packed(_INCR, counter),
                _packed(_EXPIRE, counter, b"%d" % timeout, _NX),
                _packed(_MGET, *entries) if entries else b"",
            ]
        )
    return packed


def _reply(connection: Any) -> Any:
    """The next reply on `connection`, an error reply returned rather than raised (the replies after it are still
    to be read off the connection, or the next command would read them as its own)."""
    try:
        return connection.read_response()
    except ResponseError as exc:
        return exc


_COMMANDS: dict[tuple[bytes | int, ...], bytes] = {}
_BULKS: dict[bytes, bytes] = {}
_BULKS_MAX = 4096


def _bulk(part: bytes) -> bytes:
    if len(_BULKS) >= _BULKS_MAX:
        _BULKS.clear()
    bulk = _BULKS[part] = b"$%d\r\n%s\r\n" % (len(part), part)
    return bulk


# Bumped in a forked child (uvicorn's workers, Celery's prefork): its threads' kept connections are its
# parent's sockets, so it opens its own. A counter, not `os.getpid()` per request: glibc no longer caches the
# pid, so that was a syscall on every call.
_fork_generation = 0


def _forked() -> None:
    global _fork_generation
    _fork_generation += 1


os.register_at_fork(after_in_child=_forked)

# What makes a kept socket unusable before a command is sent on it: bytes waiting (nothing of ours is unread
# after a complete reply, so they can only be the server's goodbye) or the peer's close (POLLRDHUP: a FIN;
# POLLHUP and POLLERR are always reported).
_NOT_READY = select.POLLIN | getattr(select, "POLLRDHUP", 0)


class _ThreadConnection:
    """A connection to the primary per thread, for the one round trip every agent request makes
    (`read_and_count`). Through the `redis.Redis` client each command also took a connection from the pool
    and gave it back, ran the client's retry, event and metrics wrappers and redis-py's packer (some 170
    Python calls a command): `read_and_count` took ~105 µs of CPU on this machine, ~60 µs here (issue 34;
    about 3 % of a GET order). The connection is
    built by the pool's own connection class and settings (TLS, password, database, timeouts, retry policy),
    so it connects, authenticates and fails as the pool's do; a forked process builds its own."""

    def __init__(self, pool: Any) -> None:
        self._pool = pool
        self._local = threading.local()

    def get(self) -> Any:
        """This thread's connection, ready to send: as the pool checks one it hands out, a socket with
        something to read (Redis closed it: a restart, an idle timeout, CLIENT KILL) is opened again.

        The check is one `poll(0)` on a poller registered once per socket (issue 34): redis-py's `can_read`
        built and registered a new poller and walked its parser's checks, some 40 Python calls a request. A TLS
        socket may hold decrypted bytes above the kernel's, so it keeps redis-py's check."""
        kept = getattr(self._local, "kept", None)
        if kept is None or kept[0] != _fork_generation:
            connection = self._pool.connection_class(**self._pool.connection_kwargs)
            kept = self._local.kept = [_fork_generation, connection, None, None]
        connection = kept[1]
        sock = connection._sock
        if sock is None:  # redis-py's connect() is a no-op then, through its retry wrapper (half a dozen Python
            connection.connect()  # calls a request, issue 34)
            sock = connection._sock
        if sock is not kept[2]:
            kept[2], kept[3] = sock, self._poller(sock)
        try:
            ready = not (kept[3].poll(0) if kept[3] is not None else connection.can_read())
        except (*OUTAGE, OSError):
            ready = False
        if not ready:
            connection.disconnect()
            connection.connect()
            kept[2], kept[3] = connection._sock, self._poller(connection._sock)
        return connection

    @staticmethod
    def _poller(sock: Any) -> Any:
        """A poller for the plain socket `sock`; None for a TLS one (redis-py's `can_read` then)."""
        if hasattr(sock, "pending"):
            return None
        poller = select.poll()
        poller.register(sock, _NOT_READY)
        return poller


_MADE_MAX = 4096
_clients_lock = threading.Lock()
_cache_clients: dict[tuple[tuple[str, ...], str], _KeptClient] = {}  # (servers, options) → the process's client


class _KeptClient(RedisCacheClient):
    """One per process and settings (`KeptClientRedisCache._cache`), so its `redis.Redis` per server is too."""

    def __init__(self, servers: list[str], **options: Any) -> None:
        super().__init__(servers, **options)
        self._kept: dict[str, Any] = {}  # server URL → its redis.Redis and pool

    def _get_connection_pool(self, write: bool) -> Any:
        return self.get_client(write=write).connection_pool

    def count_and_read(self, keys: list[bytes], timeout: int) -> list[Any]:
        """[count, value or None, ...]: INCR of `keys[0]`, its window of `timeout` seconds set if it has none, and
        MGET of the others, on the primary over this thread's own connection (`_ThreadConnection`), in one round
        trip (see `_INCR`); redis-py's retry policy of the pool's connections."""
        connection = self._thread_connections.get()  # connects: an unreachable Redis raises OUTAGE here
        counter, entries = keys[0], keys[1:]
        command = _commands(counter, entries, timeout)

        def run() -> list[Any]:
            connection.send_packed_command([command], check_health=False)
            count = _reply(connection)
            expired = _reply(connection)
            values = _reply(connection) if entries else []
            if isinstance(count, ResponseError):
                raise count
            if isinstance(expired, ResponseError) and count == 1:  # Redis < 7.0: no NX; the call creating it sets it
                connection.send_packed_command([_packed(_EXPIRE, counter, b"%d" % timeout)], check_health=False)
                connection.read_response()
            if isinstance(values, ResponseError):
                raise values
            return [count, *values]

        return connection.retry.call_with_retry(run, lambda _error: connection.disconnect())

    @cached_property
    def _thread_connections(self) -> _ThreadConnection:
        return _ThreadConnection(self.get_client(write=True).connection_pool)

    def get_client(self, key: str | None = None, *, write: bool = False) -> Any:
        server = self._servers[self._get_connection_pool_index(write)]  # a replica is still drawn per read
        client = self._kept.get(server)
        if client is None:
            with _clients_lock:
                client = self._kept.get(server)
                if client is None:
                    pool = self._pool_class.from_url(server, **self._pool_options)
                    client = self._kept[server] = self._client(connection_pool=pool)
        return client


class KeptClientRedisCache(RedisCache):
    """`django.core.cache.backends.redis.RedisCache` with the client kept (see the module docstring)."""

    def __init__(self, server: str | list[str], params: dict[str, Any]) -> None:
        super().__init__(server, params)
        self._class = _KeptClient
        self._kept_as = (tuple(self._servers), repr(sorted(self._options.items())))
        self._made: dict[str, bytes] = {}  # key → its Redis key (`_made_key`)

    @cached_property
    def _cache(self) -> _KeptClient:  # Django's builds a client per instance; this one is the process's
        kept = self._kept_as
        client = _cache_clients.get(kept)
        if client is None:
            with _clients_lock:
                client = _cache_clients.get(kept)
                if client is None:
                    client = _cache_clients[kept] = _KeptClient(self._servers, **self._options)
        return client

    def read_and_count(self, keys: list[str], counter: str, timeout: int) -> tuple[dict[str, Any], int | None]:
        """`get_many(keys)` and one more call on the counter `counter` (created to live `timeout` seconds), in
        one round trip: `count_and_read` (INCR, EXPIRE NX and MGET sent together; see `_INCR`). The counter is a
        plain integer, which Django's serializer reads back as one. Unreachable: ({}, None), nothing counted. It
        goes to the primary (a counter is a write)."""
        made = self._made
        key_map = {made.get(key) or self._made_key(key): key for key in keys}
        counter_key = made.get(counter) or self._made_key(counter)

        def run() -> tuple[dict[str, Any], int | None]:
            count, *values = self._cache.count_and_read([counter_key, *key_map], timeout)
            loads = self._cache._serializer.loads
            found = {
                key_map[raw]: loads(value) for raw, value in zip(key_map, values, strict=True) if value is not None
            }
            return found, int(count)

        return _or_miss("read_and_count", run, ({}, None))

    def _made_key(self, key: str) -> bytes:
        """`key` as Redis stores it (prefix, version), encoded, remembered by this backend: the same few keys come
        on every agent request (version tokens, this minute's counter, this window's failure counts), and Django's
        `make_key` plus the memcached-compatibility warnings (which walk every character) cost some 2 µs a key
        (issue 34). Validated once, when first made. Bounded: a flood of keys empties it rather than growing it."""
        made = self.make_and_validate_key(key).encode()
        if len(self._made) >= _MADE_MAX:
            self._made.clear()
        self._made[key] = made
        return made

    # --- Redis unreachable: a miss, logged (see the module docstring) --------------------------------------

    def get(self, key: Any, default: Any = None, version: int | None = None) -> Any:
        return _or_miss("get", lambda: super(KeptClientRedisCache, self).get(key, default, version), default)

    def get_many(self, keys: Any, version: int | None = None) -> dict[str, Any]:
        return _or_miss("get_many", lambda: super(KeptClientRedisCache, self).get_many(keys, version), {})

    def has_key(self, key: Any, version: int | None = None) -> bool:
        return _or_miss("has_key", lambda: super(KeptClientRedisCache, self).has_key(key, version), False)

    def set(self, key: Any, value: Any, timeout: Any = DEFAULT_TIMEOUT, version: int | None = None) -> None:
        _or_miss("set", lambda: super(KeptClientRedisCache, self).set(key, value, timeout, version), None)

    def set_many(self, data: dict[str, Any], timeout: Any = DEFAULT_TIMEOUT, version: int | None = None) -> list[str]:
        # Django's contract: the keys that were not stored
        return _or_miss(
            "set_many", lambda: super(KeptClientRedisCache, self).set_many(data, timeout, version), list(data)
        )

    def add(self, key: Any, value: Any, timeout: Any = DEFAULT_TIMEOUT, version: int | None = None) -> bool:
        return _or_miss("add", lambda: super(KeptClientRedisCache, self).add(key, value, timeout, version), False)

    def touch(self, key: Any, timeout: Any = DEFAULT_TIMEOUT, version: int | None = None) -> bool:
        return _or_miss("touch", lambda: super(KeptClientRedisCache, self).touch(key, timeout, version), False)

    def delete(self, key: Any, version: int | None = None) -> bool:
        return _or_miss("delete", lambda: super(KeptClientRedisCache, self).delete(key, version), False)

    def delete_many(self, keys: Any, version: int | None = None) -> None:
        _or_miss("delete_many", lambda: super(KeptClientRedisCache, self).delete_many(keys, version), None)

    def incr(self, key: Any, delta: int = 1, version: int | None = None) -> int:
        try:
            return super().incr(key, delta, version)
        except OUTAGE as exc:
            _outage("incr", exc)
            # What Django raises for a counter that is not there, and what every caller already handles.
            raise ValueError(f"Key {key!r} not found (cache unreachable).") from exc


def share_backends_per_process() -> None:
    """Django's cache backends, one instance per process instead of one per context (issue 34).

    `caches` keeps its instances in an asgiref `Local`: per thread and per context. The ASGI server runs each request
    in a copy of its context in an executor thread (`kernel.threads.in_thread`), so every request that touched the
    cache built its backend again: `import_string` of the backend, the settings copied and parsed, and its client
    looked up (about 30 µs of a Get Order's CPU; the bare view, which never reads the cache, paid none of it). The
    backends this shop configures are safe to share between threads: this one keeps no per-request state (its
    client is the process's already) and `LocMemCache` locks its shared storage. Called by the ASGI entry point; a
    test that overrides `CACHES` gets Django's per-context instances back (`django.test.signals`)."""
    caches._connections = SimpleNamespace()


def _or_miss(operation: str, call: Callable[[], Any], miss: Any) -> Any:
    try:
        return call()
    except OUTAGE as exc:
        _outage(operation, exc)
        return miss


def _outage(operation: str, exc: Exception) -> None:
    global _last_outage_log
    now = time.monotonic()
    if now - _last_outage_log >= OUTAGE_LOG_SECONDS:
        _last_outage_log = now
        logger.warning("Redis cache unreachable (%s: %s); answered as a miss", operation, exc)
