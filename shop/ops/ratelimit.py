"""The counter store of every rate limit in the shop, on the `limits` library (fixed windows).

Counters live in Redis when `REDIS_URL` is set (shared by every web process), else in process memory
(`make run`). An unreachable store lets the call through (logged): rate limiting must never take the
shop down. The BCP transports (`bcp_app/ratelimit.py`) and the webhook endpoints
(`shop/ops/webhook_limits.py`) count here.
"""

from __future__ import annotations

import logging
import math
import time
from functools import lru_cache

from django.conf import settings
from limits import RateLimitItem, parse
from limits.storage import Storage, storage_from_string
from limits.strategies import FixedWindowRateLimiter

logger = logging.getLogger(__name__)


@lru_cache(maxsize=1)
def _limiter() -> tuple[Storage, FixedWindowRateLimiter]:
    url = getattr(settings, "REDIS_URL", "") or "memory://"
    # A Redis that answers nothing must not hold the call (it is let through, below) for the OS's TCP timeout.
    options = {"socket_connect_timeout": 1, "socket_timeout": 1} if url.startswith(("redis://", "rediss://")) else {}
    storage = storage_from_string(url, **options)
    return storage, FixedWindowRateLimiter(storage)


@lru_cache(maxsize=64)
def _item(text: str) -> RateLimitItem:
    return parse(text)


def reset() -> None:
    """Forget every counter and the storage (tests; a changed REDIS_URL)."""
    storage, _ = _limiter()
    storage.reset()
    _limiter.cache_clear()


def _seconds_left(limiter: FixedWindowRateLimiter, item: RateLimitItem, identifiers: tuple[str, ...]) -> int:
    reset_at, _ = limiter.get_window_stats(item, *identifiers)
    return max(1, math.ceil(reset_at - time.time()))


def hit(limit: str, *identifiers: str) -> int | None:
    """Count one call against `limit` ("60/minute"); seconds to wait when it is over, else None."""
    if not limit:
        return None
    item = _item(limit)
    try:
        _, limiter = _limiter()
        return None if limiter.hit(item, *identifiers) else _seconds_left(limiter, item, identifiers)
    except Exception:  # the counter store is down: let the call through rather than fail it
        logger.warning("rate limiter storage unavailable; %s let through", identifiers[0], exc_info=True)
        return None
