"""Read-mostly values each process keeps itself, behind a version token in the shared cache.

The store settings, their policies and the shipping table are read by every checkout request. Kept as pickles
in the shared cache, each request paid for the pickles' bytes on the wire and their unpickling (the shipping
table alone, model instances, about 166 µs; issue 34). Here the shared cache holds only a *token* per family of
values: a random integer, which Django's Redis serializer stores and reads back as a plain number (nothing to
unpickle), and which a request reads once (`request_cache`, prefetched in the request's one round trip by the
BCP context). Each process keeps the values it built under the token it read *before* building them:

- a save drops the token (`drop`, now and again after commit); the next reader starts a new random one, under
  which no process has anything, so every process builds its values again on its next request;
- a reader that built from rows read before a commit kept them under the token the commit then dropped, so
  its copy is never read again;
- a token starts at a random number, so a flushed cache (or an evicted key) can never give back a token an
  older copy was kept under;
- the token lives `seconds` in a shared cache (Redis), where a save reaches every process; in a cache that cannot
  hear other processes (local memory, no `REDIS_URL`) at most `LOCAL_SECONDS` (`timeout`), so a Celery worker
  sees the merchant's change of the store's fiscal data within a minute, not an hour.

What is kept is shared by the process's requests and threads: read it, never change it.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from typing import Any, TypeVar

from django.conf import settings
from django.core.cache import cache

from kernel.ops import request_cache

T = TypeVar("T")

LOCAL_SECONDS = 60  # how stale a process-local cache may be: it never hears another process's save


def timeout(seconds: int) -> int:
    """The life of an entry dropped on save: `seconds` where the cache is shared, at most `LOCAL_SECONDS` in a
    process-local one (no `REDIS_URL`), where only the TTL can end another process's copy."""
    return seconds if settings.REDIS_URL else min(seconds, LOCAL_SECONDS)


class KeptByToken:
    """A family of values (by name) kept by this process under the shared token `token_key`."""

    def __init__(self, token_key: str, seconds: int) -> None:
        self.token_key = token_key
        self.seconds = seconds
        self._kept: dict[str, tuple[int, Any]] = {}  # name → (token, value); a fixed handful of names

    def get(self, name: str, build: Callable[[], T]) -> T:
        """The value `name` kept under the current token, else `build()` kept under it (the token is read
        first, so a build from rows a save then changes is kept under a token that save drops)."""
        token = self.token()
        kept = self._kept.get(name)
        if kept is not None and kept[0] == token:
            return kept[1]
        value = build()
        self._kept[name] = (token, value)
        return value

    def token(self) -> int:
        """The current token, read once per request; started (at a random number) when there is none."""
        token = request_cache.get(self.token_key)
        if isinstance(token, int) and not isinstance(token, bool):
            return token
        token = secrets.randbits(52)
        if not cache.add(self.token_key, token, timeout(self.seconds)):  # another process started one first: it holds
            found = cache.get(self.token_key)
            if isinstance(found, int) and not isinstance(found, bool):
                token = found
            # else: gone again meanwhile, or not a token (an older release's entry): this request's own token,
            # shared with nobody, so what it builds is never read by another request
        request_cache.remember(self.token_key, token)
        return token

    def drop(self) -> None:
        """Every process builds its values again on its next read (here at once, in this request too)."""
        request_cache.forget(self.token_key)
