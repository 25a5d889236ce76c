"""Outbound calls to agent platforms (profiles, order webhooks) through the kernel's one HTTP client.

These URLs come from outside (a profile names them), so the SSRF guard is on: hosts resolving to
non-public addresses are refused unless the host, or its address, is in `settings.BCP_OUTBOUND_ALLOWLIST`
(host names or CIDRs, for development and tests); only allow-listed destinations may use plain http.
Deadline, body cap and no redirects: see `kernel.http`. The connection to a platform is kept for the thread's
next call to it (`keep`): a worker posts webhook after webhook to the same few platforms; the destination is
still checked on every call.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings

from kernel.http import DEFAULT_DEADLINE, DEFAULT_MAX_BYTES, CheckedTarget, OutboundError, Response
from kernel.http import check_url as _check_url
from kernel.http import request as _request

__all__ = ["DEFAULT_DEADLINE", "DEFAULT_MAX_BYTES", "OutboundError", "Response", "check_url", "get", "post"]
CONNECT_TIMEOUT = 3.0  # a platform that does not accept the connection is told sooner than the deadline


def _allow() -> list[str]:
    return list(getattr(settings, "BCP_OUTBOUND_ALLOWLIST", []) or [])


def check_url(url: str, *, timeout: float | None = None) -> CheckedTarget:
    return _check_url(url, timeout=timeout, guard=True, allow=_allow())


def _call(method: str, url: str, **kwargs: Any) -> Response:
    return _request(method, url, guard=True, allow=_allow(), connect_timeout=CONNECT_TIMEOUT, keep=True, **kwargs)


def get(url: str, *, max_bytes: int = DEFAULT_MAX_BYTES, deadline: float = DEFAULT_DEADLINE) -> Response:
    return _call("GET", url, headers={"Accept": "application/json"}, max_bytes=max_bytes, deadline=deadline)


def post(
    url: str,
    body: bytes,
    headers: dict[str, str],
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    deadline: float = DEFAULT_DEADLINE,
) -> Response:
    return _call("POST", url, content=body, headers=headers, max_bytes=max_bytes, deadline=deadline)
