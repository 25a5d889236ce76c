"""The Pix charge of a checkout on create/update (PIX.md §2.2–2.4), with the PSP call outside any lock.

While a checkout is `ready_for_complete` with the Pix instrument selected it carries an active charge for
exactly its total; any other state revokes it. The write's own transaction decides (`pix_charge_plan`):
reuse the active charge (a read), revoke it (rows only, the PSP cancel runs after commit), or issue a new
one. Issuing talks to the PSP (the Bacen client retries 3 × 10 s), so it runs after that transaction
committed, with no transaction open (`pix_charge_issue`), and a second short transaction records the
outcome: the checkout's expiry follows the charge, or `pix_psp_unavailable` → `incomplete`.

Stock and coupon uses are reserved in the write's transaction, before the PSP call
(`shop.checkout.hold.hold_for_charge`), and given back here when the PSP fails.

Crash states: killed between the two, the checkout is `ready_for_complete` without a charge, holding its
reservation until the next write re-plans, complete issues the missing charge itself
(shop/checkout/complete.py), or the checkout expires. A charge issued at the PSP but not recorded is expired there.
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from orders.services import order_number_reserve
from payments.exceptions import PaymentInputError
from payments.psp import PSPRejected, PSPUnavailable
from payments.selectors import pix_charge_active_for_reference
from payments.services import pix_charge_ensure, pix_charge_revoke_for_reference
from shop.checkout.core import PIX_SETTLEMENT_GRACE, release_reserved, save_with_event
from shop.checkout.lock import lock, retried_on_deadlock
from shop.checkout.types import STATUS_INCOMPLETE, STATUS_READY, CheckoutMessage
from shop.models import Checkout
from shop.store.services import store_get

logger = logging.getLogger(__name__)

INSTRUMENT_PATH = "$.payment.instruments[0]"


def err(code: str, content: str, path: str) -> CheckoutMessage:
    return CheckoutMessage(type="error", code=code, content=content, severity="recoverable", path=path)


def is_pix(instrument: dict[str, object] | None) -> bool:
    return (
        bool(instrument) and instrument.get("type") == "pix" and instrument.get("handler_id") == settings.PIX_HANDLER_ID
    )  # type: ignore[union-attr]


def save_status(checkout: Checkout, status: str, kind: str, extra: list[CheckoutMessage] | None = None) -> None:
    previous = checkout.status
    checkout.status = status
    if extra:
        checkout.messages = [*checkout.messages, *(m.as_dict() for m in extra)]
    save_with_event(checkout, kind, previous)  # one statement


def reserved_order_number(checkout: Checkout) -> int:
    """The checkout's future order number, reserved on first need (one UPDATE, no lock held)."""
    if checkout.order_number is None:
        number = order_number_reserve()
        if not Checkout.objects.filter(pk=checkout.pk, order_number__isnull=True).update(order_number=number):
            number = Checkout.objects.values_list("order_number", flat=True).get(pk=checkout.pk)  # a concurrent one
        checkout.order_number = number
    return checkout.order_number


def charge_description(checkout: Checkout) -> str:
    """What the payer's bank app shows: "Loja Exemplo — pedido #1001" (solicitacaoPagador, ≤ 140)."""
    return f"{store_get().trade_name} — pedido #{reserved_order_number(checkout)}"[:140]


def ensure_charge(checkout: Checkout):
    """May call the PSP: never inside a transaction that holds a lock."""
    return pix_charge_ensure(
        reference=checkout.public_id,
        amount=checkout.total_amount,
        description=charge_description(checkout),
        payer_name=f"{checkout.buyer_first_name} {checkout.buyer_last_name}".strip(),
        payer_tax_id=checkout.buyer_tax_id,
    )


def charge_errors() -> tuple[type[Exception], ...]:
    # IntegrityError: a concurrent ensure for another amount won the one-active-charge race.
    return (PSPUnavailable, PSPRejected, PaymentInputError, IntegrityError)


def usable_charge(checkout: Checkout):
    """The active charge when it already fits the checkout (no PSP call needed), else None."""
    active = pix_charge_active_for_reference(checkout.public_id)
    if active is not None and active.amount == checkout.total_amount and active.expires_at > timezone.now():
        return active
    return None


def _follow_charge(checkout: Checkout, charge) -> None:
    if checkout.expires_at is None or checkout.expires_at < charge.expires_at:
        checkout.expires_at = charge.expires_at + PIX_SETTLEMENT_GRACE
        checkout.save(update_fields=["expires_at", "updated_at"])


def pix_charge_plan(checkout: Checkout, *, previous_instrument: dict[str, object] | None) -> bool:
    """Inside the write's transaction: reuse or revoke; True when a charge must be issued after commit."""
    selected = is_pix(checkout.payment_instrument)
    if not selected and not is_pix(previous_instrument):
        return False
    if selected and checkout.status == STATUS_READY:
        if not settings.PIX_MIN_AMOUNT <= checkout.total_amount <= settings.PIX_MAX_AMOUNT:
            return False  # handler not offered for this total (PIX.md §1.3): nothing to attach
        charge = usable_charge(checkout)
        if charge is None:
            return True
        _follow_charge(checkout, charge)
        return False

    pix_charge_revoke_for_reference(reference=checkout.public_id)
    return False


def pix_charge_issue(checkout: Checkout) -> None:
    """After the write committed: issue the charge at the PSP, then record the outcome in a short transaction."""
    amount = checkout.total_amount
    try:
        charge = ensure_charge(checkout)
    except charge_errors():
        logger.warning("Pix charge could not be issued for %s", checkout.public_id, exc_info=True)
        charge = None
    _record_issued(checkout, charge, amount)


@retried_on_deadlock
def _record_issued(checkout: Checkout, charge, amount: int) -> None:
    """`pix_charge_issue`'s short transaction: the charge issued for `amount` (or None: the PSP failed) meets
    the checkout as it is now."""
    with transaction.atomic():
        current = lock(checkout.public_id)
        wants_pix = current.status == STATUS_READY and is_pix(current.payment_instrument)
        if not wants_pix or current.total_amount != amount:
            # Changed meanwhile by another write, which planned its own charge. But ours, issued later, may
            # have replaced the one that write made: never leave an active charge that does not fit the
            # checkout. Revoke it (rows; the PSP cancel runs after commit) and, if the checkout still wants
            # Pix, issue for its current total after this commit — as that write would have.
            if charge is not None and usable_charge(current) is None:
                pix_charge_revoke_for_reference(reference=current.public_id)
                if wants_pix:
                    transaction.on_commit(lambda: pix_charge_issue(current))
            return
        if charge is None:
            release_reserved(current)  # reserved for this charge before the PSP call (hold.hold_for_charge)
            down = err("pix_psp_unavailable", _("Pix indisponível no momento; tente novamente."), INSTRUMENT_PATH)
            save_status(current, STATUS_INCOMPLETE, "pix_unavailable", [down])
            return
        _follow_charge(current, charge)
