"""Prefixed random public ids for orders (`order_…`, `exp_…`, `evt_…`, `adj_…`).

A copy of the shop's helper: `orders` is a leaf app and must not import `shop`.
"""

import secrets


def new_public_id(prefix: str, nbytes: int = 12) -> str:
    # token_hex keeps ids within [a-z0-9]: safe in URLs, JSONPath and BCP payloads.
    return f"{prefix}_{secrets.token_hex(nbytes)}"


def new_permalink_token() -> str:
    # 24 random bytes = 192 bits (the architecture asks for at least 128), URL-safe.
    return secrets.token_urlsafe(24)
