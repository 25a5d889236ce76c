"""Reads of subscription plans, each with a fixed number of queries."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

from django.conf import settings
from django.db.models import Count, Q
from django.utils import timezone

from orders.models import Order
from shop.models import Subscription, SubscriptionCycle, SubscriptionPlan
from shop.subscriptions.cycles import card_only
from shop.subscriptions.offers import price_per_cycle


def subscription_plans_by_variant(variant_ids: Iterable[int]) -> dict[int, list[SubscriptionPlan]]:
    """Active plans of these variants (weekly before monthly), by variant primary key; one query."""
    plans: dict[int, list[SubscriptionPlan]] = {}
    wanted = set(variant_ids)
    if not wanted:
        return plans
    for plan in SubscriptionPlan.objects.filter(variant_id__in=wanted, active=True).order_by("variant_id", "-cycle"):
        plans.setdefault(plan.variant_id, []).append(plan)
    return plans


WITHDRAWAL_DAYS = 7  # CDC art. 49: the right to withdraw from a purchase made away from a shop


def withdrawal_until(subscription: Subscription, first_paid_on: date | None) -> date:
    """The last day of the right of withdrawal: 7 days from subscribing, or from the first charge when later."""
    start = max(timezone.localtime(subscription.created_at).date(), first_paid_on or date.min)
    return start + timedelta(days=WITHDRAWAL_DAYS)


def subscription_overview(subscription: Subscription) -> dict[str, Any]:
    """What the subscriber's page shows: the plan, the next open cycle, past cycles with their orders; 3 queries
    (4 for a card subscription waiting for its first charge: its last decline)."""
    subscription = Subscription.objects.select_related("plan__variant__product").get(pk=subscription.pk)
    cycles = list(SubscriptionCycle.objects.filter(subscription=subscription).order_by("-number")[:24])
    orders = {
        order.public_id: order
        for order in Order.objects.filter(public_id__in=[c.order_id for c in cycles if c.order_id]).only(
            "public_id", "number", "permalink_token", "placed_at", "status", "paid_amount", "refunded_amount"
        )
    }
    upcoming = next((c for c in reversed(cycles) if c.status in ("scheduled", "charged", "retrying")), None)
    today = timezone.localdate()
    declined = ""
    if subscription.payment_method == "card" and subscription.status == "pending_authorization":
        # The first charge's last word: a decline is said until another card is given (one more query).
        last = subscription.events.filter(kind__in=["card_stored", "card_declined"]).order_by("-id").first()
        declined = (
            card_only(str(last.detail.get("reason", ""))) if last is not None and last.kind == "card_declined" else ""
        )
    paid = [orders[c.order_id] for c in reversed(cycles) if c.status == "paid" and c.order_id in orders]
    until = withdrawal_until(subscription, timezone.localtime(paid[0].placed_at).date() if paid else None)
    in_period = today <= until
    withdrawal = None
    if subscription.status == "cancelled":  # what the cancellation did to the first order (one more query)
        event = subscription.events.filter(kind="withdrawal").order_by("-id").first()
        if event is not None:
            order = Order.objects.filter(public_id=event.detail.get("order", "")).only("number", "permalink_token")
            withdrawal = {"outcome": event.detail.get("outcome", ""), "order": order.first()}
    return {
        "card_declined": declined,
        "withdrawal": withdrawal,
        "subscription": subscription,
        "product": subscription.plan.variant.product,
        # "R$ 39,90 por mês" of this subscription ("Assinar por …" is the subscribe page's offer, not a state).
        "price_words": price_per_cycle(subscription.price, subscription.cycle),
        "next_cycle": upcoming,
        "cycles": [(cycle, orders.get(cycle.order_id)) for cycle in cycles],
        # CDC art. 49: within 7 days of subscribing (or of the first charge), cancelling also undoes the first order.
        "withdrawal_until": until,
        "in_withdrawal_period": in_period,
        "cancel_outcome": _cancel_outcome(paid[0] if paid else None, in_period),
    }


@dataclass(frozen=True)
class CancelOutcome:
    """What cancelling now does to the money, said before the buyer confirms (as `_withdraw_first_order` does it):
    `refund` (the first order is cancelled and `amount` goes back), `shipped` (it left the shop: a return),
    `kept` (past the withdrawal period: paid cycles stay paid), `nothing` (nothing was paid yet)."""

    kind: str
    order: Order | None = None
    amount: int = 0


def _cancel_outcome(first: Order | None, in_period: bool) -> CancelOutcome:
    if first is None:
        return CancelOutcome("nothing")
    if not in_period or first.status == "canceled":
        return CancelOutcome("kept", first)
    if first.status != "placed":  # something of it was sent: the order's cancel is refused, a return is asked
        return CancelOutcome("shipped", first)
    return CancelOutcome("refund", first, first.paid_amount - first.refunded_amount)


@dataclass(frozen=True)
class SubscriptionStats:
    by_status: dict[str, int]
    next_charges: list[SubscriptionCycle]
    failures_30d: int
    retrying: int
    cancelled_30d: int
    churn_30d_percent: float  # cancelled in 30 days ÷ (active + paused + cancelled in 30 days)


def subscription_stats(*, now: datetime | None = None) -> SubscriptionStats:
    """The staff dashboard's panel: subscriptions by status, the next charges, failures and churn. One query when
    the shop has no subscription (the admin home's budget), three otherwise."""
    now = now or timezone.now()
    since = now - timedelta(days=30)
    counts = Subscription.objects.aggregate(
        **{status: Count("id", filter=Q(status=status)) for status in Subscription.Status.values},
        cancelled_30d=Count("id", filter=Q(status="cancelled", cancelled_at__gte=since)),
    )
    cancelled = counts.pop("cancelled_30d")
    by_status = {status: n for status, n in counts.items() if n}
    if not by_status:
        return SubscriptionStats(by_status={}, next_charges=[], failures_30d=0, retrying=0, cancelled_30d=0,
                                 churn_30d_percent=0.0)  # fmt: skip
    next_charges = list(
        SubscriptionCycle.objects.filter(status__in=["scheduled", "charged", "retrying"])
        .select_related("subscription")
        .order_by("due_date")[:10]
    )
    cycles = SubscriptionCycle.objects.aggregate(
        failures=Count("id", filter=Q(status="failed", updated_at__gte=since)),
        retrying=Count("id", filter=Q(status="retrying")),
    )
    base = by_status.get("active", 0) + by_status.get("paused", 0) + cancelled
    return SubscriptionStats(
        by_status=by_status,
        next_charges=next_charges,
        failures_30d=cycles["failures"],
        retrying=cycles["retrying"],
        cancelled_30d=cancelled,
        churn_30d_percent=round(100 * cancelled / base, 1) if base else 0.0,
    )


def subscription_presented(public_id: str) -> dict[str, Any] | None:
    """A subscription as the BCP subscription extension presents it (`bcp_app/jsonschemas/shopping/
    subscription.json`), plus `_platform_id` for the caller's ownership check; None when unknown. 3 queries."""
    subscription = Subscription.objects.select_related("plan__variant__product").filter(public_id=public_id).first()
    if subscription is None:
        return None
    cycles = list(SubscriptionCycle.objects.filter(subscription=subscription).order_by("number"))
    upcoming = next((c for c in cycles if c.status in ("scheduled", "charged", "retrying")), None)
    first, _, last = subscription.buyer_name.partition(" ")
    plan = subscription.plan
    authorization: dict[str, Any] = {
        "method": subscription.payment_method,
        "status": {"pending_authorization": "pending"}.get(subscription.status, "approved"),
    }
    if subscription.payment_method == "card":
        # The card stored at the gateway (its first charge is the authorization): never more than brand and last 4.
        if subscription.card_id:
            authorization["card"] = {"brand": subscription.card_brand, "last_digits": subscription.card_last4}
    else:
        authorization["id_rec"] = subscription.pix_id_rec
    if subscription.status == "cancelled":
        authorization["status"] = "cancelled"
    if subscription.pix_authorization_location:
        authorization["location"] = subscription.pix_authorization_location
    body: dict[str, Any] = {
        "id": subscription.public_id,
        "status": subscription.status,
        "plan": {
            "id": plan.public_id,
            "item": {"id": plan.variant.sku, "title": plan.variant.product.title},
            "cycle": subscription.cycle,
            "price": subscription.price,
            "first_cycle_price": subscription.first_cycle_price,
            "min_cycles": subscription.min_cycles,
            "ships_each_cycle": plan.ships_each_cycle,
        },
        "currency": "BRL",
        "buyer": {"first_name": first, "last_name": last, "email": subscription.buyer_email},
        "authorization": authorization,
        "next_charge": (
            {
                "cycle": upcoming.number,
                "due_date": upcoming.due_date.isoformat(),
                "amount": upcoming.amount,
                "status": upcoming.status,
            }
            if upcoming is not None and subscription.status == "active"
            else None
        ),
        "cycles": [
            {
                "number": c.number,
                "due_date": c.due_date.isoformat(),
                "amount": c.amount,
                "status": c.status,
                **({"order_id": c.order_id} if c.order_id else {}),
            }
            for c in cycles
        ],
        "permalink_url": f"{settings.BCP_PUBLIC_URL}/assinaturas/{subscription.access_token}/",
        "created_at": subscription.created_at.isoformat().replace("+00:00", "Z"),
        "_platform_id": subscription.platform_id,
    }
    if subscription.destination:
        body["destination"] = {
            k: v for k, v in subscription.destination.items() if k not in ("first_name", "last_name")
        }
    if subscription.cancelled_at:
        body["cancelled_at"] = subscription.cancelled_at.isoformat().replace("+00:00", "Z")
    return body


@dataclass(frozen=True)
class BuyerSubscription:
    public_id: str
    product: str
    status: str  # the Portuguese word
    page_url: str  # the subscriber's page (skip, address, pause, cancel)


def subscriptions_of_buyer(email: str) -> list[BuyerSubscription]:
    """The hook for "Minha conta" (issue 33): a signed-in buyer's subscriptions with the link to manage each;
    one query. The caller has proved the e-mail (passwordless link), as for the buyer's orders."""
    rows = (
        Subscription.objects.filter(buyer_email__iexact=email.strip())
        .select_related("plan__variant__product")
        .order_by("-created_at")[:50]
    )
    return [
        BuyerSubscription(
            public_id=row.public_id,
            product=row.plan.variant.product.title,
            status=row.get_status_display(),
            page_url=f"{settings.BCP_PUBLIC_URL}/assinaturas/{row.access_token}/",
        )
        for row in rows
    ]
