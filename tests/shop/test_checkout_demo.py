"""Demo data of the checkout engine: idempotent, and usable by the engine as seeded."""

import pytest

from shop.checkout.selectors import checkout_view
from shop.checkout.services import checkout_create
from shop.checkout.types import CheckoutInput, LineInput
from shop.demo.checkout import seed_checkout_demo
from shop.models import Coupon, PickupLocation, ShippingMethod, ShippingRate
from tests.shop.checkout_factories import BUYER, make_variant, shipping

pytestmark = pytest.mark.django_db


def counts():
    return (
        ShippingMethod.objects.count(),
        ShippingRate.objects.count(),
        PickupLocation.objects.count(),
        Coupon.objects.count(),
    )


def test_seed_is_idempotent():
    seed_checkout_demo()
    first = counts()
    seed_checkout_demo()
    assert counts() == first == (4, 27 * 2 + 3, 2, 4)


def test_seeded_rules_quote_sao_paulo_and_apply_coupons():
    seed_checkout_demo()
    make_variant(price=8000, stock=5)
    result = checkout_create(
        data=CheckoutInput(
            lines=(LineInput("SKU-CAFE-500G", 2),),
            buyer=BUYER,
            fulfillment=shipping(option="motoboy"),
            discount_codes=("desconto20", "BLACKFRIDAY"),
        )
    )
    view = checkout_view(result.checkout)
    options = [(o.id, o.amount, o.description) for o in view.fulfillment_methods[0].groups[0].options]
    # Two 500 g bags in the demo's small box (90 g) weigh 1.09 kg: one kg above the first on the table by weight
    # (PAC + R$ 3,50, SEDEX + R$ 6,90; the motoboy's price does not depend on weight). Issue 36.
    assert options == [
        ("pac", 1890 + 350, "Chega em 3 a 5 dias úteis"),
        ("sedex", 3290 + 690, "Chega em 1 a 2 dias úteis"),
        ("motoboy", 1290, "Chega em até 1 dia útil"),  # the narrowest CEP range wins: centro, same day possible
    ]
    assert [(t.type, t.amount) for t in view.totals] == [
        ("subtotal", 16000),
        ("discount", -2000),
        ("fulfillment", 1290),
        ("total", 15290),
    ]
    assert [(m.code, m.path) for m in view.messages if m.type == "warning"] == [
        ("discount_code_expired", "$.discounts.codes[1]")
    ]
