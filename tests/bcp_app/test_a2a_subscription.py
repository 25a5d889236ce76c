"""The subscription extension over A2A with the official a2a-sdk client against a live uvicorn (issue 38): the
actions create_subscription, get_subscription and cancel_subscription reach the same operations as REST and
MCP; the subscription travels in the data part `a2a.bcp.subscription`."""

from __future__ import annotations

import json
from typing import Any

import pytest
from google.protobuf.json_format import MessageToDict

from tests.bcp_app.test_a2a_helpers import (
    EXTENSION,
    _capability,
    cache_profile,
    data,
    live_fixture,  # noqa: F401 (fixture "live")
    platform_profile,
    rpc,
    sdk_send,
    send_message,
    server_fixture,  # noqa: F401 (fixture "server")
)

pytestmark = [pytest.mark.postgres, pytest.mark.e2e]
SUBSCRIPTION = "br.dev.bcp.shopping.subscription"


def _subscription_part(message: Any) -> dict[str, Any]:
    for part in MessageToDict(message)["parts"]:
        if "a2a.bcp.subscription" in part.get("data", {}):
            return part["data"]["a2a.bcp.subscription"]
    raise AssertionError(f"no a2a.bcp.subscription in {message}")


def _plan_and_agent(url: str, name: str) -> tuple[Any, dict[str, str]]:
    """The demo catalog with a monthly coffee plan, and the headers of an A2A agent whose profile (at `url`) offers
    the subscription extension."""
    from bcp_app.service.platforms import platform_create
    from shop.demo.seed import seed_catalog
    from shop.models import SubscriptionPlan, Variant

    seed_catalog()
    plan = SubscriptionPlan.objects.create(variant=Variant.objects.get(sku="SKU-CAFE-500G"), cycle="monthly",
                                           price=3990)  # fmt: skip
    profile = platform_profile()
    profile["ucp"]["capabilities"][SUBSCRIPTION] = [
        {**_capability("subscription", "subscription")[0],
         "extends": ["br.dev.bcp.shopping.checkout", "br.dev.bcp.shopping.order"]}
    ]  # fmt: skip
    cache_profile(url, profile)
    created = platform_create(name=name, profile_url=url)
    headers = {"BCP-Agent": f'profile="{url}"', "A2A-Extensions": EXTENSION,
               "Authorization": f"Bearer {created.api_key}"}  # fmt: skip
    return plan, headers


def test_an_agent_creates_and_cancels_a_subscription_over_a2a(server, settings) -> None:
    from shop.models import Subscription

    settings.BCP_PIX_SANDBOX = True
    settings.PIX_SANDBOX_WEBHOOK_URL = ""
    plan, headers = _plan_and_agent("https://agente.example/assinaturas/bcp.json", "Agente A2A assinaturas")
    subscription = {
        "plan_id": plan.public_id,
        "buyer": {"first_name": "Ana", "last_name": "Souza", "email": "ana@example.com.br", "tax_id": "52998224725"},
        "destination": {"postal_code": "01310100", "street": "Avenida Paulista", "number": "1000",
                        "neighborhood": "Bela Vista", "city": "São Paulo", "state": "SP"},
    }  # fmt: skip

    reply = sdk_send(server.base_url, [{"data": {"action": "create_subscription", "subscription": subscription}}],
                     headers=headers)  # fmt: skip
    body = _subscription_part(reply)
    assert body["status"] == "pending_authorization" and body["plan"]["id"] == plan.public_id

    read = _subscription_part(sdk_send(
        server.base_url, [{"data": {"action": "get_subscription", "subscription_id": body["id"]}}], headers=headers
    ))  # fmt: skip
    cancelled = _subscription_part(sdk_send(
        server.base_url, [{"data": {"action": "cancel_subscription", "subscription_id": body["id"]}}], headers=headers
    ))  # fmt: skip

    assert read["id"] == body["id"]
    assert cancelled["status"] == "cancelled"
    assert Subscription.objects.get(public_id=body["id"]).status == "cancelled"


def test_an_agent_subscribes_by_card_over_a2a_and_the_sandbox_gateway_charges_the_first_cycle(server, settings) -> None:
    from bcp_app.models import A2AContext, A2ATask
    from orders.models import Order

    settings.BCP_PIX_SANDBOX = True  # the sandbox card gateway; `success_token` is BCP's test token
    settings.PIX_SANDBOX_WEBHOOK_URL = ""
    plan, headers = _plan_and_agent("https://agente.example/assinaturas-cartao/bcp.json", "Agente A2A cartão")
    card = {"id": "instr_1", "handler_id": settings.BCP_CARD_HANDLER_ID, "type": "card",
            "credential": {"type": "PAYMENT_GATEWAY", "token": "success_token"}}  # fmt: skip
    subscription = {
        "plan_id": plan.public_id,
        "buyer": {"first_name": "Ana", "last_name": "Souza", "email": "ana@example.com.br", "tax_id": "52998224725"},
        "destination": {"postal_code": "01310100", "street": "Avenida Paulista", "number": "1000",
                        "neighborhood": "Bela Vista", "city": "São Paulo", "state": "SP"},
        "payment": {"instruments": [card]},
    }  # fmt: skip

    reply = sdk_send(server.base_url, [{"data": {"action": "create_subscription", "subscription": subscription}}],
                     headers=headers)  # fmt: skip
    body = _subscription_part(reply)

    assert body["status"] == "active" and body["authorization"]["method"] == "card"
    assert body["authorization"]["card"] == {"brand": "visa", "last_digits": "1111"}
    order = Order.objects.get()
    assert body["cycles"][0]["order_id"] == order.public_id and order.payment_type == "card"
    # The credential goes platform → business only: neither echoed nor kept with the conversation or its task.
    stored = json.dumps([list(A2ATask.objects.values()), list(A2AContext.objects.values())], default=str)
    assert "success_token" not in stored and "success_token" not in json.dumps(MessageToDict(reply))


def test_bad_input_over_a2a_names_every_field_at_fault_bcp_err_05(server, settings) -> None:
    """The same operation as REST and MCP: each field at fault a message with its path in the subscription's Error
    Response; a due date that is not one is -32602 naming it with every other member of the wrong type, one
    violation each (data.errors, the SDK's google.rpc.BadRequest), by its path from the data part's root
    (`$.subscription.plan_id`, as MCP names it from its arguments; A2A said `$.plan_id`)."""
    from shop.models import Subscription

    settings.BCP_PIX_SANDBOX = True
    plan, headers = _plan_and_agent("https://agente.example/assinaturas/erros.json", "Agente A2A erros")
    subscription = {
        "plan_id": plan.public_id,
        "buyer": {"first_name": "Ana", "last_name": "Souza", "email": "ana@", "tax_id": "52998224725"},
        "destination": {"postal_code": "1", "street": "Avenida Paulista", "number": "1000",
                        "neighborhood": "Bela Vista", "city": "São Paulo", "state": "SP"},
    }  # fmt: skip

    refused = _subscription_part(sdk_send(
        server.base_url, [{"data": {"action": "create_subscription", "subscription": subscription}}], headers=headers
    ))  # fmt: skip
    wrong = {**subscription, "plan_id": 7, "starts_on": "amanhã"}
    body = rpc(server.a2a_url, send_message([data({"action": "create_subscription", "subscription": wrong})]),
               headers={**headers, "Content-Type": "application/json", "A2A-Version": "1.0"})  # fmt: skip

    assert [(m["code"], m["path"]) for m in refused["messages"]] == [
        ("invalid_subscription", "$.buyer.email"), ("invalid_subscription", "$.destination.postal_code")
    ]  # fmt: skip
    assert body["error"]["code"] == -32602
    violations = next(d["fieldViolations"] for d in body["error"]["data"] if d["@type"].endswith("BadRequest"))
    assert {v["field"]: v["description"] for v in violations} == {
        "$.subscription.plan_id": "deve ser um texto", "$.subscription.starts_on": "use AAAA-MM-DD"
    }  # fmt: skip
    assert Subscription.objects.count() == 0
