"""What a plan says to the buyer: "Assinar por R$ 89,90 por mês", in pt-BR through gettext."""

from __future__ import annotations

from django.utils.translation import gettext as _

from kernel.money import format_brl
from shop.models import SubscriptionPlan


def per_cycle(cycle: str) -> str:
    return _("por semana") if cycle == SubscriptionPlan.Cycle.WEEKLY else _("por mês")


def price_per_cycle(price: int, cycle: str) -> str:
    """A price and its period, e.g. "R$ 39,90 por mês" (a subscription's own price: the plan's may change later)."""
    return _("%(price)s %(per)s") % {"price": format_brl(price), "per": per_cycle(cycle)}


def plan_offer(plan: SubscriptionPlan) -> str:
    """The plan's price in words, e.g. "Assinar por R$ 89,90 por mês"."""
    return _("Assinar por %(price)s %(per)s") % {"price": format_brl(plan.price), "per": per_cycle(plan.cycle)}


def plan_terms(plan: SubscriptionPlan) -> list[str]:
    """The plan's conditions, one short sentence each (first-cycle price, cancelling, shipping)."""
    terms: list[str] = []
    if plan.first_cycle_discount:
        first = _("primeira semana") if plan.cycle == SubscriptionPlan.Cycle.WEEKLY else _("primeiro mês")
        terms.append(
            _("%(first)s por %(price)s") % {"first": first.capitalize(), "price": format_brl(plan.first_cycle_price)}
        )
    # No commitment is said: cancelling is free at any time (nothing enforces `min_cycles`), so none is promised.
    terms.append(_("Cancele quando quiser, sem multa"))
    terms.append(_("Entrega a cada ciclo") if plan.ships_each_cycle else _("Sem entrega"))
    return terms
