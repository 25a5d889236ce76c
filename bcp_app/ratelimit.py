"""One rate limiter for every BCP transport (REST, MCP, A2A), built on the `limits` library.

Counters live in Redis when `REDIS_URL` is set (shared by every web process), else in process
memory (`make run`; `shop/ops/ratelimit.py`). Each call is counted per caller and per operation class:

- the caller is a platform credential (a hash of the API key / bearer token) or, anonymously, the
  client IP (the proxy's `X-Forwarded-For` once uvicorn trusts it);
- the classes are `read` (catalog, get checkout/order), `write` (update, complete, cancel, A2A
  messages) and `checkout_create`, counted in `bcp_app.operations.create_checkout` itself so that a
  checkout created over any transport draws from the same, lower budget.

Limits come from `settings.BCP_RATE_LIMITS` (class -> (platform limit, anonymous limit), `limits`
notation such as "60/minute"; "" = unlimited). An unreachable Redis lets calls through (logged):
rate limiting must never take the shop down.

Failed API-key authentications are counted per client IP whatever the transport
(`settings.BCP_RATE_LIMIT_AUTH_FAILURES`): once an IP is over it, every key it presents is answered
`rate_limited` until the window ends, so rotating random keys (each one a fresh credential for the limits
above) cannot brute-force a key. The call counters are `shop/ops/ratelimit.py`; the failure counter is a
Django cache entry per IP and clock-aligned window (Redis with `REDIS_URL`, like the limiter), so that
`resolve_context` reads it in the same round trip as the cached platform and profile (`auth_failures_key`):
every request presenting a key checks it, and a GET order with Redis went from four round trips to two.
"""

from __future__ import annotations

import hashlib
import math
import time
from collections.abc import Mapping
from functools import lru_cache
from typing import Literal

from django.conf import settings
from django.core.cache import cache
from limits import parse

from bcp_app.errors import ProtocolError
from shop.ops import ratelimit as counters
from shop.ops import request_cache
from shop.ops.access_log import current_client_ip

OperationClass = Literal["read", "write", "checkout_create"]
WRITE_OPERATIONS = frozenset({"create_checkout", "update_checkout", "complete_checkout", "cancel_checkout",
                              "create_cart", "update_cart", "cancel_cart"})
MESSAGE = "Muitas chamadas; tente novamente em {seconds} s."
reset = counters.reset  # tests: every counter forgotten


def operation_class(operation: str) -> OperationClass:
    return "write" if operation in WRITE_OPERATIONS else "read"


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
    return counters.hit(text, "bcp", op_class, caller)


def enforce(*, op_class: OperationClass, caller: str | None, authenticated: bool) -> None:
    """Raise the §5.4 `rate_limited` protocol error (429 + Retry-After, JSON-RPC -32000) when over."""
    seconds = retry_after(op_class=op_class, caller=caller, authenticated=authenticated)
    if seconds is not None:
        raise ProtocolError("rate_limited", MESSAGE.format(seconds=seconds), retry_after=seconds)


@lru_cache(maxsize=8)
def _failure_budget(text: str) -> tuple[int, int]:
    item = parse(text)
    return item.amount, item.get_expiry()  # (failures allowed, window seconds)


def _failure_window(ip: str) -> tuple[str, int, int] | None:
    """(cache key, failures allowed, seconds left) of `ip`'s current window; None when unlimited."""
    if not settings.BCP_RATE_LIMIT_AUTH_FAILURES:
        return None
    amount, seconds = _failure_budget(settings.BCP_RATE_LIMIT_AUTH_FAILURES)
    now = time.time()
    window = int(now // seconds)
    ip_hash = hashlib.sha256(ip.encode()).hexdigest()[:24]
    return f"bcp:auth-failures:{seconds}:{window}:{ip_hash}", amount, max(1, math.ceil((window + 1) * seconds - now))


def auth_failures_key(client_ip: str | None = None) -> str | None:
    """The cache key `enforce_auth_attempts` reads for this caller (to prefetch it), None when it reads none."""
    ip = current_client_ip() or client_ip
    window = _failure_window(ip) if ip else None
    return window[0] if window else None


def enforce_auth_attempts(client_ip: str | None = None) -> None:
    """Refuse an API-key attempt from an IP that failed too often (`rate_limited`, 429 + Retry-After)."""
    ip = current_client_ip() or client_ip
    window = _failure_window(ip) if ip else None  # no IP: no network caller (MCP over stdio, in-process)
    if window is None:
        return
    key, amount, seconds = window
    # An unreachable Redis reads as no failures (shop/ops/redis_cache.py): the attempt goes through.
    if (request_cache.get(key) or 0) >= amount:
        raise ProtocolError("rate_limited", MESSAGE.format(seconds=seconds), retry_after=seconds)


def count_auth_failure(client_ip: str | None = None) -> None:
    """One more failed API-key authentication from this IP."""
    ip = current_client_ip() or client_ip
    window = _failure_window(ip) if ip else None
    if window is None:
        return
    key, _, seconds = window
    try:
        cache.add(key, 0, seconds + 1)  # the window's first failure; the entry outlives the window by a second
        request_cache.remember(key, cache.incr(key))
    except ValueError:  # expired between add and incr (or Redis unreachable): this failure opens the next entry
        cache.add(key, 1, seconds + 1)


def enforce_checkout_create(*, platform_id: str | None, client_ip: str | None) -> None:
    """The dedicated, lower budget for creating checkouts (each one may open a PSP charge)."""
    if platform_id is not None:
        enforce(op_class="checkout_create", caller=f"platform:{platform_id}", authenticated=True)
        return
    ip = current_client_ip() or client_ip
    enforce(op_class="checkout_create", caller=f"ip:{ip}" if ip else None, authenticated=False)
