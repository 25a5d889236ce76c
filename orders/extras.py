"""Data other parts of the project attach to an order without `orders` importing them (e.g. the NF-e).

`settings.ORDERS_ORDER_EXTRAS`: {name: dotted path of a callable `(order) -> JSON-able value`}. The DRF
back-office API adds each as a member of the order; buyer e-mails get them as `extras` (the DANFE link).
`settings.ORDERS_DESTINATION_NOTES`: dotted paths of `(order, before) -> list[str]`, what staff should know of a
corrected delivery address (the freight to the new CEP). A failing provider is left out and logged: it must never
take the API, an e-mail or the admin page down.
"""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.utils.module_loading import import_string

from orders.models import Order

logger = logging.getLogger(__name__)


def order_extras(order: Order) -> dict[str, Any]:
    extras: dict[str, Any] = {}
    for name, path in getattr(settings, "ORDERS_ORDER_EXTRAS", {}).items():
        try:
            extras[name] = import_string(path)(order)
        except Exception:
            logger.exception("order extra %s failed for %s", name, order.public_id)
    return extras


def destination_notes(order: Order, before: dict[str, str]) -> list[str]:
    """What `ORDERS_DESTINATION_NOTES` say of `order.destination` (saved, or only typed: the correction's
    confirmation step passes an unsaved copy) against `before`. Outside any transaction: a carrier may be asked."""
    notes: list[str] = []
    for path in getattr(settings, "ORDERS_DESTINATION_NOTES", ()):
        try:
            notes.extend(import_string(path)(order, before))
        except Exception:  # a note must not hide the address, nor keep it from being saved
            logger.exception("destination note %s failed for %s", path, order.public_id)
    return notes
