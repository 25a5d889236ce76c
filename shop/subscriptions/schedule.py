"""When a subscription's cycles fall due and what each one costs: the dates the cycles are planned with
(`cycles.cycle_plan`) and the ones the subscriber is told (its page, its e-mails), from one set of rules. No
writes."""

from __future__ import annotations

import calendar
from datetime import date, timedelta

from django.utils import timezone

from payments.psp.recurring import CHARGE_LEAD_DAYS_MIN
from shop.models import Subscription, SubscriptionCycle, SubscriptionPlan


def _add_months(day: date, months: int) -> date:
    month = day.month - 1 + months
    year, month = day.year + month // 12, month % 12 + 1
    return date(year, month, min(day.day, calendar.monthrange(year, month)[1]))


def due_date_of(subscription: Subscription, number: int) -> date:
    """The due date of cycle `number` (1 = `starts_on`), weekly or monthly from the first."""
    if subscription.cycle == SubscriptionPlan.Cycle.WEEKLY:
        return subscription.starts_on + timedelta(weeks=number - 1)
    return _add_months(subscription.starts_on, number - 1)


def chargeable_from(subscription: Subscription, number: int, *, today: date) -> tuple[int, date]:
    """The first cycle from `number` on whose due date can still be charged today, with that date: a card is
    charged on the day; Pix Automático sends a charge at least 2 days before its due date, so a subscription
    authorized late (or resumed) skips the periods whose date is too close or passed."""
    card = subscription.payment_method == Subscription.Method.CARD
    earliest = today + timedelta(days=0 if card else CHARGE_LEAD_DAYS_MIN)
    due = due_date_of(subscription, number)
    while due < earliest:
        number += 1
        due = due_date_of(subscription, number)
    return number, due


def cycle_amount(subscription: Subscription, number: int) -> int:
    """What cycle `number` costs (centavos): the first cycle's price applies to cycle 1 only."""
    return subscription.first_cycle_price if number == 1 else subscription.price


# A cycle that was not charged and never will be: its period is not the first charge.
NOT_CHARGED = ("skipped", "cancelled")


def first_charge(subscription: Subscription) -> tuple[date, int]:
    """(due date, amount in centavos) of the subscription's first charge: its first cycle that is or was charged,
    as its page lists it (on an authorized subscription, the page's "Próxima cobrança" until it is paid); none
    planned yet (the Pix Automático not authorized) — the cycle an authorization today would plan. One query."""
    cycles = SubscriptionCycle.objects.filter(subscription=subscription).exclude(status__in=NOT_CHARGED)
    cycle = cycles.order_by("number").only("due_date", "amount").first()
    if cycle is not None:
        return cycle.due_date, cycle.amount
    number, due = chargeable_from(subscription, 1, today=timezone.localdate())
    return due, cycle_amount(subscription, number)
