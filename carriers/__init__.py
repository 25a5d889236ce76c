"""The carrier boundary: freight quotes, labels and tracking from the carriers, behind one small protocol.

A leaf like payments/ and fiscal/: imports only the kernel (its outbound HTTP client). The shop calls it
outside any transaction. `configured()` gives the carrier the settings name (`CARRIER`: "" for none,
"melhorenvio" or "correios"); adapters: carriers/melhorenvio.py, carriers/correios.py.
"""

from __future__ import annotations

from django.conf import settings

from carriers.base import (
    Address,
    Carrier,
    CarrierRejected,
    CarrierUnavailable,
    LabelItem,
    LabelRequest,
    LabelState,
    Parcel,
    ServiceQuote,
    TrackingEvent,
    WebhookRejected,
    cubic_weight_g,
)
from carriers.correios import Correios
from carriers.melhorenvio import MelhorEnvio
from carriers.packing import Box, Item, pack

__all__ = [
    "Address",
    "Box",
    "Carrier",
    "CarrierRejected",
    "CarrierUnavailable",
    "Correios",
    "Item",
    "LabelItem",
    "LabelRequest",
    "LabelState",
    "MelhorEnvio",
    "Parcel",
    "ServiceQuote",
    "TrackingEvent",
    "WebhookRejected",
    "configured",
    "cubic_weight_g",
    "get_carrier",
    "pack",
]


def get_carrier(name: str) -> Carrier:
    if name == "melhorenvio":
        return MelhorEnvio.from_settings()
    if name == "correios":
        return Correios.from_settings()
    raise ValueError(f"unknown carrier {name!r}")


def configured() -> Carrier | None:
    """The carrier quotes and labels go to, or None (the table rates answer alone)."""
    name = getattr(settings, "CARRIER", "")
    return get_carrier(name) if name else None
