"""Read-mostly cache entries read once per request (or Celery task) instead of at every use.

The store settings, their policies and the shipping table are kept by each process behind a version token in
Django's cache (kernel/ops/kept.py), dropped when the merchant saves them, so every process sees a change at once.
But one checkout request asks for the store settings about six times (presenter, Pix merchant, policies, e-mail
context…): with `REDIS_URL` each ask is a Redis round trip and an unpickling, about a third of a millisecond of
CPU. Inside a scope (`RequestCacheMiddleware` for HTTP, each MCP tool call and A2A message, the Celery task signals
in `config/celery.py`) the first read is remembered for the rest of it; outside one (a shell, a test's own code)
every read goes to the cache as before. `forget` drops the entry from the scope too, so a request that saves the
store settings does not read its own stale copy afterwards. `prefetch` reads several entries a request is about to
need in one round trip (one MGET with Redis), remembering the absent ones as absent too, and can count a call on a
rate limit's counter in that same round trip (`counter=`); `count` counts alone. Counters are not remembered: each
call counts.

Only values that may be a request old belong here: never stock, never anything a decision is locked on.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar, Token
from typing import Any

from asgiref.sync import iscoroutinefunction, markcoroutinefunction
from django.core.cache import DEFAULT_CACHE_ALIAS, cache, caches
from django.http import HttpRequest, HttpResponse

_scope: ContextVar[dict[str, Any] | None] = ContextVar("shop_request_cache", default=None)
_ABSENT = object()  # prefetched and not in the cache


def get(key: str) -> Any | None:
    """`cache.get(key)`, read once per scope (None when absent)."""
    memo = _scope.get()
    if memo is not None and key in memo:
        value = memo[key]
        return None if value is _ABSENT else value
    value = cache.get(key)
    if memo is not None and value is not None:
        memo[key] = value
    return value


def prefetch(*keys: str, counter: tuple[str, int] | None = None) -> int | None:
    """Read `keys` for the rest of the scope in one cache round trip (nothing outside a scope); with
    `counter` (key, timeout), count one more on that counter in the same round trip and return its value
    (None when it could not be counted). A rate limit's counter rides here (kernel/ops/ratelimit.py)."""
    memo = _scope.get()
    wanted = [key for key in keys if key not in memo] if memo is not None else []
    if counter is None:
        if wanted:
            found = cache.get_many(wanted)  # an unreachable Redis answers {} (kernel/ops/redis_cache.py)
            _remember_read(memo, wanted, found)
        return None
    found, counted = _read_and_count(wanted, *counter)
    _remember_read(memo, wanted, found)
    return counted


def count(key: str, timeout: int) -> int | None:
    """One more on the counter `key` (created to live `timeout` seconds); None when it could not be counted."""
    return _read_and_count([], key, timeout)[1]


def _remember_read(memo: dict[str, Any] | None, wanted: list[str], found: dict[str, Any]) -> None:
    if memo is not None:
        for key in wanted:
            memo[key] = found.get(key, _ABSENT)


def _read_and_count(keys: list[str], counter: str, timeout: int) -> tuple[dict[str, Any], int | None]:
    # Redis: one round trip (kernel/ops/redis_cache.py); the backend itself, not through the `cache` proxy's
    # __getattr__ (a Python call less on every agent request)
    together = getattr(caches[DEFAULT_CACHE_ALIAS], "read_and_count", None)
    if together is not None:
        return together(keys, counter, timeout)
    found = cache.get_many(keys) if keys else {}
    cache.add(counter, 0, timeout)  # the window's first call creates its counter
    try:
        return found, cache.incr(counter)
    except ValueError:  # expired between add and incr: this call opens the next entry
        cache.add(counter, 1, timeout)
        return found, 1


def remember(key: str, value: Any) -> None:
    """What this scope has just written to the cache itself (e.g. `cache.incr`'s answer)."""
    memo = _scope.get()
    if memo is not None:
        memo[key] = value


def set(key: str, value: Any, timeout: int) -> None:
    """`cache.set`, and the value for the rest of the scope."""
    cache.set(key, value, timeout)
    memo = _scope.get()
    if memo is not None:
        memo[key] = value


def forget(*keys: str) -> None:
    """Drop `keys` from the cache and from the current scope."""
    cache.delete_many(list(keys))
    memo = _scope.get()
    if memo is not None:
        for key in keys:
            memo.pop(key, None)


@contextmanager
def request_scope(*, reuse: bool = False) -> Iterator[None]:
    """A scope of its own; with `reuse`, the caller's when there is one (a step of a larger request)."""
    if reuse and _scope.get() is not None:
        yield
        return
    token = _scope.set({})
    try:
        yield
    finally:
        _scope.reset(token)


_task_tokens: dict[str, Token[dict[str, Any] | None]] = {}


def task_scope_begin(task_id: str) -> None:
    """Celery's task_prerun: a scope for the task (an eager task inside a request gets its own too)."""
    _task_tokens[task_id] = _scope.set({})


def task_scope_end(task_id: str) -> None:
    """Celery's task_postrun: back to the scope (or none) the task was started in."""
    token = _task_tokens.pop(task_id, None)
    if token is not None:
        _scope.reset(token)


class RequestCacheMiddleware:
    """One scope per request; sync or async as the chain is, so it adds no thread hop to either."""

    sync_capable = True
    async_capable = True

    def __init__(self, get_response: Callable[[HttpRequest], Any]) -> None:
        self.get_response = get_response
        self.is_async = iscoroutinefunction(get_response)
        if self.is_async:
            markcoroutinefunction(self)

    def __call__(self, request: HttpRequest) -> Any:
        if self.is_async:
            return self.__acall__(request)
        with request_scope():
            return self.get_response(request)

    async def __acall__(self, request: HttpRequest) -> HttpResponse:
        with request_scope():  # the view's thread gets a copy of this context, with the same dict
            return await self.get_response(request)
