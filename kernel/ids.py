"""Prefixed random public ids (`checkout_…`, `order_…`, `li_…`, `evt_…`) and buyer permalink tokens.

Database primary keys never leave the process; these are what URLs and BCP payloads carry.
"""

import secrets


def new_public_id(prefix: str, nbytes: int = 12) -> str:
    # token_hex keeps ids within [a-z0-9]: safe in URLs, JSONPath and BCP permalinks.
    return f"{prefix}_{secrets.token_hex(nbytes)}"


def new_permalink_token() -> str:
    # 24 random bytes = 192 bits (the architecture asks for at least 128), URL-safe.
    return secrets.token_urlsafe(24)
