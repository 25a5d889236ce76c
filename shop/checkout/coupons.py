"""Discount codes (BCP §10): evaluation of `discounts.codes` against `Coupon` rows.

Codes are matched case-insensitively and echoed as given. Each accepted coupon is one
order-level `discount` total (negative) with display text "Cupom <CODE>"; percentages apply to
the subtotal (not compounded), and the sum of discounts never exceeds the subtotal. Rejected codes
stay in `codes` and get a `warning` at `$.discounts.codes[i]` with the BCP reason code.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db.models import Count, Q, Value
from django.utils.translation import gettext as _

from kernel.money import format_brl as brl
from shop.checkout.outputs import AppliedDiscountView
from shop.checkout.types import CheckoutMessage
from shop.models import Coupon, CouponRedemption


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
    uses = CouponRedemption.objects.filter(coupon_id__in=list(coupons))
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
        if row is None or not row[0].active:
            messages.append(
                _warning(index, "discount_code_invalid", _("Cupom %(code)r não encontrado.") % {"code": code or raw})
            )
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
                    % {"code": code, "amount": brl(coupon.min_subtotal)},
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
                content=_("Cupom %(code)s aplicado: %(amount)s.") % {"code": coupon.code, "amount": brl(-value)},
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
        others = CouponRedemption.objects.filter(coupon=coupon).exclude(checkout_id=checkout_pk)
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
