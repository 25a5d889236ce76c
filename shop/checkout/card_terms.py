"""The card instrument's parcelamento inside the engine: the chosen plan checked against the shop's policy.

The arithmetic and its rounding rules are `payments/installments.py`. Installments above the shop's
interest-free number add their interest as one `fee` total ("Juros do parcelamento (10x)"), so the
checkout total is what the card is charged and the installments sum to it exactly. The chosen plan is
kept on the stored instrument (`installments`, `installment_amount`, `first_installment`) and copied to
the order at placement.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.conf import settings
from django.utils.translation import gettext as _

from kernel.money import format_brl
from payments.card.service import card_gateway_configured
from payments.installments import Installment, InstallmentPolicy, best_interest_free, plan_for
from shop.checkout.types import CheckoutMessage, InstrumentInput
from shop.store.services import store_get

INSTALLMENTS_PATH = "$.payment.instruments[0].installments"


@dataclass(frozen=True)
class CardTerms:
    interest: int = 0
    fee: dict[str, object] | None = None
    messages: list[CheckoutMessage] = field(default_factory=list)
    instrument_fields: dict[str, int] = field(default_factory=dict)


def installment_policy() -> InstallmentPolicy:
    return store_get().installment_policy


def installment_plan(amount: int, installments: int) -> Installment | None:
    """The shop's plan of `installments` for `amount` centavos (None when not offered)."""
    return plan_for(amount, installments, installment_policy())


def card_terms(instrument: InstrumentInput | None, amount: int) -> CardTerms:
    if instrument is None or instrument.type != "card":
        return CardTerms()
    count = instrument.installments
    plan = installment_plan(amount, count) if amount > 0 else None
    if plan is None:
        if count == 1 or amount <= 0:
            return CardTerms(instrument_fields={"installments": 1})
        policy = installment_policy()
        usable = [n for n in range(1, policy.max_installments + 1) if plan_for(amount, n, policy)]
        problem = CheckoutMessage(
            type="error",
            code="field_invalid",
            content=_("Parcelamento indisponível para este valor: escolha de 1 a %(max)d parcelas.")
            % {"max": usable[-1] if usable else 1},
            severity="recoverable",
            path=INSTALLMENTS_PATH,
        )
        return CardTerms(messages=[problem], instrument_fields={"installments": count})
    fields = {
        "installments": plan.count,
        "installment_amount": plan.installment,
        "first_installment": plan.first,
        "interest": plan.interest,
    }
    if not plan.interest:
        return CardTerms(instrument_fields=fields)
    fee = {
        "type": "fee",
        "amount": plan.interest,
        "display_text": _("Juros do parcelamento (%(count)dx)") % {"count": plan.count},
    }
    return CardTerms(interest=plan.interest, fee=fee, instrument_fields=fields)


def plan_label(plan: Installment) -> str:
    if plan.count == 1:
        return _("1x de %(amount)s (à vista)") % {"amount": format_brl(plan.total)}
    if plan.interest:
        return _("%(count)dx de %(amount)s com juros (total %(total)s)") % {
            "count": plan.count,
            "amount": format_brl(plan.installment),
            "total": format_brl(plan.total),
        }
    if plan.has_remainder:
        return _("%(count)dx sem juros: 1ª de %(first)s e %(rest)dx de %(amount)s") % {
            "count": plan.count,
            "first": format_brl(plan.first),
            "rest": plan.count - 1,
            "amount": format_brl(plan.installment),
        }
    return _("%(count)dx de %(amount)s sem juros") % {"count": plan.count, "amount": format_brl(plan.installment)}


def card_offered() -> bool:
    return bool(getattr(settings, "BCP_CARD_ENABLED", True)) and card_gateway_configured()


def installment_offer(cents: object) -> str:
    try:
        amount = int(cents)  # type: ignore[call-overload]
    except (TypeError, ValueError):
        return ""
    if amount <= 0 or not card_offered():
        return ""
    plan = best_interest_free(amount, installment_policy())
    if plan is None:
        return ""
    # The checkout's own wording of the plan (plan_label): with a remainder it names the first and the
    # regular installment ("11x de R$ 5,50" alone for R$ 59,90 made 60,50 and read as hidden interest).
    return _("ou %(plan)s") % {"plan": plan_label(plan)}
