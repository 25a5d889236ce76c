"""Complete by card places the order with no lock held across the gateway call (issue 11): what happens
elsewhere while the authorization is out.

The gateway is the fake Pagar.me v5 on loopback; the pending sweep (`checkout_expire_due`, past the grace)
runs in the fake's own thread while the shop's `POST /orders` is being answered: before the gateway has
the order (the sweep finds nothing charged and releases the checkout) or after (the sweep finds it paid
and places the order itself). Either way there is one outcome for the money: one order, or a refund.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from orders.models import Order, OrderNumberCounter
from payments.card.models import CardPayment
from shop.checkout.services import checkout_complete, checkout_create, checkout_expire_due
from shop.checkout.settle import PAYMENT_PENDING_GRACE
from shop.checkout.types import CompleteInput, LineInput, PaymentInput
from shop.models import Checkout, Variant
from tests.payments.fake_pagarme import FakePagarmeServer
from tests.shop.checkout_factories import full_input, make_shipping, make_variant
from tests.shop.test_card_checkout import card

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def _ready() -> str:
    make_variant(stock=2)
    make_shipping()
    result = checkout_create(data=full_input(LineInput("SKU-CAFE-500G", 1), option="pac"))
    assert result.checkout.status == "ready_for_complete", result.messages
    return result.checkout.public_id


def _sweep_past_the_grace() -> None:
    """The pending sweep of another worker, as if the grace had passed during the call."""
    try:
        checkout_expire_due(now=timezone.now() + PAYMENT_PENDING_GRACE + timedelta(seconds=1))
    finally:
        connection.close()  # this thread's own connection


def _complete(checkout_id: str) -> Checkout:
    data = CompleteInput(payment=PaymentInput(instruments=(card(),)), offered_handler_ids=("gpay",))
    return checkout_complete(checkout_id=checkout_id, data=data).checkout


def test_an_order_the_sweep_placed_during_the_call_is_the_only_order(pagarme: FakePagarmeServer) -> None:
    checkout_id = _ready()
    pagarme.state.after_create = _sweep_past_the_grace  # the gateway has the paid order: the sweep places it
    done = _complete(checkout_id)
    assert done.status == "completed"
    order = Order.objects.get(checkout_id=checkout_id)
    assert done.order_id == order.public_id
    assert Variant.objects.get().stock == 1
    payment = CardPayment.objects.get(reference=checkout_id)
    assert (payment.status, payment.refunded_amount) == ("approved", 0)
    assert pagarme.charge_of(checkout_id)["canceled_amount"] == 0


def test_an_approval_after_the_sweep_released_the_checkout_is_refunded(pagarme: FakePagarmeServer) -> None:
    checkout_id = _ready()
    pagarme.state.before_create = _sweep_past_the_grace  # nothing charged yet: the sweep releases the stock
    # Compared with the state before, not with an empty table: a row a previous test's thread committed after its
    # flush is not this placement's number (seen once under load with -n 2).
    numbers_before = list(OrderNumberCounter.objects.values_list("key", "last"))
    done = _complete(checkout_id)
    assert done.status == "incomplete"
    assert not Order.objects.filter(checkout_id=checkout_id).exists()
    assert Variant.objects.get().stock == 2
    charge = pagarme.charge_of(checkout_id)
    assert charge["canceled_amount"] == charge["amount"]  # the money no order took went back
    # the order number drawn with the approval's payment row went back with the placement (issue 33: no gaps)
    assert list(OrderNumberCounter.objects.values_list("key", "last")) == numbers_before


def test_the_agent_canceling_while_its_card_complete_is_out_gets_no_order_and_the_money_back(
    pagarme: FakePagarmeServer,
) -> None:
    """BCP-CHK-14 (cancel from `complete_in_progress`), BCP-PAY-05: the agent cancels the checkout while its own
    complete waits for the gateway's approval. One outcome: canceled, no order, the unit back on sale once, and
    the approved charge given back."""
    from shop.checkout.services import checkout_cancel

    checkout_id = _ready()

    def cancel_meanwhile() -> None:
        try:
            assert checkout_cancel(checkout_id=checkout_id).checkout.status == "canceled"
        finally:
            connection.close()

    pagarme.state.after_create = cancel_meanwhile
    done = _complete(checkout_id)
    assert done.status == "canceled"
    assert not Order.objects.filter(checkout_id=checkout_id).exists()
    assert Variant.objects.get().stock == 2
    charge = pagarme.charge_of(checkout_id)
    assert charge["canceled_amount"] == charge["amount"]
