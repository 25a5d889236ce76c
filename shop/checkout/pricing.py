"""What a checkout costs beyond its variants' prices, read top to bottom: the Pix discount, discount codes
(coupons) and the card's parcelamento. Pure arithmetic in integer centavos plus the reads it needs.

## Pix discount

The payment-method discount "Pix: N % off" (issue 17): the arithmetic, in integer centavos.

Rule (written down once, used by the engine, the storefront and BCP alike):

- The rate is the store setting `StoreSettings.pix_discount_percent` (0.00–50.00 %), kept as basis
  points (`Store.pix_discount_bp`, 5 % = 500) so no float ever touches money.
- The base is what the buyer pays for the items: the subtotal **after coupons**, never the freight
  (shipping is a pass-through cost; most Brazilian shops discount the products only).
- discount = base × bp / 10 000, **rounded half to even** to the centavo (banker's rounding: a
  half-centavo goes to the even neighbour, so no direction is favoured over many orders).
  R$ 99,90 at 5 % → 499,5 centavos → 500 → "R$ 94,90 no Pix"; R$ 42,90 at 5 % → 214,5 → 214.
- The engine applies it as one order-level `discount` total ("Desconto Pix (5%)") and an automatic
  entry in `discounts.applied` only while the selected instrument is Pix (BCP §6, §10).

## Coupons

Discount codes (BCP §10): evaluation of `discounts.codes` against `Coupon` rows.

Codes are matched case-insensitively and echoed as given. Each accepted coupon is one
order-level `discount` total (negative) with display text "Cupom <CODE>"; percentages apply to
the subtotal (not compounded), and the sum of discounts never exceeds the subtotal. Rejected codes
stay in `codes` and get a `warning` at `$.discounts.codes[i]` with the BCP reason code.

## Card installments

The card instrument's parcelamento inside the engine: the chosen plan checked against the shop's policy.

The arithmetic and its rounding rules are `payments/installments.py`. Installments above the shop's
interest-free number add their interest as one `fee` total ("Juros do parcelamento (10x)"), so the
checkout total is what the card is charged and the installments sum to it exactly. The chosen plan is
kept on the stored instrument (`installments`, `installment_amount`, `first_installment`) and copied to
the order at placement.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from django.conf import settings
from django.db.models import Count, Exists, OuterRef, Q, QuerySet, Value
from django.utils.translation import gettext as _

from kernel.money import format_brl
from orders.selectors import orders_cancelled_with_nothing_kept
from payments.card.service import card_gateway_configured
from payments.installments import Installment, InstallmentPolicy, best_interest_free, plan_for
from payments.money import half_even
from shop.checkout.types import AppliedDiscountView, CheckoutMessage, InstrumentInput
from shop.models import Coupon, CouponRedemption
from shop.store.services import store_get

MAX_BP = 5000  # 50 %: anything above is a typing mistake, refused in the admin


def discount_half_even(base: int, bp: int) -> int:
    """`base` centavos × `bp` basis points / 10 000, rounded half to even; 0 for no base or no rate."""
    if base <= 0 or bp <= 0:
        return 0
    return min(half_even(base * bp, 10_000), base)


def pix_discount_bp() -> int:
    """The shop's Pix discount in basis points, from the cached store row (no query once cached)."""
    return store_get().pix_discount_bp


def percent_label(bp: int) -> str:
    """500 → "5%", 250 → "2,5%" (Brazilian decimal comma), 1234 → "12,34%"."""
    whole, cents = divmod(bp, 100)
    if not cents:
        return f"{whole}%"
    return f"{whole},{cents:02d}".rstrip("0") + "%"


def is_pix_instrument(instrument: dict[str, object] | None) -> bool:
    if not instrument:
        return False
    return instrument.get("type") == "pix" and instrument.get("handler_id") == settings.PIX_HANDLER_ID


def pix_price(amount: int, bp: int | None = None) -> int:
    """What `amount` (items, after coupons) costs paid by Pix."""
    rate = pix_discount_bp() if bp is None else bp
    return amount - discount_half_even(amount, rate)


def pix_discount_title(bp: int) -> str:
    """The automatic Pix discount's title and totals line, in the request's language like its messages."""
    return _("Desconto Pix (%(rate)s)") % {"rate": percent_label(bp)}


def coupon_total_text(code: str) -> str:
    """A coupon's `discount` line in the totals (checkout and cart), in the request's language."""
    return _("Cupom %(code)s") % {"code": code}


def pix_discount_applied(instrument: dict[str, object] | None, base: int) -> dict[str, object] | None:
    """The engine's automatic discount entry while Pix is selected (None: not Pix, no rate or nothing to discount).

    Stored in `Checkout.discounts_applied` like a coupon, without a code and `automatic: true` (BCP §10).
    """
    if not is_pix_instrument(instrument):
        return None
    bp = pix_discount_bp()
    amount = discount_half_even(base, bp)
    if amount <= 0:
        return None
    return {"code": "", "title": pix_discount_title(bp), "amount": amount, "method": "across", "automatic": True}


def pix_offer(*, items_after_coupons: int, total: int, pix_selected: bool) -> tuple[int, int]:
    """(discount, total paid by Pix) for a checkout or cart, for "R$ 94,90 no Pix" before Pix is chosen.

    With Pix already selected the total carries the discount: it is the Pix total as it stands.
    """
    if pix_selected:
        return 0, total
    discount = discount_half_even(items_after_coupons, pix_discount_bp())
    return discount, total - discount


@dataclass(frozen=True)
class CouponEvaluation:
    applied: tuple[AppliedDiscountView, ...]
    messages: tuple[CheckoutMessage, ...]
    coupons: tuple[Coupon, ...]  # accepted rows, same order as `applied`

    @property
    def total(self) -> int:
        return sum(a.amount for a in self.applied)


def _warning(index: int, code: str, content: str) -> CheckoutMessage:
    return CheckoutMessage(type="warning", code=code, content=content, path=f"$.discounts.codes[{index}]")


def _uses_that_count() -> QuerySet[CouponRedemption]:
    """Every recorded use of a coupon except those of an order cancelled in full before anything reached the buyer
    (`orders_cancelled_with_nothing_kept`): the buyer may use a first-purchase coupon again, as the big shops
    give it back; an order cancelled in part, or after units were delivered and returned, keeps its use."""
    gone = orders_cancelled_with_nothing_kept().filter(checkout_id=OuterRef("checkout__public_id"))
    return CouponRedemption.objects.exclude(Exists(gone))


def coupons_load(
    codes: tuple[str, ...], *, email: str, exclude_checkout_pk: int | None
) -> dict[str, tuple[Coupon, int, int]]:
    """code (upper) → (coupon, uses, uses by this e-mail), counting other checkouts only. ≤ 2 queries."""
    wanted = {c.strip().upper() for c in codes if c.strip()}
    if not wanted:
        return {}
    coupons = {c.pk: c for c in Coupon.objects.filter(code__in=wanted)}
    if not coupons:
        return {}
    uses = _uses_that_count().filter(coupon_id__in=list(coupons))
    if exclude_checkout_pk is not None:
        uses = uses.exclude(checkout_id=exclude_checkout_pk)
    by_email = Count("id", filter=Q(email__iexact=email)) if email else Value(0)
    counts = {
        row["coupon_id"]: (row["used"], row["used_by_email"])
        for row in uses.values("coupon_id").annotate(used=Count("id"), used_by_email=by_email)
    }
    return {c.code: (c, *counts.get(pk, (0, 0))) for pk, c in coupons.items()}


def coupons_evaluate(
    *, codes: tuple[str, ...], subtotal: int, email: str, now: datetime, loaded: dict[str, tuple[Coupon, int, int]]
) -> CouponEvaluation:
    applied: list[AppliedDiscountView] = []
    accepted: list[Coupon] = []
    messages: list[CheckoutMessage] = []
    seen: set[str] = set()
    remaining = subtotal
    for index, raw in enumerate(codes):
        code = raw.strip().upper()
        if code in seen:
            messages.append(
                _warning(
                    index, "discount_code_already_applied", _("O cupom %(code)s já foi informado.") % {"code": code}
                )
            )
            continue
        seen.add(code)
        row = loaded.get(code)
        if row is None:
            said = _("O cupom %(code)s não foi encontrado.") % {"code": code or raw}
            messages.append(_warning(index, "discount_code_invalid", said))
            continue
        if not row[0].active:
            # Deactivated by the store, maybe after it was applied: not "not found" (QA walk).
            said = _("O cupom %(code)s não está mais disponível.") % {"code": code}
            messages.append(_warning(index, "discount_code_invalid", said))
            continue
        coupon, used, used_by_email = row
        if (coupon.starts_at and now < coupon.starts_at) or (coupon.ends_at and now >= coupon.ends_at):
            messages.append(
                _warning(
                    index, "discount_code_expired", _("O cupom %(code)s não está válido nesta data.") % {"code": code}
                )
            )
            continue
        if subtotal < coupon.min_subtotal:
            messages.append(
                _warning(
                    index,
                    "discount_code_invalid",
                    _("O cupom %(code)s exige compras a partir de %(amount)s.")
                    % {"code": code, "amount": format_brl(coupon.min_subtotal)},
                )
            )
            continue
        if coupon.usage_limit is not None and used >= coupon.usage_limit:
            messages.append(_warning(index, "discount_code_invalid", _("O cupom %(code)s esgotou.") % {"code": code}))
            continue
        if email and coupon.usage_limit_per_email is not None and used_by_email >= coupon.usage_limit_per_email:
            messages.append(
                _warning(
                    index,
                    "discount_code_user_ineligible",
                    _("O cupom %(code)s já foi usado com este e-mail.") % {"code": code},
                )
            )
            continue
        if accepted and (not coupon.stackable or not all(c.stackable for c in accepted)):
            messages.append(
                _warning(
                    index,
                    "discount_code_combination_disallowed",
                    _("O cupom %(code)s não pode ser combinado com outro cupom.") % {"code": code},
                )
            )
            continue
        value = subtotal * coupon.percent // 100 if coupon.kind == Coupon.KIND_PERCENT else coupon.amount or 0
        value = min(value, remaining)
        if value <= 0:
            messages.append(
                _warning(
                    index,
                    "discount_code_invalid",
                    _("O cupom %(code)s não gera desconto neste pedido.") % {"code": code},
                )
            )
            continue
        remaining -= value
        accepted.append(coupon)
        applied.append(AppliedDiscountView(code=coupon.code, title=coupon.title, amount=value))
        messages.append(
            CheckoutMessage(
                type="info",
                code="discount_code_applied",
                content=_("Cupom %(code)s aplicado: %(amount)s.") % {"code": coupon.code, "amount": format_brl(-value)},
                path=f"$.discounts.codes[{index}]",
            )
        )
    return CouponEvaluation(applied=tuple(applied), messages=tuple(messages), coupons=tuple(accepted))


def coupon_redemptions_record(*, checkout_pk: int, email: str, evaluation: CouponEvaluation) -> list[str]:
    """Record uses at complete under row locks; returns codes whose limits were reached meanwhile."""
    if not evaluation.coupons:
        return []
    ids = sorted(c.pk for c in evaluation.coupons)
    list(Coupon.objects.select_for_update().filter(pk__in=ids).order_by("pk"))  # serialize uses per coupon
    exhausted: list[str] = []
    for coupon, applied in zip(evaluation.coupons, evaluation.applied, strict=True):
        others = _uses_that_count().filter(coupon=coupon).exclude(checkout_id=checkout_pk)
        if coupon.usage_limit is not None and others.count() >= coupon.usage_limit:
            exhausted.append(coupon.code)
            continue
        if coupon.usage_limit_per_email is not None and (
            others.filter(email__iexact=email).count() >= coupon.usage_limit_per_email
        ):
            exhausted.append(coupon.code)
            continue
        CouponRedemption.objects.get_or_create(
            coupon=coupon, checkout_id=checkout_pk, defaults={"email": email, "amount": applied.amount}
        )
    return exhausted


INSTALLMENTS_PATH = "$.payment.instruments[0].installments"


@dataclass(frozen=True)
class CardTerms:
    interest: int = 0
    fee: dict[str, object] | None = None
    messages: list[CheckoutMessage] = field(default_factory=list)
    instrument_fields: dict[str, int] = field(default_factory=dict)


def installment_policy() -> InstallmentPolicy:
    return store_get().installment_policy


def installment_plan(amount: int, installments: int) -> Installment | None:
    """The shop's plan of `installments` for `amount` centavos (None when not offered)."""
    return plan_for(amount, installments, installment_policy())


def card_terms(instrument: InstrumentInput | None, amount: int) -> CardTerms:
    if instrument is None or instrument.type != "card":
        return CardTerms()
    count = instrument.installments
    plan = installment_plan(amount, count) if amount > 0 else None
    if plan is None:
        if count == 1 or amount <= 0:
            return CardTerms(instrument_fields={"installments": 1})
        policy = installment_policy()
        usable = [n for n in range(1, policy.max_installments + 1) if plan_for(amount, n, policy)]
        problem = CheckoutMessage(
            type="error",
            code="field_invalid",
            content=_("Parcelamento indisponível para este valor: escolha de 1 a %(max)d parcelas.")
            % {"max": usable[-1] if usable else 1},
            severity="recoverable",
            path=INSTALLMENTS_PATH,
        )
        return CardTerms(messages=[problem], instrument_fields={"installments": count})
    fields = {
        "installments": plan.count,
        "installment_amount": plan.installment,
        "first_installment": plan.first,
        "interest": plan.interest,
    }
    if not plan.interest:
        return CardTerms(instrument_fields=fields)
    fee = {
        "type": "fee",
        "amount": plan.interest,
        "display_text": _("Juros do parcelamento (%(count)dx)") % {"count": plan.count},
    }
    return CardTerms(interest=plan.interest, fee=fee, instrument_fields=fields)


def plan_label(plan: Installment) -> str:
    if plan.count == 1:
        return _("1x de %(amount)s (à vista)") % {"amount": format_brl(plan.total)}
    if plan.interest:
        return _("%(count)dx de %(amount)s com juros (total %(total)s)") % {
            "count": plan.count,
            "amount": format_brl(plan.installment),
            "total": format_brl(plan.total),
        }
    if plan.has_remainder:
        return _("%(count)dx sem juros: 1ª de %(first)s e %(rest)dx de %(amount)s") % {
            "count": plan.count,
            "first": format_brl(plan.first),
            "rest": plan.count - 1,
            "amount": format_brl(plan.installment),
        }
    return _("%(count)dx de %(amount)s sem juros") % {"count": plan.count, "amount": format_brl(plan.installment)}


def card_offered() -> bool:
    return bool(getattr(settings, "BCP_CARD_ENABLED", True)) and card_gateway_configured()


def installment_offer(cents: object) -> str:
    try:
        amount = int(cents)  # type: ignore[call-overload]
    except (TypeError, ValueError):
        return ""
    if amount <= 0 or not card_offered():
        return ""
    plan = best_interest_free(amount, installment_policy())
    if plan is None:
        return ""
    # The checkout's own wording of the plan (plan_label): with a remainder it names the first and the
    # regular installment ("11x de R$ 5,50" alone for R$ 59,90 made 60,50 and read as hidden interest).
    return _("ou %(plan)s") % {"plan": plan_label(plan)}
