"""Reads of the store settings row that the cached `store_get()` does not carry."""

from __future__ import annotations

from datetime import datetime

from shop.models.store import STORE_ROW_ID, StoreSettings


def store_updated_at() -> datetime | None:
    """When the store settings (and so the policy texts) last changed; None before they were ever saved."""
    return StoreSettings.objects.filter(pk=STORE_ROW_ID).values_list("updated_at", flat=True).first()
