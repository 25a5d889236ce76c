"""“Ciclo N da assinatura …” on a cycle's order pages (`ORDERS_PERMALINK_LEAD_PANELS`, `ORDERS_ADMIN_LEAD_PANELS`):
orders imports nothing of ours, and a cycle's order carries the cycle's id as its `checkout_id` (`cyc_…`, set at
placement by `cycles._placed`), so any other order costs no query here and a cycle's order one."""

from __future__ import annotations

from django.http import HttpRequest
from django.template.loader import render_to_string
from django.urls import reverse

from orders.models import Order
from shop.models import SubscriptionCycle

CYCLE_PREFIX = "cyc_"  # kernel.ids.new_public_id("cyc") in shop.models.subscriptions.new_cycle_id


def cycle_of_order(order: Order) -> SubscriptionCycle | None:
    """The subscription cycle this order was placed for, with its subscription and product; None for a normal
    order (without a query). One query otherwise."""
    if not order.checkout_id.startswith(CYCLE_PREFIX):
        return None
    return (
        SubscriptionCycle.objects.select_related("subscription__plan__variant__product")
        .filter(public_id=order.checkout_id)
        .first()
    )


def _page_path(cycle: SubscriptionCycle) -> str:
    return reverse("shop:subscription_page", kwargs={"token": cycle.subscription.access_token})


def permalink_panel(request: HttpRequest, order: Order) -> str:
    """The buyer's order page: the cycle and a link to the subscriber's page (skip, pause, cancel)."""
    cycle = cycle_of_order(order)
    if cycle is None:
        return ""
    subscription = cycle.subscription
    return render_to_string(
        "shop/subscriptions/order_panel.html",
        {
            "cycle": cycle,
            "product": subscription.plan.variant.product.title,
            "subscription_url": _page_path(cycle),
        },
        request=request,
    )


def admin_panel(request: HttpRequest, order: Order) -> str:
    """The staff's order page: the cycle and a link to the subscription's admin page (its cycles and timeline)."""
    cycle = cycle_of_order(order)
    if cycle is None:
        return ""
    subscription = cycle.subscription
    return render_to_string(
        "admin/shop/subscription_order_panel.html",
        {
            "cycle": cycle,
            "subscription": subscription,
            "product": subscription.plan.variant.product.title,
            "subscription_admin_url": reverse("admin:shop_subscription_change", args=[subscription.pk]),
            "subscription_url": _page_path(cycle),
        },
    )
