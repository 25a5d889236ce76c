"""The Pagar.me v5 adapter against a fake gateway on 127.0.0.1: approved, declined, timeout then approved by
webhook, duplicate webhook, refunds full and partial, reconcile by order code (BCP-PAY-04, BCP-PAY-06)."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from django.test import Client

from payments.card.gateway import GatewayUnavailable
from payments.card.pagarme import PagarmeGateway
from payments.card.service import card_payment_authorize
from payments.card.settle import card_payment_reconcile
from payments.models import CardPayment, CardRefund, CardWebhookEvent
from payments.refunds import refund_request
from tests.bcp_app.drip import DripServer
from tests.payments.fake_pagarme import SECRET_KEY, FakePagarmeServer, webhook_authorization

pytestmark = pytest.mark.django_db
WEBHOOK_AUTH = webhook_authorization()


def _authorize(token: str, *, reference: str = "checkout_card1", installments: int = 1, amount: int = 30000):
    return card_payment_authorize(
        reference=reference, amount=amount, handler_id="gpay", token=token, installments=installments
    )


def _post_webhook(body: dict[str, Any], *, auth: str = WEBHOOK_AUTH):
    return Client().post(
        "/payments/card/webhook", data=json.dumps(body), content_type="application/json", HTTP_AUTHORIZATION=auth
    )


def test_approved_card_is_authorized_then_captured_with_the_token_and_installments(pagarme: FakePagarmeServer) -> None:
    result = _authorize("tok_approved", installments=3)

    payment = CardPayment.objects.get()
    assert (result.approved, result.pending, result.payment_id) == (True, False, payment.payment_id)
    assert (payment.status, payment.installments, payment.amount, payment.gateway) == ("approved", 3, 30000, "pagarme")
    assert (payment.card_brand, payment.card_last_digits) == ("Visa", "1111")
    create, capture = pagarme.state.requests
    assert (create[0], create[1]) == ("POST", "/core/v5/orders")
    assert create[2]["code"] == "checkout_card1"
    assert create[2]["payments"][0]["credit_card"] == {
        "card_token": "tok_approved",
        "installments": 3,
        "capture": False,
    }
    assert create[3]["idempotency-key"] == "checkout_card1-1"
    assert create[3]["authorization"] == "Basic " + base64.b64encode(f"{SECRET_KEY}:".encode()).decode()
    assert (capture[0], capture[1]) == ("POST", f"/core/v5/charges/{payment.gateway_reference}/capture")
    assert pagarme.charge_of("checkout_card1")["status"] == "paid"


def test_declined_card_tells_the_buyer_why_in_portuguese(pagarme: FakePagarmeServer) -> None:
    result = _authorize("tok_declined_51")

    assert (result.approved, result.pending, result.code) == (False, False, "payment_failed")
    assert result.message == "Saldo ou limite insuficiente. Use outro cartão ou pague com Pix."
    payment = CardPayment.objects.get()
    assert payment.status == "declined"
    assert payment.gateway_status.endswith("51")
    assert [r[1] for r in pagarme.state.requests] == ["/core/v5/orders"]  # nothing to capture


def test_a_declined_card_may_be_retried_with_another_card_under_a_new_idempotency_key(
    pagarme: FakePagarmeServer,
) -> None:
    _authorize("tok_declined_54")

    result = _authorize("tok_approved")

    assert result.approved is True
    keys = [r[3].get("idempotency-key") for r in pagarme.state.requests if r[1] == "/core/v5/orders"]
    assert keys == ["checkout_card1-1", "checkout_card1-2"]
    assert CardPayment.objects.get().attempts == 2


def test_timeout_then_approved_by_webhook(pagarme: FakePagarmeServer, card_settled, django_capture_on_commit_callbacks):
    # given a capture the gateway carries out while our side never gets the answer (every retry drops)
    pagarme.state.die_after_capture = 3
    result = _authorize("tok_approved")
    payment = CardPayment.objects.get()
    assert (result.approved, result.pending) == (False, True)
    assert payment.status == "pending" and payment.gateway_reference
    # when the gateway's charge.paid webhook arrives (Basic credentials of the hook)
    with django_capture_on_commit_callbacks(execute=True):
        response = _post_webhook(pagarme.webhook("charge.paid", payment.gateway_reference))
    # then the charge is read back from the gateway, recorded approved and announced once
    assert (response.status_code, response.json()) == (200, {"received": 1, "duplicates": 0})
    payment.refresh_from_db()
    assert payment.status == "approved"
    assert card_settled.calls == [
        {"reference": "checkout_card1", "payment_id": payment.payment_id, "status": "approved", "amount": 30000}
    ]
    assert ("GET", f"/core/v5/charges/{payment.gateway_reference}") in [(r[0], r[1]) for r in pagarme.state.requests]
    assert CardWebhookEvent.objects.get().outcome == "approved"
    # and a repeat of the complete call answers the approval without charging again
    assert _authorize("tok_approved").approved is True
    assert len([r for r in pagarme.state.requests if r[1] == "/core/v5/orders"]) == 1


def test_duplicate_webhook_is_stored_once_and_changes_nothing(
    pagarme: FakePagarmeServer, card_settled, django_capture_on_commit_callbacks
) -> None:
    pagarme.state.die_after_capture = 3
    _authorize("tok_approved")
    charge_id = CardPayment.objects.get().gateway_reference
    body = pagarme.webhook("charge.paid", charge_id, hook_id="hook_dup1")

    with django_capture_on_commit_callbacks(execute=True):
        first = _post_webhook(body)
        second = _post_webhook(body)
    other_id = pagarme.webhook("charge.paid", charge_id, hook_id="hook_dup2")  # the same news, another hook id
    with django_capture_on_commit_callbacks(execute=True):
        third = _post_webhook(other_id)

    assert first.json() == {"received": 1, "duplicates": 0}
    assert second.json() == {"received": 0, "duplicates": 1}
    assert third.json() == {"received": 1, "duplicates": 0}
    assert CardWebhookEvent.objects.count() == 2
    assert len(card_settled.calls) == 1  # the second notice of an approval announces nothing


@pytest.mark.parametrize(
    "auth",
    ["", "Basic " + base64.b64encode(b"pagarme-hook:wrong").decode(), "Bearer pagarme-hook", "Basic !!!"],
)
def test_webhook_without_the_hook_credentials_is_refused_and_nothing_is_stored(
    pagarme: FakePagarmeServer, auth: str
) -> None:
    response = _post_webhook({"id": "hook_x", "type": "charge.paid", "data": {"id": "ch_x"}}, auth=auth)

    assert response.status_code == 401
    assert not CardWebhookEvent.objects.exists()


def test_malformed_webhook_is_a_400(pagarme: FakePagarmeServer) -> None:
    response = _post_webhook({"id": 7, "type": "charge.paid", "data": {}})

    assert response.status_code == 400
    assert not CardWebhookEvent.objects.exists()


def test_refund_partial_then_full_through_the_gateway(
    pagarme: FakePagarmeServer, refunds_finished, django_capture_on_commit_callbacks
) -> None:
    _authorize("tok_approved")
    charge_id = CardPayment.objects.get().gateway_reference

    with django_capture_on_commit_callbacks(execute=True):
        partial = refund_request(reference="checkout_card1", amount=10000, refund_id="adj_p1", reason="Brinde")
    with django_capture_on_commit_callbacks(execute=True):
        rest = refund_request(reference="checkout_card1", amount=20000, refund_id="adj_p2", reason="Devolução")

    deletes = [(r[1], r[2], r[3]["idempotency-key"]) for r in pagarme.state.requests if r[0] == "DELETE"]
    assert deletes == [
        (f"/core/v5/charges/{charge_id}", {"amount": 10000}, "adj_p1"),
        (f"/core/v5/charges/{charge_id}", {"amount": 20000}, "adj_p2"),
    ]
    assert isinstance(partial, CardRefund) and isinstance(rest, CardRefund)
    assert list(CardRefund.objects.order_by("id").values_list("status", flat=True)) == ["completed", "completed"]
    assert CardPayment.objects.get().refunded_amount == 30000
    assert pagarme.charge_of("checkout_card1")["status"] == "canceled"
    assert [(c["refund_id"], c["status"], c["amount"]) for c in refunds_finished] == [
        ("adj_p1", "completed", 10000),
        ("adj_p2", "completed", 20000),
    ]


def test_refund_above_what_is_left_is_refused_by_field(pagarme: FakePagarmeServer) -> None:
    from payments.exceptions import PaymentInputError

    _authorize("tok_approved")

    with pytest.raises(PaymentInputError) as refused:
        refund_request(reference="checkout_card1", amount=30001, refund_id="adj_big", reason="x")

    assert refused.value.field == "amount"
    assert not CardRefund.objects.exists()


def test_reconcile_finds_an_authorization_whose_process_died_and_captures_it(
    pagarme: FakePagarmeServer, card_settled
) -> None:
    # given a create the gateway authorized while our process never got the answer nor wrote a row
    from payments.card.pagarme import PagarmeGateway

    PagarmeGateway().create_order(
        reference="checkout_dead",
        amount=30000,
        installments=2,
        token="tok_approved",
        idempotency_key="checkout_dead-1",
        customer=None,
        description="Pedido",
    )
    assert not CardPayment.objects.exists()
    # when the sweep asks the gateway by order code
    result = card_payment_reconcile(reference="checkout_dead")
    # then the authorization is captured, recorded and announced
    payment = CardPayment.objects.get()
    assert result is not None and result.approved
    assert (payment.status, payment.installments, payment.amount) == ("approved", 2, 30000)
    assert pagarme.charge_of("checkout_dead")["status"] == "paid"
    assert [c["status"] for c in card_settled.calls] == ["approved"]
    assert ("GET", "/core/v5/orders?code=checkout_dead") in [(r[0], r[1]) for r in pagarme.state.requests]


def test_reconcile_declines_only_when_the_gateway_says_not_paid(pagarme: FakePagarmeServer, card_settled) -> None:
    assert card_payment_reconcile(reference="checkout_never").approved is False  # no order with that code
    assert [c["status"] for c in card_settled.calls] == ["declined"]
    # an unreachable gateway decides nothing
    pagarme.stop()
    assert card_payment_reconcile(reference="checkout_other") is None
    assert len(card_settled.calls) == 1


def test_a_dripping_gateway_is_cut_at_one_deadline_for_all_attempts() -> None:
    """Issue 31 §2: the timeout was per read and per attempt, so a gateway sending a byte every 0.3 s held the
    caller for as long as it kept sending, three times. Now one deadline bounds the call, retries included."""
    with DripServer(interval=0.3) as drip:
        gateway = PagarmeGateway(secret_key="sk_test", base_url=drip.url(""), timeout=1.0, retries=3, backoff=0.0)
        with pytest.raises(GatewayUnavailable):
            gateway.get_charge("ch_1")
        assert drip.cut.wait(10)  # the gateway saw the call hang up mid-answer
        assert drip.connections == 1  # and no attempt after the deadline
