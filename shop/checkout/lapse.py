"""Time-driven Pix work that must not wait for Celery beat (a bare `make run` has none).

`checkout_pix_refresh` is the lazy expiry run when a buyer reads the checkout or Pix page: a charge past
its `expires_at` gets its last look at the PSP (paid at the last moment → settled, else removed there and
expired), and the checkout lapses back to `incomplete`, releasing what it held. The Pix page's "Gerar novo
Pix" (`checkout_pix_regenerate`) is in shop/checkout/services.py: it re-runs update and complete.
"""

from __future__ import annotations

from django.utils import timezone

from payments.selectors import pix_charge_latest_for_reference
from payments.services import pix_charge_expire
from shop.checkout.selectors import checkout_by_public_id
from shop.checkout.settle import checkout_pix_lapse
from shop.checkout.types import (
    STATUS_IN_PROGRESS,
)


def checkout_pix_refresh(*, checkout_id: str) -> bool:
    """Expire this checkout's Pix if it is past due and lapse the checkout; True when it lapsed.

    The PSP is called outside any transaction (payments.pix_charge_expire); the lapse is one locked
    transaction (checkout_pix_lapse), the same the beat sweep runs.
    """
    checkout = checkout_by_public_id(checkout_id)
    if checkout.status != STATUS_IN_PROGRESS:
        return False
    charge = pix_charge_latest_for_reference(checkout_id)
    if charge is not None and charge.status == "active":
        if charge.expires_at > timezone.now():
            return False
        if pix_charge_expire(txid=charge.txid) != "expired":
            return False  # paid at the last moment (now settling), or the PSP could not be asked
    return checkout_pix_lapse(checkout_id=checkout_id)
