"""Shared internals of the checkout engine (locking, writing evaluations, events, releasing holdings).

Public entry points are in shop/checkout/services.py; completion and Pix in shop/checkout/complete.py.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from django.db import transaction
from django.utils import timezone, translation
from django.utils.translation import gettext as _

from kernel.rows import update_where
from payments.services import pix_charge_revoke_for_reference, refund_unplaced
from shop.checkout.evaluate import Evaluation
from shop.checkout.selectors import buyer_input_of, checkout_by_public_id, with_lines
from shop.checkout.stock import stock_release
from shop.checkout.types import (
    STATUS_CANCELED,
    STATUS_COMPLETED,
    STATUS_IN_PROGRESS,
    STATUS_INCOMPLETE,
    STATUS_READY,
    TERMINAL_STATUSES,
    AddressInput,
    CheckoutInput,
    CheckoutMessage,
    CheckoutResult,
    ContextInput,
    FulfillmentInput,
    FulfillmentMethodInput,
    GroupInput,
    InstrumentInput,
    LineInput,
    PaymentInput,
)
from shop.models import Checkout, CheckoutEvent, CheckoutLine, CouponRedemption

logger = logging.getLogger(__name__)

# Pix charges may be paid until their expiry; the checkout lives at least this long after it.
PIX_SETTLEMENT_GRACE = timedelta(minutes=5)


# --- helpers ---------------------------------------------------------------------------------------


def in_checkout_language[**P, R](func: Callable[P, R]) -> Callable[P, R]:
    """Message texts are written in the checkout's language (BCP §5.1: pt-BR unless the caller asked for
    English); the service activates it once known and this restores the caller's language afterwards."""

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        with translation.override(translation.get_language()):
            return func(*args, **kwargs)

    return wrapper


def speak(language: str | None) -> None:
    """Activate a checkout language; only inside an `in_checkout_language` service."""
    translation.activate("en" if (language or "").lower().startswith("en") else "pt-br")


def stored_messages(checkout: Checkout) -> list[CheckoutMessage]:
    return [CheckoutMessage.from_dict(m) for m in checkout.messages]


def status_error(checkout: Checkout, operation: str) -> CheckoutResult:
    """`operation` is one of "alterar", "cancelar", "concluir" (the verb of the message)."""
    paid = checkout.paid_at is not None and checkout.status == STATUS_READY
    # Paid before complete (PIX.md §3.1) waits for complete like `complete_in_progress`: recoverable.
    waiting = paid or checkout.status == STATUS_IN_PROGRESS
    with translation.override(checkout.language or "pt-br"):
        verb = {"alterar": _("alterar"), "cancelar": _("cancelar"), "concluir": _("concluir")}.get(operation, operation)
        if paid:
            content = _("Não é possível %(operation)s: o Pix já foi pago; conclua o checkout.")
        elif waiting:
            content = _("Não é possível %(operation)s: o pagamento está em processamento; consulte o checkout.")
        elif checkout.status == STATUS_COMPLETED:
            content = _("Não é possível %(operation)s: o checkout está concluído.")
        else:
            content = _("Não é possível %(operation)s: o checkout está cancelado.")
        content %= {"operation": verb}
    message = CheckoutMessage(
        type="error",
        code="invalid_checkout_status",
        content=content,
        severity="recoverable" if waiting else "unrecoverable",
    )
    return CheckoutResult(checkout=reload(checkout.public_id), messages=[*stored_messages(checkout), message])


def reload(public_id: str) -> Checkout:
    return checkout_by_public_id(public_id)


def event(checkout: Checkout, kind: str, from_status: str, detail: dict[str, object] | None = None) -> None:
    _event_of(checkout, kind, from_status, detail).save()


def _event_of(checkout: Checkout, kind: str, from_status: str, detail: dict[str, object] | None) -> CheckoutEvent:
    return CheckoutEvent(
        checkout=checkout, kind=kind, from_status=from_status, to_status=checkout.status, detail=detail or {}
    )


def save_with_event(
    checkout: Checkout,
    kind: str,
    from_status: str,
    detail: dict[str, object] | None = None,
    *,
    fields: list[str] | None = None,
    where: dict[str, object] | None = None,
    guard: tuple[str, list[Any]] | None = None,
) -> bool:
    """The checkout's UPDATE and its event in one statement (`kernel.rows.update_where`). `fields`: the
    columns to write (default: `Checkout.written_fields()`, what `save()` writes);
    `where`: columns the row must still have, else nothing is written and the answer is False.
    `guard`: a conditional write that must succeed for the checkout to be written (`update_where`)."""
    if checkout.pk is None:
        checkout.save()
        event(checkout, kind, from_status, detail)
        return True
    if fields is None:
        fields = checkout.written_fields()
    event_row = _event_of(checkout, kind, from_status, detail)
    return update_where(checkout, fields, where=where, event=event_row, guard=guard)


def apply(
    checkout: Checkout,
    ev: Evaluation,
    messages: list[CheckoutMessage],
    existing: list[CheckoutLine],
    *,
    save: bool = True,
) -> None:
    """Write an evaluation: columns, snapshot, lines (≤ 4 statements whatever the line count; lines whose
    values did not change are not written). `save=False` leaves the checkout's own UPDATE to the caller,
    who saves it once with the status it decides next."""
    previous_consent = checkout.buyer_consent
    for name, value in ev.fields.items():
        setattr(checkout, name, value)
    checkout.messages = [m.as_dict() for m in messages]
    if save or checkout.pk is None:
        checkout.save()
    if checkout.buyer_consent != previous_consent:  # the LGPD evidence trail, append-only
        event(checkout, "consent_changed", checkout.status, {"consent": checkout.buyer_consent})
    keep = {line.public_id for line in ev.lines}
    stale = [line.pk for line in existing if line.public_id not in keep]
    if stale:
        CheckoutLine.objects.filter(pk__in=stale).delete()
    by_id = {line.public_id: line for line in existing}
    to_update: list[CheckoutLine] = []
    to_create: list[CheckoutLine] = []
    kept: list[CheckoutLine] = []
    for position, planned in enumerate(ev.lines):
        row = by_id.get(planned.public_id) or CheckoutLine(checkout=checkout, public_id=planned.public_id)
        values = {
            "position": position,
            "variant_id": planned.variant_id,
            "sku": planned.sku,
            "title": planned.title[:300],
            "image_url": planned.image_url[:500],
            "unit_price": planned.unit_price,
            "quantity": planned.quantity,
            "requires_shipping": planned.requires_shipping,
        }
        if row.pk and all(getattr(row, name) == value for name, value in values.items()):
            kept.append(row)  # as stored: no UPDATE for it
            continue
        for name, value in values.items():
            setattr(row, name, value)
        (to_update if row.pk else to_create).append(row)
    fields = ["position", "variant", "sku", "title", "image_url", "unit_price", "quantity", "requires_shipping"]
    if to_update:
        CheckoutLine.objects.bulk_update(to_update, fields)
    if to_create:
        CheckoutLine.objects.bulk_create(to_create)
    with_lines(checkout, sorted([*kept, *to_update, *to_create], key=lambda row: row.position))


def current(checkout: Checkout) -> Checkout:
    """The checkout as written in this operation when its lines are known, else read again (1 query)."""
    if "lines" in getattr(checkout, "_prefetched_objects_cache", {}):
        return checkout
    return reload(checkout.public_id)


def input_from_checkout(checkout: Checkout, lines: list[CheckoutLine]) -> CheckoutInput:
    """The stored writable state as input, to re-evaluate it (complete, storefront, expiry of data)."""
    fulfillment = None
    if checkout.fulfillment_type:
        destinations: tuple[AddressInput, ...] = ()
        if checkout.fulfillment_type == "shipping" and checkout.ship_destination_id:
            destinations = (
                AddressInput(
                    id=checkout.ship_destination_id,
                    first_name=checkout.ship_first_name,
                    last_name=checkout.ship_last_name,
                    phone_number=checkout.ship_phone,
                    postal_code=checkout.ship_cep,
                    address_region=checkout.ship_uf,
                    address_locality=checkout.ship_city,
                    address_country=checkout.ship_country or "BR",
                    street=checkout.ship_street,
                    number=checkout.ship_number,
                    complement=checkout.ship_complement,
                    neighborhood=checkout.ship_neighborhood,
                ),
            )
        group = GroupInput(selected_option_id=checkout.selected_option_id or None)
        fulfillment = FulfillmentInput(
            methods=(
                FulfillmentMethodInput(
                    type=checkout.fulfillment_type,  # type: ignore[arg-type]
                    destinations=destinations,
                    selected_destination_id=checkout.selected_destination_id or None,
                    groups=(group,),
                ),
            )
        )
    payment = None
    if checkout.payment_instrument:
        pi = checkout.payment_instrument
        instrument = InstrumentInput(
            id=pi["id"], handler_id=pi["handler_id"], type=pi["type"], installments=int(pi.get("installments") or 1)
        )
        payment = PaymentInput(instruments=(instrument,))
    context = ContextInput(**checkout.context) if checkout.context else None
    return CheckoutInput(
        lines=tuple(LineInput(sku=line.sku, quantity=line.quantity, line_id=line.public_id) for line in lines),
        buyer=buyer_input_of(checkout),
        fulfillment=fulfillment,
        discount_codes=tuple(checkout.discount_codes) if checkout.discount_codes is not None else None,
        payment=payment,
        context=context,
        signals=dict(checkout.signals or {}),
    )


def with_status(ev: Evaluation, extra: list[CheckoutMessage]) -> tuple[str, list[CheckoutMessage]]:
    messages = [*ev.messages, *extra]
    errors = [m for m in messages if m.type == "error"]
    if any(m.severity in ("requires_buyer_input", "requires_buyer_review") for m in errors):
        return "requires_escalation", messages
    return (STATUS_INCOMPLETE if errors else STATUS_READY), messages


def release_reserved(checkout: Checkout) -> None:
    """Give back the stock and coupon uses a checkout reserved (the caller saves `stock_reserved`)."""
    if checkout.stock_reserved:
        lines = CheckoutLine.objects.filter(checkout=checkout, variant__isnull=False)
        stock_release(items=[(line.variant_id, line.quantity) for line in lines])
        checkout.stock_reserved = False
    CouponRedemption.objects.filter(checkout=checkout).delete()


def release_holdings(checkout: Checkout) -> None:
    """Give back what a checkout holds: reserved stock, coupon uses, an active Pix charge."""
    release_reserved(checkout)
    if (checkout.payment_instrument or {}).get("type") == "pix":
        transaction.on_commit(lambda ref=checkout.public_id: revoke_quietly(ref, pix_charge_revoke_for_reference))


def revoke_quietly(reference: str, revoke: object) -> None:
    # After commit: the PSP call must not undo the cancel; a failed revoke is retried by payments' expiry task.
    try:
        revoke(reference=reference)  # type: ignore[operator]
    except Exception:
        logger.warning("Pix charge revoke failed for %s", reference, exc_info=True)


def cancel(checkout: Checkout, *, kind: str, refund_reason: str = "Checkout cancelado antes da conclusão") -> None:
    previous = checkout.status
    release_holdings(checkout)
    if checkout.paid_at is not None:
        # Paid before complete, then canceled or expired: no order will take the money (PIX.md §3.2).

        refund_unplaced(reference=checkout.public_id, reason=refund_reason)
    checkout.status = STATUS_CANCELED
    checkout.canceled_at = timezone.now()
    save_with_event(checkout, kind, previous)


def expire_if_due(checkout: Checkout, now: datetime) -> bool:
    if checkout.status in TERMINAL_STATUSES or checkout.expires_at is None or checkout.expires_at > now:
        return False
    cancel(checkout, kind="expired")
    return True
