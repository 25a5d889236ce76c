"""Append-only payments timeline, written inside the caller's transaction."""

from __future__ import annotations

from typing import Any

from kernel.rows import new_row
from payments.models import PaymentEvent


def new_event(*, reference: str, kind: str, txid: str = "", **detail: Any) -> PaymentEvent:
    """An event not written yet: for a statement that writes it with its row (`kernel.rows`)."""
    return new_row(PaymentEvent, reference=reference, kind=kind, txid=txid, detail=detail)


def record_event(*, reference: str, kind: str, txid: str = "", **detail: Any) -> PaymentEvent:
    event = new_event(reference=reference, kind=kind, txid=txid, **detail)
    event.save()
    return event
