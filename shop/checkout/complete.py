"""Completion (BCP §4.3, §11; PIX.md §2–§3): Pix charge attachment, complete, settlement, order placement.

- While a checkout is `ready_for_complete` with the Pix instrument selected, it carries an active
  charge for exactly its total (`pix_charge_ensure`, PIX.md §2.2–2.4); any other state revokes it.
- Complete (only from `ready_for_complete`, exactly one instrument): re-evaluates the stored state,
  reserves stock and coupon uses, then Pix → `complete_in_progress` (the charge stays payable until
  settled, canceled or expired); card → synchronous authorization → `completed` or `incomplete`
  with `payment_failed` (stock and coupon uses released).
- Settlement (`payments.charge_settled` via shop.receivers): `complete_in_progress` → order placed →
  `completed`; a payment for a still `ready_for_complete` checkout completes it at once (PIX.md
  §10 D1 without AP2: the Pix itself is the buyer's authorization); anything else is "rejected"
  so that payments refunds it.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from datetime import datetime

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from shop.checkout.core import (
    PIX_SETTLEMENT_GRACE,
    apply,
    event,
    expire_if_due,
    in_checkout_language,
    input_from_checkout,
    lock,
    reload,
    speak,
    status_error,
    stored_messages,
    with_status,
)
from shop.checkout.evaluate import Evaluation, evaluate
from shop.checkout.place import place_order
from shop.checkout.selectors import CheckoutNotFound
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
from shop.coupons import coupon_redemptions_record
from shop.models import Checkout, CheckoutLine, CouponRedemption
from shop.stock import StockUnavailable, stock_release, stock_reserve

logger = logging.getLogger(__name__)

INSTRUMENT_PATH = "$.payment.instruments[0]"


def _err(code: str, content: str, path: str) -> CheckoutMessage:
    return CheckoutMessage(type="error", code=code, content=content, severity="recoverable", path=path)


def card_handler_id() -> str:
    return getattr(settings, "BCP_CARD_HANDLER_ID", "gpay")


def _is_pix(instrument: dict[str, object] | None) -> bool:
    return (
        bool(instrument) and instrument.get("type") == "pix" and instrument.get("handler_id") == settings.PIX_HANDLER_ID
    )  # type: ignore[union-attr]


def _instrument_problem(payment: PaymentInput) -> CheckoutMessage | None:
    """BCP §11.3 / PIX.md §3 step 2: exactly one instrument of a known handler and matching type."""
    if len(payment.instruments) != 1:
        return _err("payment_failed", _("Informe exatamente um meio de pagamento."), "$.payment.instruments")
    instrument = payment.instruments[0]
    if instrument.handler_id == settings.PIX_HANDLER_ID:
        if instrument.type != "pix":
            return _err("pix_instrument_mismatch", _("Instrumento incompatível com o Pix."), f"{INSTRUMENT_PATH}.type")
        return None
    if instrument.handler_id == card_handler_id() and getattr(settings, "BCP_CARD_ENABLED", True):
        if instrument.type != "card":
            return _err("payment_failed", _("Instrumento incompatível com o cartão."), f"{INSTRUMENT_PATH}.type")
        if not (instrument.credential or {}).get("token"):
            return _err("payment_failed", _("Informe o token do cartão."), f"{INSTRUMENT_PATH}.credential")
        return None
    return _err("payment_failed", _("Meio de pagamento desconhecido."), f"{INSTRUMENT_PATH}.handler_id")


def _lines(checkout: Checkout) -> list[CheckoutLine]:
    return list(CheckoutLine.objects.filter(checkout=checkout).order_by("position", "id"))


def _stock_items(lines: list[CheckoutLine]) -> list[tuple[int, int]]:
    return [(line.variant_id, line.quantity) for line in lines if line.variant_id is not None]


def _save_status(checkout: Checkout, status: str, kind: str, extra: list[CheckoutMessage] | None = None) -> None:
    previous = checkout.status
    checkout.status = status
    if extra:
        checkout.messages = [*checkout.messages, *(m.as_dict() for m in extra)]
    checkout.save()
    event(checkout, kind, previous)


def _reserve(checkout: Checkout, lines: list[CheckoutLine], ev: Evaluation) -> list[CheckoutMessage]:
    """Take stock and coupon uses in a savepoint; returns blocking messages (nothing taken) or []."""
    try:
        with transaction.atomic():
            stock_reserve(items=_stock_items(lines))
            exhausted = coupon_redemptions_record(
                checkout_pk=checkout.pk, email=checkout.buyer_email, evaluation=ev.coupons
            )
            if exhausted:
                raise _CouponsExhausted(exhausted)
    except StockUnavailable as exc:
        failed = set(exc.variant_pks)
        return [
            _err("out_of_stock", f"{line.title} esgotou enquanto você finalizava.", f"$.line_items[{index}]")
            for index, line in enumerate(lines)
            if line.variant_id in failed
        ]
    except _CouponsExhausted as exc:
        return [
            _err(
                "discount_code_invalid",
                _("O cupom %(code)s esgotou; revise o pedido.") % {"code": code},
                "$.discounts.codes",
            )
            for code in exc.codes
        ]
    checkout.stock_reserved = True
    return []


class _CouponsExhausted(Exception):
    def __init__(self, codes: list[str]) -> None:
        super().__init__(", ".join(codes))
        self.codes = codes


def _unreserve(checkout: Checkout, lines: list[CheckoutLine]) -> None:
    if checkout.stock_reserved:
        stock_release(items=_stock_items(lines))
        checkout.stock_reserved = False
    CouponRedemption.objects.filter(checkout=checkout).delete()


@in_checkout_language
def checkout_complete(*, checkout_id: str, data: CompleteInput) -> CheckoutResult:
    from payments.exceptions import PaymentInputError
    from payments.psp import PSPRejected, PSPUnavailable

    now = timezone.now()
    with transaction.atomic():
        checkout = lock(checkout_id)
        speak(checkout.language)
        if expire_if_due(checkout, now) or checkout.status in (*TERMINAL_STATUSES, STATUS_IN_PROGRESS):
            return status_error(checkout, "concluir")
        if checkout.status != STATUS_READY:
            return CheckoutResult(checkout=reload(checkout_id), messages=stored_messages(checkout))
        problem = _instrument_problem(data.payment)
        if problem is not None:
            return CheckoutResult(checkout=reload(checkout_id), messages=[*stored_messages(checkout), problem])
        chosen = data.payment.instruments[0]
        existing = _lines(checkout)
        state = input_from_checkout(checkout, existing)
        state = replace(
            state,
            payment=PaymentInput(instruments=(InstrumentInput(chosen.id, chosen.handler_id, chosen.type),)),
            signals={**state.signals, **data.signals},
        )
        ev = evaluate(checkout=checkout, existing_lines=existing, data=state, now=now)
        previous_total, previous_instrument = checkout.total_amount, checkout.payment_instrument
        status, messages = with_status(ev, ev.rejections)
        checkout.status = status
        apply(checkout, ev, messages, existing)
        if status != STATUS_READY or ev.total_amount != previous_total:
            # Something changed since the platform last looked (stock, prices, coupon): no payment. A Pix
            # charge follows the new total (PIX.md §3 step 4: replaced, the platform completes again).
            event(checkout, "complete_refused", STATUS_READY, {"total": ev.total_amount})
            sync_pix(checkout, previous_instrument=previous_instrument)
            pix = chosen.type == "pix" and checkout.status == STATUS_READY
            changed = CheckoutMessage(
                type="warning",
                code="pix_charge_replaced" if pix else "checkout_changed",
                content=_("O total mudou; um novo Pix foi gerado, confira antes de concluir.")
                if pix
                else _("O checkout mudou; revise o total antes de concluir."),
                path=INSTRUMENT_PATH if pix else "$.totals",
            )
            return CheckoutResult(checkout=reload(checkout_id), messages=[*stored_messages(checkout), changed])
        if chosen.type == "pix" and not settings.PIX_MIN_AMOUNT <= checkout.total_amount <= settings.PIX_MAX_AMOUNT:
            # The handler is not offered for this total (PIX.md §1.3): nothing to charge.
            outside = _err("payment_failed", _("O Pix não está disponível para este valor."), INSTRUMENT_PATH)
            return CheckoutResult(checkout=reload(checkout_id), messages=[*stored_messages(checkout), outside])
        lines = _lines(checkout)
        blocking = _reserve(checkout, lines, ev)
        if blocking:
            _save_status(checkout, STATUS_INCOMPLETE, "complete_refused", blocking)
            return CheckoutResult(checkout=reload(checkout_id), messages=stored_messages(checkout))

        if chosen.type == "pix":
            try:
                charge = _ensure_charge(checkout)
            except (PSPUnavailable, PSPRejected, PaymentInputError):
                logger.warning("Pix charge could not be issued for %s", checkout_id, exc_info=True)
                _unreserve(checkout, lines)
                checkout.save()
                message = _err(
                    "pix_psp_unavailable", _("Pix indisponível no momento; tente novamente."), INSTRUMENT_PATH
                )
                return CheckoutResult(checkout=reload(checkout_id), messages=[*stored_messages(checkout), message])
            waiting = CheckoutMessage(
                type="info",
                code="pix_awaiting_payment",
                content=_("Aguardando o pagamento do Pix."),
                path=INSTRUMENT_PATH,
            )
            checkout.expires_at = max(checkout.expires_at or now, charge.expires_at + PIX_SETTLEMENT_GRACE)
            checkout.payment_txid = charge.txid
            _save_status(checkout, STATUS_IN_PROGRESS, "complete_accepted", [waiting])
            return CheckoutResult(checkout=reload(checkout_id), messages=stored_messages(checkout))

        from payments.services import card_payment_authorize

        result = card_payment_authorize(
            reference=checkout.public_id,
            amount=checkout.total_amount,
            handler_id=chosen.handler_id,
            token=str((chosen.credential or {}).get("token", "")),
        )
        if not result.approved:
            _unreserve(checkout, lines)
            failed = _err("payment_failed", result.message or _("Pagamento recusado."), INSTRUMENT_PATH)
            _save_status(checkout, STATUS_INCOMPLETE, "payment_failed", [failed])
            return CheckoutResult(checkout=reload(checkout_id), messages=stored_messages(checkout))
        checkout.payment_txid = result.payment_id
        place_order(checkout, payment_type="card", paid_amount=checkout.total_amount)
    return CheckoutResult(checkout=reload(checkout_id), messages=stored_messages(checkout))


def _ensure_charge(checkout: Checkout):
    from payments.services import pix_charge_ensure

    return pix_charge_ensure(
        reference=checkout.public_id,
        amount=checkout.total_amount,
        description=f"Pedido {checkout.public_id}",
        payer_name=f"{checkout.buyer_first_name} {checkout.buyer_last_name}".strip(),
        payer_tax_id=checkout.buyer_tax_id,
    )


def sync_pix(checkout: Checkout, *, previous_instrument: dict[str, object] | None) -> list[CheckoutMessage]:
    """Keep the Pix charge consistent with the checkout after create/update (PIX.md §2.2–2.4)."""
    is_pix = _is_pix(checkout.payment_instrument)
    if not is_pix and not _is_pix(previous_instrument):
        return []
    if is_pix and checkout.status == STATUS_READY:
        if not settings.PIX_MIN_AMOUNT <= checkout.total_amount <= settings.PIX_MAX_AMOUNT:
            return []  # handler not offered for this total (PIX.md §1.3): nothing to attach
        from payments.exceptions import PaymentInputError
        from payments.psp import PSPRejected, PSPUnavailable

        try:
            charge = _ensure_charge(checkout)
        except (PSPUnavailable, PSPRejected, PaymentInputError):
            logger.warning("Pix charge could not be issued for %s", checkout.public_id, exc_info=True)
            down = _err("pix_psp_unavailable", _("Pix indisponível no momento; tente novamente."), INSTRUMENT_PATH)
            _save_status(checkout, STATUS_INCOMPLETE, "pix_unavailable", [down])
            return []
        if checkout.expires_at is None or checkout.expires_at < charge.expires_at:
            checkout.expires_at = charge.expires_at + PIX_SETTLEMENT_GRACE
            checkout.save(update_fields=["expires_at", "updated_at"])
        return []
    from payments.services import pix_charge_revoke_for_reference

    pix_charge_revoke_for_reference(reference=checkout.public_id)
    return []


@in_checkout_language
def checkout_settle_pix(
    *, reference: str, amount: int, txid: str, end_to_end_id: str, paid_at: datetime | None = None
) -> str:
    """A Pix for `reference` settled (inside payments' transaction): "accepted" or "rejected"."""
    try:
        checkout = lock(reference)
    except CheckoutNotFound:
        return "rejected"
    speak(checkout.language)
    if checkout.status == STATUS_COMPLETED:
        # The same charge reported again is fine; any other payment of a completed checkout is refunded.
        return "accepted" if checkout.payment_txid == txid else "rejected"
    if checkout.status == STATUS_IN_PROGRESS:
        if amount != checkout.total_amount or (checkout.payment_txid and checkout.payment_txid != txid):
            return "rejected"
        place_order(checkout, payment_type="pix", paid_amount=amount)
        return "accepted"
    reopened = checkout.status == STATUS_INCOMPLETE and bool(checkout.payment_txid) and checkout.payment_txid == txid
    if (
        (checkout.status == STATUS_READY or reopened)
        and _is_pix(checkout.payment_instrument)
        and amount == checkout.total_amount
    ):
        # Paid before complete: complete now (PIX.md §10 D1, no AP2 mandate to wait for). Also an on-time
        # payment of a charge whose checkout was moved back to incomplete at expiry (PIX.md §3.2).
        lines = _lines(checkout)
        existing = list(lines)
        ev = evaluate(
            checkout=checkout, existing_lines=existing, data=input_from_checkout(checkout, existing), now=timezone.now()
        )
        if ev.total_amount != amount or with_status(ev, [])[0] != STATUS_READY:
            return "rejected"
        blocking = _reserve(checkout, lines, ev)
        if blocking:
            _save_status(checkout, STATUS_INCOMPLETE, "payment_rejected", blocking)
            return "rejected"
        checkout.payment_txid = txid
        place_order(checkout, payment_type="pix", paid_amount=amount)
        return "accepted"
    return "rejected"


@in_checkout_language
def checkout_pix_lapse_due(*, now: datetime | None = None, limit: int = 200) -> int:
    """`complete_in_progress` checkouts whose Pix charge expired unpaid → `incomplete` (PIX.md §3 table).

    Stock and coupon uses are released and `pix_charge_expired` tells the platform to select Pix again
    for a fresh charge. A payment made in time but reported late still completes (checkout_settle_pix).
    """
    now = now or timezone.now()
    candidates = list(
        Checkout.objects.filter(status=STATUS_IN_PROGRESS)
        .order_by("updated_at")
        .values_list("public_id", flat=True)[:limit]
    )
    return sum(checkout_pix_lapse(checkout_id=public_id, now=now) for public_id in candidates)


@in_checkout_language
def checkout_pix_lapse(*, checkout_id: str, now: datetime | None = None) -> bool:
    """One checkout of `checkout_pix_lapse_due` (also run lazily when its Pix page is read); True if it lapsed."""
    from payments.selectors import pix_charge_latest_for_reference

    now = now or timezone.now()
    with transaction.atomic():
        checkout = Checkout.objects.select_for_update(skip_locked=True).filter(public_id=checkout_id).first()
        if checkout is None or checkout.status != STATUS_IN_PROGRESS or not _is_pix(checkout.payment_instrument):
            return False
        charge = pix_charge_latest_for_reference(checkout_id)
        expired = (
            charge is None
            or charge.status in ("expired", "revoked")
            or (charge.status == "active" and charge.expires_at + PIX_SETTLEMENT_GRACE <= now)
        )
        if not expired:
            return False
        speak(checkout.language)
        _unreserve(checkout, _lines(checkout))
        checkout.messages = [m for m in checkout.messages if m.get("code") != "pix_awaiting_payment"]
        message = _err("pix_charge_expired", _("O Pix expirou sem pagamento; escolha o Pix de novo."), INSTRUMENT_PATH)
        _save_status(checkout, STATUS_INCOMPLETE, "pix_expired", [message])
    return True
