"""Card parcelamento on pages: `{{ cents|installment_offer }}` → "ou 12x de R$ 583,25 sem juros", or with a
remainder "ou 11x sem juros: 1ª de R$ 5,50 e 10x de R$ 5,44" (never a figure whose product exceeds the price).

The plans come from the shop's policy (StoreSettings, cached) and `payments/installments.py`; the line
is empty when the card is off or no interest-free plan above 1x exists for the amount.
"""

from __future__ import annotations

from django import template

from shop.checkout.pricing import installment_offer

register = template.Library()


register.filter("installment_offer", installment_offer)
