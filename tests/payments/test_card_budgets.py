"""Statement budgets of the card write paths (each one short transaction, fixed cost)."""

from __future__ import annotations

import json

import pytest

from payments.card.gateway import GatewayNotFound, GatewayRejected
from payments.card.sandbox import SandboxCardGateway
from payments.card.webhook import receive_card_webhook
from tests.payments.fake_pagarme import WEBHOOK_PASSWORD, WEBHOOK_USER, webhook_authorization

pytestmark = pytest.mark.django_db


def test_storing_a_card_webhook_is_a_fixed_handful_of_statements(settings, django_assert_max_num_queries) -> None:
    settings.PAGARME_WEBHOOK_USER, settings.PAGARME_WEBHOOK_PASSWORD = WEBHOOK_USER, WEBHOOK_PASSWORD
    body = json.dumps({"id": "hook_budget", "type": "order.paid", "data": {"id": "or_1"}}).encode()
    headers = {"Authorization": webhook_authorization()}

    with django_assert_max_num_queries(4):  # get_or_create: select, savepoint, insert, release
        assert receive_card_webhook(body, headers) == (200, {"received": 1, "duplicates": 0})
    with django_assert_max_num_queries(1):
        assert receive_card_webhook(body, headers) == (200, {"received": 0, "duplicates": 1})


def test_sandbox_gateway_authorizes_and_captures_in_one_statement_each(django_assert_max_num_queries) -> None:
    """The sandbox stands in for a network call to the gateway, so it costs the web process little (issue 34):
    authorize is one INSERT (its unique Idempotency-Key decides), capture one conditional UPDATE."""
    gateway = SandboxCardGateway()
    order = {
        "reference": "checkout_budget",
        "amount": 4290,
        "installments": 1,
        "token": "success_token",
        "customer": None,
        "description": "Pedido checkout_budget",
    }
    with django_assert_max_num_queries(1):
        charge = gateway.create_order(idempotency_key="checkout_budget-1", **order)
    assert charge.authorized and not charge.paid
    with django_assert_max_num_queries(1):
        captured = gateway.capture(charge_id=charge.charge_id, amount=charge.amount, idempotency_key="k-capture")
    assert captured.paid and captured.paid_amount == 4290 and captured.charge_id == charge.charge_id
    # replays answer the first result: the same charge, captured once
    assert gateway.create_order(idempotency_key="checkout_budget-1", **order).charge_id == charge.charge_id
    again = gateway.capture(charge_id=charge.charge_id, amount=charge.amount, idempotency_key="k-capture")
    assert again.paid and again.paid_amount == 4290


def test_sandbox_gateway_refuses_to_capture_a_declined_or_unknown_charge() -> None:
    gateway = SandboxCardGateway()
    declined = gateway.create_order(
        reference="checkout_declined",
        amount=4290,
        installments=1,
        token="fail_token",
        idempotency_key="checkout_declined-1",
        customer=None,
        description="",
    )
    assert not declined.authorized and declined.return_code == "51"
    with pytest.raises(GatewayRejected):
        gateway.capture(charge_id=declined.charge_id, amount=4290, idempotency_key="k")
    with pytest.raises(GatewayNotFound):
        gateway.capture(charge_id="ch_unknown", amount=4290, idempotency_key="k")
