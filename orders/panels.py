"""Extra sections other parts of the project add to the order pages, without `orders` importing them.

`settings.ORDERS_ADMIN_PANELS` / `ORDERS_PERMALINK_PANELS`: dotted paths of callables
`(request, order) -> str` returning safe HTML (e.g. the shop's NF-e box), shown below the order's details;
`ORDERS_ADMIN_LEAD_PANELS` / `ORDERS_PERMALINK_LEAD_PANELS`: the same, shown at the top (what the order is part
of, e.g. "Ciclo 3 da assinatura …"). A failing panel is left out
and logged: it must never take the order page down. An admin panel is rendered INSIDE the admin's order
`<form>`: it must not open a form of its own (the browser drops nested forms); a button posts with
`formaction`/`formmethod="post"`, which sends the order form's CSRF token to the panel's URL.
"""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.http import HttpRequest
from django.utils.module_loading import import_string

from orders.models import Order

logger = logging.getLogger(__name__)


def render_panels(setting: str, request: HttpRequest, order: Order) -> list[Any]:
    panels = []
    for path in getattr(settings, setting, ()):
        try:
            panels.append(import_string(path)(request, order))
        except Exception:
            logger.exception("order panel %s failed for %s", path, order.public_id)
    return [panel for panel in panels if panel]
