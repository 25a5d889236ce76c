"""Pix transaction ids (the prefixed public ids are kernel.ids')."""

import uuid


def new_txid() -> str:
    # uuid4().hex: 32 chars of [0-9a-f], inside the Bacen txid rule [a-zA-Z0-9]{26,35} (PIX.md §2.2).
    return uuid.uuid4().hex
