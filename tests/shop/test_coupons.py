"""Discount codes (BCP §10, BCP-DSC-*): percent, fixed, stacking, minimum, validity, usage limits."""

from dataclasses import replace
from datetime import timedelta

import pytest
from django.utils import timezone

from orders.services import order_cancel, order_mark_delivered, order_place_from_checkout, order_return, order_ship
from orders.types import LineQuantity
from shop.checkout.pricing import CouponEvaluation, coupon_redemptions_record
from shop.checkout.selectors import checkout_view
from shop.checkout.services import checkout_create, checkout_update
from shop.checkout.types import BuyerInput, CheckoutInput, LineInput
from shop.models import Checkout, CouponRedemption, Variant
from tests.orders.conftest import make_checkout
from tests.shop.checkout_factories import BUYER, expired_window, make_coupon, make_shipping, make_variant, shipping

pytestmark = pytest.mark.django_db


def create(codes, *, price=10000, quantity=1, buyer=BUYER, option=None):
    if not Variant.objects.filter(sku="SKU-CAFE-500G").exists():
        make_variant(price=price, stock=50)
    return checkout_create(
        data=CheckoutInput(
            lines=(LineInput("SKU-CAFE-500G", quantity),),
            buyer=buyer,
            fulfillment=shipping(option=option) if option else None,
            discount_codes=codes,
        )
    )


def totals(result):
    return [(t.type, t.amount, t.display_text) for t in checkout_view(result.checkout).totals]


def warnings(result):
    return [(m.code, m.path) for m in result.messages if m.type == "warning"]


def test_percentage_coupon_case_insensitive_and_echoed_bcp_dsc_01():
    """BCP-DSC-01: case-insensitive, echoed."""
    make_coupon("BEMVINDO10", percent=10)
    result = create(("bemvindo10",))
    assert totals(result) == [("subtotal", 10000, ""), ("discount", -1000, "Cupom BEMVINDO10"), ("total", 9000, "")]
    view = checkout_view(result.checkout)
    assert view.discount_codes == ("bemvindo10",)
    assert [(a.code, a.amount, a.title) for a in view.discounts_applied] == [("BEMVINDO10", 1000, "Cupom BEMVINDO10")]
    assert ("info", "discount_code_applied", "$.discounts.codes[0]") in [
        (m.type, m.code, m.path) for m in result.messages
    ]


def test_fixed_coupon_with_minimum_subtotal():
    make_coupon("DESCONTO20", kind="fixed", amount=2000, min_subtotal=15000)
    below = create(("DESCONTO20",), price=14999)
    assert totals(below) == [("subtotal", 14999, ""), ("total", 14999, "")]
    assert warnings(below) == [("discount_code_invalid", "$.discounts.codes[0]")]
    assert "R$ 150,00" in below.messages[-1].content


def test_fixed_coupon_at_minimum_applies():
    make_coupon("DESCONTO20", kind="fixed", amount=2000, min_subtotal=15000)
    result = create(("DESCONTO20",), price=15000)
    assert totals(result) == [("subtotal", 15000, ""), ("discount", -2000, "Cupom DESCONTO20"), ("total", 13000, "")]


def test_stackable_coupons_add_up_on_subtotal():
    make_coupon("DEZ", percent=10, stackable=True)
    make_coupon("CINCO", kind="fixed", amount=500, stackable=True)
    result = create(("DEZ", "CINCO"))
    assert totals(result) == [
        ("subtotal", 10000, ""),
        ("discount", -1000, "Cupom DEZ"),
        ("discount", -500, "Cupom CINCO"),
        ("total", 8500, ""),
    ]


def test_non_stackable_second_coupon_is_rejected():
    make_coupon("DEZ", percent=10, stackable=False)
    make_coupon("CINCO", kind="fixed", amount=500, stackable=True)
    result = create(("DEZ", "CINCO"))
    assert totals(result)[-1] == ("total", 9000, "")
    assert warnings(result) == [("discount_code_combination_disallowed", "$.discounts.codes[1]")]
    assert checkout_view(result.checkout).discount_codes == ("DEZ", "CINCO")  # rejected codes stay in codes


def test_same_code_twice_is_already_applied():
    make_coupon("DEZ", percent=10)
    result = create(("DEZ", "dez"))
    assert warnings(result) == [("discount_code_already_applied", "$.discounts.codes[1]")]


def test_unknown_and_expired_and_future_codes():
    make_coupon("VELHO", **expired_window())
    make_coupon("FUTURO", starts_at=timezone.now() + timedelta(days=1))
    result = create(("NADA", "VELHO", "FUTURO"))
    assert warnings(result) == [
        ("discount_code_invalid", "$.discounts.codes[0]"),
        ("discount_code_expired", "$.discounts.codes[1]"),
        ("discount_code_expired", "$.discounts.codes[2]"),
    ]
    assert totals(result) == [("subtotal", 10000, ""), ("total", 10000, "")]


def test_fixed_discount_never_exceeds_subtotal_bcp_dsc_04():
    make_coupon("GRANDE", kind="fixed", amount=50000)
    result = create(("GRANDE",), price=3000)
    assert totals(result) == [("subtotal", 3000, ""), ("discount", -3000, "Cupom GRANDE"), ("total", 0, "")]


def _redeem(coupon, email):
    other = Checkout.objects.create(buyer_email=email)
    CouponRedemption.objects.create(coupon=coupon, checkout=other, email=email, amount=100)


def test_total_usage_limit_reached():
    coupon = make_coupon("UNICO", usage_limit=1)
    _redeem(coupon, "outra@example.com")
    result = create(("UNICO",))
    assert warnings(result) == [("discount_code_invalid", "$.discounts.codes[0]")]


def test_per_email_limit_is_user_ineligible():
    coupon = make_coupon("BEMVINDO10", usage_limit_per_email=1)
    _redeem(coupon, "ANA@example.com.br")
    result = create(("BEMVINDO10",))
    assert warnings(result) == [("discount_code_user_ineligible", "$.discounts.codes[0]")]
    other = create(("BEMVINDO10",), buyer=BuyerInput(first_name="Bia", last_name="Lima", email="bia@example.com"))
    assert warnings(other) == []


def test_empty_codes_clear_discounts_bcp_dsc_01():
    """BCP-DSC-01: `[]` clears."""
    make_coupon("DEZ", percent=10)
    created = create(("DEZ",))
    lid = created.checkout.lines.all()[0].public_id
    cleared = checkout_update(
        checkout_id=created.checkout.public_id,
        data=CheckoutInput(lines=(LineInput("SKU-CAFE-500G", 1, lid),), buyer=BUYER, discount_codes=()),
    )
    assert totals(cleared) == [("subtotal", 10000, ""), ("total", 10000, "")]
    assert checkout_view(cleared.checkout).discounts_applied == ()


def test_discount_applies_before_free_shipping_threshold():
    make_shipping()  # PAC free from R$ 200,00
    make_coupon("DEZ", percent=10)
    result = create(("DEZ",), price=20000, option="pac")
    assert totals(result) == [
        ("subtotal", 20000, ""),
        ("discount", -2000, "Cupom DEZ"),
        ("fulfillment", 1890, "PAC"),
        ("total", 19890, ""),
    ]


def _first_purchase_order(coupon, *, lines=(("CAF", 5000, 2),)):
    """A placed order whose checkout used the coupon (the use recorded at complete), as the shop places it."""
    checkout = Checkout.objects.create(buyer_email=BUYER.email)
    CouponRedemption.objects.create(coupon=coupon, checkout=checkout, email=BUYER.email, amount=1000)
    placed = replace(make_checkout(lines=list(lines), freight=0, email=BUYER.email), checkout_id=checkout.public_id)
    return order_place_from_checkout(checkout=placed)


def test_a_first_purchase_coupon_is_the_buyers_again_after_the_whole_order_is_cancelled():
    """Bought with BEMVINDO10 (one per e-mail), cancelled before anything shipped: the coupon stayed "used" and the
    buyer could never have the first-purchase discount. As the big shops do, an order cancelled in full with
    nothing kept gives the use back; the new checkout gets the discount, and completing it records the use."""
    coupon = make_coupon("BEMVINDO10", percent=10, usage_limit_per_email=1)
    order = _first_purchase_order(coupon)
    assert warnings(create(("BEMVINDO10",))) == [("discount_code_user_ineligible", "$.discounts.codes[0]")]

    order_cancel(order_id=order.public_id, reason="Desisti")

    again = create(("BEMVINDO10",))
    assert warnings(again) == []
    assert ("discount", -1000, "Cupom BEMVINDO10") in totals(again)
    applied = checkout_view(again.checkout).discounts_applied
    evaluation = CouponEvaluation(applied=applied, messages=(), coupons=(coupon,))
    assert coupon_redemptions_record(checkout_pk=again.checkout.pk, email=BUYER.email, evaluation=evaluation) == []


@pytest.mark.parametrize("returned_first", [False, True])
def test_a_coupon_stays_used_when_the_buyer_kept_part_of_the_order(returned_first):
    """Cancelled in part (one unit shipped, the other cancelled), or in full after the unit that reached the buyer
    came back as a return: the buyer had the discount on goods they received, so the one-per-buyer coupon stays
    used."""
    coupon = make_coupon("BEMVINDO10", percent=10, usage_limit_per_email=1)
    order = _first_purchase_order(coupon)
    line = order.lines.get()
    order_ship(order_id=order.public_id, tracking_number="BR123456785BR", lines=[LineQuantity(line.public_id, 1)])
    if returned_first:
        order_mark_delivered(order_id=order.public_id)
        order_return(order_id=order.public_id, lines=[LineQuantity(line.public_id, 1)], reason="Não serviu")
    order_cancel(order_id=order.public_id, reason="Falta um")
    order.refresh_from_db()
    assert order.status == ("canceled" if returned_first else "shipped")
    assert warnings(create(("BEMVINDO10",))) == [("discount_code_user_ineligible", "$.discounts.codes[0]")]
