"""Reads of subscription plans, each with a fixed number of queries."""

from __future__ import annotations

from collections.abc import Iterable

from shop.models import SubscriptionPlan


def subscription_plans_by_variant(variant_ids: Iterable[int]) -> dict[int, list[SubscriptionPlan]]:
    """Active plans of these variants (weekly before monthly), by variant primary key; one query."""
    plans: dict[int, list[SubscriptionPlan]] = {}
    wanted = set(variant_ids)
    if not wanted:
        return plans
    for plan in SubscriptionPlan.objects.filter(variant_id__in=wanted, active=True).order_by("variant_id", "-cycle"):
        plans.setdefault(plan.variant_id, []).append(plan)
    return plans
