"""Append-only payments timeline, written inside the caller's transaction."""

from __future__ import annotations

from typing import Any

from payments.models import PaymentEvent


def record_event(*, reference: str, kind: str, txid: str = "", **detail: Any) -> PaymentEvent:
    return PaymentEvent.objects.create(reference=reference, kind=kind, txid=txid, detail=detail)
