"""Who receives the Pix: merchant name and city for BR Codes and the handler config.

`payments` imports nothing of ours, so the shop names a provider by dotted path
(PIX_MERCHANT_PROVIDER, e.g. "shop.store.services.pix_merchant" returning the store settings' legal name
and city); without one, the PIX_MERCHANT_NAME / PIX_MERCHANT_CITY settings are used.
"""

from __future__ import annotations

from django.conf import settings
from django.utils.module_loading import import_string


def pix_merchant() -> tuple[str, str]:
    provider = getattr(settings, "PIX_MERCHANT_PROVIDER", "")
    if provider:
        name, city = import_string(provider)()
        return str(name), str(city)
    return settings.PIX_MERCHANT_NAME, settings.PIX_MERCHANT_CITY
