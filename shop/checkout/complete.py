"""From a ready checkout to an order: placement (the `PlacedCheckout` handed to `orders.services`), the
three-step complete, and the back office's sales (paid elsewhere, Pix com vencimento).

## Placement

From a checkout to its order: the `PlacedCheckout` that `orders.services` drafts and writes.

## Complete

Complete (BCP §4.3, §11; PIX.md §3) in three steps, so that no PSP or gateway call runs under a lock.

The way Saleor's `complete_checkout` does it:

1. `_begin`, one short transaction: lock the checkout, re-evaluate the stored state, reserve stock and
   coupon uses (or keep those its Pix charge already holds: shop/checkout/charge.py, never taken twice),
   and record `complete_in_progress` with no payment attached yet (`payment_txid` empty, event
   `payment_pending`). The usual Pix case ends here: the charge attached on update still fits, so
   the checkout waits for the payment at once, with no PSP call at all.
2. The PSP (Pix charge) or card gateway call, with no transaction open. A second buyer of the same SKU
   is not blocked by it: the stock rows were committed in step 1.
3. `_finish_*`, one short transaction: Pix → waiting for the payment (`pix_awaiting_payment`); card
   approved → order placed → `completed`; failure or decline → stock and coupon uses given back
   (`ready_for_complete` + `pix_psp_unavailable`, or `incomplete` + `payment_failed`).

A worker killed during step 2 leaves `complete_in_progress` with stock reserved and no payment attached:
`shop.checkout.settle.checkout_pending_due` (run by `shop.tasks.expire_checkouts` every minute) finishes it
once `PAYMENT_PENDING_GRACE` has passed (see shop/checkout/settle.py for every state and its task).
Settlement and the Pix expiry sweep live in shop/checkout/settle.py.

## Back-office sales

Sales staff enter in the back office (WhatsApp, the counter, B2B):

- paid elsewhere (`checkout_complete_paid_elsewhere`): completed without a PSP, with the same stock
  reservation and order placement as any other checkout;
- paid later by Pix com vencimento (`checkout_complete_pix_due`, issue 17): the checkout waits in
  `complete_in_progress` (stock reserved) for a `cobv` charge with a due date, fine and interest; the buyer pays
  from the checkout's Pix page and the payment settles through the same webhook path as any Pix.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import replace
from datetime import date, datetime
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from kernel.joined import join
from kernel.money import format_brl
from kernel.rows import Then, Update
from orders.arrival import promise_words
from orders.services import (
    order_draft_from_checkout,
    order_number_draw,
    order_payment_record_manual,
    order_place_draft,
)
from orders.types import PlacedCheckout, PlacedLine
from payments.card.gateway import CardCustomer
from payments.due import DueTerms
from payments.exceptions import PaymentInputError
from payments.services import (
    card_payment_brief,
    card_payment_charge,
    card_payment_record,
    card_payment_record_unclaimed,
    pix_charge_revoke_for_reference,
    pix_due_charge_ensure,
)
from shop.checkout.boleto import boleto_problem, complete_boleto
from shop.checkout.charge import (
    INSTRUMENT_PATH,
    charge_errors,
    ensure_charge,
    err,
    held_key,
    hold_for_charge,
    instrument_problem,
    is_pix,
    lines_of,
    pix_charge_issue,
    pix_charge_plan,
    reserve,
    reserve_and_save_status,
    save_status,
    unreserve,
    usable_charge,
)
from shop.checkout.core import (
    ANY_OWNER,
    PIX_SETTLEMENT_GRACE,
    apply,
    current,
    event_of,
    expire_if_due,
    in_checkout_language,
    input_from_checkout,
    lock,
    plan_lines,
    read_versioned,
    reload,
    retried_on_deadlock,
    save_with_event,
    set_evaluated,
    speak,
    status_error,
    stored_messages,
    with_lines,
    with_status,
)
from shop.checkout.evaluate import PlannedLine, evaluate
from shop.checkout.selectors import kept_lines
from shop.checkout.types import (
    STATUS_COMPLETED,
    STATUS_IN_PROGRESS,
    STATUS_INCOMPLETE,
    STATUS_READY,
    TERMINAL_STATUSES,
    CheckoutMessage,
    CheckoutResult,
    CompleteInput,
    InstrumentInput,
    PaymentInput,
)
from shop.models import Checkout, CheckoutLine, PickupLocation
from shop.store.policies import policies_data, store_policies
from shop.store.services import store_get


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


def _located_option(checkout: Checkout) -> tuple[str, dict[str, object]]:
    """The selected delivery option as the checkout shows it, with its JSONPath in the response; with its method's
    `handling_days` (the store's "prazo de postagem" it was shown with) where the snapshot kept them."""
    for m, method in enumerate((checkout.fulfillment_snapshot or {}).get("methods", [])):
        for g, group in enumerate(method["groups"]):
            for o, option in enumerate(group["options"]):
                if option["id"] == checkout.selected_option_id:
                    if "handling_days" in method:
                        option = {**option, "handling_days": method["handling_days"]}
                    return f"$.fulfillment.methods[{m}].groups[{g}].options[{o}]", option
    return "", {}


def _located_destination(checkout: Checkout) -> tuple[str, dict[str, object]]:
    """The selected destination (a pickup point's name, address and hours) as shown, with its JSONPath."""
    for m, method in enumerate((checkout.fulfillment_snapshot or {}).get("methods", [])):
        for d, destination in enumerate(method.get("destinations", [])):
            if destination.get("id") and destination.get("id") == method.get("selected_destination_id"):
                return f"$.fulfillment.methods[{m}].destinations[{d}]", destination
    return "", {}


def _changed_at(path: str, content: str) -> CheckoutMessage:
    return CheckoutMessage("warning", "checkout_changed", content, path=path)


LinesShown = dict[str, tuple[str, str, int]]  # line public id → (SKU, title, unit price)


def lines_shown(lines: Sequence[CheckoutLine]) -> LinesShown:
    """Each line's SKU, title and price as the platform (or buyer) last saw them. Read before `evaluate`, which
    refreshes the lines in place."""
    return {line.public_id: (line.sku, line.title, line.unit_price) for line in lines}


def line_changes(before: LinesShown, lines: Sequence[CheckoutLine | PlannedLine]) -> list[CheckoutMessage]:
    """BCP-CHK-20 ("unrequested changes are reported with a path"), BCP §4.3 "no silent changes": a kept line
    (same id, same SKU) whose title or price the merchant changed since `before`, one `checkout_changed` warning
    at that node. A line now unavailable says so with its own error (it keeps its last price, out of the
    totals), not here."""
    changes: list[CheckoutMessage] = []
    for index, line in enumerate(lines):
        if line.variant_id is None or line.public_id not in before:
            continue
        sku, title, price = before[line.public_id]
        if sku != line.sku:
            continue  # the platform put another item on the line: a requested change
        if title != line.title:
            content = _("O produto %(old)s agora se chama %(new)s; confira antes de concluir.") % {
                "old": title,
                "new": line.title,
            }
            changes.append(_changed_at(f"$.line_items[{index}].item.title", content))
        if price != line.unit_price:
            content = _("O preço de %(title)s mudou de %(old)s para %(new)s; confira antes de concluir.") % {
                "title": line.title,
                "old": format_brl(price),
                "new": format_brl(line.unit_price),
            }
            changes.append(_changed_at(f"$.line_items[{index}].item.price", content))
    return changes


Shown = tuple[LinesShown, dict[str, object], dict[str, object], dict[str, str]]


def _shown(checkout: Checkout, lines: list[CheckoutLine]) -> Shown:
    """What the platform last saw of the goods, their delivery and the terms: each line's title and price, the
    selected option (title, description, carrier, price) and destination, the store policies' digests. Read
    before a complete re-evaluates them."""
    return (
        lines_shown(lines),
        _located_option(checkout)[1],
        _located_destination(checkout)[1],
        dict(checkout.policies_shown or {}),
    )


def _option_text(option: dict[str, object], *, handling: bool = False) -> str:
    """ "PAC (Chega em 3 a 5 dias úteis, Correios)": what an option promises, without its price. `handling`: with the
    store's "prazo de postagem" it was shown with, as the platform read it (bcp_app's presenters: "… após a postagem;
    a loja posta em até 2 dias úteis após o pagamento (5 a 7 dias úteis desde o pagamento)")."""
    words = str(option.get("description") or "")
    if handling and words:
        kept = option.get("handling_days")
        words = promise_words(words, kept if isinstance(kept, int) else 0, _option_days(option))
    details = ", ".join(part for part in (words, str(option.get("carrier") or "")) if part)
    return f"{option.get('title', '')} ({details})" if details else str(option.get("title", ""))


def _unrequested_changes(before: Shown, checkout: Checkout, lines: list[CheckoutLine]) -> list[CheckoutMessage]:
    """BCP §4.3 "the order is built from the checkout at that moment", BCP-CHK-20 "unrequested changes are
    reported with a path": what the merchant changed since the platform last looked (a product renamed, a
    price, the delivery option's name, carrier or promised time, a pickup point's address or hours), one
    `checkout_changed` warning at each changed node. A complete that finds any places no order: the buyer
    confirmed what the platform showed, and the order would say something else (QA walk: an order placed as
    "PAC Mini" and "Café comum" after the platform showed "PAC" and "Café especial", same total)."""
    lines_before, option_before, destination_before, policies_before = before
    changes = line_changes(lines_before, lines)
    path, option = _located_option(checkout)
    # The promise as the platform read it, the store's "prazo de postagem" included: a change of it moves the delivery
    # estimate the buyer accepted (a snapshot written before the checkout kept it compares the option alone).
    handling = "handling_days" in option_before and "handling_days" in option
    if (
        option_before
        and option
        and _option_text(option, handling=handling) != _option_text(option_before, handling=handling)
    ):
        content = _("A entrega escolhida mudou de %(old)s para %(new)s; confira antes de concluir.") % {
            "old": _option_text(option_before, handling=handling),
            "new": _option_text(option, handling=handling),
        }
        changes.append(_changed_at(path, content))
    elif option_before and option and option.get("amount") != option_before.get("amount"):
        # only its price: e.g. free above a subtotal the new prices cross, or the rate the merchant changed
        content = _("O frete de %(title)s mudou de %(old)s para %(new)s; confira antes de concluir.") % {
            "title": option.get("title", ""),
            "old": format_brl(int(option_before.get("amount") or 0)),
            "new": format_brl(int(option.get("amount") or 0)),
        }
        changes.append(_changed_at(path, content))
    path, destination = _located_destination(checkout)
    if destination_before and destination and destination != destination_before:
        content = _(
            "O local de entrega ou retirada %(name)s mudou (endereço ou horário); confira antes de concluir."
        ) % {
            "name": destination.get("name") or destination_before.get("name") or "",
        }
        changes.append(_changed_at(path, content))
    if policies_before:  # {}: written before the shop kept them
        now_shown = checkout.policies_shown or {}
        for index, policy in enumerate(store_policies(checkout.language)):
            if policy.type in policies_before and policies_before[policy.type] != now_shown.get(policy.type):
                content = _("A loja mudou a política “%(title)s”; confira antes de concluir.") % {"title": policy.title}
                changes.append(_changed_at(f"$.policies[{index}]", content))
    return changes


def _installments(checkout: Checkout, payment_type: str) -> dict[str, int]:
    """The card plan the buyer chose (shop/checkout/pricing.py), as the order keeps it."""
    instrument = checkout.payment_instrument or {}
    if payment_type != "card" or instrument.get("type") != "card":
        return {}
    count = int(instrument.get("installments") or 1)
    return {
        "installments": count,
        "installment_amount": int(instrument.get("installment_amount") or checkout.total_amount // count),
        "first_installment": int(instrument.get("first_installment") or 0),
    }


def _option_days(option: dict[str, object]) -> tuple[int, int] | None:
    """The selected option's business days as quoted (a checkout whose options were shown before they were kept
    has none: the order keeps only the words)."""
    low, high = option.get("days_min"), option.get("days_max")
    if isinstance(low, int) and isinstance(high, int) and not isinstance(low, bool) and not isinstance(high, bool):
        return low, high
    return None


def policies_in_force(language: str) -> list[dict[str, Any]]:
    """The store policies as they are now, to be kept with an order placed now (its BCP `policies[]`)."""
    return policies_data(language)


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
    number: int | None = None,
) -> None:
    """Create the order from the checkout as it is now and mark the checkout completed (same transaction).
    `lines`: the checkout's stored lines when the caller has them (else read).

    `locked=False`: the caller holds no lock on the checkout (complete by card, after the gateway call, with
    the checkout as step 1 wrote it): the checkout is completed by an UPDATE that matches only while it still
    waits for this payment (`complete_in_progress`, stock reserved, no payment attached), in the statement
    that writes the order (nothing of it when the UPDATE matches no row); `CheckoutMoved` when it no longer
    does. One statement instead of a lock, a full save and the order's own. `number`: the order number the caller
    drew in this transaction (`order_number_draw`), else drawn here."""
    if lines is None:
        lines = list(CheckoutLine.objects.filter(checkout=checkout).order_by("position", "id"))
    with_lines(checkout, lines)
    option = _located_option(checkout)[1]
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
        fulfillment_carrier=str(option.get("carrier", "")),
        fulfillment_days=_option_days(option) if checkout.fulfillment_type == "shipping" else None,
        handling_days=store_get().handling_days if checkout.fulfillment_type == "shipping" else 0,
        destination=_destination(checkout),
        platform_id=checkout.platform_id,
        language=checkout.language,
        payment_handler_id=str((checkout.payment_instrument or {}).get("handler_id", "")),
        payment_type=payment_type,
        payment_reference=checkout.public_id,
        payment_txid=checkout.payment_txid,
        paid_amount=paid_amount,
        policies=policies_in_force(checkout.language),  # the order keeps the policies it was placed under
        **_installments(checkout, payment_type),
    )
    # The caller holds the checkout's row lock and saw it not completed (complete, settle, manual sale), or
    # the conditional UPDATE below proves it is still this payment's: no other placement can run.
    # The NF-e is asked for by the order's outbox task (shop.invoicing.lifecycle.on_order_changed, "placed").
    draft = order_draft_from_checkout(checkout=placed, number=number)
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
        order_place_draft(draft)
        return
    # The checkout's UPDATE (and its event) and the order are one statement: the order is written only when
    # the UPDATE matched, i.e. the checkout still waited for this payment.
    waits = {"status": STATUS_IN_PROGRESS, "stock_reserved": True, "payment_txid": ""}  # …for this payment
    fields = (
        "status",
        "order_id",
        "order_permalink_url",
        "completed_at",
        "messages",
        "payment_txid",
        "payment_instrument",
    )
    completed = Update(checkout, fields, where=waits, event=event_of(checkout, "completed", previous, detail))
    if order_place_draft(draft, only_if=completed) is None:
        raise CheckoutMoved(checkout.public_id)


logger = logging.getLogger(__name__)


@in_checkout_language
def checkout_complete(*, checkout_id: str, data: CompleteInput, owner: object = ANY_OWNER) -> CheckoutResult:
    begun = _begin(checkout_id, data, owner)
    if isinstance(begun, CheckoutResult):
        return begun
    chosen = data.payment.instruments[0]  # _begin refused anything but exactly one instrument
    if chosen.type == "boleto":
        return complete_boleto(begun)  # issue 37: shop/checkout/boleto.py
    if chosen.type == "pix":
        try:
            charge = ensure_charge(begun)
        except charge_errors():
            logger.warning("Pix charge could not be issued for %s", checkout_id, exc_info=True)
            charge = None
        return _finish_pix(checkout_id, charge)

    instrument = begun.payment_instrument or {}
    buyer = " ".join(part for part in (begun.buyer_first_name, begun.buyer_last_name) if part)
    try:
        charged = card_payment_charge(
            reference=begun.public_id,
            amount=begun.total_amount,
            handler_id=chosen.handler_id,
            token=str((chosen.credential or {}).get("token", "")),
            installments=int(instrument.get("installments") or 1),
            customer=CardCustomer(name=buyer, email=begun.buyer_email, tax_id=begun.buyer_tax_id),
            description=f"Pedido {begun.public_id}",
            # read under the checkout lock in step 1; nothing else starts a payment for a checkout in progress
            brief=card_payment_brief(getattr(begun, "card_payment_brief", None)),
        )
    except Exception:
        # An unexpected answer: give the stock back now. A gateway timeout is not this: it comes back as
        # `pending` and the webhook or the reconcile sweep decides (the reference is the gateway's order
        # code, so an authorization that did happen is found and never charged twice).
        logger.warning("Card authorization failed for %s", checkout_id, exc_info=True)
        charged = None
    return _finish_card(begun, charged)


def _refresh(checkout_id: str, *extra: CheckoutMessage) -> CheckoutResult:
    fresh = reload(checkout_id)
    return CheckoutResult(checkout=fresh, messages=[*stored_messages(fresh), *extra])


def _changed_message(pix: bool) -> CheckoutMessage:
    return CheckoutMessage(
        type="warning",
        code="pix_charge_replaced" if pix else "checkout_changed",
        content=_("O total mudou; um novo Pix foi gerado, confira antes de concluir.")
        if pix
        else _("O checkout mudou; revise o total antes de concluir."),
        path=INSTRUMENT_PATH if pix else "$.totals",
    )


def _begin(checkout_id: str, data: CompleteInput, owner: object) -> Checkout | CheckoutResult:
    """Step 1. Returns the checkout, now `complete_in_progress` with stock reserved, when step 2 must follow."""
    begun = _begin_transaction(checkout_id, data, owner)
    if not isinstance(begun, tuple):
        return begun
    # The new total needs a new Pix charge: issued after commit, like on update (shop/checkout/charge.py).
    checkout, changed = begun
    pix_charge_issue(checkout)
    return _refresh(checkout_id, *changed)


@retried_on_deadlock
def _begin_transaction(
    checkout_id: str, data: CompleteInput, owner: object
) -> Checkout | CheckoutResult | tuple[Checkout, list[CheckoutMessage]]:
    """Step 1's transaction; the checkout and the messages to answer with when a new Pix charge must follow.

    The evaluation's columns and the status this step decides are written in one UPDATE of the checkout."""
    now = timezone.now()
    if (begun := _begin_unlocked(checkout_id, data, owner, now)) is not None:
        return begun
    with transaction.atomic():
        # The card payment's brief comes with the lock: step 2 then needs no "is this reference paid?" read.
        checkout = lock(checkout_id, owner=owner, card_brief=True, lines=True)
        speak(checkout.language)
        if expire_if_due(checkout, now) or checkout.status in (*TERMINAL_STATUSES, STATUS_IN_PROGRESS):
            return status_error(checkout, "concluir")
        declined = _declined_only(checkout)
        if checkout.status != STATUS_READY and not declined:
            return CheckoutResult(checkout=reload(checkout_id), messages=stored_messages(checkout))
        # What a refusal below answers beside its own error: after a decline, not that decline (this is a new
        # attempt; repeated beside a missing token or an unknown handler it read as a second decline: QA walk).
        before = [m for m in stored_messages(checkout) if not (declined and m.code == "payment_failed")]
        problem = instrument_problem(data.payment, data.offered_handler_ids)
        if problem is None and data.payment.instruments[0].type == "boleto":
            problem = boleto_problem(checkout)  # the payer's CPF/CNPJ, the store offering it: before reserving
        if problem is not None:
            # The refusal replaces a stored message at the same node (an update with the same instrument said it
            # already): one `payment_failed`, not two (QA walk).
            kept = [m for m in before if (m.code, m.path) != (problem.code, problem.path)]
            return CheckoutResult(checkout=reload(checkout_id), messages=[*kept, problem])
        chosen = data.payment.instruments[0]
        # What the events record as the status left: the stored one (`incomplete` after a decline, BCP-PAY-06),
        # not the `ready_for_complete` the evaluation below sets before the move is written.
        stored = checkout.status
        if checkout.paid_at is not None:
            return _complete_paid(checkout, chosen)
        other_terms = _installments_changed(checkout, chosen)
        if other_terms is not None:  # refused before anything is evaluated or written: the checkout stays as shown
            return CheckoutResult(checkout=reload(checkout_id), messages=[*before, other_terms])
        existing = kept_lines(checkout)  # read with the lock, with their variants' live columns
        held = held_key(checkout, existing)
        shown = _shown(checkout, existing)  # before `evaluate`, which refreshes the lines in place
        own = input_from_checkout(checkout, existing)
        state = replace(
            own,
            payment=PaymentInput(
                instruments=(
                    InstrumentInput(chosen.id, chosen.handler_id, chosen.type, installments=chosen.installments),
                )
            ),
            signals={**own.signals, **data.signals},
        )
        ev = evaluate(checkout=checkout, existing_lines=existing, data=state, now=now)
        previous_total, previous_instrument = checkout.total_amount, checkout.payment_instrument
        status, messages = with_status(ev, ev.rejections)
        checkout.status = status
        apply(checkout, ev, messages, existing, save=False)  # every branch below saves the checkout once
        moved = _unrequested_changes(shown, checkout, kept_lines(checkout)) if status == STATUS_READY else []
        total_moved = ev.total_amount != previous_total
        card_total = None
        if (status != STATUS_READY or total_moved or moved) and _card_not_shown(chosen, previous_instrument):
            # A card complete that pays nothing leaves the checkout's payment as shown (its instrument, and a Pix
            # charge the buyer may be paying, which recording the card would revoke): what is true now (stock,
            # prices) is recorded with the stored payment, and the card's total is said (as `_installments_changed`
            # does for a plan). A decline by the gateway keeps the card (`_finish_card`: its error names it).
            card_total = ev.total_amount
            ev = evaluate(checkout=checkout, existing_lines=existing, data=replace(own, signals=state.signals), now=now)
            status, messages = with_status(ev, ev.rejections)
            checkout.status = status
            apply(checkout, ev, messages, existing, save=False)
            total_moved = ev.total_amount != previous_total
        if status != STATUS_READY or total_moved or moved or card_total is not None:
            # Something changed since the platform last looked (stock, prices, coupon, a product's or the
            # delivery's name or promise): no payment. A Pix charge follows the new total (PIX.md §3 step 4:
            # replaced, the platform completes again); an unchanged total keeps its charge and reservation.
            hold_for_charge(checkout, ev, held)  # the reservation follows the charge
            save_with_event(checkout, "complete_refused", stored, {"total": ev.total_amount})
            issue = pix_charge_plan(checkout, previous_instrument=previous_instrument)
            changed = [*moved]
            if total_moved:  # else the errors (out of stock, an option gone) or `moved` say what changed
                changed.append(
                    _changed_message(is_pix(checkout.payment_instrument) and checkout.status == STATUS_READY)
                )
            if card_total is not None and card_total != ev.total_amount:
                changed.append(_card_total_message(card_total, ev.total_amount))
            if not issue:
                return CheckoutResult(checkout=reload(checkout_id), messages=[*stored_messages(checkout), *changed])
        else:
            if chosen.type == "pix" and not settings.PIX_MIN_AMOUNT <= checkout.total_amount <= settings.PIX_MAX_AMOUNT:
                # The handler is not offered for this total (PIX.md §1.3): nothing to charge.
                outside = err("payment_failed", _("O Pix não está disponível para este valor."), INSTRUMENT_PATH)
                checkout.save()
                return CheckoutResult(checkout=reload(checkout_id), messages=[*stored_messages(checkout), outside])
            lines = kept_lines(checkout)  # as `apply` just wrote them (no query)
            checkout.status = stored  # each move below records `checkout.status` as its start (save_status)
            if chosen.type != "pix" and is_pix(previous_instrument):
                # The checkout leaves Pix for the card or a boleto: its Pix charge must not stay payable with no link
                # from the checkout, whatever the gateway answers (declined, the checkout shows the card; approved or
                # issued, a second payment). Revoked as an update away from Pix revokes it (shop/checkout/charge.py:
                # rows now, the PSP cancel after commit); a Pix paid before that is settled or refunded.
                pix_charge_revoke_for_reference(reference=checkout.public_id)
            if chosen.type == "card":
                attached, checkout.payment_txid = checkout.payment_txid, ""  # "no payment attached yet"
                if reserve_and_save_status(checkout, lines, ev, STATUS_IN_PROGRESS, "payment_pending"):
                    return checkout  # stock, checkout and event in one statement
                checkout.payment_txid = attached  # not enough stock: `reserve` below says which line
            blocking = reserve(checkout, lines, ev)
            if blocking:
                save_status(checkout, STATUS_INCOMPLETE, "complete_refused", blocking)
                return CheckoutResult(checkout=reload(checkout_id), messages=stored_messages(checkout))
            if chosen.type == "pix" and (charge := usable_charge(checkout)) is not None:
                _await_pix(checkout, charge, previous=stored)  # the usual case: no PSP call at all
                return CheckoutResult(checkout=current(checkout), messages=stored_messages(checkout))
            checkout.payment_txid = ""  # "no payment attached yet": what step 3 and the pending sweep look for
            save_status(checkout, STATUS_IN_PROGRESS, "payment_pending")
            return checkout
    return checkout, changed


def _begin_unlocked(checkout_id: str, data: CompleteInput, owner: object, now: datetime) -> Checkout | None:
    """Step 1 of the usual card complete (issue 34) with no lock and no transaction: the checkout, its lines and
    its card payment's brief read in one SELECT with the row's version (`read_versioned`), evaluated as
    `_begin_transaction` evaluates them, and the units, the checkout (`complete_in_progress`) and its event
    written in one statement that first locks the checkout while its row is still that version (then the stock,
    the lock order of the locked path): two statements instead of BEGIN, the lock, that statement and COMMIT.

    Only when that statement is the whole step: a ready checkout showing this card, holding nothing (no stock,
    no Pix charge, not paid), one variant to take and no coupon, where nothing moved (status, total, lines,
    delivery, terms, consent). Anything else, a row written by someone else since it was read, or too few units
    (nothing written then), is None: the locked path does it all again from the row as it is, and answers."""
    instruments = data.payment.instruments
    if len(instruments) != 1 or instruments[0].type != "card":
        return None
    chosen = instruments[0]
    checkout = read_versioned(checkout_id, owner=owner, card_brief=True)
    if checkout is None or not _open_and_free(checkout, now):
        return None
    speak(checkout.language)
    if instrument_problem(data.payment, data.offered_handler_ids) is not None:
        return None
    if _card_not_shown(chosen, checkout.payment_instrument) or _installments_changed(checkout, chosen) is not None:
        return None
    existing = kept_lines(checkout)
    shown = _shown(checkout, existing)
    own = input_from_checkout(checkout, existing)
    instrument = InstrumentInput(chosen.id, chosen.handler_id, chosen.type, installments=chosen.installments)
    state = replace(own, payment=PaymentInput(instruments=(instrument,)), signals={**own.signals, **data.signals})
    ev = evaluate(checkout=checkout, existing_lines=existing, data=state, now=now)
    status, messages = with_status(ev, ev.rejections)
    if status != STATUS_READY or ev.total_amount != checkout.total_amount:
        return None
    checkout.status = status
    if set_evaluated(checkout, ev, messages):
        return None  # a consent change: its event is a row of its own
    plan = plan_lines(checkout, ev, existing)
    if plan.writes:
        return None
    with_lines(checkout, plan.lines)
    if _unrequested_changes(shown, checkout, plan.lines):
        return None
    checkout.payment_txid = ""  # "no payment attached yet" (a ready checkout has none: `_open_and_free`)
    version = checkout.row_version
    if reserve_and_save_status(checkout, plan.lines, ev, STATUS_IN_PROGRESS, "payment_pending", version=version):
        return checkout
    return None


def _open_and_free(checkout: Checkout, now: datetime) -> bool:
    """Ready, not expired, not paid, holding no stock, no payment attached, no Pix (`_begin_unlocked`)."""
    return (
        checkout.status == STATUS_READY
        and checkout.paid_at is None
        and not checkout.stock_reserved
        and not checkout.payment_txid
        and not is_pix(checkout.payment_instrument)
        and checkout.expires_at is not None
        and checkout.expires_at > now
    )


def _card_not_shown(chosen: InstrumentInput, shown: dict[str, object] | None) -> bool:
    """A card complete on a checkout that shows another instrument (Pix, boleto, none, another handler's card)."""
    shown = shown or {}
    return chosen.type == "card" and (shown.get("type") != "card" or shown.get("handler_id") != chosen.handler_id)


def _card_total_message(card_total: int, total: int) -> CheckoutMessage:
    content = _(
        "Com o cartão, o total seria %(card)s, e o checkout mostra %(total)s: atualize o checkout com o cartão e "
        "confira o total antes de concluir."
    ) % {"card": format_brl(card_total), "total": format_brl(total)}
    return err("checkout_changed", content, INSTRUMENT_PATH)


def _installments_changed(checkout: Checkout, chosen: InstrumentInput) -> CheckoutMessage | None:
    """A card complete must pay in the installments the checkout shows (README "checkout_changed"; BCP §4.3: the
    order is built from the checkout at that moment; BCP-CHK-20: no unrequested change). Other installments with
    the same total (interest-free plans) were charged in the new count the buyer never saw (QA walk). A checkout
    without a card shows no plan: only à vista (1x) matches it."""
    if chosen.type != "card":
        return None
    shown = checkout.payment_instrument or {}
    selected = int(shown.get("installments") or 1) if shown.get("type") == "card" else 1
    if chosen.installments == selected:
        return None
    content = _(
        "O parcelamento pedido na conclusão (%(asked)sx) não é o que o checkout mostra (%(selected)sx): "
        "atualize o checkout com as parcelas desejadas e confira o total antes de concluir."
    ) % {"selected": selected, "asked": chosen.installments}
    return err("checkout_changed", content, f"{INSTRUMENT_PATH}.installments")


def _declined_only(checkout: Checkout) -> bool:
    """An `incomplete` checkout whose only error is the last payment's decline: a complete brings another
    instrument, so it is evaluated with it like a ready one (BCP-PAY-06: the decline is `recoverable`). An agent
    that completed again with a good card after a decline got the old decline back until it sent an update
    (QA walk); a card retried this way is a new attempt under its own gateway key."""
    if checkout.status != STATUS_INCOMPLETE:
        return False
    errors = [m for m in stored_messages(checkout) if m.type == "error"]
    return bool(errors) and all(m.code == "payment_failed" for m in errors)


def _complete_paid(checkout: Checkout, chosen: InstrumentInput) -> CheckoutResult:
    """PIX.md §3.1: the Pix was paid before complete and its stock is held; complete finishes synchronously,
    with no new charge. Any other instrument would be a second payment."""
    if chosen.type != "pix":
        paid = err("payment_failed", _("Este checkout já foi pago com Pix; conclua com o Pix."), INSTRUMENT_PATH)
        return CheckoutResult(checkout=reload(checkout.public_id), messages=[*stored_messages(checkout), paid])
    place_order(checkout, payment_type="pix", paid_amount=checkout.total_amount)
    return CheckoutResult(checkout=current(checkout), messages=stored_messages(checkout))


def _await_pix(checkout: Checkout, charge, *, previous: str) -> None:
    waiting = CheckoutMessage(
        type="info", code="pix_awaiting_payment", content=_("Aguardando o pagamento do Pix."), path=INSTRUMENT_PATH
    )
    checkout.expires_at = max(checkout.expires_at or timezone.now(), charge.expires_at + PIX_SETTLEMENT_GRACE)
    checkout.payment_txid = charge.txid
    checkout.status = previous
    save_status(checkout, STATUS_IN_PROGRESS, "complete_accepted", [waiting])


def _pending(checkout_id: str) -> Checkout | None:
    """Lock the checkout for step 3; None when it no longer waits for this payment (a Pix settled meanwhile,
    or the pending sweep already released it): then its current state is the answer."""
    checkout = lock(checkout_id)
    speak(checkout.language)
    if checkout.status != STATUS_IN_PROGRESS or not checkout.stock_reserved or checkout.payment_txid:
        return None
    return checkout


@retried_on_deadlock
def _finish_pix(checkout_id: str, charge) -> CheckoutResult:
    """Step 3 (Pix): wait for the payment, or give the stock back."""
    with transaction.atomic():
        checkout = _pending(checkout_id)
        if checkout is None:
            return _refresh(checkout_id)
        if charge is None or charge.amount != checkout.total_amount:
            unreserve(checkout, lines_of(checkout))
            save_status(checkout, STATUS_READY, "pix_unavailable")
            down = err("pix_psp_unavailable", _("Pix indisponível no momento; tente novamente."), INSTRUMENT_PATH)
            return CheckoutResult(checkout=reload(checkout_id), messages=[*stored_messages(checkout), down])
        _await_pix(checkout, charge, previous=STATUS_IN_PROGRESS)
    return _refresh(checkout_id)


def _finish_card(begun: Checkout, charged) -> CheckoutResult:
    """Step 3 (card): record the gateway's answer and, in the same commit, place the order, wait for a
    pending outcome, or give the stock back. `begun`: the checkout as step 1 wrote it, with its lines (a
    checkout `complete_in_progress` refuses updates, so they are still the stored ones).

    An approval places the order from `begun` with no lock taken first: the checkout is completed by an
    UPDATE that matches only while it still waits for this payment (`place_order(locked=False)`). Any other
    answer locks the checkout as before. The payment row is written before the checkout is touched, the
    order the card webhook and the reconcile sweep take them in (`payments.card.settle.settle_recorded` →
    `checkout_settle_card`), so they never deadlock. A crash before this commit leaves no payment row and
    the checkout waiting with no payment attached: `checkout_pending_due` asks the gateway by order code
    (settle.py)."""
    checkout_id = begun.public_id
    # An approval of a reference with no payment row yet (the usual sale) draws the order's number in the payment
    # row's INSERT (issue 34: one statement fewer), still before the checkout is touched; nothing is drawn when the
    # row is not inserted there (a webhook recorded it first) or the charge was not paid: placement draws then.
    approved = charged is not None and charged.absent and charged.charge is not None and charged.charge.paid
    drawn = Then(*order_number_draw("written")) if approved else None
    try:
        with transaction.atomic():
            result = card_payment_record(charged, then=drawn) if charged is not None else None
            if result is not None and result.approved:
                begun.payment_txid = result.payment_id
                if result.last_digits:  # the card charged, kept with the instrument in the completing UPDATE
                    card = {"brand": result.brand, "last_digits": result.last_digits}
                    begun.payment_instrument = {**(begun.payment_instrument or {}), **card}
                place_order(
                    begun,
                    payment_type="card",
                    paid_amount=begun.total_amount,
                    lines=kept_lines(begun),
                    locked=False,
                    number=drawn.value if drawn is not None else None,
                )
                placed = CheckoutResult(checkout=current(begun), messages=stored_messages(begun))
                join(placed)  # the caller's answer (its idempotency record) commits with the order
                return placed
            checkout = _pending(checkout_id)
            if checkout is None:
                return _refresh(checkout_id)
            if result is not None and result.pending:
                # The gateway did not answer in time: the stock stays reserved until the webhook or the
                # reconcile sweep (payments.tasks.reconcile_card_payments) says paid or not.
                waiting = CheckoutMessage(
                    type="info", code="card_payment_pending", content=result.message, path=INSTRUMENT_PATH
                )
                checkout.payment_txid = result.payment_id
                save_status(checkout, STATUS_IN_PROGRESS, "card_pending", [waiting])
                return _refresh(checkout_id)
            unreserve(checkout, kept_lines(begun))
            content = (result.message if result is not None else "") or _("Pagamento recusado.")
            failed = err("payment_failed", content, INSTRUMENT_PATH)
            save_status(checkout, STATUS_INCOMPLETE, "payment_failed", [failed])
            return _refresh(checkout_id)
    except CheckoutMoved:
        # Finished meanwhile (the pending sweep released it, or a webhook placed it): the approval is kept,
        # for the order that took it, or announced so that a payment no order takes is refunded.
        card_payment_record_unclaimed(charged)
        return _refresh(checkout_id)


logger = logging.getLogger(__name__)

MANUAL_METHODS = ("dinheiro", "transferencia", "maquininha", "pix_direto")


@in_checkout_language
@retried_on_deadlock
def checkout_complete_paid_elsewhere(*, checkout_id: str, method: str, reason: str, actor: str) -> CheckoutResult:
    """Staff confirm the buyer paid outside the shop (`method`, with a `reason`): the order is placed paid."""
    if method not in MANUAL_METHODS:
        raise ValueError(f"unknown manual payment method {method!r}")
    with transaction.atomic():
        checkout = lock(checkout_id)
        if checkout.status != STATUS_READY:
            return status_error(checkout, "concluir")
        lines = lines_of(checkout)
        existing = list(lines)
        ev = evaluate(
            checkout=checkout, existing_lines=existing, data=input_from_checkout(checkout, existing), now=timezone.now()
        )
        status, messages = with_status(ev, [])
        if status != STATUS_READY:
            return CheckoutResult(checkout=reload(checkout_id), messages=messages)
        blocking = reserve(checkout, lines, ev)
        if blocking:
            save_status(checkout, STATUS_INCOMPLETE, "stock_unavailable", blocking)
            return CheckoutResult(checkout=reload(checkout_id), messages=blocking)
        checkout.payment_instrument = {"type": "manual", "handler_id": "manual", "method": method}
        place_order(checkout, payment_type="manual", paid_amount=checkout.total_amount, lines=lines)
        order_payment_record_manual(order_id=checkout.order_id, method=method, reason=reason, actor=actor)
    return CheckoutResult(checkout=reload(checkout_id), messages=[])


@in_checkout_language
def checkout_complete_pix_due(
    *,
    checkout_id: str,
    due_date: date,
    validity_days: int = 30,
    fine_bp: int = 0,
    interest_bp: int = 0,
    discount_bp: int = 0,
    discount_until: date | None = None,
) -> CheckoutResult:
    """Complete a ready checkout with a Pix com vencimento: paid by `due_date`, or later with fine and interest.

    The three steps of checkout_complete (shop/checkout/complete.py), so the PSP call runs with no lock: reserve
    (Pix selected, so the shop's Pix discount applies as on any Pix checkout) → `PUT /cobv` → wait for the payment.
    A worker dying in between leaves what checkout_complete would (checkout_pending_due releases it).
    """
    terms = DueTerms(
        due_date=due_date,
        validity_days=validity_days,
        fine_bp=fine_bp,
        interest_bp=interest_bp,
        discount_bp=discount_bp,
        discount_until=discount_until,
    )
    with transaction.atomic():
        checkout = lock(checkout_id)
        speak(checkout.language)
        if checkout.status != STATUS_READY:
            return status_error(checkout, "concluir")
        existing = lines_of(checkout)
        pix = InstrumentInput(id="instr_due", handler_id=settings.PIX_HANDLER_ID, type="pix")
        state = replace(input_from_checkout(checkout, existing), payment=PaymentInput(instruments=(pix,)))
        ev = evaluate(checkout=checkout, existing_lines=existing, data=state, now=timezone.now())
        status, messages = with_status(ev, ev.rejections)
        checkout.status = status
        apply(checkout, ev, messages, existing)
        if status != STATUS_READY:
            return CheckoutResult(checkout=reload(checkout_id), messages=stored_messages(checkout))
        blocking = reserve(checkout, kept_lines(checkout), ev)
        if blocking:
            save_status(checkout, STATUS_INCOMPLETE, "complete_refused", blocking)
            return CheckoutResult(checkout=reload(checkout_id), messages=stored_messages(checkout))
        checkout.payment_txid = ""  # no payment attached yet (step 3 and the pending sweep look for it)
        save_status(checkout, STATUS_IN_PROGRESS, "payment_pending")
    try:
        charge = pix_due_charge_ensure(
            reference=checkout.public_id,
            amount=checkout.total_amount,
            terms=terms,
            payer_name=f"{checkout.buyer_first_name} {checkout.buyer_last_name}".strip(),
            payer_tax_id=checkout.buyer_tax_id,
            description=f"Pedido {checkout.public_id}",
        )
    except PaymentInputError as exc:
        logger.info("Pix com vencimento refused for %s: %s", checkout_id, exc)
        charge = None
    except charge_errors():
        logger.warning("Pix com vencimento could not be issued for %s", checkout_id, exc_info=True)
        charge = None
    result = _finish_pix(checkout_id, charge)
    if charge is None and not checkout.buyer_tax_id:
        text = _("Informe o CPF/CNPJ do comprador para o Pix com vencimento.")
        needed = err("field_required", text, "$.buyer.tax_id")
        return CheckoutResult(checkout=result.checkout, messages=[*result.messages, needed])
    return result
