"""Issue 37 (MED 2.0): an agent sees a disputed Pix on its order through the order capability (REST Get Order),
as a `payment_disputed` warning while the shipment is held, valid against the order schema (BCP §7 `messages`)."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from orders.models import Order
from orders.services import order_dispute_record
from payments.sandbox import services as sandbox
from tests.bcp_app.bcp_fixtures import FakePlatform
from tests.bcp_app.rest_helpers import call, complete, ready_checkout
from tests.bcp_app.test_fiscal_extension import _setup, schema_errors

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("bcp_settings")]


def _paid_by_pix(
    client: Client, fake_platform: FakePlatform, settings: Any, captured: Any
) -> tuple[Order, dict[str, str]]:
    """An agent's order paid by Pix (sandbox PSP), and the agent's headers."""
    headers = _setup(fake_platform, settings, fiscal=False)
    checkout = ready_checkout(client, headers)
    complete(client, checkout["id"], headers)
    with captured(execute=True):
        sandbox.pay(txid=checkout["payment"]["instruments"][0]["pix"]["txid"], options=sandbox.PayOptions())
    return Order.objects.get(checkout_id=checkout["id"]), headers


def test_the_agent_sees_the_hold_and_then_the_returned_money(
    client: Client, fake_platform: FakePlatform, settings: Any, django_capture_on_commit_callbacks: Any
) -> None:
    order, headers = _paid_by_pix(client, fake_platform, settings, django_capture_on_commit_callbacks)
    with django_capture_on_commit_callbacks(execute=True):
        order_dispute_record(checkout_id=order.checkout_id, infraction_id="med_1", event="opened",
                             amount=order.paid_amount, situation="scam")  # fmt: skip
    body = call(client, "get", f"/orders/{order.public_id}", headers).json()
    assert body["messages"] == [
        {
            "type": "warning",
            "code": "payment_disputed",
            "content": (
                "O Pix deste pedido foi contestado pelo pagador (MED): o envio está retido até a loja responder."
            ),
        }
    ]
    assert schema_errors(body, "shopping/order.json") == []
    assert schema_errors({**body, "messages": [{"type": "warning", "content": "x"}]}, "shopping/order.json") != []
    with django_capture_on_commit_callbacks(execute=True):
        order_dispute_record(
            checkout_id=order.checkout_id, infraction_id="med_1", event="closed", amount=order.paid_amount,
            returned_amount=order.paid_amount, outcome="returned",
        )  # fmt: skip
    body = call(client, "get", f"/orders/{order.public_id}", headers).json()
    assert "messages" not in body
    assert [(a["type"], a["status"], a["totals"]) for a in body["adjustments"]] == [
        ("refund", "completed", [{"type": "total", "amount": -order.paid_amount}])
    ]
    assert schema_errors(body, "shopping/order.json") == []


def test_an_agent_is_not_told_a_shipped_order_is_held(
    client: Client, fake_platform: FakePlatform, settings: Any, django_capture_on_commit_callbacks: Any
) -> None:
    """QA walk: a dispute of an order already shipped told the agent "o envio está retido", though nothing was left
    to hold (the timeline already said the store answers with the tracking and the NF-e)."""
    from orders.services import order_ship

    order, headers = _paid_by_pix(client, fake_platform, settings, django_capture_on_commit_callbacks)
    with django_capture_on_commit_callbacks(execute=True):
        order_ship(order_id=order.public_id, tracking_number="BR123456785BR")
        order_dispute_record(checkout_id=order.checkout_id, infraction_id="med_2", event="opened",
                             amount=order.paid_amount, situation="scam")  # fmt: skip
    body = call(client, "get", f"/orders/{order.public_id}", headers).json()
    assert [message["content"] for message in body["messages"]] == [
        "O Pix deste pedido foi contestado pelo pagador (MED); o pedido já saiu da loja e a loja responde com o "
        "rastreio e a nota fiscal."
    ]
    assert schema_errors(body, "shopping/order.json") == []
