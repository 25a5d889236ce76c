"""The storefront's card payment: the installment selector, the tokenized form's data, the pending page.

The card number, expiry and CVV inputs have no `name`: the browser never submits them. The tokenizer
script (`static/shop/card_tokenizer.js`: the sandbox stand-in in development and tests, Pagar.me's
tokens API with the public key in production) turns them into a token in the browser, and only
`card_token` and `installments` reach this server.
"""

from __future__ import annotations

import functools
from dataclasses import replace
from typing import Any

from django.conf import settings
from django.http import HttpResponse
from django.shortcuts import redirect
from django.utils.translation import get_language

from payments.installments import InstallmentPolicy, plans_for
from shop.checkout.charge import card_handler_id
from shop.checkout.pricing import card_offered, installment_policy, is_pix_instrument, plan_label
from shop.checkout.selectors import CheckoutView
from shop.checkout.types import InstrumentInput
from shop.models import Checkout

STOREFRONT_CARD_ID = "card_storefront"


def is_card(checkout: Checkout) -> bool:
    return (checkout.payment_instrument or {}).get("type") == "card"


def card_instrument(post: Any) -> InstrumentInput:
    """The card instrument of a "Pagar com cartão" submit (no credential yet: update does not take one)."""
    raw = str(post.get("installments", "1"))
    count = int(raw) if raw.isdigit() and 1 <= int(raw) <= 24 else 1
    return InstrumentInput(id=STOREFRONT_CARD_ID, handler_id=card_handler_id(), type="card", installments=count)


def with_token(instrument: InstrumentInput, post: Any) -> InstrumentInput | None:
    token = str(post.get("card_token", "")).strip()
    if not token or len(token) > 200:
        return None
    return replace(instrument, credential={"type": "PAYMENT_GATEWAY", "token": token})


def card_total(view: CheckoutView) -> int:
    """What the checkout costs by card before any installment interest: its total without the interest of a
    card already chosen, and without the Pix discount while Pix is the selected instrument (a buyer who
    tried Pix first and then pays by card pays the list price)."""
    pix_selected = is_pix_instrument(view.checkout.payment_instrument)
    pix_discount = sum(d.amount for d in view.discounts_applied if d.automatic) if pix_selected else 0
    return view.checkout.total_amount - view.card_interest + pix_discount


def card_context(view: CheckoutView) -> dict[str, Any]:
    """What `templates/shop/partials/card_checkout.html` shows: the plans for the card total without interest,
    and that total (the page sends it back, so a total that changed on submit is confirmed, not charged)."""
    if not card_offered():
        return {"enabled": False}
    instrument = view.checkout.payment_instrument or {}
    chosen = int(instrument.get("installments") or 1) if instrument.get("type") == "card" else 1
    base = card_total(view)
    plans = list(_plans(base, installment_policy(), get_language()))
    pagarme = "pagarme" in getattr(settings, "PAYMENTS_CARD_GATEWAY", "")
    return {
        "enabled": bool(plans),
        "plans": plans,
        "selected": chosen,
        "total": base,
        "tokenizer": "pagarme" if pagarme else "sandbox",
        "public_key": getattr(settings, "PAGARME_PUBLIC_KEY", "") if pagarme else "",
    }


@functools.lru_cache(maxsize=512)
def _plans(total: int, policy: InstallmentPolicy, language: str | None) -> tuple[tuple[int, str], ...]:
    """(count, label) of every plan for `total` under `policy`, labelled in `language` (the active one): kept per
    process, as the plans of a total and a policy never change (issue 34: a dozen plans per checkout view)."""
    return tuple((plan.count, plan_label(plan)) for plan in plans_for(total, policy))


def in_progress_redirect(checkout: Checkout) -> HttpResponse:
    """A checkout waiting for its payment: the Pix page, the boleto page, or the card's "em análise" page."""
    if (checkout.payment_instrument or {}).get("type") == "boleto":
        return redirect("checkout:boleto", checkout_id=checkout.public_id)
    if is_card(checkout):
        return redirect("checkout:card_pending", checkout_id=checkout.public_id)
    return redirect("checkout:pix", checkout_id=checkout.public_id)
