"""The payment-method discount "Pix: N % off" (issue 17): arithmetic, the engine's discount line, instrument
switches through the Pix charge logic, and the storefront's "R$ 94,90 no Pix" (BCP §6, §10; PIX.md §2.4)."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal

import pytest
from django.test import Client

from orders.models import Order
from payments.models import CardPayment, PixCharge
from payments.sandbox.services import PayOptions, pay
from payments.selectors import pix_charge_active_for_reference
from shop.checkout.pricing import discount_half_even, percent_label
from shop.checkout.selectors import checkout_view
from shop.checkout.services import checkout_complete, checkout_create, checkout_update
from shop.checkout.types import CompleteInput, InstrumentInput, LineInput, PaymentInput
from shop.models import StoreSettings
from shop.store.services import store_get
from tests.shop.checkout_factories import full_input, make_coupon, make_shipping, make_variant

PIX = InstrumentInput(id="instr_1", handler_id="pix_recebedor_001", type="pix")
CARD = InstrumentInput(
    id="instr_c", handler_id="gpay", type="card", credential={"type": "PAYMENT_GATEWAY", "token": "success_token"}
)


@pytest.mark.parametrize(
    ("base", "bp", "discount"),
    [
        (9990, 500, 500),  # 499,5 → 500 (half to even): R$ 99,90 → "R$ 94,90 no Pix"
        (4290, 500, 214),  # 214,5 → 214 (half to even, down)
        (8580, 500, 429),  # 429,0 exact
        (8991, 500, 450),  # 449,55 → 450 (above half)
        (8990, 250, 225),  # 224,75 → 225 at 2,5 %
        (1, 500, 0),  # 0,05 → 0: a discount never goes below zero centavos
        (30, 500, 2),  # 1,5 → 2 (half to even, up)
        (10, 10000, 10),  # capped at the base
        (0, 500, 0),
        (9990, 0, 0),
    ],
)
def test_discount_is_rounded_half_to_even_in_centavos(base: int, bp: int, discount: int) -> None:
    assert discount_half_even(base, bp) == discount


def test_percent_label_uses_the_brazilian_decimal_comma() -> None:
    assert [percent_label(bp) for bp in (500, 250, 1234, 1000)] == ["5%", "2,5%", "12,34%", "10%"]


def _five_percent() -> None:
    StoreSettings.objects.create(pix_discount_percent=Decimal("5"))
    assert store_get().pix_discount_bp == 500


def _totals(checkout) -> list[tuple[str, int, str]]:
    return [(t.type, t.amount, t.display_text) for t in checkout_view(checkout).totals]


def _with(checkout, instrument: InstrumentInput | None, **changes):
    from shop.checkout.core import input_from_checkout

    data = input_from_checkout(checkout, list(checkout.lines.all()))
    payment = PaymentInput(instruments=(instrument,)) if instrument else None
    return checkout_update(checkout_id=checkout.public_id, data=replace(data, payment=payment, **changes))


@pytest.mark.django_db
def test_pix_selected_adds_an_automatic_discount_line_and_the_charge_is_for_the_discounted_total_bcp_dsc_02() -> None:
    # given a shop with 5 % off by Pix and a ready checkout of one R$ 99,90 item shipped by PAC (R$ 18,90)
    _five_percent()
    make_variant(price=9990)
    make_shipping()
    created = checkout_create(data=full_input(LineInput("SKU-CAFE-500G", 1)))
    assert _totals(created.checkout) == [("subtotal", 9990, ""), ("fulfillment", 1890, "PAC"), ("total", 11880, "")]
    # then before Pix is chosen the view already knows the Pix total
    assert checkout_view(created.checkout).pix_total == 11380
    # when Pix is selected
    with_pix = _with(created.checkout, PIX).checkout
    # then one order-level discount of 5 % of the items (freight excluded) sits before the freight (BCP §6 order)
    assert _totals(with_pix) == [
        ("subtotal", 9990, ""),
        ("discount", -500, "Desconto Pix (5%)"),
        ("fulfillment", 1890, "PAC"),
        ("total", 11380, ""),
    ]
    applied = checkout_view(with_pix).discounts_applied
    assert [(d.code, d.title, d.amount, d.automatic, d.method) for d in applied] == [
        ("", "Desconto Pix (5%)", 500, True, "across")
    ]
    # and the Pix charge is for exactly that total (PIX.md §2.3)
    charge = pix_charge_active_for_reference(with_pix.public_id)
    assert (with_pix.status, charge.amount) == ("ready_for_complete", 11380)


@pytest.mark.django_db
def test_the_pix_discount_applies_to_the_items_after_coupons() -> None:
    _five_percent()
    make_variant(price=9990)
    make_shipping()
    make_coupon("DEZ", percent=10)
    created = checkout_create(data=replace(full_input(LineInput("SKU-CAFE-500G", 1), codes=("DEZ",))))
    with_pix = _with(created.checkout, PIX, discount_codes=("DEZ",)).checkout
    # 9990 − 999 = 8991 → 5 % = 449,55 → 450
    assert _totals(with_pix) == [
        ("subtotal", 9990, ""),
        ("discount", -999, "Cupom DEZ"),
        ("discount", -450, "Desconto Pix (5%)"),
        ("fulfillment", 1890, "PAC"),
        ("total", 10431, ""),
    ]
    assert with_pix.total_amount == 10431 == pix_charge_active_for_reference(with_pix.public_id).amount


@pytest.mark.django_db
def test_switching_instruments_re_evaluates_and_never_leaves_a_stale_pix_charge_pix_2_4() -> None:
    _five_percent()
    make_variant(price=9990)
    make_shipping()
    created = checkout_create(data=replace(full_input(LineInput("SKU-CAFE-500G", 1)), payment=PaymentInput((PIX,))))
    first = pix_charge_active_for_reference(created.checkout.public_id)
    assert (created.checkout.total_amount, first.amount) == (11380, 11380)
    # when the platform switches to card: full price, the Pix charge is revoked (PATCH after commit)
    card = _with(created.checkout, CARD).checkout
    assert (card.total_amount, [t[0] for t in _totals(card)]) == (11880, ["subtotal", "fulfillment", "total"])
    assert pix_charge_active_for_reference(card.public_id) is None
    assert PixCharge.objects.get(txid=first.txid).status == "revoked"
    # and back to Pix: a new charge (new txid) for the discounted total again
    again = _with(card, PIX).checkout
    second = pix_charge_active_for_reference(again.public_id)
    assert (again.total_amount, second.amount) == (11380, 11380)
    assert second.txid != first.txid


@pytest.mark.django_db
def test_complete_with_pix_after_card_was_selected_replaces_the_total_first_pix_3_step_4(
    django_capture_on_commit_callbacks,
) -> None:
    # given a ready checkout with the card selected (full price)
    _five_percent()
    make_variant(price=9990)
    make_shipping()
    created = checkout_create(data=replace(full_input(LineInput("SKU-CAFE-500G", 1)), payment=PaymentInput((CARD,))))
    assert created.checkout.total_amount == 11880
    # when the platform completes with Pix instead
    pix = CompleteInput(payment=PaymentInput(instruments=(PIX,)))
    refused = checkout_complete(checkout_id=created.checkout.public_id, data=pix)
    # then nothing is paid yet: the total went down by the Pix discount, a charge for it was issued
    assert refused.checkout.status == "ready_for_complete"
    assert refused.checkout.total_amount == 11380
    assert "pix_charge_replaced" in [m.code for m in refused.messages]
    charge = pix_charge_active_for_reference(created.checkout.public_id)
    assert charge.amount == 11380
    # and completing again waits for that very charge, which settles the order at the discounted total
    waiting = checkout_complete(checkout_id=created.checkout.public_id, data=pix)
    assert (waiting.checkout.status, waiting.checkout.payment_txid) == ("complete_in_progress", charge.txid)
    with django_capture_on_commit_callbacks(execute=True):
        pay(txid=charge.txid, options=PayOptions())
    order = Order.objects.get(checkout_id=created.checkout.public_id)
    assert order.total_amount == 11380
    assert order.paid_amount == 11380


@pytest.mark.django_db
def test_a_card_complete_on_a_pix_checkout_that_pays_nothing_leaves_its_pix_as_shown_bcp_chk_20_pay_06() -> None:
    """The gap closing note 41 left: a card complete refused before paying (here: by card the Pix discount goes, so
    the total is not the one shown) recorded the card on the checkout and revoked the Pix charge the buyer may be
    paying. It stays as shown now, Pix and charge, and the message says the card's total and what to do."""
    # given a ready checkout showing Pix at the discounted total, with its charge
    _five_percent()
    make_variant(price=9990)
    make_shipping()
    created = checkout_create(data=replace(full_input(LineInput("SKU-CAFE-500G", 1)), payment=PaymentInput((PIX,))))
    charge = pix_charge_active_for_reference(created.checkout.public_id)
    assert (created.checkout.total_amount, charge.amount) == (11380, 11380)
    # when the platform completes with a card instead
    refused = checkout_complete(
        checkout_id=created.checkout.public_id, data=CompleteInput(payment=PaymentInput(instruments=(CARD,)))
    )
    # then nothing is paid and the checkout's payment is what it showed: Pix, its total, the same live charge
    checkout = refused.checkout
    assert (checkout.status, checkout.total_amount) == ("ready_for_complete", 11380)
    assert (checkout.payment_instrument or {}).get("type") == "pix"
    assert pix_charge_active_for_reference(checkout.public_id).txid == charge.txid
    assert PixCharge.objects.get(txid=charge.txid).status == "active"
    assert [(m.code, m.path, m.content) for m in refused.messages if m.type == "error"] == [
        (
            "checkout_changed",
            "$.payment.instruments[0]",
            "Com o cartão, o total seria R$ 118,80, e o checkout mostra R$ 113,80: atualize o checkout com o cartão "
            "e confira o total antes de concluir.",
        )
    ]
    assert not CardPayment.objects.exists() and not Order.objects.exists()
    # and once the platform updates to the card (and sees R$ 118,80), its complete pays that total
    updated = _with(checkout, CARD).checkout
    assert updated.total_amount == 11880
    paid = checkout_complete(checkout_id=checkout.public_id, data=CompleteInput(payment=PaymentInput((CARD,))))
    assert paid.checkout.status == "completed"
    assert Order.objects.get(checkout_id=checkout.public_id).total_amount == 11880


@pytest.mark.django_db
def test_without_a_rate_nothing_changes() -> None:
    make_variant(price=9990)
    make_shipping()
    created = checkout_create(data=replace(full_input(LineInput("SKU-CAFE-500G", 1)), payment=PaymentInput((PIX,))))
    assert [t[0] for t in _totals(created.checkout)] == ["subtotal", "fulfillment", "total"]
    assert checkout_view(created.checkout).pix_total == created.checkout.total_amount == 11880


# --- storefront -------------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_product_page_cart_and_checkout_show_the_pix_price_before_choosing(client: Client) -> None:
    # given 5 % off by Pix and a R$ 99,90 product
    _five_percent()
    make_variant(price=9990)
    make_shipping()
    # then the product page says "R$ 94,90 no Pix"
    page = client.get("/produtos/sku-cafe-500g/").content.decode()
    assert '<strong data-role="pix-price">R$ 94,90</strong> no Pix' in page
    assert '"pix_price": "R$ 94,90"' in page  # the variant picker's data follows the chosen variant
    # and the cart, for what is in it (2 × 99,90 = 199,80 → 189,81)
    client.post("/carrinho/adicionar", {"sku": "SKU-CAFE-500G", "quantity": "2"})
    cart = client.get("/carrinho/").content.decode()
    assert '<strong data-role="pix-price">R$ 189,81</strong> no Pix' in cart
    # and the checkout, for the total with freight (199,80 + 18,90 − 9,99 = 208,71)
    checkout_url = client.get("/checkout/")["Location"]
    from tests.shop.checkout_factories import FORM_ADDRESS, FORM_CONTACT

    client.post(checkout_url, {**FORM_CONTACT, **FORM_ADDRESS, "shipping_option": "pac", "action": "shipping"})
    page = client.get(checkout_url).content.decode()
    assert '<dd class="total" data-testid="total">R$ 218,70</dd>' in page
    assert '<strong data-role="pix-price">R$ 208,71</strong> no Pix' in page
    # when the buyer pays with Pix, the Pix page charges exactly that
    paid = client.post(
        checkout_url, {**FORM_CONTACT, **FORM_ADDRESS, "shipping_option": "pac", "action": "pay"}, follow=True
    )
    assert '<strong class="money" data-testid="pix-amount">R$ 208,71</strong>' in paid.content.decode()
    assert "Desconto Pix (5%)" in paid.content.decode()


@pytest.mark.django_db
def test_without_a_pix_discount_the_product_page_keeps_its_plain_pix_hint(client: Client) -> None:
    make_variant(price=9990)
    page = client.get("/produtos/sku-cafe-500g/").content.decode()
    assert "Pagamento à vista no Pix" in page and "pix-price" not in page
