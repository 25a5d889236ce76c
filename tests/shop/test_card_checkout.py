"""Card checkouts through the Pagar.me adapter and a fake gateway on 127.0.0.1: parcelamento on the
instrument (BCP-CHK totals exact, the charge equals the total), a timeout finished by the webhook, a
process that died before the card payment was written (the sweep asks the gateway), refunds through
the outbox (BCP-PAY-04, BCP-PAY-06)."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import timedelta

import pytest
from django.core import mail
from django.test import Client
from django.utils import timezone

from orders.models import Adjustment, Order
from orders.services import order_cancel, order_refund
from payments.card.pagarme import PagarmeGateway
from payments.installments import InstallmentPolicy, plan_for
from payments.models import CardPayment, CardRefund, PixCharge
from payments.selectors import pix_charge_active_for_reference
from payments.services import card_payment_charge
from shop.checkout.complete import _begin
from shop.checkout.core import ANY_OWNER
from shop.checkout.services import checkout_complete, checkout_create, checkout_expire_due, checkout_update
from shop.checkout.types import CheckoutInput, CompleteInput, InstrumentInput, LineInput, PaymentInput
from shop.models import Checkout, StoreSettings, Variant
from tests.payments.fake_pagarme import FakePagarmeServer, webhook_authorization
from tests.shop.checkout_factories import full_input, make_shipping, make_variant

pytestmark = pytest.mark.django_db


def card(installments: int = 1, token: str = "tok_approved") -> InstrumentInput:  # noqa: S107 - test token
    credential = {"type": "PAYMENT_GATEWAY", "token": token}
    return InstrumentInput(
        id="instr_c", handler_id="gpay", type="card", credential=credential, installments=installments
    )


def _ready(instrument: InstrumentInput | None = None, *, price: int = 10000) -> Checkout:
    make_variant(price=price, stock=5)
    make_shipping()
    data = full_input(LineInput("SKU-CAFE-500G", 1), option="pac")
    result = checkout_create(
        data=replace(data, payment=PaymentInput(instruments=(instrument,)) if instrument else None)
    )
    return result.checkout


def _complete(checkout: Checkout, instrument: InstrumentInput):
    return checkout_complete(checkout_id=checkout.public_id, data=CompleteInput(payment=PaymentInput((instrument,))))


def _stock() -> int:
    return Variant.objects.get(sku="SKU-CAFE-500G").stock


def test_card_in_3x_without_interest_places_the_order_with_its_plan(pagarme: FakePagarmeServer) -> None:
    checkout = _ready(card(3))
    total = checkout.total_amount
    assert checkout.status == "ready_for_complete"
    assert [t["type"] for t in checkout.totals] == ["subtotal", "fulfillment", "total"]  # no interest in 3x

    result = _complete(checkout, card(3))

    order = Order.objects.get(checkout_id=checkout.public_id)
    assert result.checkout.status == "completed"
    assert (order.payment_type, order.installments, order.paid_amount) == ("card", 3, total)
    assert (order.installment_amount, order.first_installment) == (total // 3, total // 3 + total % 3)
    create = next(r for r in pagarme.state.requests if r[1] == "/core/v5/orders")
    assert create[2]["payments"][0]["amount"] == total
    assert create[2]["payments"][0]["credit_card"]["installments"] == 3
    assert create[2]["customer"]["email"] == "ana@example.com.br"


def test_installments_above_the_interest_free_ones_add_a_fee_and_the_card_is_charged_the_total(
    pagarme: FakePagarmeServer,
) -> None:
    StoreSettings.objects.create(card_interest_free_installments=3, card_monthly_interest_bp=199)
    checkout = _ready(card(6))
    plain = sum(t["amount"] for t in checkout.totals if t["type"] in ("subtotal", "fulfillment"))

    plan = plan_for(plain, 6, InstallmentPolicy(12, 3, 199, 500))
    assert checkout.totals[-2] == {"type": "fee", "amount": plan.interest, "display_text": "Juros do parcelamento (6x)"}
    assert checkout.total_amount == plan.total == plain + plan.interest

    _complete(checkout, card(6))

    order = Order.objects.get(checkout_id=checkout.public_id)
    assert (order.total_amount, order.paid_amount, order.installments) == (plan.total, plan.total, 6)
    assert order.installment_amount * 6 == order.total_amount
    assert pagarme.charge_of(checkout.public_id)["amount"] == plan.total


def test_installments_the_shop_does_not_offer_are_a_field_error(pagarme: FakePagarmeServer) -> None:
    checkout = _ready(card(20))

    errors = [m for m in checkout.messages if m["type"] == "error"]
    assert checkout.status == "incomplete"
    assert errors[0]["path"] == "$.payment.instruments[0].installments"
    assert errors[0]["content"] == "Parcelamento indisponível para este valor: escolha de 1 a 12 parcelas."


def test_completing_with_other_installments_than_selected_asks_for_a_review(pagarme: FakePagarmeServer) -> None:
    StoreSettings.objects.create(card_interest_free_installments=1)
    checkout = _ready(card(1))

    result = _complete(checkout, card(4))  # 4x adds interest: the total the platform saw is not the total

    assert result.checkout.status == "ready_for_complete"
    assert any(m.code == "checkout_changed" for m in result.messages)
    assert not pagarme.state.requests


def test_declined_card_gives_the_stock_back_with_the_reason(pagarme: FakePagarmeServer) -> None:
    checkout = _ready(card(1, "tok_declined_51"))

    result = _complete(checkout, card(1, "tok_declined_51"))

    assert result.checkout.status == "incomplete"
    assert [m.content for m in result.messages if m.code == "payment_failed"] == [
        "Saldo ou limite insuficiente. Use outro cartão ou pague com Pix."
    ]
    assert _stock() == 5


def test_a_card_complete_on_a_checkout_with_a_pix_charge_revokes_that_charge_bcp_pay_05(
    pagarme: FakePagarmeServer,
) -> None:
    """BCP-PAY-05/06, PIX.md (QA walk): a card complete detaches the checkout's Pix charge in step 1; declined, the
    charge stayed active at the PSP with no link from the checkout, its QR still payable. Declined, the checkout
    shows the card and no Pix (shop/checkout/charge.py: only a ready Pix checkout carries an active charge), so the
    charge is revoked when the complete moves the checkout to the card (rows now, the PSP cancel after commit), as an
    update away from Pix revokes it; approved, no second payment is left open either."""
    pix = InstrumentInput(id="instr_1", handler_id="pix_recebedor_001", type="pix")
    checkout = _ready(pix)
    charge = PixCharge.objects.get(reference=checkout.public_id)
    assert (charge.status, Checkout.objects.get(pk=checkout.pk).payment_txid) == ("active", "")
    assert _stock() == 4  # held for the Pix charge

    result = _complete(checkout, card(1, "tok_declined_51"))

    assert result.checkout.status == "incomplete"
    assert [m.code for m in result.messages if m.type == "error"] == ["payment_failed"]
    charge.refresh_from_db()
    assert (charge.status, charge.status_reason) == ("revoked", "canceled")
    assert pix_charge_active_for_reference(checkout.public_id) is None
    assert _stock() == 5
    # and approved (another checkout), the order is placed by card and no Pix of it is left to pay twice
    data = full_input(LineInput("SKU-CAFE-500G", 1), option="pac")
    approved = checkout_create(data=replace(data, payment=PaymentInput(instruments=(pix,)))).checkout
    assert _complete(approved, card(1)).checkout.status == "completed"
    assert pix_charge_active_for_reference(approved.public_id) is None


def test_a_card_retried_after_a_decline_is_a_new_attempt_known_from_the_lock_read(pagarme: FakePagarmeServer) -> None:
    # given a declined attempt (the checkout's lock read in step 1 brings the payment's status and attempts)
    checkout = _ready(card(1, "tok_declined_51"))
    assert _complete(checkout, card(1, "tok_declined_51")).checkout.status == "incomplete"
    data = full_input(LineInput("SKU-CAFE-500G", 1), option="pac")
    ready = checkout_update(
        checkout_id=checkout.public_id, data=replace(data, payment=PaymentInput(instruments=(card(1),)))
    )
    assert ready.checkout.status == "ready_for_complete"
    # when the buyer completes again with another card
    result = _complete(checkout, card(1))
    # then it is charged as attempt 2, under its own gateway key, and the order is placed
    assert result.checkout.status == "completed"
    keys = [r[3].get("idempotency-key") for r in pagarme.state.requests if r[1] == "/core/v5/orders"]
    assert keys == [f"{checkout.public_id}-1", f"{checkout.public_id}-2"]
    assert (CardPayment.objects.get().attempts, CardPayment.objects.get().status) == (2, "approved")


def test_a_complete_with_another_card_right_after_a_decline_charges_it_bcp_pay_06(pagarme: FakePagarmeServer) -> None:
    """QA walk (an agent over REST): after a decline, completing again with a good card answered the old decline
    until the agent sent an update first. The decline is recoverable: the new instrument is charged."""
    # given a checkout whose card was just declined (incomplete, its only error the decline)
    checkout = _ready(card(1, "tok_declined_51"))
    assert _complete(checkout, card(1, "tok_declined_51")).checkout.status == "incomplete"
    assert _stock() == 5
    # when the platform completes again with another card, without an update in between
    result = _complete(checkout, card(1))
    # then that card is charged as attempt 2 under its own gateway key and the order is placed
    assert result.checkout.status == "completed", [m.content for m in result.messages]
    assert not [m for m in result.messages if m.code == "payment_failed"]
    keys = [r[3].get("idempotency-key") for r in pagarme.state.requests if r[1] == "/core/v5/orders"]
    assert keys == [f"{checkout.public_id}-1", f"{checkout.public_id}-2"]
    assert (CardPayment.objects.get().attempts, CardPayment.objects.get().status) == (2, "approved")
    assert _stock() == 4


def test_a_complete_after_a_decline_with_the_same_bad_card_is_declined_again_as_a_new_attempt(
    pagarme: FakePagarmeServer,
) -> None:
    checkout = _ready(card(1, "tok_declined_51"))
    _complete(checkout, card(1, "tok_declined_51"))
    result = _complete(checkout, card(1, "tok_declined_51"))
    assert result.checkout.status == "incomplete"
    assert [m.code for m in result.messages if m.type == "error"] == ["payment_failed"]
    assert CardPayment.objects.get().attempts == 2
    assert _stock() == 5


def test_an_incomplete_checkout_missing_data_still_answers_its_errors_on_complete(pagarme: FakePagarmeServer) -> None:
    # given a checkout that is incomplete for another reason than a decline (no buyer data)
    make_variant(price=10000, stock=5)
    checkout = checkout_create(data=CheckoutInput(lines=(LineInput("SKU-CAFE-500G", 1),))).checkout
    assert checkout.status == "incomplete"
    # when it is completed with a card: its blocking errors come back, nothing is charged (BCP §5, complete
    # from incomplete)
    result = _complete(checkout, card(1))
    assert result.checkout.status == "incomplete"
    assert {m.code for m in result.messages} == {"field_required"}
    assert not pagarme.state.requests


def test_a_card_payment_still_pending_for_the_checkout_is_never_charged_again(pagarme: FakePagarmeServer) -> None:
    # given a ready checkout whose reference still has a card payment waiting at the gateway
    checkout = _ready(card(1))
    CardPayment.objects.create(
        payment_id="cardpay_waiting",
        reference=checkout.public_id,
        handler_id="gpay",
        amount=checkout.total_amount,
        status="pending",
        attempts=1,
    )
    # when it is completed by card
    result = _complete(checkout, card(1))
    # then it waits for that payment's outcome: no second charge at the gateway
    assert result.checkout.status == "complete_in_progress"
    assert [m.code for m in result.messages] == ["card_payment_pending"]
    assert not pagarme.state.requests


def test_timeout_keeps_the_stock_and_the_webhook_places_the_order(
    pagarme: FakePagarmeServer, django_capture_on_commit_callbacks
) -> None:
    checkout = _ready(card(2))
    pagarme.state.die_after_capture = 3  # the gateway captures, our side never hears it

    result = _complete(checkout, card(2))

    assert result.checkout.status == "complete_in_progress"
    assert [m.code for m in result.messages] == ["card_payment_pending"]
    assert _stock() == 4
    charge_id = CardPayment.objects.get().gateway_reference
    with django_capture_on_commit_callbacks(execute=True):
        response = Client().post(
            "/payments/card/webhook",
            data=json.dumps(pagarme.webhook("charge.paid", charge_id)),
            content_type="application/json",
            HTTP_AUTHORIZATION=webhook_authorization(),
        )
    assert response.status_code == 200
    checkout.refresh_from_db()
    order = Order.objects.get(checkout_id=checkout.public_id)
    assert (checkout.status, order.payment_type, order.installments) == ("completed", "card", 2)
    assert not any(m["code"] == "card_payment_pending" for m in checkout.messages)


def _died_after_the_gateway(pagarme: FakePagarmeServer, *, charge: bool) -> Checkout:
    """Step 1 of complete ran (stock reserved), the gateway was called (or not), then the process died."""
    checkout = _ready(card(1))
    begun = _begin(checkout.public_id, CompleteInput(payment=PaymentInput((card(1),))), ANY_OWNER)
    assert isinstance(begun, Checkout) and begun.status == "complete_in_progress"
    if charge:
        gateway = PagarmeGateway()
        created = gateway.create_order(
            reference=checkout.public_id,
            amount=begun.total_amount,
            installments=1,
            token="tok_approved",
            idempotency_key=f"{checkout.public_id}-1",
            customer=None,
            description="Pedido",
        )
        gateway.capture(charge_id=created.charge_id, amount=created.amount, idempotency_key="cap")
    Checkout.objects.filter(pk=checkout.pk).update(updated_at=timezone.now() - timedelta(minutes=3))
    assert not CardPayment.objects.exists()
    return checkout


def test_a_card_approved_whose_process_died_before_recording_it_is_recorded_by_the_sweep(
    pagarme: FakePagarmeServer,
) -> None:
    checkout = _died_after_the_gateway(pagarme, charge=True)

    checkout_expire_due()

    checkout.refresh_from_db()
    assert checkout.status == "completed"
    assert CardPayment.objects.get().status == "approved"
    assert Order.objects.get(checkout_id=checkout.public_id).paid_amount == checkout.total_amount
    assert _stock() == 4


def test_the_card_outcome_is_written_in_the_placement_commit_so_a_crash_before_it_is_swept(
    pagarme: FakePagarmeServer,
) -> None:
    # given step 1 ran and the production gateway half charged the card (card_payment_charge, no row yet)
    checkout = _ready(card(1))
    begun = _begin(checkout.public_id, CompleteInput(payment=PaymentInput((card(1),))), ANY_OWNER)
    assert isinstance(begun, Checkout)
    charged = card_payment_charge(
        reference=checkout.public_id, amount=begun.total_amount, handler_id="gpay", token="tok_approved"
    )
    assert charged.answered is None and charged.charge is not None and charged.charge.paid
    # when the process dies before the one transaction that records it and places the order
    assert not CardPayment.objects.exists()  # the outcome is not committed on its own
    Checkout.objects.filter(pk=checkout.pk).update(updated_at=timezone.now() - timedelta(minutes=3))
    # then the pending sweep asks the gateway by order code and places the order, charged once
    checkout_expire_due()
    checkout.refresh_from_db()
    assert checkout.status == "completed"
    assert CardPayment.objects.get().status == "approved"
    assert len(pagarme.state.orders) == 1
    assert Order.objects.get(checkout_id=checkout.public_id).paid_amount == checkout.total_amount


def test_the_sweep_releases_the_stock_only_when_the_gateway_says_not_paid(pagarme: FakePagarmeServer) -> None:
    checkout = _died_after_the_gateway(pagarme, charge=False)
    pagarme.stop()

    checkout_expire_due()  # gateway unreachable: nothing is released on a guess
    checkout.refresh_from_db()
    assert (checkout.status, _stock()) == ("complete_in_progress", 4)

    server = use_fake_pagarme_again(pagarme)
    checkout_expire_due()
    checkout.refresh_from_db()
    assert (checkout.status, _stock()) == ("incomplete", 5)
    assert server.state.requests[0][1] == f"/core/v5/orders?code={checkout.public_id}"
    server.stop()


def use_fake_pagarme_again(stopped: FakePagarmeServer) -> FakePagarmeServer:
    from django.conf import settings

    server = FakePagarmeServer().start()
    settings.PAGARME_BASE_URL = server.base_url
    return server


@pytest.mark.django_db(transaction=True)
def test_a_cancelled_card_order_e_mails_the_cancellation_before_its_refund(pagarme: FakePagarmeServer) -> None:
    """QA walk: "Reembolso do pedido" reached the buyer before "Pedido cancelado". After the cancel commits, the
    outbox's estorno ran first (its callback was registered first), committed its own refund and sent that
    e-mail at once; the cancellation's e-mail callback came after it."""
    checkout = _ready(card(1))
    _complete(checkout, card(1))
    order = Order.objects.get(checkout_id=checkout.public_id)
    mail.outbox.clear()

    order_cancel(order_id=order.public_id, reason="Desistiu", restock=True)  # real commits, eager tasks

    subjects = [message.subject.split(": ", 1)[1] for message in mail.outbox]
    assert subjects == [f"Pedido #{order.number} cancelado", f"Reembolso do pedido #{order.number}"]


def test_card_refunds_go_through_the_gateway_partial_then_full_on_cancel(
    pagarme: FakePagarmeServer, django_capture_on_commit_callbacks
) -> None:
    checkout = _ready(card(1))
    _complete(checkout, card(1))
    order = Order.objects.get(checkout_id=checkout.public_id)

    with django_capture_on_commit_callbacks(execute=True):
        partial = order_refund(order_id=order.public_id, amount=1500, reason="Brinde")
    with django_capture_on_commit_callbacks(execute=True):
        order_cancel(order_id=order.public_id, reason="Desistiu", restock=True)

    assert Adjustment.objects.get(public_id=partial.public_id).status == "completed"
    refunds = list(CardRefund.objects.order_by("id").values_list("amount", "status"))
    assert refunds == [(1500, "completed"), (order.paid_amount - 1500, "completed")]
    order.refresh_from_db()
    assert order.refunded_amount == order.paid_amount
    deletes = [r[2]["amount"] for r in pagarme.state.requests if r[0] == "DELETE"]
    assert deletes == [1500, order.paid_amount - 1500]
    assert pagarme.charge_of(checkout.public_id)["status"] == "canceled"
