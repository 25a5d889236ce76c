"""The CSRF token of a storefront page, masked as Django masks it, with one call for the random mask (issue 34).

Django's `get_token()` masks the cookie's secret with a fresh 32-character mask on every page (the BREACH defence),
drawn by `get_random_string`: 32 `secrets.choice` calls, each its own read of the system's random source. That was
the largest single cost left on the cart page (about 5 % of its instructions, and as much again in system calls).
Here the mask is drawn from one `secrets.token_bytes` read instead, uniformly over the same 62 characters
(rejection sampling: a byte counts only below 248 = 4 × 62), and the token is built exactly as Django builds it:
the mask, then each secret character shifted by its mask character. Django's middleware checks it as its own.

Only the usual case is ours: the request came with a valid CSRF cookie (`CSRF_COOKIE` set by the middleware). A
first visit, without one, goes through Django's `get_token`, which makes the secret and the cookie.
"""

from __future__ import annotations

import secrets

from django.http import HttpRequest
from django.middleware.csrf import CSRF_ALLOWED_CHARS, CSRF_SECRET_LENGTH, get_token
from django.utils.functional import SimpleLazyObject

_CHARS = CSRF_ALLOWED_CHARS
_INDEX = {char: index for index, char in enumerate(_CHARS)}
_BASE = len(_CHARS)
_LIMIT = 256 - 256 % _BASE  # bytes from here up would make the first characters likelier


def _mask() -> list[int]:
    picked: list[int] = []
    while len(picked) < CSRF_SECRET_LENGTH:
        picked += [byte % _BASE for byte in secrets.token_bytes(CSRF_SECRET_LENGTH + 8) if byte < _LIMIT]
    return picked[:CSRF_SECRET_LENGTH]


def csrf_token(request: HttpRequest) -> str:
    """What `django.middleware.csrf.get_token(request)` returns and does (the cookie renewed on the answer)."""
    secret = request.META.get("CSRF_COOKIE")
    if not isinstance(secret, str) or len(secret) != CSRF_SECRET_LENGTH or not all(c in _INDEX for c in secret):
        return str(get_token(request))
    request.META["CSRF_COOKIE_NEEDS_UPDATE"] = True  # as get_token: the cookie is sent again, its expiry renewed
    mask = _mask()
    cipher = [_CHARS[(_INDEX[char] + m) % _BASE] for char, m in zip(secret, mask, strict=True)]
    return "".join([_CHARS[m] for m in mask] + cipher)


def lazy_csrf_token(request: HttpRequest) -> SimpleLazyObject:
    """The page context's `csrf_token`, as Django's `csrf` context processor gives it (made when first used)."""
    return SimpleLazyObject(lambda: csrf_token(request))
