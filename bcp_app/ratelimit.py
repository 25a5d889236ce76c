"""One rate limiter for every BCP transport (REST, MCP, A2A), built on the `limits` library.

Counters live in Redis when `REDIS_URL` is set (shared by every web process), else in process
memory (`make run`). Each call is counted per caller and per operation class:

- the caller is a platform credential (a hash of the API key / bearer token) or, anonymously, the
  client IP (the proxy's `X-Forwarded-For` once uvicorn trusts it);
- the classes are `read` (catalog, get checkout/order), `write` (update, complete, cancel, A2A
  messages) and `checkout_create`, counted in `bcp_app.operations.create_checkout` itself so that a
  checkout created over any transport draws from the same, lower budget.

Limits come from `settings.BCP_RATE_LIMITS` (class -> (platform limit, anonymous limit), `limits`
notation such as "60/minute"; "" = unlimited). An unreachable Redis lets calls through (logged):
rate limiting must never take the shop down.
"""

from __future__ import annotations

import hashlib
import logging
import math
import time
from collections.abc import Mapping
from functools import lru_cache
from typing import Literal

from django.conf import settings
from limits import RateLimitItem, parse
from limits.storage import Storage, storage_from_string
from limits.strategies import FixedWindowRateLimiter

from bcp_app.errors import ProtocolError
from shop.ops.access_log import current_client_ip

logger = logging.getLogger(__name__)

OperationClass = Literal["read", "write", "checkout_create"]
WRITE_OPERATIONS = frozenset({"create_checkout", "update_checkout", "complete_checkout", "cancel_checkout",
                              "create_cart", "update_cart", "cancel_cart"})
MESSAGE = "Muitas chamadas; tente novamente em {seconds} s."


def operation_class(operation: str) -> OperationClass:
    return "write" if operation in WRITE_OPERATIONS else "read"


@lru_cache(maxsize=1)
def _limiter() -> tuple[Storage, FixedWindowRateLimiter]:
    url = getattr(settings, "REDIS_URL", "") or "memory://"
    storage = storage_from_string(url)
    return storage, FixedWindowRateLimiter(storage)


@lru_cache(maxsize=64)
def _item(text: str) -> RateLimitItem:
    return parse(text)


def reset() -> None:
    """Forget every counter and the storage (tests; a changed REDIS_URL)."""
    storage, _ = _limiter()
    storage.reset()
    _limiter.cache_clear()


def caller_from_headers(headers: Mapping[str, str], client_ip: str | None) -> tuple[str | None, bool]:
    """(caller key, authenticated) from lower-case headers; (None, False) when nothing identifies it."""
    credential = headers.get("authorization") or headers.get("x-api-key")
    if credential:
        return "key:" + hashlib.sha256(credential.strip().encode()).hexdigest()[:32], True
    ip = current_client_ip() or client_ip
    return (f"ip:{ip}", False) if ip else (None, False)


def retry_after(*, op_class: OperationClass, caller: str | None, authenticated: bool) -> int | None:
    """Count one call; seconds to wait when it is over the limit, else None."""
    if caller is None:
        return None  # no network caller (MCP over stdio, in-process calls): nothing to protect against
    platform_limit, anonymous_limit = settings.BCP_RATE_LIMITS.get(op_class, ("", ""))
    text = platform_limit if authenticated else anonymous_limit
    if not text:
        return None
    item = _item(text)
    try:
        _, limiter = _limiter()
        if limiter.hit(item, "bcp", op_class, caller):
            return None
        reset_at, _ = limiter.get_window_stats(item, "bcp", op_class, caller)
    except Exception:  # the counter store is down: let the call through rather than fail it
        logger.warning("rate limiter storage unavailable; %s call let through", op_class, exc_info=True)
        return None
    return max(1, math.ceil(reset_at - time.time()))


def enforce(*, op_class: OperationClass, caller: str | None, authenticated: bool) -> None:
    """Raise the §5.4 `rate_limited` protocol error (429 + Retry-After, JSON-RPC -32000) when over."""
    seconds = retry_after(op_class=op_class, caller=caller, authenticated=authenticated)
    if seconds is not None:
        raise ProtocolError("rate_limited", MESSAGE.format(seconds=seconds), retry_after=seconds)


def enforce_checkout_create(*, platform_id: str | None, client_ip: str | None) -> None:
    """The dedicated, lower budget for creating checkouts (each one may open a PSP charge)."""
    if platform_id is not None:
        enforce(op_class="checkout_create", caller=f"platform:{platform_id}", authenticated=True)
        return
    ip = current_client_ip() or client_ip
    enforce(op_class="checkout_create", caller=f"ip:{ip}" if ip else None, authenticated=False)
