"""Card parcelamento on pages: `{{ cents|installment_offer }}` → "ou 12x de R$ 583,25 sem juros", or with a
remainder "ou 11x sem juros: 1ª de R$ 5,50 e 10x de R$ 5,44" (never a figure whose product exceeds the price).

The plans come from the shop's policy (StoreSettings, cached) and `payments/installments.py`; the line
is empty when the card is off or no interest-free plan above 1x exists for the amount.
"""

from __future__ import annotations

from django import template
from django.conf import settings
from django.utils.translation import gettext as _

register = template.Library()


def card_offered() -> bool:
    from payments.card.service import card_gateway_configured

    return bool(getattr(settings, "BCP_CARD_ENABLED", True)) and card_gateway_configured()


def installment_offer(cents: object) -> str:
    from payments.installments import best_interest_free
    from shop.checkout.card_terms import installment_policy
    from shop.checkout.web.card_page import plan_label  # it imports card_offered from here

    try:
        amount = int(cents)  # type: ignore[call-overload]
    except (TypeError, ValueError):
        return ""
    if amount <= 0 or not card_offered():
        return ""
    plan = best_interest_free(amount, installment_policy())
    if plan is None:
        return ""
    # The checkout's own wording of the plan (card_page.plan_label): with a remainder it names the first and the
    # regular installment ("11x de R$ 5,50" alone for R$ 59,90 made 60,50 and read as hidden interest).
    return _("ou %(plan)s") % {"plan": plan_label(plan)}


register.filter("installment_offer", installment_offer)
