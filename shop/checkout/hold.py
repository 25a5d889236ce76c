"""What a complete holds: the instrument check, stock and coupon uses taken and given back (BCP §11.3, PIX.md §3).

Stock is reserved at complete (shop/checkout/stock.py explains why) in the caller's transaction, in a savepoint,
all-or-nothing; `unreserve` gives back what `reserve` took. One variant and no coupon (the usual card
complete) need no savepoint at all: `reserve_and_save_status` takes the units in the statement that writes
the checkout and its event.
"""

from __future__ import annotations

import contextlib

from django.conf import settings
from django.db import transaction
from django.utils.translation import gettext as _

from shop.checkout.core import save_with_event
from shop.checkout.coupons import coupon_redemptions_record
from shop.checkout.evaluate import Evaluation
from shop.checkout.pix import INSTRUMENT_PATH, err
from shop.checkout.stock import StockUnavailable, stock_release, stock_reserve, stock_take_sql, stock_to_take
from shop.checkout.types import CheckoutMessage, PaymentInput
from shop.models import Checkout, CheckoutLine, CouponRedemption


def card_handler_id() -> str:
    return getattr(settings, "BCP_CARD_HANDLER_ID", "gpay")


def instrument_problem(payment: PaymentInput, offered: tuple[str, ...] | None = None) -> CheckoutMessage | None:
    """BCP §11.3 / PIX.md §3 step 2: exactly one instrument of a handler this checkout offers (`offered`,
    BCP §11.2: "a handler `id` of this checkout") and of a matching type."""
    if len(payment.instruments) != 1:
        return err("payment_failed", _("Informe exatamente um meio de pagamento."), "$.payment.instruments")
    instrument = payment.instruments[0]
    if offered is not None and instrument.handler_id not in offered:
        text = _("Meio de pagamento não oferecido neste checkout.")
        return err("payment_failed", text, f"{INSTRUMENT_PATH}.handler_id")
    if instrument.handler_id == settings.PIX_HANDLER_ID:
        if instrument.type != "pix":
            return err("pix_instrument_mismatch", _("Instrumento incompatível com o Pix."), f"{INSTRUMENT_PATH}.type")
        return None
    if instrument.handler_id == card_handler_id() and getattr(settings, "BCP_CARD_ENABLED", True):
        if instrument.type != "card":
            return err("payment_failed", _("Instrumento incompatível com o cartão."), f"{INSTRUMENT_PATH}.type")
        if not (instrument.credential or {}).get("token"):
            return err("payment_failed", _("Informe o token do cartão."), f"{INSTRUMENT_PATH}.credential")
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
    """Take stock and coupon uses in a savepoint; returns blocking messages (nothing taken) or []."""
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
            err("out_of_stock", f"{line.title} esgotou enquanto você finalizava.", f"$.line_items[{index}]")
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
    checkout: Checkout, lines: list[CheckoutLine], ev: Evaluation, status: str, kind: str
) -> bool | None:
    """`reserve` and `save_status` as one statement, when the reservation is one conditional UPDATE (one
    variant to take, no coupon): the checkout and its event are written only if the units were taken.
    True: done; False: not enough stock, nothing written (`reserve` then says which line); None: the
    reservation needs more than one statement (use `reserve`)."""
    wanted = stock_to_take(_stock_items(lines), _backorder(ev))
    if len(wanted) != 1 or ev.coupons.coupons:
        return None
    previous = checkout.status
    checkout.status, checkout.stock_reserved = status, True
    (variant_pk, quantity), = wanted
    if save_with_event(checkout, kind, previous, guard=stock_take_sql(variant_pk=variant_pk, quantity=quantity)):
        return True
    checkout.status, checkout.stock_reserved = previous, False
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
