"""Signal receivers of the shop: the shop mediates between the leaf apps (contracts.md).

- payments.charge_settled → complete the checkout → orders.order_place_from_checkout ("accepted"),
  or "rejected" for a checkout that is canceled/expired/changed (payments then refunds in full).
- payments.card_payment_settled (a card outcome learned by webhook or reconcile) → the same for cards; a
  subscription cycle's (`cyc_…`, a stored card charged) → its order once, or its retry rule.
- payments.boleto_settled (a boleto paid → the order, once; expired → stock and coupons back).
- orders.refund_requested → payments.refund_request.
- payments.refund_finished → orders.adjustment_mark_refund_result.
- payments.pix_infraction_changed (a MED dispute step) → orders.order_dispute_record (timeline, hold, refund).
- orders.stock_return_requested → put the units back on sale.
- orders.label_purchase_requested (outbox kind label_purchase) → buy the label at the carrier.
- saving or deleting a packaging box → drop the cached boxes after commit.
- payments.recurrence_changed (Pix Automático, confirmed at the PSP) → the subscription follows it.
- payments.recurring_charge_settled → the cycle's order is placed once; recurring_charge_failed → the buyer is
  told, the cycle retried or closed (shop/subscriptions/cycles.py).
- saving or deleting a shipping method, rate or pickup location → drop the shipping cache after commit.
- saving or deleting a search synonym → drop the cached synonyms after commit.
- saving or deleting a product, variant, photo, category, subscription plan, shipping method, rate or pickup
  location, or the store settings → bump the catalog version (checkout snapshots, shared storefront pages).
- orders.order_changed (placed paid / payment_confirmed / shipped / canceled) → request or cancel the NF-e
  (`shop.invoicing.lifecycle`); fiscal.document_changed → the order's timeline event.
Connected in ShopConfig.ready().
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any

from django.db import transaction
from django.db.models import Model
from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from fiscal.signals import document_changed
from orders.services import adjustment_mark_refund_result, order_dispute_record, order_payment_record
from orders.signals import label_purchase_requested, order_changed, refund_requested, stock_return_requested
from payments.exceptions import PaymentInputError
from payments.services import refund_request
from payments.signals import (
    boleto_settled,
    card_payment_settled,
    charge_settled,
    pix_infraction_changed,
    recurrence_changed,
    recurring_charge_failed,
    recurring_charge_settled,
    refund_finished,
)
from shop.catalog.search import synonyms_cache_clear
from shop.checkout.fulfillment import shipping_cache_clear
from shop.checkout.services import checkout_settle_boleto, checkout_settle_card, checkout_settle_pix, variants_restock
from shop.checkout.stock import catalog_cache_bump
from shop.freight.labels import label_purchase_run
from shop.freight.parcels import boxes_cache_clear
from shop.invoicing.lifecycle import on_document_changed, on_order_changed
from shop.models import (
    Category,
    PackagingBox,
    PickupLocation,
    Product,
    ProductImage,
    SearchSynonym,
    ShippingMethod,
    ShippingRate,
    StoreSettings,
    SubscriptionPlan,
    Variant,
)
from shop.subscriptions.cycles import cycle_card_settled, cycle_fail, cycle_settle
from shop.subscriptions.services import subscription_apply_recurrence

logger = logging.getLogger(__name__)


@receiver(charge_settled, dispatch_uid="shop.charge_settled")
def on_charge_settled(
    sender: Any,
    *,
    reference: str,
    txid: str,
    amount: int,
    end_to_end_id: str,
    paid_at: datetime | None = None,
    received: int | None = None,
    **_: Any,
) -> str:
    outcome = checkout_settle_pix(
        reference=reference, amount=amount, txid=txid, end_to_end_id=end_to_end_id, paid_at=paid_at
    )
    if outcome == "accepted":
        # The order's timeline names the payment (staff match it with the bank statement by endToEndId).
        # What arrived: a Pix com vencimento paid late carries its fine and interest on top of the order total.
        paid = received if received is not None else amount
        order_payment_record(checkout_id=reference, amount=paid, txid=txid, end_to_end_id=end_to_end_id)
    return outcome


@receiver(card_payment_settled, dispatch_uid="shop.card_payment_settled")
def on_card_payment_settled(sender: Any, *, reference: str, payment_id: str, status: str, amount: int, **_: Any) -> str:
    if reference.startswith("cyc_"):  # a subscription cycle charged on its stored card (its id is the reference)
        return cycle_card_settled(reference=reference, payment_id=payment_id, status=status, amount=amount)
    return checkout_settle_card(reference=reference, payment_id=payment_id, status=status, amount=amount)


@receiver(boleto_settled, dispatch_uid="shop.boleto_settled")
def on_boleto_settled(sender: Any, *, reference: str, payment_id: str, status: str, amount: int, **_: Any) -> str:
    return checkout_settle_boleto(reference=reference, payment_id=payment_id, status=status, amount=amount)


@receiver(refund_requested, dispatch_uid="shop.refund_requested")
def on_refund_requested(
    sender: Any, *, order_id: str, adjustment_id: str, payment_reference: str, amount: int, reason: str = "", **_: Any
) -> None:
    try:
        refund_request(reference=payment_reference, amount=amount, refund_id=adjustment_id, reason=reason)
    except PaymentInputError:
        # Nothing payments can refund (no settled Pix or card payment, or above what is left): the merchant
        # sees a failed adjustment instead of a refund that silently never happens.
        logger.warning("refund %s for %s refused by payments", adjustment_id, payment_reference, exc_info=True)
        adjustment_mark_refund_result(adjustment_id=adjustment_id, status="failed")


@receiver(refund_finished, dispatch_uid="shop.refund_finished")
def on_refund_finished(sender: Any, *, refund_id: str, status: str, **_: Any) -> None:
    adjustment_mark_refund_result(adjustment_id=refund_id, status=status)


@receiver(pix_infraction_changed, dispatch_uid="shop.pix_infraction_changed")
def on_pix_infraction_changed(
    sender: Any,
    *,
    reference: str,
    infraction_id: str,
    event: str,
    amount: int,
    returned_amount: int = 0,
    details: str = "",
    situation: str = "",
    accept: bool | None = None,
    outcome: str = "",
    actor: str = "",
    **_: Any,
) -> str:
    # Inside the payments transaction: the order's step commits with the dispute's, or neither does.
    return order_dispute_record(
        checkout_id=reference, infraction_id=infraction_id, event=event, amount=amount,
        returned_amount=returned_amount, details=details, situation=situation, accept=accept, outcome=outcome,
        actor=actor,
    )  # fmt: skip


@receiver(stock_return_requested, dispatch_uid="shop.stock_return_requested")
def on_stock_return_requested(sender: Any, *, order_id: str, items: list[tuple[str, int]], **_: Any) -> None:
    variants_restock(items=[(sku, int(quantity)) for sku, quantity in items])


def _drop_shipping_cache(sender: Any, **_: Any) -> None:
    # Now (this process sees its own change at once) and again after commit: a concurrent reader may have
    # cached the old rows between the save and the commit.
    shipping_cache_clear()
    transaction.on_commit(shipping_cache_clear)


def _bump_catalog_cache(sender: Any, **_: Any) -> None:
    # Same rule as the shipping table: now and after commit.
    catalog_cache_bump()
    transaction.on_commit(catalog_cache_bump)


def _drop_boxes_cache(sender: Any, **_: Any) -> None:
    boxes_cache_clear()
    transaction.on_commit(boxes_cache_clear)


def _drop_synonyms_cache(sender: Any, **_: Any) -> None:
    synonyms_cache_clear()
    transaction.on_commit(synonyms_cache_clear)


def _connect_cache_invalidation() -> None:
    for model in (ShippingMethod, ShippingRate, PickupLocation):
        for name, signal in (("save", post_save), ("delete", post_delete)):
            signal.connect(_drop_shipping_cache, sender=model, dispatch_uid=f"shop.cache.{model.__name__}.{name}")
    for name, signal in (("save", post_save), ("delete", post_delete)):
        signal.connect(_drop_boxes_cache, sender=PackagingBox, dispatch_uid=f"shop.cache.PackagingBox.{name}")
    for model in (Product, Variant, ProductImage):
        for name, signal in (("save", post_save), ("delete", post_delete)):
            signal.connect(_bump_catalog_cache, sender=model, dispatch_uid=f"shop.catalog.{model.__name__}.{name}")
    # What else the shared storefront pages show (shop/storefront/page_cache.py): the category menu and counts, a
    # variant's subscription offers, the free-shipping notice, and the store's name, logo, Pix discount and
    # parcelamento.
    shown: tuple[type[Model], ...] = (
        Category, SubscriptionPlan, StoreSettings, ShippingMethod, ShippingRate, PickupLocation,
    )  # fmt: skip
    for shown_model in shown:
        for name, signal in (("save", post_save), ("delete", post_delete)):
            uid = f"shop.pages.{shown_model.__name__}.{name}"
            signal.connect(_bump_catalog_cache, sender=shown_model, dispatch_uid=uid)
    for name, signal in (("save", post_save), ("delete", post_delete)):
        signal.connect(_drop_synonyms_cache, sender=SearchSynonym, dispatch_uid=f"shop.cache.SearchSynonym.{name}")


_connect_cache_invalidation()


@receiver(order_changed, dispatch_uid="shop.invoicing.order_changed")
def on_order_changed_fiscal(sender: Any, **kwargs: Any) -> None:
    on_order_changed(sender, **kwargs)


@receiver(document_changed, dispatch_uid="shop.invoicing.document_changed")
def on_fiscal_document_changed(sender: Any, **kwargs: Any) -> None:
    on_document_changed(sender, **kwargs)


@receiver(label_purchase_requested, dispatch_uid="shop.freight.label_purchase")
def on_label_purchase_requested(sender: Any, *, label_id: str, **_: Any) -> None:
    # Run by the outbox (orders/services/dispatch.py): a CarrierUnavailable leaves the row pending for the sweep.
    label_purchase_run(label_id=label_id)


@receiver(recurrence_changed, dispatch_uid="shop.subscription_follows_recurrence")
def on_recurrence_changed(sender: Any, *, id_rec: str, status: str, cancelled_by: str, **_: Any) -> None:
    subscription_apply_recurrence(id_rec=id_rec, status=status, cancelled_by=cancelled_by)


@receiver(recurring_charge_settled, dispatch_uid="shop.cycle_settled")
def on_recurring_charge_settled(
    sender: Any, *, reference: str, txid: str, amount: int, end_to_end_id: str, **_: Any
) -> str:
    return cycle_settle(reference=reference, txid=txid, amount=amount, end_to_end_id=end_to_end_id)


@receiver(recurring_charge_failed, dispatch_uid="shop.cycle_failed")
def on_recurring_charge_failed(
    sender: Any, *, reference: str, final: bool, retry_on: Any = None, reason: str = "", **_: Any
) -> None:
    cycle_fail(reference=reference, final=final, retry_on=retry_on, reason=reason)
