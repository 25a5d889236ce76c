"""shop.receivers mediation of refunds: orders.refund_requested → payments, payments.refund_finished → orders."""

from __future__ import annotations

from dataclasses import replace

import pytest

from orders.models import Adjustment, Order
from orders.services import order_refund
from payments.models import PixRefund
from payments.sandbox.services import PayOptions, pay, refund_settle
from payments.selectors import pix_charge_active_for_reference
from shop.checkout.services import checkout_create
from shop.checkout.types import InstrumentInput, LineInput, PaymentInput
from tests.shop.checkout_factories import full_input, make_shipping, make_variant

pytestmark = pytest.mark.django_db

PIX = InstrumentInput(id="instr_1", handler_id="pix_recebedor_001", type="pix")


def paid_order(capture) -> Order:
    make_variant(price=4290, stock=10)
    make_shipping()
    data = replace(full_input(LineInput("SKU-CAFE-500G", 2), option="pac"), payment=PaymentInput(instruments=(PIX,)))
    # a storefront checkout (session key): its buyer's payment completes it (PIX.md §3.1 is for agents)
    checkout = checkout_create(data=data, session_key="sess-1").checkout
    with capture(execute=True):
        pay(txid=pix_charge_active_for_reference(checkout.public_id).txid, options=PayOptions())
    return Order.objects.get(checkout_id=checkout.public_id)


def test_refund_requested_reaches_payments_and_result_reaches_orders(django_capture_on_commit_callbacks):
    order = paid_order(django_capture_on_commit_callbacks)
    # when the merchant refunds part of the order
    with django_capture_on_commit_callbacks(execute=True):
        adjustment = order_refund(order_id=order.public_id, amount=1000, reason="Cliente desistiu de um item")
    # then payments got the devolução with the adjustment id as refund id
    refund = PixRefund.objects.get(refund_id=adjustment.public_id)
    assert (refund.reference, refund.amount) == (order.checkout_id, 1000)
    # when the PSP reports the devolução done, orders records the result
    with django_capture_on_commit_callbacks(execute=True):
        refund_settle(e2eid=refund.end_to_end_id, refund_id=refund.psp_refund_id, status="DEVOLVIDO")
    assert Adjustment.objects.get(public_id=adjustment.public_id).status == "completed"


def test_refund_payments_cannot_make_marks_the_adjustment_failed(django_capture_on_commit_callbacks):
    from orders.signals import refund_requested
    from shop.checkout.services import checkout_complete
    from shop.checkout.types import CompleteInput

    # given an order paid by card
    make_variant(price=4290, stock=10)
    make_shipping()
    checkout = checkout_create(data=full_input(LineInput("SKU-CAFE-500G", 1), option="pac")).checkout
    card = InstrumentInput(id="c", handler_id="gpay", type="card", credential={"token": "success_token"})
    checkout_complete(checkout_id=checkout.public_id, data=CompleteInput(payment=PaymentInput(instruments=(card,))))
    order = Order.objects.get(checkout_id=checkout.public_id)
    adjustment = order_refund(order_id=order.public_id, amount=500, reason="Brinde")
    # when a refund above what the card payment still has reaches the shop (a second, forged request)
    refund_requested.send(
        sender=Order,
        order_id=order.public_id,
        adjustment_id=adjustment.public_id,
        payment_reference=checkout.public_id,
        amount=order.paid_amount + 1,
        reason="Brinde",
    )
    # then the adjustment is marked failed instead of staying pending forever
    assert Adjustment.objects.get(public_id=adjustment.public_id).status == "failed"
    assert not PixRefund.objects.exists()
