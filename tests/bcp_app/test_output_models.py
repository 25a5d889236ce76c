"""Checkout and order responses are produced from the pydantic models (`bcp_app/protocol/schemas/`) and validate
against the shared JSON Schemas, over REST and MCP (A2A: tests/bcp_app/test_a2a_checkout.py::
test_a2a_checkout_data_part_validates_against_the_schemas). Issue 14 "Four schema sets": one output set
for REST, MCP `outputSchema` and A2A data parts (ARCHITECTURE.md, Protocol conventions; BCP-CHK-02,
BCP-ORD-04)."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from django.test import Client

from bcp_app.protocol.schemas import CheckoutResponse, OrderResponse
from payments.sandbox import services as sandbox
from tests.bcp_app import test_mcp_checkout
from tests.bcp_app.bcp_fixtures import FakePlatform, agent
from tests.bcp_app.rest_helpers import PIX, call, complete, ready_checkout
from tests.bcp_app.schema_check import errors

live_mcp = test_mcp_checkout.live_mcp
shopper = test_mcp_checkout.shopper
CHECKOUT_WITH_EXTENSIONS = "shopping/fulfillment.json#/$defs/br.dev.bcp.shopping.checkout"


def assert_checkout(body: dict[str, Any]) -> None:
    assert errors(body, "shopping/checkout.json") == []
    assert errors(body, CHECKOUT_WITH_EXTENSIONS) == []
    assert CheckoutResponse.validated(body) == body  # the body is exactly what the model produces


def assert_order(body: dict[str, Any]) -> None:
    assert errors(body, "shopping/order.json") == []
    assert OrderResponse.validated(body) == body


@pytest.mark.django_db
@pytest.mark.usefixtures("rest_shop")
def test_rest_checkout_and_order_bodies_are_model_outputs_bcp_chk_02_ord_04(
    client: Client, fake_platform: FakePlatform, django_capture_on_commit_callbacks: Any
) -> None:
    from bcp_app.service.platforms import platform_create

    url = fake_platform.publish()
    headers = agent(url, Authorization=f"Bearer {platform_create(name='Agente', profile_url=url).api_key}")
    ready = ready_checkout(client, headers)
    waiting = complete(client, ready["id"], headers).json()
    with django_capture_on_commit_callbacks(execute=True):
        sandbox.pay(txid=ready["payment"]["instruments"][0]["pix"]["txid"], options=sandbox.PayOptions())
    done = call(client, "get", f"/checkout-sessions/{ready['id']}", headers).json()
    order = call(client, "get", f"/orders/{done['order']['id']}", headers).json()
    for body in (ready, waiting, done):
        assert_checkout(body)
    assert_order(order)


@pytest.mark.postgres
@pytest.mark.e2e
def test_mcp_checkout_and_order_bodies_are_model_outputs(shopper: test_mcp_checkout.Shopper) -> None:
    ready = test_mcp_checkout.ready_checkout(shopper)
    sandbox.pay(txid=ready["payment"]["instruments"][0]["pix"]["txid"], options=sandbox.PayOptions())
    done = shopper.tool(
        "complete_checkout", key=str(uuid.uuid4()), id=ready["id"], checkout={"payment": {"instruments": [PIX]}}
    )
    order = shopper.tool("get_order", id=done["order"]["id"])
    for body in (ready, done):
        assert_checkout(body)
    assert_order(order)
