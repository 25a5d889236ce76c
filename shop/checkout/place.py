"""From a checkout to its order: the `PlacedCheckout` that `orders.services` drafts and writes."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from django.utils import timezone

from orders.services import order_draft_from_checkout, order_place_draft
from orders.types import PlacedCheckout, PlacedLine
from shop.checkout.core import save_with_event, with_lines
from shop.checkout.types import STATUS_COMPLETED, STATUS_IN_PROGRESS
from shop.models import Checkout, CheckoutLine, PickupLocation
from shop.store.policies import store_policies


def _destination(checkout: Checkout) -> dict[str, str]:
    if checkout.fulfillment_type == "shipping":
        return {
            "first_name": checkout.ship_first_name,
            "last_name": checkout.ship_last_name,
            "street": checkout.ship_street,
            "number": checkout.ship_number,
            "complement": checkout.ship_complement,
            "neighborhood": checkout.ship_neighborhood,
            "city": checkout.ship_city,
            "state": checkout.ship_uf,
            "postal_code": checkout.ship_cep,
            "country": checkout.ship_country or "BR",
        }
    if checkout.fulfillment_type == "pickup":
        location = PickupLocation.objects.filter(public_id=checkout.selected_destination_id).first()
        if location is not None:
            return {
                "name": location.name,
                "first_name": checkout.buyer_first_name,
                "last_name": checkout.buyer_last_name,
                "street": location.street,
                "number": location.number,
                "complement": location.complement,
                "neighborhood": location.neighborhood,
                "city": location.city,
                "state": location.uf,
                "postal_code": location.cep,
                "country": "BR",
                "opening_hours": location.opening_hours,  # the buyer's e-mail and order page show it
            }
    return {}


def _selected_option(checkout: Checkout) -> dict[str, object]:
    for method in (checkout.fulfillment_snapshot or {}).get("methods", []):
        for group in method["groups"]:
            for option in group["options"]:
                if option["id"] == checkout.selected_option_id:
                    return option
    return {}


def _installments(checkout: Checkout, payment_type: str) -> dict[str, int]:
    """The card plan the buyer chose (shop/checkout/card_terms.py), as the order keeps it."""
    instrument = checkout.payment_instrument or {}
    if payment_type != "card" or instrument.get("type") != "card":
        return {}
    count = int(instrument.get("installments") or 1)
    return {
        "installments": count,
        "installment_amount": int(instrument.get("installment_amount") or checkout.total_amount // count),
        "first_installment": int(instrument.get("first_installment") or 0),
    }


def policies_in_force(language: str) -> list[dict[str, Any]]:
    """The store policies as they are now, to be kept with an order placed now (its BCP `policies[]`)."""
    return [asdict(policy) for policy in store_policies(language)]


class CheckoutMoved(Exception):
    """`place_order(locked=False)`: the checkout no longer waits for this payment (the pending sweep, a
    webhook or a settlement finished it meanwhile); nothing of the placement was written."""


def place_order(
    checkout: Checkout,
    *,
    payment_type: str,
    paid_amount: int,
    lines: list[CheckoutLine] | None = None,
    locked: bool = True,
) -> None:
    """Create the order from the checkout as it is now and mark the checkout completed (same transaction).
    `lines`: the checkout's stored lines when the caller has them (else read).

    `locked=False`: the caller holds no lock on the checkout (complete by card, after the gateway call, with
    the checkout as step 1 wrote it): the checkout is completed by an UPDATE that matches only while it still
    waits for this payment (`complete_in_progress`, stock reserved, no payment attached), before the order
    is written; `CheckoutMoved` when it no longer does. One statement instead of a lock and a full save."""
    if lines is None:
        lines = list(CheckoutLine.objects.filter(checkout=checkout).order_by("position", "id"))
    with_lines(checkout, lines)
    option = _selected_option(checkout)
    placed = PlacedCheckout(
        checkout_id=checkout.public_id,
        currency=checkout.currency,
        buyer_first_name=checkout.buyer_first_name,
        buyer_last_name=checkout.buyer_last_name,
        buyer_email=checkout.buyer_email,
        buyer_phone=checkout.buyer_phone,
        buyer_tax_id=checkout.buyer_tax_id,
        lines=[
            PlacedLine(
                line_id=line.public_id,
                sku=line.sku,
                title=line.title,
                unit_price=line.unit_price,
                quantity=line.quantity,
                image_url=line.image_url,
            )
            for line in lines
        ],
        totals=[(str(t["type"]), int(t["amount"]), str(t.get("display_text", ""))) for t in checkout.totals],
        fulfillment_method=checkout.fulfillment_type or "digital",
        fulfillment_title=str(option.get("title", "")) or ("Entrega digital" if not checkout.fulfillment_type else ""),
        fulfillment_description=str(option.get("description", "")),
        destination=_destination(checkout),
        platform_id=checkout.platform_id,
        language=checkout.language,
        payment_handler_id=str((checkout.payment_instrument or {}).get("handler_id", "")),
        payment_type=payment_type,
        payment_reference=checkout.public_id,
        payment_txid=checkout.payment_txid,
        paid_amount=paid_amount,
        order_number=checkout.order_number,  # the number the Pix charge already told the payer
        policies=policies_in_force(checkout.language),  # the order keeps the policies it was placed under
        **_installments(checkout, payment_type),
    )
    # The caller holds the checkout's row lock and saw it not completed (complete, settle, manual sale), or
    # the conditional UPDATE below proves it is still this payment's: no other placement can run.
    # The NF-e is asked for by the order's outbox task (shop.invoicing.lifecycle.on_order_changed, "placed").
    draft = order_draft_from_checkout(checkout=placed)
    checkout.order_id = draft.order.public_id
    checkout.order_permalink_url = draft.order.permalink_url
    checkout.completed_at = timezone.now()
    waiting = ("pix_awaiting_payment", "pix_payment_received", "card_payment_pending")
    checkout.messages = [m for m in checkout.messages if m.get("code") not in waiting]
    previous = checkout.status
    checkout.status = STATUS_COMPLETED
    detail = {"order_id": draft.order.public_id, "payment_type": payment_type}
    if locked:
        save_with_event(checkout, "completed", previous, detail)
    else:
        waits = {"status": STATUS_IN_PROGRESS, "stock_reserved": True, "payment_txid": ""}  # …for this payment
        fields = ["status", "order_id", "order_permalink_url", "completed_at", "messages", "payment_txid"]
        if not save_with_event(checkout, "completed", previous, detail, fields=fields, where=waits):
            raise CheckoutMoved(checkout.public_id)
    order_place_draft(draft)
