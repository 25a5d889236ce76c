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


def test_a_restart_keeps_the_merchants_shipping_pickup_and_coupon_edits():
    """Issue 33, major 3: `make run` seeds on every start; what the merchant changed stays changed."""
    seed_checkout_demo()
    # the merchant edits PAC (title, free-shipping floor), its SP rate, deletes the RJ rate and motoboy's rates,
    # renames a pickup location's hours, turns a coupon off and changes its percent
    ShippingMethod.objects.filter(code="pac").update(title="PAC Econômico", free_above=19900)
    ShippingRate.objects.filter(method__code="pac", uf="SP").update(price=1500, days_min=2, days_max=3)
    ShippingRate.objects.filter(method__code="pac", uf="RJ").delete()
    ShippingRate.objects.filter(method__code="motoboy").delete()
    ShippingMethod.objects.filter(code="sedex").update(active=False)
    PickupLocation.objects.filter(name="Loja Paulista").update(opening_hours="Seg a Sex 10h–18h", preparation_days=3)
    Coupon.objects.filter(code="BEMVINDO10").update(percent=15, active=False)
    before = counts()

    assert seed_checkout_demo() == {
        "shipping_methods": 0,
        "shipping_rates": 0,
        "packaging_boxes": 0,
        "pickup_locations": 0,
        "coupons": 0,
    }

    assert counts() == before == (4, 27 * 2 - 1, 2, 4)
    pac = ShippingMethod.objects.get(code="pac")
    assert (pac.title, pac.free_above) == ("PAC Econômico", 19900)
    sp = ShippingRate.objects.get(method=pac, uf="SP")
    assert (sp.price, sp.days_min, sp.days_max) == (1500, 2, 3)
    assert not ShippingRate.objects.filter(method=pac, uf="RJ").exists()
    assert not ShippingRate.objects.filter(method__code="motoboy").exists()
    assert ShippingMethod.objects.get(code="sedex").active is False
    paulista = PickupLocation.objects.get(name="Loja Paulista")
    assert (paulista.opening_hours, paulista.preparation_days) == ("Seg a Sex 10h–18h", 3)
    coupon = Coupon.objects.get(code="BEMVINDO10")
    assert (coupon.percent, coupon.active) == (15, False)


def test_a_demo_row_the_merchant_deleted_is_created_again_but_never_its_siblings():
    seed_checkout_demo()
    Coupon.objects.filter(code="FRETE5").delete()
    ShippingRate.objects.filter(method__code="sedex", uf="SP").update(price=9999)
    assert seed_checkout_demo()["coupons"] == 1  # "create only if missing"
    assert ShippingRate.objects.get(method__code="sedex", uf="SP").price == 9999
