"""What the storefront's paying submit must settle with the buyer before anything is charged.

That one submit also saves what changed on the page (another shipping option, the delivery method, a coupon,
Pix or card), so the total can differ from the one the buyer saw; and the NF-e needs the buyer's CPF.
Either is said on the page and nothing is charged until the buyer submits again.
"""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext as _

from kernel.money import format_brl
from shop.checkout.selectors import checkout_view
from shop.checkout.types import CheckoutMessage
from shop.checkout.web.card_page import card_total
from shop.checkout.web.forms import cpf_needed
from shop.models import Checkout


def before_charging(post: Any, action: str, checkout: Checkout) -> list[CheckoutMessage]:
    """The messages that hold a ready checkout's payment back; none: charge it."""
    changed = _total_changed(post, action, checkout)
    if changed:
        return changed
    if cpf_needed() and not checkout.buyer_tax_id:
        # The storefront's own rule (agents' platforms may not have it): a paid order without the buyer's CPF
        # gets no NF-e.
        return [
            CheckoutMessage(
                type="error",
                code="field_required",
                severity="recoverable",
                path="$.buyer.tax_id",
                content=_("Informe o CPF: ele vai na nota fiscal (NF-e) do pedido."),
            )
        ]
    return []


def _total_changed(post: Any, action: str, checkout: Checkout) -> list[CheckoutMessage]:
    """The buyer pays the total the page showed (it sends it back), or sees the new one first. A submit without
    the shown total (not from this page) is not held back."""
    field = {"pay_card": "shown_card_total", "pay_boleto": "shown_boleto_total"}.get(action, "shown_pix_total")
    shown = str(post.get(field, ""))
    if not shown.isdigit():
        return []
    view = checkout_view(checkout)
    now = card_total(view) if action in ("pay_card", "pay_boleto") else view.pix_total  # boleto: no Pix discount
    if int(shown) == now:
        return []
    content = _("O total mudou para %(total)s com o que você escolheu. Confira o resumo e confirme o pagamento.")
    return [
        CheckoutMessage(
            type="error", code="total_changed", severity="recoverable", content=content % {"total": format_brl(now)}
        )
    ]
