"""Time-driven Pix work that must not wait for Celery beat (a bare `make run` has none).

`checkout_pix_refresh` is the lazy expiry run when a buyer reads the checkout or Pix page: a charge past
its `expires_at` gets its last look at the PSP (paid at the last moment → settled, else removed there and
expired), and the checkout lapses back to `incomplete`, releasing what it held. `checkout_pix_regenerate`
is the Pix page's "Gerar novo Pix": the same checkout is re-evaluated (stock and prices as they are now)
and, when still ready, completed again with a fresh charge.
"""

from __future__ import annotations

from dataclasses import replace

from django.utils import timezone

from shop.checkout.complete import checkout_complete
from shop.checkout.core import input_from_checkout, stored_messages
from shop.checkout.selectors import checkout_by_public_id
from shop.checkout.settle import checkout_pix_lapse
from shop.checkout.types import (
    STATUS_IN_PROGRESS,
    STATUS_READY,
    CheckoutResult,
    CompleteInput,
    InstrumentInput,
    PaymentInput,
)


def checkout_pix_refresh(*, checkout_id: str) -> bool:
    """Expire this checkout's Pix if it is past due and lapse the checkout; True when it lapsed.

    The PSP is called outside any transaction (payments.pix_charge_expire); the lapse is one locked
    transaction (checkout_pix_lapse), the same the beat sweep runs.
    """
    from payments.selectors import pix_charge_latest_for_reference
    from payments.services import pix_charge_expire

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


def checkout_pix_regenerate(
    *, checkout_id: str, instrument: InstrumentInput, language: str | None = None
) -> CheckoutResult:
    """A new Pix charge for the same checkout after its last one expired, re-validating stock and prices.

    The new charge is made only when the re-evaluated total is the one the buyer already agreed to pay
    (the expired charge's amount). A price change or a quantity cut to the stock left stops here, with
    the checkout updated: the checkout page shows the new total and why, and the buyer pays from there.
    """
    from payments.selectors import pix_charge_latest_for_reference
    from shop.checkout.services import checkout_update

    checkout_pix_refresh(checkout_id=checkout_id)
    checkout = checkout_by_public_id(checkout_id)
    if checkout.status == STATUS_IN_PROGRESS:
        return CheckoutResult(checkout=checkout, messages=stored_messages(checkout))  # still payable: keep it
    previous = pix_charge_latest_for_reference(checkout_id)
    payment = PaymentInput(instruments=(instrument,))
    data = replace(input_from_checkout(checkout, list(checkout.lines.all())), payment=payment)
    result = checkout_update(checkout_id=checkout_id, data=data, language=language)
    if result.checkout.status != STATUS_READY:
        return result  # e.g. out of stock now: the checkout page shows why
    if previous is None or result.checkout.total_amount != previous.amount:
        return result  # the buyer confirms the new total on the checkout page
    return checkout_complete(checkout_id=checkout_id, data=CompleteInput(payment=payment))
