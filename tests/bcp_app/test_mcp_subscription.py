"""The subscription extension over MCP with the official `mcp` client against a live uvicorn (issue 38): an agent
creates a subscription for its buyer (sandbox Pix Automático), reads it and cancels it; the tools' input and
output schemas come from the same models (BCP-MCP-02 is checked for every tool in test_mcp_protocol)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from tests.bcp_app import test_mcp_helpers
from tests.bcp_app.test_mcp_helpers import Agent, call

live_mcp = test_mcp_helpers.live_mcp
profile_host = test_mcp_helpers.profile_host

pytestmark = [pytest.mark.postgres, pytest.mark.e2e]
SUBSCRIPTION = "br.dev.bcp.shopping.subscription"
PATH = "/assinante/.well-known/bcp"


@pytest.fixture
def subscriber_agent(profile_host: str, settings: Any, transactional_db: None) -> Iterator[Agent]:
    from bcp_app.service.platforms import platform_create
    from shop.demo.seed import seed_catalog
    from shop.models import SubscriptionPlan, Variant

    settings.BCP_PIX_SANDBOX = True
    settings.PIX_SANDBOX_WEBHOOK_URL = ""
    profile = test_mcp_helpers.platform_profile()
    profile["ucp"]["capabilities"][SUBSCRIPTION] = [
        {**test_mcp_helpers._capability(SUBSCRIPTION)[0],
         "extends": ["br.dev.bcp.shopping.checkout", "br.dev.bcp.shopping.order"]}
    ]  # fmt: skip
    test_mcp_helpers._ProfileHandler.documents[PATH] = json.dumps(profile).encode()
    settings.BCP_OUTBOUND_ALLOWLIST = ["127.0.0.1"]
    seed_catalog()
    SubscriptionPlan.objects.create(
        public_id="plan_mcp", variant=Variant.objects.get(sku="SKU-CAFE-500G"), cycle="weekly", price=2990
    )
    created = platform_create(name="Agente Assinante", profile_url=f"{profile_host}{PATH}")
    yield Agent(created.platform.profile_url, created.api_key, created.platform.public_id)
    test_mcp_helpers._ProfileHandler.documents.pop(PATH, None)


def test_an_agent_creates_reads_and_cancels_a_subscription_over_mcp(live_mcp, subscriber_agent) -> None:
    from shop.models import Subscription

    arguments = {
        "meta": subscriber_agent.meta(),
        "subscription": {
            "plan_id": "plan_mcp",
            "buyer": {"first_name": "Ana", "last_name": "Souza", "email": "ana@example.com.br",
                      "tax_id": "52998224725"},
            "destination": {"postal_code": "01310100", "street": "Avenida Paulista", "number": "1000",
                            "neighborhood": "Bela Vista", "city": "São Paulo", "state": "SP"},
        },
    }  # fmt: skip
    created = call(live_mcp.mcp_url, "create_subscription", arguments, headers=subscriber_agent.headers)
    body = created.structured_content
    assert (body["status"], body["plan"]["cycle"], body["plan"]["price"]) == ("pending_authorization", "weekly", 2990)
    assert body["ucp"]["capabilities"][SUBSCRIPTION] == [{"version": "2026-07-28"}]

    read = call(live_mcp.mcp_url, "get_subscription", {"meta": subscriber_agent.meta(), "id": body["id"]},
                headers=subscriber_agent.headers).structured_content  # fmt: skip
    cancelled = call(live_mcp.mcp_url, "cancel_subscription", {"meta": subscriber_agent.meta(), "id": body["id"]},
                     headers=subscriber_agent.headers).structured_content  # fmt: skip

    assert read["id"] == body["id"] and read["authorization"]["status"] == "pending"
    assert cancelled["status"] == "cancelled"
    assert Subscription.objects.get(public_id=body["id"]).status == "cancelled"


def test_an_agent_subscribes_by_card_over_mcp_and_the_sandbox_gateway_charges_the_stored_card(
    live_mcp, subscriber_agent, settings: Any
) -> None:
    from orders.models import Order
    from shop.models import Subscription

    # The sandbox card gateway (no PAYMENTS_CARD_GATEWAY; `make run`): `success_token` is BCP's test token.
    card = {"id": "instr_1", "handler_id": settings.BCP_CARD_HANDLER_ID, "type": "card",
            "credential": {"type": "PAYMENT_GATEWAY", "token": "success_token"}}  # fmt: skip
    arguments = {
        "meta": subscriber_agent.meta(),
        "subscription": {
            "plan_id": "plan_mcp",
            "buyer": {"first_name": "Ana", "last_name": "Souza", "email": "ana@example.com.br",
                      "tax_id": "52998224725"},
            "destination": {"postal_code": "01310100", "street": "Avenida Paulista", "number": "1000",
                            "neighborhood": "Bela Vista", "city": "São Paulo", "state": "SP"},
            "payment": {"instruments": [card]},
        },
    }  # fmt: skip
    created = call(live_mcp.mcp_url, "create_subscription", arguments, headers=subscriber_agent.headers)
    body = created.structured_content

    assert body["status"] == "active", body
    assert body["authorization"] == {"method": "card", "status": "approved",
                                     "card": {"brand": "visa", "last_digits": "1111"}}  # fmt: skip
    order = Order.objects.get(platform_id=subscriber_agent.platform_id)
    assert body["cycles"][0]["order_id"] == order.public_id and order.payment_type == "card"
    assert "success_token" not in json.dumps(body)
    stored = Subscription.objects.get(public_id=body["id"])
    assert stored.card_id.startswith("card_sbx_ok_1111_") and stored.pix_id_rec == ""

    cancelled = call(live_mcp.mcp_url, "cancel_subscription", {"meta": subscriber_agent.meta(), "id": body["id"]},
                     headers=subscriber_agent.headers).structured_content  # fmt: skip
    assert cancelled["status"] == "cancelled"


def test_bad_input_over_mcp_names_every_field_at_fault_bcp_err_05(live_mcp, subscriber_agent) -> None:
    """The same operation as REST: each field at fault a message with its path; a due date that is not one is
    refused (-32602) with every other member of the wrong type in `data.fields`."""
    from shop.models import Subscription

    subscription = {
        "plan_id": "plan_mcp",
        "buyer": {"first_name": "Ana", "last_name": "Souza", "email": "ana@", "tax_id": "52998224725"},
        "destination": {"postal_code": "1", "street": "Avenida Paulista", "number": "1000",
                        "neighborhood": "Bela Vista", "city": "São Paulo", "state": "SP"},
    }  # fmt: skip
    meta = subscriber_agent.meta()
    refused = call(live_mcp.mcp_url, "create_subscription", {"meta": meta, "subscription": subscription},
                   headers=subscriber_agent.headers).structured_content  # fmt: skip
    wrong = test_mcp_helpers.call_error(
        live_mcp.mcp_url, "create_subscription",
        {"meta": meta, "subscription": {**subscription, "plan_id": 7, "starts_on": "amanhã"}},
        headers=subscriber_agent.headers,
    )  # fmt: skip

    assert [(m["code"], m["path"]) for m in refused["messages"]] == [
        ("invalid_subscription", "$.buyer.email"), ("invalid_subscription", "$.destination.postal_code")
    ]  # fmt: skip
    assert wrong.error.code == -32602
    assert wrong.error.data["fields"] == {
        "$.subscription.plan_id": "deve ser um texto", "$.subscription.starts_on": "use AAAA-MM-DD"
    }  # fmt: skip
    assert Subscription.objects.count() == 0
