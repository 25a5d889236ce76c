"""The engine's shared steps, used by every write in services/charge/complete/settle: the one lock, applying
an evaluation, events, releasing holdings, cancel and expiry.

## The lock

The one lock every checkout write takes (`lock`, `lock_if_free` for the sweeps) and the deadlock net under
it (`retried_on_deadlock`). The lock order is in `payments/locks.py`.

## Writing

Shared internals of the checkout engine (writing evaluations, events, releasing holdings). Public entry
points are in shop/checkout/services.py.
"""

from __future__ import annotations

import functools
import logging
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db import OperationalError, connection, transaction
from django.db.models import QuerySet
from django.utils import timezone, translation
from django.utils.translation import gettext as _

from kernel.compiled import compiled
from kernel.rows import insert_together, new_row, update_where
from payments.locks import reference_lock_where
from payments.services import card_payment_brief_sql, pix_charge_revoke_for_reference, refund_unplaced
from shop.checkout.evaluate import Evaluation
from shop.checkout.selectors import CheckoutNotFound, CheckoutOwner, buyer_input_of, checkout_by_public_id, with_lines
from shop.checkout.stock import LIVE_ANNOTATIONS, stock_release
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
from shop.store.policies import policy_digests

logger = logging.getLogger(__name__)

DEADLOCK_ATTEMPTS = 3
DEADLOCK = "40P01"  # PostgreSQL's deadlock_detected


def retried_on_deadlock[**P, R](func: Callable[P, R]) -> Callable[P, R]:
    """Run `func` again when PostgreSQL chose its transaction as a deadlock's victim (up to DEADLOCK_ATTEMPTS
    runs). For a function whose writes are one transaction of its own, opened by itself, and whose work
    before the failure is only that transaction (no network I/O, which our transactions never hold): the
    victim's transaction was rolled back whole, so running it again is running it once.

    The lock order (`lock`, `payments.locks`) leaves no cycle we know of among our own locks; this is the
    net under it, for the ones PostgreSQL takes by itself (foreign-key checks, unique-index waits). Inside
    an outer transaction nothing can be re-run: the error goes to its owner."""

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        for attempt in range(1, DEADLOCK_ATTEMPTS + 1):
            try:
                return func(*args, **kwargs)
            except OperationalError as exc:
                victim = getattr(exc.__cause__, "sqlstate", None) == DEADLOCK
                if not victim or connection.in_atomic_block or attempt == DEADLOCK_ATTEMPTS:
                    raise
                logger.info("deadlock victim in %s; running it again (attempt %d)", func.__qualname__, attempt + 1)
                time.sleep(random.uniform(0.005, 0.05) * attempt)  # so the writers that met do not meet again at once
        raise AssertionError("unreachable")

    return wrapper


ANY_OWNER = object()  # `lock(owner=…)` default: the shop itself (storefront, admin, sweeps) may touch any checkout


def lock(
    checkout_id: str,
    *,
    owner: object = ANY_OWNER,
    card_brief: bool = False,
    lines: bool = False,
) -> Checkout:
    """Row-lock the checkout, after its reference lock (`payments.locks`), in one statement.

    Settlement locks a Pix charge and then (through charge_settled) the checkout, and a charge can become
    active while a writer holds the checkout; both take the reference lock first, so neither can hold one
    of the rows the other waits for.
    `owner`: a BCP caller (`access.CheckoutOwner`); a checkout it does not own (another platform's, another
    anonymous caller's) is `CheckoutNotFound` (checked under the lock, so the write needs no ownership read).
    `card_brief`: also read, in the same statement, what payments knows of a card payment for this
    checkout (`checkout.card_payment_brief`, see `payments.services.card_payment_brief_sql`).
    `lines`: the lines come in the same statement (`checkout.lines.all()`, in position order, each with its
    variant's live columns, `LIVE_ANNOTATIONS`); the checkout's row is the one locked.

    A statement that waited reads everything but the locked row as it was when it began (READ COMMITTED:
    only the locked row is read again after the wait). When the row changed meanwhile, the writer it waited
    for may have changed the lines or the card payment too, so they are read once more, now under the lock.
    """
    checkout = _locked(checkout_id, owner=owner, card_brief=card_brief, lines=lines, wait=True)
    if checkout is None:  # only a sweep's `lock_if_free` finds nothing without raising
        raise CheckoutNotFound(checkout_id)
    return checkout


def lock_if_free(checkout_id: str) -> Checkout | None:
    """`lock` for the sweeps: None, at once, when another transaction holds the checkout or its reference
    lock (it is looked at again on the next run)."""
    return _locked(checkout_id, owner=ANY_OWNER, card_brief=False, lines=False, wait=False)


def _locked(checkout_id: str, *, owner: object, card_brief: bool, lines: bool, wait: bool) -> Checkout | None:
    found = _locking_statement(checkout_id, card_brief=card_brief, lines=lines, wait=wait)
    if found and getattr(found[0], "lock_waited_past_a_change", False):
        found = _locking_statement(checkout_id, card_brief=card_brief, lines=lines, wait=True)
    if not found:
        if not wait:
            return None
        if lines:  # no lines (rare: removing every line cancels): lock the checkout alone
            return with_lines(lock(checkout_id, owner=owner, card_brief=card_brief), [])
        raise CheckoutNotFound(checkout_id)
    if not lines:
        checkout = found[0]
        _check_owner(checkout, owner)
        return checkout
    checkout = found[0].checkout
    if hasattr(found[0], "card_payment_brief"):
        checkout.card_payment_brief = found[0].card_payment_brief
    for line in found:
        line.checkout = checkout  # one instance for all of them, as a prefetch would give
    _check_owner(checkout, owner)
    return with_lines(checkout, found)


def _locking_statement(checkout_id: str, *, card_brief: bool, lines: bool, wait: bool) -> list:
    """The rows of `lock`'s one statement: the checkout, or its lines with the checkout joined."""
    # The statement is the same for every checkout but its id, and compiling it (a join, live-stock annotations,
    # extra selects) cost more CPU than anything else in an update or a complete (issue 34, about a seventh of a
    # purchase's web-process CPU): each of its few shapes is compiled once per process, the id bound in its
    # places (the row, the reference lock, the card brief).
    shape = ("checkout.lock", connection.alias, connection.vendor, card_brief, lines, wait)
    read = compiled(shape, lambda any_id: _locking_queryset(any_id, card_brief=card_brief, lines=lines, wait=wait))
    return read.rows(checkout_id)


def _locking_queryset(checkout_id: str, *, card_brief: bool, lines: bool, wait: bool) -> QuerySet:
    if lines:
        rows = (
            CheckoutLine.objects.select_for_update(of=("checkout",))
            .select_related("checkout")
            .filter(checkout__public_id=checkout_id)
            .annotate(**LIVE_ANNOTATIONS)
            .order_by("position", "id")
        )
    else:
        rows = Checkout.objects.select_for_update(skip_locked=not wait).filter(public_id=checkout_id)
    table = connection.ops.quote_name(Checkout._meta.db_table)
    if (reference_lock := reference_lock_where(wait=wait)) is not None:
        rows = rows.extra(where=[reference_lock], params=[checkout_id])  # noqa: S610 — constant SQL
        # The subquery reads the row as of the statement's start; the row itself is locked as it is now.
        rows = rows.extra(  # noqa: S610 — constant SQL
            select={"lock_waited_past_a_change": f"{table}.xmin <> (SELECT as_begun.xmin FROM {table}"  # noqa: S608
                                                  f" AS as_begun WHERE as_begun.id = {table}.id)"},
        )  # fmt: skip
    if card_brief:
        rows = rows.extra(select={"card_payment_brief": card_payment_brief_sql()}, select_params=[checkout_id])  # noqa: S610
    return rows


def _check_owner(checkout: Checkout, owner: object) -> None:
    if owner is not ANY_OWNER and not (isinstance(owner, CheckoutOwner) and owner.owns(checkout)):
        raise CheckoutNotFound(checkout.public_id)


def read_versioned(checkout_id: str, *, owner: object, card_brief: bool = False) -> Checkout | None:
    """The checkout with its lines as `lock(lines=True)` reads them, but with no lock (and no transaction): one
    SELECT, with the version of the checkout's row as read (`checkout.row_version`: PostgreSQL's `xmin`, which
    every write of the row changes) for a write made only while the row is still that version
    (`save_with_event(version=…)`, `save_if_unchanged`): an update checked optimistically instead of locked
    first (issue 34). Every write of a checkout's lines writes its checkout too (`apply` and its callers), so an
    unchanged row means unchanged lines. None where the locked path must answer: not PostgreSQL, not found, not
    the owner's, no lines. `card_brief`: as `lock`'s."""
    if connection.vendor != "postgresql" or "\x00" in checkout_id:
        return None
    shape = ("checkout.versioned", connection.alias, card_brief)
    found = compiled(shape, lambda any_id: _versioned_queryset(any_id, card_brief=card_brief)).rows(checkout_id)
    if not found:
        return None
    checkout = found[0].checkout
    checkout.row_version = found[0].row_version
    if card_brief:
        checkout.card_payment_brief = found[0].card_payment_brief
    for line in found:
        line.checkout = checkout  # one instance for all of them, as a prefetch would give
    if owner is not ANY_OWNER and not (isinstance(owner, CheckoutOwner) and owner.owns(checkout)):
        return None
    return with_lines(checkout, found)


def _versioned_queryset(checkout_id: str, *, card_brief: bool) -> QuerySet:
    table = connection.ops.quote_name(Checkout._meta.db_table)
    rows = (
        CheckoutLine.objects.select_related("checkout")
        .filter(checkout__public_id=checkout_id)
        .annotate(**LIVE_ANNOTATIONS)
        .order_by("position", "id")
        .extra(select={"row_version": f"{table}.xmin::text"})  # noqa: S610 — constant SQL
    )
    if card_brief:
        rows = rows.extra(select={"card_payment_brief": card_payment_brief_sql()}, select_params=[checkout_id])  # noqa: S610
    return rows


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
    event_of(checkout, kind, from_status, detail).save()


def event_of(checkout: Checkout, kind: str, from_status: str, detail: dict[str, object] | None) -> CheckoutEvent:
    return new_row(
        CheckoutEvent,
        checkout=checkout,
        kind=kind,
        from_status=from_status,
        to_status=checkout.status,
        detail=detail or {},
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
    version: str | None = None,
) -> bool:
    """The checkout's UPDATE and its event in one statement (`kernel.rows.update_where`). `fields`: the
    columns to write (default: those of `Checkout.written_fields()`, what `save()` writes, that changed since
    the checkout was read);
    `where`: columns the row must still have, else nothing is written and the answer is False.
    `guard`: a conditional write that must succeed for the checkout to be written (`update_where`).
    `version`: the row's version as `read_versioned` read it; nothing is written (False) when the row changed
    since."""
    if checkout.pk is None:
        checkout.save()
        event(checkout, kind, from_status, detail)
        return True
    whole = fields is None
    if fields is None:
        fields = checkout.written_fields()
    event_row = event_of(checkout, kind, from_status, detail)
    # A whole save writes only the columns that changed since the checkout was read under its lock.
    return update_where(
        checkout, fields, where=where, event=event_row, guard=guard, changed_only=whole, version=version
    )


def save_if_unchanged(checkout: Checkout, version: str) -> bool:
    """`checkout.save()` of a checkout read by `read_versioned` (its changed columns, one UPDATE), made only while
    the row is still the version read (False, nothing written, when it changed since)."""
    return update_where(checkout, checkout.written_fields(), changed_only=True, version=version)


def apply(
    checkout: Checkout,
    ev: Evaluation,
    messages: list[CheckoutMessage],
    existing: list[CheckoutLine],
    *,
    save: bool = True,
    created: dict[str, object] | None = None,
) -> None:
    """Write an evaluation: columns, snapshot, lines (≤ 4 statements whatever the line count; lines whose
    values did not change are not written). `save=False` leaves the checkout's own UPDATE to the caller,
    who saves it once with the status it decides next. A new checkout is inserted with its lines and events
    in one statement (`kernel.rows.insert_together`), its `created` event (that detail) among them."""
    adding = checkout.pk is None
    events = set_evaluated(checkout, ev, messages)
    if created is not None:
        events.append(event_of(checkout, "created", "", created))
    if not adding:
        if save:
            checkout.save()
        for row in events:
            row.save()
    plan = plan_lines(checkout, ev, existing)
    if adding:
        insert_together(checkout, plan.to_create, events)
    else:
        write_lines(plan)
    with_lines(checkout, plan.lines)


def set_evaluated(checkout: Checkout, ev: Evaluation, messages: list[CheckoutMessage]) -> list[CheckoutEvent]:
    """`apply`'s columns, set on the checkout (nothing written): the events they call for (a consent change)."""
    previous_consent = checkout.buyer_consent
    for name, value in ev.fields.items():
        setattr(checkout, name, value)
    checkout.messages = [m.as_dict() for m in messages]
    checkout.policies_shown = policy_digests(checkout.language)  # what this response shows (complete compares)
    events: list[CheckoutEvent] = []
    if checkout.buyer_consent != previous_consent:  # the LGPD evidence trail, append-only
        events.append(event_of(checkout, "consent_changed", checkout.status, {"consent": checkout.buyer_consent}))
    return events


LINE_FIELDS = ["position", "variant", "sku", "title", "image_url", "unit_price", "quantity", "requires_shipping"]


@dataclass(frozen=True, slots=True)
class LinePlan:
    """`apply`'s line writes: the pks to delete, the rows to update and to insert, and every line after them (in
    position order, set to their evaluated values)."""

    stale: list[int]
    to_update: list[CheckoutLine]
    to_create: list[CheckoutLine]
    lines: list[CheckoutLine]

    @property
    def writes(self) -> bool:
        return bool(self.stale or self.to_update or self.to_create)


def write_lines(plan: LinePlan) -> None:
    """A stored checkout's line writes (≤ 3 statements whatever the line count): deleted, updated, inserted."""
    if plan.stale:
        CheckoutLine.objects.filter(pk__in=plan.stale).delete()
    if plan.to_update:
        CheckoutLine.objects.bulk_update(plan.to_update, LINE_FIELDS)
    if plan.to_create:
        CheckoutLine.objects.bulk_create(plan.to_create)


def plan_lines(checkout: Checkout, ev: Evaluation, existing: list[CheckoutLine]) -> LinePlan:
    """The lines of an evaluation against the stored ones (`existing`); a line whose values did not change is
    kept as stored (nothing to write for it)."""
    keep = {line.public_id for line in ev.lines}
    stale = [line.pk for line in existing if line.public_id not in keep]
    by_id = {line.public_id: line for line in existing}
    to_update: list[CheckoutLine] = []
    to_create: list[CheckoutLine] = []
    kept: list[CheckoutLine] = []
    for position, planned in enumerate(ev.lines):
        row = by_id.get(planned.public_id) or new_row(CheckoutLine, checkout=checkout, public_id=planned.public_id)
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
    lines = sorted([*kept, *to_update, *to_create], key=lambda row: row.position)
    return LinePlan(stale, to_update, to_create, lines)


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
    context = ContextInput.stored(checkout.context) if checkout.context else None
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


AWAITING_PAYMENT_CODES = frozenset({"pix_awaiting_payment", "card_payment_pending"})
ASKS_INPUT = frozenset({"recoverable", "requires_buyer_input", "requires_buyer_review"})


def cancel(checkout: Checkout, *, kind: str, refund_reason: str = "Checkout cancelado antes da conclusão") -> None:
    previous = checkout.status
    release_holdings(checkout)
    if checkout.paid_at is not None:
        # Paid before complete, then canceled or expired: no order will take the money (PIX.md §3.2).

        refund_unplaced(reference=checkout.public_id, reason=refund_reason)
    checkout.status = STATUS_CANCELED
    checkout.canceled_at = timezone.now()
    # A payment that was awaited is not any more: a canceled checkout said "Aguardando o pagamento do Pix."
    # after its charge was revoked (QA walk over REST). Nor does a canceled checkout take input: its errors that
    # asked for some ("Informe o e-mail.", recoverable) sent agents to fix a checkout that can no longer change.
    kept = [
        m
        for m in checkout.messages or []
        if m.get("code") not in AWAITING_PAYMENT_CODES
        and not (m.get("type") == "error" and m.get("severity") in ASKS_INPUT)
    ]
    if kind == "expired":  # nobody asked for this cancel: say why (BCP-CHK-15)
        with translation.override(checkout.language or "pt-br"):
            said = _("O checkout expirou sem ser concluído; crie um novo para comprar.")
        kept.append(CheckoutMessage(type="info", code="checkout_expired", content=said).as_dict())
    if kept != (checkout.messages or []):
        checkout.messages = kept
    save_with_event(checkout, kind, previous)


def expire_if_due(checkout: Checkout, now: datetime) -> bool:
    if checkout.status in TERMINAL_STATUSES or checkout.expires_at is None or checkout.expires_at > now:
        return False
    cancel(checkout, kind="expired")
    return True
