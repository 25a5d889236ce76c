"""What paying takes before the money moves: the Pix charge of a checkout on create/update, and the stock and
coupon uses a charge or a complete holds.

## The Pix charge

The Pix charge of a checkout on create/update (PIX.md §2.2–2.4), with the PSP call outside any lock.

While a checkout is `ready_for_complete` with the Pix instrument selected it carries an active charge for
exactly its total; any other state revokes it. The write's own transaction decides (`pix_charge_plan`):
reuse the active charge (a read), revoke it (rows only, the PSP cancel runs after commit), or issue a new
one. Issuing talks to the PSP (the Bacen client retries 3 × 10 s), so it runs after that transaction
committed, with no transaction open (`pix_charge_issue`), and a second short transaction records the
outcome: the checkout's expiry follows the charge, or `pix_psp_unavailable` → `incomplete`.

Stock and coupon uses are reserved in the write's transaction, before the PSP call
(`hold_for_charge`, below), and given back when the PSP fails.

Crash states: killed between the two, the checkout is `ready_for_complete` without a charge, holding its
reservation until the next write re-plans, complete issues the missing charge itself
(shop/checkout/complete.py), or the checkout expires. A charge issued at the PSP but not recorded is expired there.

## Holdings

What a Pix charge or a complete holds: the instrument check, stock and coupon uses taken and given back
(BCP §11.3, PIX.md §3).

Stock and coupon uses are reserved when a Pix charge is issued for the checkout (`hold_for_charge`, in the
create/update transaction, before the PSP call) and held for the charge's lifetime, else at complete (card,
or Pix without a charge yet); shop/checkout/stock.py explains why not earlier. A buyer is refused before paying, not
refunded after (issue 31). A reservation is taken in the caller's transaction, in a savepoint,
all-or-nothing; `unreserve` gives back what `reserve` took, and a checkout already holding one
(`stock_reserved`) never takes a second: placement keeps the units taken. One variant and no coupon (the usual card
complete) need no savepoint at all: `reserve_and_save_status` takes the units in the statement that writes
the checkout and its event.
"""

from __future__ import annotations

import contextlib
import logging

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from kernel.rows import VERSION_LOCKED
from payments.exceptions import PaymentInputError
from payments.psp import PSPRejected, PSPUnavailable
from payments.selectors import pix_charge_active_for_reference
from payments.services import pix_charge_ensure, pix_charge_revoke_for_reference
from shop.checkout.core import PIX_SETTLEMENT_GRACE, lock, release_reserved, retried_on_deadlock, save_with_event
from shop.checkout.evaluate import Evaluation, unoffered
from shop.checkout.pricing import coupon_redemptions_record
from shop.checkout.selectors import kept_lines
from shop.checkout.stock import StockUnavailable, stock_release, stock_reserve, stock_take_sql, stock_to_take
from shop.checkout.types import STATUS_INCOMPLETE, STATUS_READY, CheckoutMessage, InstrumentInput, PaymentInput
from shop.models import Checkout, CheckoutLine, CouponRedemption
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


def charge_description(checkout: Checkout) -> str:
    """What the payer's bank app shows: "Loja Exemplo — compra 3F9A2C" (solicitacaoPagador, ≤ 140). No order
    number: orders are numbered only when placed (issue 33: no gaps), and the code is the end of the checkout's
    public id, which the order keeps (staff find it by `checkout_…`)."""
    return f"{store_get().trade_name} — compra {checkout.public_id[-6:].upper()}"[:140]


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


def card_handler_id() -> str:
    return getattr(settings, "BCP_CARD_HANDLER_ID", "gpay")


def _wrong_type(instrument: InstrumentInput, expected: str) -> str:
    """Which handler, the one type it takes and the type sent: "Instrumento incompatível com o Pix." left the agent to
    guess which member was wrong and what to send instead (BCP §5.1)."""
    return _("O meio de pagamento %(handler)s aceita type “%(expected)s”, não “%(sent)s”.") % {
        "handler": instrument.handler_id,
        "expected": expected,
        "sent": instrument.type,
    }


def instrument_problem(payment: PaymentInput, offered: tuple[str, ...] | None = None) -> CheckoutMessage | None:
    """BCP §11.3 / PIX.md §3 step 2: exactly one instrument of a handler this checkout offers (`offered`,
    BCP §11.2: "a handler `id` of this checkout") and of a matching type."""
    if len(payment.instruments) != 1:
        return err("payment_failed", _("Informe exatamente um meio de pagamento."), "$.payment.instruments")
    instrument = payment.instruments[0]
    if offered is not None and instrument.handler_id not in offered:
        return unoffered(instrument.handler_id, offered, 0)
    if instrument.handler_id == settings.PIX_HANDLER_ID:
        if instrument.type != "pix":
            return err("pix_instrument_mismatch", _wrong_type(instrument, "pix"), f"{INSTRUMENT_PATH}.type")
        return None
    if instrument.handler_id == card_handler_id() and getattr(settings, "BCP_CARD_ENABLED", True):
        if instrument.type != "card":
            return err("payment_failed", _wrong_type(instrument, "card"), f"{INSTRUMENT_PATH}.type")
        if not (instrument.credential or {}).get("token"):
            return err("payment_failed", _("Informe o token do cartão."), f"{INSTRUMENT_PATH}.credential")
        return None
    if instrument.handler_id == getattr(settings, "BCP_BOLETO_HANDLER_ID", "br.dev.bcp.boleto"):
        if instrument.type != "boleto":  # issue 37: the boleto handler (shop/checkout/boleto.py)
            return err("payment_failed", _wrong_type(instrument, "boleto"), f"{INSTRUMENT_PATH}.type")
        return None
    return err("payment_failed", _("Meio de pagamento desconhecido."), f"{INSTRUMENT_PATH}.handler_id")


def lines_of(checkout: Checkout) -> list[CheckoutLine]:
    """The checkout's lines in position order."""
    return list(CheckoutLine.objects.filter(checkout=checkout).order_by("position", "id"))


def _stock_items(lines: list[CheckoutLine]) -> list[tuple[int, int]]:
    return [(line.variant_id, line.quantity) for line in lines if line.variant_id is not None]


def _backorder(ev: Evaluation) -> set[int]:
    """The evaluated lines' variants that are made to order (no stock is taken for them)."""
    return {line.variant_id for line in ev.lines if line.allow_backorder and line.variant_id is not None}


def reserve(checkout: Checkout, lines: list[CheckoutLine], ev: Evaluation) -> list[CheckoutMessage]:
    """Take stock and coupon uses in a savepoint; returns blocking messages (nothing taken) or [].
    A checkout that already holds them (reserved with its Pix charge) takes nothing again."""
    if checkout.stock_reserved:
        return []
    items, backorder = _stock_items(lines), _backorder(ev)
    # The savepoint gives back the units taken so far if anything after them fails. One conditional UPDATE
    # and no coupon takes nothing when it fails, so it needs none (two statements fewer).
    single = len(stock_to_take(items, backorder)) <= 1 and not ev.coupons.coupons
    try:
        with transaction.atomic() if not single else contextlib.nullcontext():
            stock_reserve(items=items, backorder=backorder, savepoint=False)
            exhausted = coupon_redemptions_record(
                checkout_pk=checkout.pk, email=checkout.buyer_email, evaluation=ev.coupons
            )
            if exhausted:
                raise _CouponsExhausted(exhausted)
    except StockUnavailable as exc:
        failed = set(exc.variant_pks)
        return [
            err(
                "out_of_stock",
                _("%(title)s ficou sem estoque enquanto você finalizava.") % {"title": line.title},
                f"$.line_items[{index}]",
            )
            for index, line in enumerate(lines)
            if line.variant_id in failed
        ]
    except _CouponsExhausted as exc:
        return [
            err(
                "discount_code_invalid",
                _("O cupom %(code)s esgotou; revise o pedido.") % {"code": code},
                "$.discounts.codes",
            )
            for code in exc.codes
        ]
    checkout.stock_reserved = True
    return []


def reserve_and_save_status(
    checkout: Checkout,
    lines: list[CheckoutLine],
    ev: Evaluation,
    status: str,
    kind: str,
    *,
    version: str | None = None,
) -> bool | None:
    """`reserve` and `save_status` as one statement, when the reservation is one conditional UPDATE (one
    variant to take, no coupon): the checkout and its event are written only if the units were taken.
    True: done; False: not enough stock, nothing written (`reserve` then says which line); None: the
    reservation needs more than one statement, or is already held (use `reserve`). `version`: the checkout's
    row version as `read_versioned` read it (no lock held): False too when the row changed since."""
    take = _one_take(checkout, lines, ev)
    if take is None:
        return None
    previous = checkout.status
    checkout.status = status
    if _save_taking(checkout, take, kind, previous, version):
        return True
    checkout.status = previous
    return False


def _one_take(checkout: Checkout, lines: list[CheckoutLine], ev: Evaluation) -> tuple[int, int] | None:
    """The one `(variant_pk, quantity)` a fresh reservation takes when it is one conditional UPDATE (one
    variant to take, no coupon, nothing held yet), else None."""
    wanted = stock_to_take(_stock_items(lines), _backorder(ev))
    if len(wanted) != 1 or ev.coupons.coupons or checkout.stock_reserved:
        return None
    return wanted[0]


def _save_taking(
    checkout: Checkout, take: tuple[int, int], kind: str, previous: str, version: str | None = None
) -> bool:
    """The checkout, its event and the units `take` in one statement: all three, or none (False)."""
    variant_pk, quantity = take
    checkout.stock_reserved = True
    only_if = VERSION_LOCKED if version is not None else ""
    guard = stock_take_sql(variant_pk=variant_pk, quantity=quantity, only_if=only_if)
    if save_with_event(checkout, kind, previous, guard=guard, version=version):
        return True
    checkout.stock_reserved = False
    return False


class _CouponsExhausted(Exception):
    def __init__(self, codes: list[str]) -> None:
        super().__init__(", ".join(codes))
        self.codes = codes


def unreserve(checkout: Checkout, lines: list[CheckoutLine]) -> None:
    if checkout.stock_reserved:
        stock_release(items=_stock_items(lines))
        checkout.stock_reserved = False
    CouponRedemption.objects.filter(checkout=checkout).delete()


HeldKey = tuple[tuple[tuple[int, int], ...], tuple[str, ...], str]


def held_key(checkout: Checkout, lines: list[CheckoutLine]) -> HeldKey:
    """What a reservation of this checkout covers: its units, its applied coupons and the e-mail they count for.
    Read before a write changes them, so `hold_for_charge` knows whether the held reservation still fits."""
    codes = tuple(sorted(str(applied.get("code", "")) for applied in checkout.discounts_applied or []))
    return tuple(sorted(_stock_items(lines))), codes, checkout.buyer_email


def wants_charge(checkout: Checkout) -> bool:
    """The checkout will carry an active Pix charge (PIX.md §2.2): ready, Pix selected, a payable total."""
    return (
        checkout.status == STATUS_READY
        and is_pix(checkout.payment_instrument)
        and settings.PIX_MIN_AMOUNT <= checkout.total_amount <= settings.PIX_MAX_AMOUNT
    )


def hold_for_charge(checkout: Checkout, ev: Evaluation, held: HeldKey | None) -> bool:
    """In the write's transaction, after `apply`, before the checkout is saved and before any PSP call: a
    checkout that will carry a Pix charge holds its stock and coupon uses for the charge's lifetime (given
    back when the charge expires, the PSP fails, or the checkout changes or is canceled); any other gives
    back what it held. `held`: `held_key` before the write. On a refusal the checkout turns `incomplete`
    with the reason, so no charge is issued. True when the checkout's columns changed (caller saves)."""
    if checkout.paid_at is not None:
        return False  # paid before complete: what it holds is the payment's (PIX.md §3.1)
    lines = kept_lines(checkout)  # as `apply` just wrote them (no query)
    wanted = wants_charge(checkout)
    if checkout.stock_reserved and (not wanted or held != held_key(checkout, lines)):
        if held is not None:
            stock_release(items=held[0])
        CouponRedemption.objects.filter(checkout=checkout).delete()
        checkout.stock_reserved = False
        if not wanted:
            return True
    elif checkout.stock_reserved or not wanted:
        return False
    blocking = reserve(checkout, lines, ev)
    if blocking:
        checkout.status = STATUS_INCOMPLETE
        checkout.messages = [*checkout.messages, *(m.as_dict() for m in blocking)]
    return True


def save_holding(checkout: Checkout, ev: Evaluation, held: HeldKey | None, previous: str) -> None:
    """`hold_for_charge`, then the checkout's save (with a `status_changed` event when its status moved from
    `previous`). A fresh hold of one variant and no coupon (the usual Pix update) is the guard of that save:
    one statement for the units, the checkout and the event (`stock_reserved` when the status stayed)."""
    lines = kept_lines(checkout)  # as `apply` just wrote them (no query)
    take = _one_take(checkout, lines, ev) if checkout.paid_at is None and wants_charge(checkout) else None
    kind = "status_changed" if checkout.status != previous else "stock_reserved"
    if take is not None and _save_taking(checkout, take, kind, previous):
        return
    hold_for_charge(checkout, ev, held)  # not enough stock (it says which line), or more than one statement
    if checkout.status != previous:
        save_with_event(checkout, "status_changed", previous)  # the row and its event: one statement
    else:
        checkout.save()
