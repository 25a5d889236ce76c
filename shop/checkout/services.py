"""Checkout engine: the one code path for storefront buyers and BCP agents (BCP.md §4–§6, §9–§11).

API (all keyword-only; every call is one transaction; ids are public ids, never primary keys)::

    checkout_create(*, data: CheckoutInput, platform_id: str | None = None, session_key: str = "",
                    language: str = "pt-br", mandate_required: bool = False,
                    creator_tier: str = "") -> CheckoutResult
        # raises CheckoutCreateImpossible(messages) when nothing can be created (BCP §4.3: every item
        # unavailable, no lines) → BCP Error Response; CheckoutInputError(path, content) for bad input.
    checkout_update(*, checkout_id: str, data: CheckoutInput, language: str | None = None,
                    owner: object = ANY_OWNER) -> CheckoutResult
        # full replacement (BCP-CHK-06): lines matched by `line_id`, unlisted lines removed, omitted
        # fields cleared. A rejected selection / unknown line id → unchanged checkout + recoverable error.
        # `language` switches the checkout's message language (None keeps it).
    checkout_email_save(*, checkout_id: str, email: str, language: str | None = None) -> CheckoutResult
        # the storefront's e-mail field alone, saved as soon as it is typed (abandoned-checkout reminders)
    checkout_get(*, checkout_id: str) -> CheckoutResult           # expires the checkout first if due
    checkout_language_set(*, checkout_id: str, language: str) -> str
        # the buyer's language switch on a checkout page: the open checkout speaks it; "" or the order's id
    checkout_pix_withdraw(*, checkout_id: str) -> str
        # the buyer leaves a pending Pix for another payment method: "withdrawn" | "settled" | "unavailable" |
        # "not_pending" (the charge is removed at the PSP before the checkout is reopened)
    checkout_cancel(*, checkout_id: str, owner: object = ANY_OWNER) -> CheckoutResult
    checkout_complete(*, checkout_id: str, data: CompleteInput, owner: object = ANY_OWNER) -> CheckoutResult
        # `owner`: a BCP caller (checkout.access.CheckoutOwner); a checkout it does not own is CheckoutNotFound
    checkout_expire_due(*, now: datetime | None = None, limit: int = 500) -> int   # beat task
    checkout_complete_paid_elsewhere(*, checkout_id: str, method: str, reason: str, actor: str) -> CheckoutResult
        # a manual sale paid outside the shop (cash, transfer…): stock reserved, order placed paid
    checkout_complete_pix_due(*, checkout_id: str, due_date: date, validity_days=30, fine_bp=0, interest_bp=0,
                              discount_bp=0, discount_until=None) -> CheckoutResult
        # a manual/B2B sale paid later by Pix com vencimento (cobv): waits in complete_in_progress
    checkout_settle_pix(*, reference: str, amount: int, txid: str, end_to_end_id: str) -> str
        # called by shop.receivers on payments.charge_settled: "accepted" | "rejected"
    checkout_settle_card(*, reference: str, payment_id: str, status: str, amount: int) -> str
        # called by shop.receivers on payments.card_payment_settled (card webhook, reconcile)
    checkout_settle_boleto(*, reference: str, payment_id: str, status: str, amount: int) -> str
        # called by shop.receivers on payments.boleto_settled (paid → order once; expired → stock back)
    variants_restock(*, items: list[tuple[str, int]]) -> None     # orders' stock_return_requested

    CheckoutNotFound is raised for unknown ids (BCP `not_found`).

`CheckoutResult(checkout, messages)`: the checkout model with `lines` prefetched and the messages
of the response (the stored state's messages, plus call-only ones such as
`invalid_checkout_status` or a rejected selection). `shop.checkout.selectors.checkout_view()`
turns the checkout into everything a BCP response needs (totals in §6 order, line totals,
fulfillment methods/destinations/groups/options with stable ids, applied discounts, links,
continue_url, expires_at, the Pix charge, the order reference); the presenter only maps names.

Statuses (§4.2): the evaluation (shop/checkout/evaluate.py) sets `incomplete` while any error message
exists and `ready_for_complete` otherwise; `complete_in_progress` while a Pix payment is awaited
(stock reserved); `completed` once the order is placed; `canceled` on cancel or expiry. Operations
not allowed in a status return the unchanged checkout with `invalid_checkout_status`
(`recoverable` during `complete_in_progress`, `unrecoverable` on terminal checkouts).

Stock and coupon uses are held when a payment can start (a Pix charge is issued, else complete): see
shop/checkout/stock.py for why and how.

Rules the engine fixes where BCP leaves a choice (all covered by tests/shop/test_checkout*.py):
- Ready needs lines, buyer e-mail + first and last name, and for physical items one fulfillment
  method (shipping or pickup) with a selected destination and a selected option (BCP §9).
- One method covers every physical line; a single platform-written shipping address is selected
  automatically; options are never chosen for the caller. Option ids are `ShippingMethod.code`.
- Totals: subtotal, one `discount` per accepted coupon ("Cupom CODE"), `fulfillment` (option
  title as display text), total. Free-shipping thresholds look at the subtotal after discounts.
- Pix: a ready checkout with the Pix instrument carries an active charge for its total; a
  payment that arrives before complete completes the checkout at once (PIX.md §10 D1, no AP2);
  an unpaid expired charge moves `complete_in_progress` back to `incomplete` (`pix_charge_expired`).
- Message `content` is in the checkout's language (BCP §5.1): pt-BR by default, English when the caller
  asks (create's `language`, `context.language`, update's `language`); texts are gettext msgids
  translated in locale/en. `requires_escalation` is not produced by any rule yet.
- Locks: the active Pix charge, then the checkout (the order settlement uses), then variants in
  primary-key order.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from kernel.rows import new_row
from payments.selectors import pix_charge_latest_for_reference
from shop.checkout.boleto import boleto_handler_id, boleto_offered
from shop.checkout.charge import held_key, hold_for_charge, is_pix, pix_charge_issue, pix_charge_plan, save_holding
from shop.checkout.complete import (
    MANUAL_METHODS,
    checkout_complete,
    checkout_complete_paid_elsewhere,
    checkout_complete_pix_due,
    line_changes,
    lines_shown,
)
from shop.checkout.core import (
    ANY_OWNER,
    apply,
    cancel,
    current,
    expire_if_due,
    in_checkout_language,
    input_from_checkout,
    lock,
    lock_if_free,
    plan_lines,
    read_versioned,
    reload,
    retried_on_deadlock,
    save_if_unchanged,
    save_with_event,
    set_evaluated,
    speak,
    status_error,
    stored_messages,
    with_status,
    write_lines,
)
from shop.checkout.evaluate import CheckoutInputError, checkout_language, evaluate
from shop.checkout.selectors import CheckoutNotFound, checkout_by_public_id, kept_lines, with_lines
from shop.checkout.settle import (
    checkout_paid_complete_due,
    checkout_pending_due,
    checkout_pix_lapse_due,
    checkout_pix_refresh,
    checkout_pix_withdraw,
    checkout_settle_boleto,
    checkout_settle_card,
    checkout_settle_pix,
)
from shop.checkout.stock import stock_release
from shop.checkout.types import (
    STATUS_IN_PROGRESS,
    STATUS_READY,
    TERMINAL_STATUSES,
    BuyerInput,
    CheckoutInput,
    CheckoutMessage,
    CheckoutResult,
    CompleteInput,
    InstrumentInput,
    PaymentInput,
)
from shop.freight.parcels import FreightLine
from shop.freight.quotes import carrier_quote_prefetch
from shop.models import Checkout, CheckoutLine, Variant

__all__ = [
    "MANUAL_METHODS",
    "CheckoutCreateImpossible",
    "CheckoutInputError",
    "CheckoutNotFound",
    "boleto_handler_id",
    "boleto_offered",
    "checkout_cancel",
    "checkout_complete",
    "checkout_complete_paid_elsewhere",
    "checkout_complete_pix_due",
    "checkout_create",
    "checkout_email_save",
    "checkout_expire_due",
    "checkout_get",
    "checkout_language_set",
    "checkout_pix_refresh",
    "checkout_pix_regenerate",
    "checkout_pix_withdraw",
    "checkout_settle_boleto",
    "checkout_settle_card",
    "checkout_settle_pix",
    "checkout_update",
    "variants_restock",
]


class CheckoutCreateImpossible(Exception):
    """Nothing could be created (BCP §4.3) → BCP Error Response with these messages."""

    def __init__(self, messages: list[CheckoutMessage]) -> None:
        super().__init__("; ".join(m.content for m in messages))
        self.messages = messages


# --- create / update / get -----------------------------------------------------------------------------


def _prefetch_freight(data: CheckoutInput, *, checkout_id: str | None) -> None:
    """The carrier's quote for the lines and CEP of this write, asked before the lock (the engine, under it, reads
    the cached answer and never calls the carrier). Nothing without a carrier or a shipping address (then no
    language is switched and restored either: issue 34)."""
    if not settings.CARRIER or data.fulfillment is None or not data.fulfillment.methods:
        return
    method = data.fulfillment.methods[0]
    if method.type != "shipping":
        return
    cep = method.destinations[0].postal_code if method.destinations else ""
    if not cep and checkout_id:  # the address given earlier, selected by its id
        cep = Checkout.objects.filter(public_id=checkout_id).values_list("ship_cep", flat=True).first() or ""
    _carrier_prefetch([FreightLine(line.sku, line.quantity) for line in data.lines], cep)


@in_checkout_language
def _carrier_prefetch(lines: list[FreightLine], cep: str) -> None:
    carrier_quote_prefetch(lines=lines, destination_cep=cep)


def checkout_create(
    *,
    data: CheckoutInput,
    platform_id: str | None = None,
    session_key: str = "",
    language: str = "pt-br",
    mandate_required: bool = False,
    creator_tier: str = "",
) -> CheckoutResult:
    """`mandate_required`: the platform negotiated AP2 mandates, so the session is locked to them (PIX.md §7).
    `creator_tier`: the trust tier of the BCP agent creating it ("" for none), kept for the shop's own
    completion of a checkout paid before complete (shop/checkout/settle.py); written in the same INSERT."""
    language = checkout_language(data, language)
    speak(language)
    if not data.lines:
        raise CheckoutCreateImpossible(
            [
                CheckoutMessage(
                    "error", "field_required", _("Adicione ao menos um item."), "unrecoverable", "$.line_items"
                )
            ]
        )
    now = timezone.now()
    _prefetch_freight(data, checkout_id=None)
    # Reads only (live stock, prices, coupon uses), and nothing is locked: no transaction needed around it.
    ev = evaluate(checkout=None, existing_lines=[], data=data, now=now)
    if len(ev.unavailable_line_ids) == len(ev.lines):
        raise CheckoutCreateImpossible(
            [
                CheckoutMessage(m.type, m.code, m.content, "unrecoverable")
                for m in ev.messages
                if m.code in ("item_unavailable", "out_of_stock")
            ]
        )
    status, messages = with_status(ev, ev.rejections)
    checkout = new_row(
        Checkout,
        status=status,
        platform_id=platform_id,
        session_key=session_key,
        language=language,
        expires_at=now + timedelta(seconds=settings.SHOP_CHECKOUT_TTL_SECONDS),
        mandate_required=mandate_required,
        creator_tier=creator_tier,
    )
    # Without Pix a new checkout holds nothing: its row, lines and events are one INSERT (`apply`), atomic by
    # itself, so it runs with no BEGIN/COMMIT around it (issue 34). With Pix, stock may be held and a charge
    # planned in the same transaction, as before.
    pix = is_pix(ev.fields.get("payment_instrument"))  # type: ignore[arg-type]
    with transaction.atomic() if pix else contextlib.nullcontext():
        apply(checkout, ev, messages, [], created={"platform_id": platform_id or ""})
        if hold_for_charge(checkout, ev, None):
            checkout.save(update_fields=["status", "messages", "stock_reserved", "updated_at"])
        issue = pix_charge_plan(checkout, previous_instrument=None)
    return _after_write(checkout, issue)


@in_checkout_language
def checkout_update(
    *, checkout_id: str, data: CheckoutInput, language: str | None = None, owner: object = ANY_OWNER
) -> CheckoutResult:
    """`language` (e.g. the storefront's current one) switches the checkout's language; `context.language` wins.
    `owner`: a BCP caller (`CheckoutOwner`); a checkout it does not own is CheckoutNotFound."""
    _prefetch_freight(data, checkout_id=checkout_id)
    written = _update(checkout_id=checkout_id, data=data, language=language, owner=owner)
    return written if isinstance(written, CheckoutResult) else _after_write(*written)


def checkout_email_save(*, checkout_id: str, email: str, language: str | None = None) -> CheckoutResult:
    """The e-mail a storefront buyer typed, saved alone as soon as it is typed (issue 33, major 5), so an
    abandoned checkout can be reminded (shop/checkout/reminders.py). The caller checks the address first.

    An update like any other (a coupon limited per e-mail, the status are evaluated again), built from the
    stored state read under the checkout's lock: a full form posted at the same moment (the e-mail field's
    blur fires as "Pagar" is pressed) is never overwritten by an older copy. A checkout that can no longer
    change answers `invalid_checkout_status`, unchanged.
    """

    def with_email(checkout: Checkout, lines: list[CheckoutLine]) -> CheckoutInput:
        state = input_from_checkout(checkout, lines)
        return replace(state, buyer=replace(state.buyer or BuyerInput(), email=email))

    written = _update(checkout_id=checkout_id, data=with_email, language=language, owner=ANY_OWNER)
    return written if isinstance(written, CheckoutResult) else _after_write(*written)


@retried_on_deadlock
def _update(
    *,
    checkout_id: str,
    data: CheckoutInput | Callable[[Checkout, list[CheckoutLine]], CheckoutInput],
    language: str | None,
    owner: object,
) -> CheckoutResult | tuple[Checkout, bool]:
    """The update's transaction: the answer when it stops there, else the checkout and whether a Pix charge
    must be issued after commit. `data` may be built from the locked checkout and its lines."""
    now = timezone.now()
    if not callable(data) and (written := _update_unlocked(checkout_id, data, language, owner, now)) is not None:
        return written
    with transaction.atomic():
        checkout = lock(checkout_id, owner=owner, lines=True)
        if callable(data):
            data = data(checkout, kept_lines(checkout))
        language = checkout_language(data, language or checkout.language)
        speak(language)
        if expire_if_due(checkout, now):
            return status_error(checkout, "alterar")
        if checkout.status in TERMINAL_STATUSES or checkout.status == STATUS_IN_PROGRESS or checkout.paid_at:
            return status_error(checkout, "alterar")  # paid before complete: only complete or cancel now
        existing = kept_lines(checkout)  # read with the lock, with their variants' live columns
        held = held_key(checkout, existing)
        shown = lines_shown(existing)  # before `evaluate` refreshes them: a merchant's change is said (BCP-CHK-20)
        ev = evaluate(checkout=checkout, existing_lines=existing, data=data, now=now)
        ev.fields["language"] = language
        if ev.rejections:
            return CheckoutResult(checkout=reload(checkout_id), messages=[*stored_messages(checkout), *ev.rejections])
        previous_status, previous_instrument = checkout.status, checkout.payment_instrument
        checkout.status, messages = with_status(ev, [])
        messages = [*messages, *line_changes(shown, ev.lines)]
        apply(checkout, ev, messages, existing, save=False)
        save_holding(checkout, ev, held, previous_status)  # the stock a Pix charge needs, and the checkout
        issue = pix_charge_plan(checkout, previous_instrument=previous_instrument)
    return checkout, issue


def _update_unlocked(
    checkout_id: str, data: CheckoutInput, language: str | None, owner: object, now: datetime
) -> tuple[Checkout, bool] | None:
    """The usual update (issue 34) with no lock and no transaction: the checkout and its lines read in one SELECT
    with their row's version (`read_versioned`), evaluated as `_update` evaluates them, and written in one UPDATE
    (with its event) made only while the row is still that version: two statements instead of BEGIN, the lock,
    the UPDATE and COMMIT. When lines change too, their writes follow that UPDATE in its transaction (the
    checkout's row first, then its lines: the lock order of the locked path; as many statements as it takes).
    Only for an open checkout that holds nothing and neither had nor gets Pix (no stock or charge to follow),
    whose consent stays as it was. Anything else, and a row written by someone else since it was read (a
    concurrent update, complete, cancel or settlement: its UPDATE waited for, or committed before), is None:
    `_update`'s locked path then does it all again from the row as it is, with the same answer as if the two
    writes had queued for the lock."""
    if _pix(data.payment):
        return None
    checkout = read_versioned(checkout_id, owner=owner)
    if checkout is None or not _holds_nothing(checkout, now):
        return None
    language = checkout_language(data, language or checkout.language)
    speak(language)
    existing = kept_lines(checkout)
    shown = lines_shown(existing)
    ev = evaluate(checkout=checkout, existing_lines=existing, data=data, now=now)
    ev.fields["language"] = language
    if ev.rejections or is_pix(ev.fields.get("payment_instrument")):  # type: ignore[arg-type]
        return None
    previous_status = checkout.status
    checkout.status, messages = with_status(ev, [])
    messages = [*messages, *line_changes(shown, ev.lines)]
    if set_evaluated(checkout, ev, messages):
        return None  # a consent change: its event is a row of its own
    plan = plan_lines(checkout, ev, existing)
    with transaction.atomic() if plan.writes else contextlib.nullcontext():
        if not _save_versioned(checkout, previous_status):
            return None  # nothing written (an empty transaction when lines were to follow)
        write_lines(plan)
    with_lines(checkout, plan.lines)
    return checkout, False


def _save_versioned(checkout: Checkout, previous_status: str) -> bool:
    """The checkout's UPDATE (with its `status_changed` event when its status moved, as `save_holding` writes it),
    only while its row is the version `read_versioned` read."""
    version = checkout.row_version
    if checkout.status != previous_status:
        return save_with_event(checkout, "status_changed", previous_status, version=version)
    return save_if_unchanged(checkout, version)


def _pix(payment: PaymentInput | None) -> bool:
    return payment is not None and any(instrument.type == "pix" for instrument in payment.instruments)


def _holds_nothing(checkout: Checkout, now: datetime) -> bool:
    """Open, not expired, not paid, holding no stock and no Pix charge: what `_update_unlocked` may write alone."""
    return (
        checkout.status not in TERMINAL_STATUSES
        and checkout.status != STATUS_IN_PROGRESS
        and checkout.paid_at is None
        and not checkout.stock_reserved
        and not is_pix(checkout.payment_instrument)
        and not checkout.payment_txid
        and checkout.expires_at is not None
        and checkout.expires_at > now
    )


def _after_write(checkout: Checkout, issue: bool) -> CheckoutResult:
    """The write committed; a new Pix charge is issued now, with no transaction (and no lock) open."""
    if not issue:
        return CheckoutResult(checkout=current(checkout), messages=stored_messages(checkout))
    pix_charge_issue(checkout)
    fresh = reload(checkout.public_id)
    return CheckoutResult(checkout=fresh, messages=stored_messages(fresh))


@retried_on_deadlock
def checkout_get(*, checkout_id: str) -> CheckoutResult:
    checkout = checkout_by_public_id(checkout_id)
    if checkout.status not in TERMINAL_STATUSES and checkout.expires_at and checkout.expires_at <= timezone.now():
        with transaction.atomic():
            locked = lock(checkout_id)
            expire_if_due(locked, timezone.now())
        checkout = checkout_by_public_id(checkout_id)
    return CheckoutResult(checkout=checkout, messages=stored_messages(checkout))


@retried_on_deadlock
def checkout_language_set(*, checkout_id: str, language: str) -> str:
    """The buyer switched the storefront's language on one of the checkout's pages: an open checkout speaks it from
    now on (its e-mails, and the order it becomes: a Pix paid later places the order in it). Under the checkout's
    lock, so a settlement at the same moment places its order before (then the order's public id is returned, for
    the caller to switch the order) or after (in the new language). Returns "" when there is no order yet; a
    cancelled checkout changes nothing."""
    language = "en" if (language or "").lower().startswith("en") else "pt-br"
    with transaction.atomic():
        checkout = lock(checkout_id)
        if checkout.order_id or checkout.status in TERMINAL_STATUSES:
            return checkout.order_id
        if checkout.language != language:
            checkout.language = language
            checkout.save(update_fields=["language", "updated_at"])
    return ""


# --- cancel / expiry ----------------------------------------------------------------------------------


@retried_on_deadlock
def checkout_cancel(*, checkout_id: str, owner: object = ANY_OWNER) -> CheckoutResult:
    with transaction.atomic():
        checkout = lock(checkout_id, owner=owner)
        if checkout.status in TERMINAL_STATUSES:
            return status_error(checkout, "cancelar")
        cancel(checkout, kind="canceled")
    return CheckoutResult(checkout=reload(checkout_id), messages=stored_messages(checkout))


def checkout_expire_due(*, now: datetime | None = None, limit: int = 500) -> int:
    """Cancel non-terminal checkouts past `expires_at` and move in-progress ones whose Pix expired back to
    `incomplete`, releasing stock in both cases; returns how many checkouts changed."""
    now = now or timezone.now()
    due = list(
        Checkout.objects.filter(expires_at__lte=now)
        .exclude(status__in=TERMINAL_STATUSES)
        .order_by("expires_at")
        .values_list("public_id", flat=True)[:limit]
    )
    expired = checkout_pix_lapse_due(now=now) + checkout_pending_due(now=now) + checkout_paid_complete_due(now=now)
    for public_id in due:
        with transaction.atomic():
            checkout = lock_if_free(public_id)
            if checkout is not None and expire_if_due(checkout, now):
                expired += 1
    return expired


def variants_restock(*, items: list[tuple[str, int]]) -> None:
    """Put units back on sale (order canceled or returned): SKU → quantity, primary-key order."""
    by_sku = dict(Variant.objects.filter(sku__in=[sku for sku, _ in items]).values_list("sku", "pk"))
    with transaction.atomic():
        stock_release(items=[(by_sku[sku], qty) for sku, qty in items if sku in by_sku and qty > 0])


def checkout_pix_regenerate(
    *, checkout_id: str, instrument: InstrumentInput, language: str | None = None
) -> CheckoutResult:
    """A new Pix charge for the same checkout after its last one expired, re-validating stock and prices.

    The new charge is made only when the re-evaluated total is the one the buyer already agreed to pay
    (the expired charge's amount). A price change or a quantity cut to the stock left stops here, with
    the checkout updated: the checkout page shows the new total and why, and the buyer pays from there.
    """
    checkout_pix_refresh(checkout_id=checkout_id)
    checkout = checkout_by_public_id(checkout_id)
    if checkout.status == STATUS_IN_PROGRESS:
        return CheckoutResult(checkout=checkout, messages=stored_messages(checkout))  # still payable: keep it
    previous = pix_charge_latest_for_reference(checkout_id)
    payment = PaymentInput(instruments=(instrument,))
    data = replace(input_from_checkout(checkout, list(checkout.lines.all())), payment=payment)
    result = checkout_update(checkout_id=checkout_id, data=data, language=language)
    if result.checkout.status != STATUS_READY:
        return result  # e.g. out of stock now: the checkout page shows why
    if previous is None or result.checkout.total_amount != previous.amount:
        return result  # the buyer confirms the new total on the checkout page
    return checkout_complete(checkout_id=checkout_id, data=CompleteInput(payment=payment))
