"""One rate limiter for every BCP transport (REST, MCP, A2A), counting in `kernel/ops/ratelimit.py`.

Counters are fixed windows in Django's cache: Redis when `REDIS_URL` is set (shared by every web process),
else process memory (`make run`). Each call is counted per caller and per operation class:

- the caller is a platform credential (a hash of the API key / bearer token) or, anonymously, the
  client IP (the proxy's `X-Forwarded-For` once uvicorn trusts it);
- the classes are `read` (catalog, get checkout/order), `write` (update, complete, cancel, A2A
  messages) and `checkout_create`, counted in `bcp_app.service.operations.create_checkout` itself so that a
  checkout created over any transport draws from the same, lower budget.

Limits come from `settings.BCP_RATE_LIMITS` (class -> (platform limit, anonymous limit), `limits`
notation such as "60/minute"; "" = unlimited). An unreachable Redis lets calls through (logged):
rate limiting must never take the shop down.

Failed API-key authentications are counted per client IP and per key prefix (the platform the key claims),
whatever the transport (`settings.BCP_RATE_LIMIT_AUTH_FAILURES` for each): once an IP is over it, every key
it presents is answered `rate_limited` until the window ends, so rotating random keys (each one a fresh
credential for the limits above) cannot brute-force a key; once a prefix is over it, every key with that
prefix is, so guessing one platform's secret from many addresses (a botnet, or X-Forwarded-For where a
proxy is trusted too widely) cannot either. Only someone who has seen a key knows its prefix. A call
authenticated by its HTTP signature presents no key and is never refused here. These are cache entries, so
`resolve_context` reads the failure counts and counts the call in the same round trip as the cached platform
and profile (`call_window`, `auth_failures_keys`): a GET order with Redis went from four round trips to one.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from functools import lru_cache
from typing import Literal

from bcp_app.protocol.errors import ProtocolError
from kernel.ops import ratelimit as counters
from kernel.ops import request_cache, setting
from kernel.ops.access_log import current_client_ip
from kernel.ops.ratelimit import Window

OperationClass = Literal["read", "write", "checkout_create"]
WRITE_OPERATIONS = frozenset(
    {
        "create_checkout",
        "create_subscription",
        "cancel_subscription",
        "update_checkout",
        "complete_checkout",
        "cancel_checkout",
        "create_cart",
        "update_cart",
        "cancel_cart",
        "cancel_order",  # br.dev.bcp.shopping.order_actions (issue 35)
        "request_return",
    }
)
MESSAGE = "Muitas chamadas; tente novamente em {seconds} s."


def operation_class(operation: str) -> OperationClass:
    return "write" if operation in WRITE_OPERATIONS else "read"


def caller_from_headers(headers: Mapping[str, str], client_ip: str | None) -> tuple[str | None, bool]:
    """(caller key, authenticated) from lower-case headers; (None, False) when nothing identifies it."""
    return caller_of(headers.get("authorization") or headers.get("x-api-key"), client_ip)


def caller_of(credential: str | None, client_ip: str | None) -> tuple[str | None, bool]:
    """`caller_from_headers` of the credential the headers carry (`Authorization`, else `X-API-Key`), for a transport
    that reads the two itself (REST: no mapping of them built per call)."""
    if credential:
        return _credential_caller(credential), True
    ip = current_client_ip() or client_ip
    return (f"ip:{ip}", False) if ip else (None, False)


@lru_cache(maxsize=512)  # a platform sends the same credential on every call: hashed once per process
def _credential_caller(credential: str) -> str:
    return "key:" + hashlib.sha256(credential.strip().encode()).hexdigest()[:32]


def call_window(*, op_class: OperationClass, caller: str | None, authenticated: bool) -> Window | None:
    """The window one call of `op_class` by `caller` counts in; None when nothing is counted."""
    if caller is None:
        return None  # no network caller (MCP over stdio, in-process calls): nothing to protect against
    platform_limit, anonymous_limit = setting.value("BCP_RATE_LIMITS").get(op_class, ("", ""))
    return counters.window(platform_limit if authenticated else anonymous_limit, "bcp", op_class, caller)


def refuse_if_over(window: Window | None, count: int | None) -> None:
    """Raise the §5.4 `rate_limited` protocol error (429 + Retry-After, JSON-RPC -32000) when `count`, the
    window's counter after this call, is over its limit."""
    seconds = window.retry_after(count) if window is not None else None
    if seconds is not None:
        raise ProtocolError("rate_limited", MESSAGE.format(seconds=seconds), retry_after=seconds)


def retry_after(*, op_class: OperationClass, caller: str | None, authenticated: bool) -> int | None:
    """Count one call; seconds to wait when it is over the limit, else None."""
    window = call_window(op_class=op_class, caller=caller, authenticated=authenticated)
    return window.retry_after(request_cache.count(window.key, window.timeout)) if window is not None else None


def enforce(*, op_class: OperationClass, caller: str | None, authenticated: bool) -> None:
    """Count one call and refuse it when over (`refuse_if_over`). `resolve_context` does both in identity's
    round trip instead, for the transports that resolve the caller right after (REST, A2A)."""
    window = call_window(op_class=op_class, caller=caller, authenticated=authenticated)
    if window is not None:
        refuse_if_over(window, request_cache.count(window.key, window.timeout))


def failure_windows(client_ip: str | None = None, key_prefix: str | None = None) -> list[Window]:
    """The windows of this API-key attempt's failure counts (`auth_failures_keys`), to hand to
    `enforce_auth_attempts` when the caller already made them (identity reads their keys first)."""
    return _failure_windows(current_client_ip() or client_ip, key_prefix)


def _failure_windows(ip: str | None, key_prefix: str | None) -> list[Window]:
    """The windows a failed API-key attempt counts in: its client IP's and its key prefix's (none when unlimited
    or without a network caller)."""
    limit = setting.value("BCP_RATE_LIMIT_AUTH_FAILURES")
    callers = [f"ip:{ip}" if ip else None, f"key:{key_prefix}" if ip and key_prefix else None]
    windows = [counters.window(limit, "bcp-auth-failures", caller) for caller in callers if caller]
    return [window for window in windows if window is not None]


def auth_failures_keys(client_ip: str | None = None, key_prefix: str | None = None) -> list[str]:
    """The cache keys `enforce_auth_attempts` reads for this attempt (to prefetch them)."""
    return [window.key for window in _failure_windows(current_client_ip() or client_ip, key_prefix)]


def enforce_auth_attempts(
    client_ip: str | None = None, key_prefix: str | None = None, windows: list[Window] | None = None
) -> None:
    """Refuse an API-key attempt from an IP, or for a key prefix, that failed too often (`rate_limited`, 429 +
    Retry-After). `windows`: theirs, when already made (`failure_windows`)."""
    if windows is None:
        windows = _failure_windows(current_client_ip() or client_ip, key_prefix)
    for window in windows:
        # Read, not counted: only a failure counts. An unreachable Redis reads as no failures: the attempt goes on.
        failures = request_cache.get(window.key) or 0
        if failures >= window.allowed:
            raise ProtocolError(
                "rate_limited", MESSAGE.format(seconds=window.seconds_left), retry_after=window.seconds_left
            )


def count_auth_failure(client_ip: str | None = None, key_prefix: str | None = None) -> None:
    """One more failed API-key authentication from this IP and for this key prefix."""
    for window in _failure_windows(current_client_ip() or client_ip, key_prefix):
        request_cache.remember(window.key, request_cache.count(window.key, window.timeout))


def enforce_checkout_create(*, platform_id: str | None, client_ip: str | None) -> None:
    """The dedicated, lower budget for creating checkouts (each one may open a PSP charge)."""
    if platform_id is not None:
        enforce(op_class="checkout_create", caller=f"platform:{platform_id}", authenticated=True)
        return
    ip = current_client_ip() or client_ip
    enforce(op_class="checkout_create", caller=f"ip:{ip}" if ip else None, authenticated=False)
