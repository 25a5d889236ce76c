"""The counters of every rate limit in the shop: fixed windows kept in Django's cache.

Limits are written in the `limits` library's notation ("60/minute", "30/10minutes"), which parses them; the
counter of a window is one cache entry whose key names the window, so it expires with it. With `REDIS_URL`
the cache is Redis, shared by every web process, and counting is one command (a Lua INCR + EXPIRE,
kernel/ops/redis_cache.py); a request that reads cache entries anyway counts in the same command
(`request_cache.prefetch(..., counter=...)`: a BCP call's counter rides with its identity's reads, issue 11).
Without Redis the counters are per process (`make run`). An unreachable Redis counts nothing and lets the
call through: rate limiting must never take the shop down. The BCP transports (`bcp_app/service/ratelimit.py`) and
the webhook endpoints (`kernel/ops/webhook_limits.py`) count here, and so do the forms that e-mail a link to a typed
address (`attempt_allowed`).
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass
from functools import lru_cache

from django.core.cache import cache
from limits import parse

from kernel.ops import request_cache


@dataclass(frozen=True)
class Window:
    """The current window of one limit for one caller: its counter's cache key, how many calls it allows,
    how long the entry lives (the window plus a second) and the seconds until the next window."""

    key: str
    allowed: int
    timeout: int
    seconds_left: int

    def retry_after(self, count: int | None) -> int | None:
        """Seconds to wait when `count` (the counter after this call) is over the limit, else None; a count
        that could not be read (Redis unreachable) is never over."""
        return self.seconds_left if count is not None and count > self.allowed else None


@lru_cache(maxsize=64)
def _budget(limit: str) -> tuple[int, int]:
    item = parse(limit)
    return item.amount, item.get_expiry()  # (calls allowed, window seconds)


# The windows of this second, by limit and identifiers: a window is the same for every instant of one second (its
# number and seconds left change only when the second does: the windows last whole seconds), and an agent call
# asks for up to five of them (its own and its credential's failure windows, twice). Bounded; issue 34.
_WINDOWS_MAX = 4096
_windows: dict[tuple[str, tuple[str, ...]], tuple[int, Window]] = {}


def window(limit: str, *identifiers: str) -> Window | None:
    """The window `limit` counts in now for `identifiers` (e.g. "bcp", "read", caller); None when unlimited."""
    if not limit:
        return None
    second = int(time.time())
    kept = _windows.get((limit, identifiers))
    if kept is not None and kept[0] == second:
        return kept[1]
    made = _window(limit, identifiers, second)
    if len(_windows) >= _WINDOWS_MAX:
        _windows.clear()
    _windows[(limit, identifiers)] = (second, made)
    return made


def _window(limit: str, identifiers: tuple[str, ...], second: int) -> Window:
    """`window` at any instant of `second` (`seconds` is whole: the window's number is that of the second's start,
    and the seconds left, rounded up, are the same from the second's start to its end)."""
    allowed, seconds = _budget(limit)
    current = second // seconds
    who = hashlib.sha256(":".join(identifiers).encode()).hexdigest()[:32]  # any caller text, a short safe key
    return Window(f"rl:{seconds}:{current}:{who}", allowed, seconds + 1, max(1, (current + 1) * seconds - second))


def hit(limit: str, *identifiers: str) -> int | None:
    """Count one call against `limit`; seconds to wait when it is over, else None."""
    counted = window(limit, *identifiers)
    if counted is None:
        return None
    return counted.retry_after(request_cache.count(counted.key, counted.timeout))


def attempt_keys(prefix: str, *, client: str, email: str) -> list[str]:
    """The counters of a form that e-mails something to a typed address: one for the client address, one for the
    e-mail (trimmed, lower case), hashed into short safe keys under `prefix`."""
    return [prefix + "client:" + _digest(client), prefix + "email:" + _digest(email.strip().lower())]


def attempt_allowed(prefix: str, *, client: str, email: str, per_client: int, per_email: int, seconds: int) -> bool:
    """Count this attempt on both counters of `attempt_keys`, each living `seconds` from its first attempt; False
    once the client or the e-mail used up its attempts (the order lookup, the account's sign-in link)."""
    allowed = True
    for key, limit in zip(attempt_keys(prefix, client=client, email=email), (per_client, per_email), strict=True):
        cache.add(key, 0, seconds)
        try:
            count = cache.incr(key)
        except ValueError:  # expired between add and incr
            cache.set(key, 1, seconds)
            count = 1
        allowed = allowed and count <= limit
    return allowed


def _digest(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()[:32]
