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
above) cannot brute-force a key. The counters themselves are `shop/ops/ratelimit.py`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Literal

from django.conf import settings

from bcp_app.errors import ProtocolError
from shop.ops import ratelimit as counters
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


def enforce_auth_attempts(client_ip: str | None = None) -> None:
    """Refuse an API-key attempt from an IP that failed too often (`rate_limited`, 429 + Retry-After)."""
    ip = current_client_ip() or client_ip
    if not ip:
        return  # no network caller (MCP over stdio, in-process calls)
    seconds = counters.over(settings.BCP_RATE_LIMIT_AUTH_FAILURES, "bcp-auth-failures", ip)
    if seconds is not None:
        raise ProtocolError("rate_limited", MESSAGE.format(seconds=seconds), retry_after=seconds)


def count_auth_failure(client_ip: str | None = None) -> None:
    """One more failed API-key authentication from this IP."""
    ip = current_client_ip() or client_ip
    if ip:
        counters.hit(settings.BCP_RATE_LIMIT_AUTH_FAILURES, "bcp-auth-failures", ip)


def enforce_checkout_create(*, platform_id: str | None, client_ip: str | None) -> None:
    """The dedicated, lower budget for creating checkouts (each one may open a PSP charge)."""
    if platform_id is not None:
        enforce(op_class="checkout_create", caller=f"platform:{platform_id}", authenticated=True)
        return
    ip = current_client_ip() or client_ip
    enforce(op_class="checkout_create", caller=f"ip:{ip}" if ip else None, authenticated=False)
