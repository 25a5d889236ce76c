"""Stock and coupon uses are reserved when the Pix charge is issued (issue 31), so a buyer is refused before
paying: never charged for what cannot ship, then refunded. Real Postgres, the sandbox PSP."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from orders.models import Order
from payments.models import PixCharge, PixPayment
from payments.sandbox.services import PayOptions, pay
from payments.selectors import pix_charge_active_for_reference
from shop.checkout.services import CheckoutCreateImpossible, checkout_complete, checkout_create
from shop.checkout.settle import PAYMENT_PENDING_GRACE, checkout_paid_complete_due, checkout_pix_lapse_due
from shop.checkout.types import CheckoutResult, CompleteInput, InstrumentInput, LineInput, PaymentInput
from shop.models import Checkout, CouponRedemption, Variant
from tests.payments.fake_bacen import FakeBacenServer
from tests.shop.checkout_factories import (
    FORM_ADDRESS,
    FORM_CONTACT,
    full_input,
    make_coupon,
    make_shipping,
    make_variant,
)
from tests.shop.test_complete_outside_lock import bacen  # noqa: F401  (fixture)
from tests.shop.test_stock_concurrency import _race

PIX = InstrumentInput(id="instr_1", handler_id="pix_recebedor_001", type="pix")


def _pix_checkout(codes: tuple[str, ...] | None = None) -> CheckoutResult:
    base = full_input(LineInput("SKU-CAFE-500G", 1), option="pac", codes=codes)
    return checkout_create(data=replace(base, payment=PaymentInput(instruments=(PIX,))))


def _pay_every_charge() -> None:
    """Pay every active charge; agent checkouts paid before complete are placed after the grace (PIX.md §3.1)."""
    for txid in PixCharge.objects.filter(status="active").values_list("txid", flat=True):
        pay(txid=txid, options=PayOptions())
    checkout_paid_complete_due(now=timezone.now() + timedelta(days=1))


def _stock() -> int:
    return Variant.objects.get(sku="SKU-CAFE-500G").stock


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_twenty_pix_buyers_for_five_units_five_charges_no_refund():
    # given 5 units, when 20 buyers select Pix at the same time (each create issues a charge, PIX.md §2.2)
    make_variant(stock=5)
    make_shipping()
    results = _race(lambda i: _pix_checkout(), 20)
    # then only 5 charges are issued; the other 15 are told before paying, in Portuguese: refused at create
    # (nothing left when they were evaluated) or `incomplete` (the last units went while they reserved)
    assert [r for r in results if not isinstance(r, CheckoutResult | CheckoutCreateImpossible)] == []
    assert PixCharge.objects.count() == 5
    assert _stock() == 0
    charged = [r for r in results if isinstance(r, CheckoutResult) and r.checkout.status == "ready_for_complete"]
    assert len(charged) == 5
    for refused in [r for r in results if r not in charged]:
        messages = refused.messages
        if isinstance(refused, CheckoutResult):
            assert refused.checkout.status == "incomplete"
            assert pix_charge_active_for_reference(refused.checkout.public_id) is None
        assert any(m.code == "out_of_stock" and "sem estoque" in m.content for m in messages), messages
    # and every Pix paid makes an order: nothing refunded, the reservation taken once (stock still 0)
    _pay_every_charge()
    assert Order.objects.count() == 5
    assert list(PixPayment.objects.values_list("outcome", flat=True)) == ["settled"] * 5
    assert _stock() == 0


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_coupon_with_one_use_left_one_discounted_charge():
    make_variant(stock=50)
    make_shipping()
    make_coupon("ULTIMO", usage_limit=1)
    results = _race(lambda i: _pix_checkout(("ULTIMO",)), 3)
    assert [r for r in results if isinstance(r, Exception)] == []
    assert CouponRedemption.objects.count() == 1
    discounted = [r for r in results if r.checkout.status == "ready_for_complete" and r.checkout.discounts_applied]
    assert len(discounted) == 1
    # the others either lost the coupon before any charge or were refused with a clear message
    for result in results:
        if result not in discounted and result.checkout.status == "incomplete":
            assert any("O cupom ULTIMO esgotou" in m.content for m in result.messages), result.messages
    _pay_every_charge()
    assert set(PixPayment.objects.values_list("outcome", flat=True)) == {"settled"}
    assert Order.objects.count() == PixCharge.objects.count()


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_expired_charge_releases_the_reservation_and_a_late_payment_still_sells():
    make_variant(stock=1)
    make_shipping()
    first = _pix_checkout().checkout.public_id
    assert _stock() == 0
    with pytest.raises(CheckoutCreateImpossible, match="está sem estoque"):
        _pix_checkout()  # the last unit is reserved by the first charge: refused before any charge
    charge = pix_charge_active_for_reference(first)
    # when the charge expires unpaid, the sweep gives the unit back
    assert checkout_pix_lapse_due(now=charge.expires_at + timedelta(hours=1)) == 1
    assert _stock() == 1
    assert Checkout.objects.get(public_id=first).stock_reserved is False
    # a payment made in time but reported late takes the unit on the existing path (once)
    _pay_every_charge()
    assert Order.objects.filter(checkout_id=first).count() == 1
    assert _stock() == 0


@pytest.mark.django_db
def test_reservation_without_a_charge_is_released_after_the_pending_grace():
    # given a checkout holding its unit whose worker died during the PSP call (no charge recorded)
    make_variant(stock=2)
    make_shipping()
    checkout_id = checkout_create(data=full_input(LineInput("SKU-CAFE-500G", 1), option="pac")).checkout.public_id
    pix = {"id": PIX.id, "handler_id": PIX.handler_id, "type": "pix"}
    Checkout.objects.filter(public_id=checkout_id).update(payment_instrument=pix, stock_reserved=True)
    Variant.objects.update(stock=1)
    updated_at = Checkout.objects.get(public_id=checkout_id).updated_at
    # then the sweep leaves it while the charge may still be on its way, and releases it after the grace
    assert checkout_pix_lapse_due(now=updated_at + timedelta(seconds=30)) == 0
    assert _stock() == 1
    assert checkout_pix_lapse_due(now=updated_at + PAYMENT_PENDING_GRACE) == 1
    assert _stock() == 2
    checkout = Checkout.objects.get(public_id=checkout_id)
    assert (checkout.status, checkout.stock_reserved) == ("ready_for_complete", False)


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_failed_psp_call_releases_the_reservation(bacen: FakeBacenServer):  # noqa: F811
    # given a PSP that drops every charge creation: the units reserved before the call are given back
    make_variant(stock=3)
    make_shipping()
    bacen.state.cob_die = True
    result = _pix_checkout()
    assert pix_charge_active_for_reference(result.checkout.public_id) is None
    assert result.checkout.status == "incomplete"
    assert _stock() == 3
    assert Checkout.objects.get(public_id=result.checkout.public_id).stock_reserved is False


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_complete_after_charge_reservation_takes_stock_once():
    make_variant(stock=3)
    make_shipping()
    checkout_id = _pix_checkout().checkout.public_id
    assert _stock() == 2
    done = checkout_complete(checkout_id=checkout_id, data=CompleteInput(payment=PaymentInput(instruments=(PIX,))))
    assert done.checkout.status == "complete_in_progress", done.messages
    assert _stock() == 2
    pay(txid=pix_charge_active_for_reference(checkout_id).txid, options=PayOptions())
    assert Checkout.objects.get(public_id=checkout_id).status == "completed"
    assert _stock() == 2


@pytest.mark.django_db
def test_storefront_second_buyer_refused_before_any_charge(client):
    # given one unit in two storefront carts, and the first buyer's Pix issued (on the Pix page, unpaid)
    make_variant(stock=1)
    make_shipping()
    second_client = Client()
    first_id, second_id = _storefront_checkout(client), _storefront_checkout(second_client)
    first = client.post(f"/checkout/{first_id}", PAY_FORM)
    assert (first.status_code, first["Location"]) == (302, f"/checkout/{first_id}/pix")
    # when the second buyer presses "pay" for the same unit
    second = second_client.post(f"/checkout/{second_id}", PAY_FORM, follow=True)
    # then the second stays on the checkout page, told why, and no charge was issued for them
    assert second.redirect_chain in ([], [(f"/checkout/{second_id}", 302)])
    assert "sem estoque" in second.content.decode()
    assert PixCharge.objects.count() == 1
    assert pix_charge_active_for_reference(second_id) is None
    assert _stock() == 0


PAY_FORM = {"action": "pay", **FORM_CONTACT, **FORM_ADDRESS, "shipping_option": "sedex"}


def _storefront_checkout(client: Client) -> str:
    client.post("/carrinho/adicionar", {"sku": "SKU-CAFE-500G", "quantity": "1"})
    return client.get("/checkout/")["Location"].rsplit("/", 1)[1]
