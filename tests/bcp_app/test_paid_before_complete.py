"""A Pix paid before the platform's complete, over REST and MCP (PIX.md §3.1, §10 D1; A2A:
tests/bcp_app/test_a2a_checkout.py::test_pix_paid_before_complete_completes_synchronously).

PIX.md §3.1: "checkout `ready_for_complete` (buyer paid before complete was called) → keep the payment,
stay `ready_for_complete` with info `pix_payment_received`; the next complete returns `completed`
synchronously." Before, the checkout completed on payment and the platform's complete got an
unrecoverable `invalid_checkout_status`.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from django.test import Client

from payments.models import PixCharge
from payments.sandbox import services as sandbox
from tests.bcp_app import test_mcp_checkout
from tests.bcp_app.bcp_fixtures import FakePlatform, agent
from tests.bcp_app.rest_helpers import PIX, call, complete, ready_checkout

live_mcp = test_mcp_checkout.live_mcp
shopper = test_mcp_checkout.shopper


def _pay(checkout: dict[str, Any]) -> None:
    sandbox.pay(txid=checkout["payment"]["instruments"][0]["pix"]["txid"], options=sandbox.PayOptions())


@pytest.mark.django_db
@pytest.mark.usefixtures("rest_shop")
def test_rest_complete_after_payment_is_synchronous_pix_3_1(
    client: Client, fake_platform: FakePlatform, django_capture_on_commit_callbacks: Any
) -> None:
    headers = agent(fake_platform.publish())
    checkout = ready_checkout(client, headers)
    with django_capture_on_commit_callbacks(execute=True):
        _pay(checkout)
    waiting = call(client, "get", f"/checkout-sessions/{checkout['id']}", headers).json()
    response = complete(client, checkout["id"], headers)
    done = response.json()
    assert waiting["status"] == "ready_for_complete"
    assert [(m["type"], m["code"], m["path"]) for m in waiting["messages"]] == [
        ("info", "pix_payment_received", "$.payment.instruments[0]")
    ]
    assert waiting["payment"]["instruments"][0]["pix"]["status"] == "paid"
    assert response.status_code == 200
    assert done["status"] == "completed"
    assert set(done["order"]) == {"id", "permalink_url"}
    assert "messages" not in done
    assert PixCharge.objects.filter(reference=checkout["id"]).count() == 1


@pytest.mark.postgres
@pytest.mark.e2e
def test_mcp_complete_after_payment_is_synchronous_pix_3_1(shopper: test_mcp_checkout.Shopper) -> None:
    checkout = test_mcp_checkout.ready_checkout(shopper)
    _pay(checkout)
    waiting = shopper.tool("get_checkout", id=checkout["id"])
    done = shopper.tool(
        "complete_checkout", key=str(uuid.uuid4()), id=checkout["id"], checkout={"payment": {"instruments": [PIX]}}
    )
    assert waiting["status"] == "ready_for_complete"
    assert [(m["type"], m["code"]) for m in waiting["messages"]] == [("info", "pix_payment_received")]
    assert done["status"] == "completed"
    assert done["order"]["id"] == shopper.tool("get_order", id=done["order"]["id"])["id"]
    assert "messages" not in done
