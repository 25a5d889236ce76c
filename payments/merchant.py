"""Who receives the Pix: merchant name and city for BR Codes and the handler config.

`payments` imports nothing of ours, so the shop names a provider by dotted path
(PIX_MERCHANT_PROVIDER, e.g. "shop.store.services.pix_merchant" returning the store settings' legal name
and city); without one, the PIX_MERCHANT_NAME / PIX_MERCHANT_CITY settings are used.
"""

from __future__ import annotations

from django.conf import settings
from django.utils.module_loading import import_string

from payments.brcode import BRCodeError, merchant_text


def pix_merchant() -> tuple[str, str]:
    provider = getattr(settings, "PIX_MERCHANT_PROVIDER", "")
    if provider:
        name, city = import_string(provider)()
        return str(name), str(city)
    return settings.PIX_MERCHANT_NAME, settings.PIX_MERCHANT_CITY


def as_the_payer_sees_it(text: str, limit: int) -> str:
    """PIX.md §1.1: what the payer's bank app shows, i.e. the BR Code's field (ASCII, upper case, cut to the EMV
    limit), not the store settings' spelling ("São Paulo" → "SAO PAULO")."""
    try:
        return merchant_text(text, limit)
    except BRCodeError:  # nothing ASCII in it: the BR Code cannot be made either, the settings are wrong
        return text[:limit]


def pix_merchant_as_shown() -> tuple[str, str]:
    """(name, city) as the BR Code's fields 59 and 60 carry them: the handler config and the admin say these."""
    name, city = pix_merchant()
    return as_the_payer_sees_it(name, 25), as_the_payer_sees_it(city, 15)
