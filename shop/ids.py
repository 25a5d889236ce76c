"""Prefixed random public identifiers (`checkout_…`, `li_…`, `prod_…`).

Database primary keys never leave the process; these are what URLs and BCP payloads carry.
"""

import secrets


def new_public_id(prefix: str, nbytes: int = 12) -> str:
    # token_hex keeps ids within [a-z0-9] so they are safe in URLs, JSONPath and BCP permalinks.
    return f"{prefix}_{secrets.token_hex(nbytes)}"
