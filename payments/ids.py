"""Prefixed random public identifiers for payments (leaf app: a copy of the shop's 3-line helper)."""

import secrets
import uuid


def new_public_id(prefix: str, nbytes: int = 12) -> str:
    return f"{prefix}_{secrets.token_hex(nbytes)}"


def new_txid() -> str:
    # uuid4().hex: 32 chars of [0-9a-f], inside the Bacen txid rule [a-zA-Z0-9]{26,35} (PIX.md §2.2).
    return uuid.uuid4().hex
