"""Seed 000 (`get_order` over MCP): the request, the response and the two error examples reproduced
field by field against a live uvicorn with the official `mcp` client. BCP-ORD-01..04, BCP-MCP-03/06.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from tests.bcp_app import test_mcp_helpers
from tests.bcp_app.test_mcp_helpers import call, call_error, raw_post, tools_call

# Shared fixtures (pytest finds them by name in this module).
agent = test_mcp_helpers.agent
live_mcp = test_mcp_helpers.live_mcp
profile_host = test_mcp_helpers.profile_host

pytestmark = [pytest.mark.postgres, pytest.mark.e2e]

SEED_ORDER_CAPABILITIES = {"br.dev.bcp.shopping.order": [{"version": "2026-07-28"}]}


def place_seed_order(platform_id: str | None, *, checkout_id: str = "checkout_xyz789", quantity: int = 1) -> Any:
    """The order of seed 000: one pair of running shoes, delivered with a Correios tracking code (`quantity`: pairs
    bought, one of them delivered)."""
    from orders.services import fulfillment_event_create, order_place_from_checkout
    from orders.types import LineQuantity, PlacedCheckout, PlacedLine

    order = order_place_from_checkout(
        checkout=PlacedCheckout(
            checkout_id=checkout_id,
            currency="BRL",
            buyer_first_name="Ana",
            buyer_last_name="Souza",
            buyer_email="ana@example.com.br",
            buyer_phone="",
            buyer_tax_id="",
            lines=[
                PlacedLine(
                    line_id="li_shoes", sku="prod_shoes", title="Running Shoes", unit_price=3000, quantity=quantity
                )
            ],
            totals=[("subtotal", 3000, ""), ("fulfillment", 800, ""), ("tax", 304, ""), ("total", 4104, "")],
            fulfillment_method="shipping",
            fulfillment_title="SEDEX",
            fulfillment_description="Entregue",
            destination={
                "street": "Rua das Flores",
                "number": "123",
                "city": "São Paulo",
                "state": "SP",
                "postal_code": "01310-100",
                "country": "BR",
            },
            platform_id=platform_id,
            language="en",
            payment_handler_id="pix_recebedor_001",
            payment_type="pix",
            payment_reference=checkout_id,
            payment_txid="txid0001",
            paid_amount=4104,
        )
    )
    fulfillment_event_create(
        order_id=order.public_id,
        type="delivered",
        lines=[LineQuantity("li_shoes", 1)],
        tracking_number="BR123456785BR",
        tracking_url="https://rastreamento.correios.com.br/app/index.php?objetos=BR123456785BR",
        description="Entregue na portaria",
        occurred_at=datetime(2026, 1, 8, 10, 30, tzinfo=UTC),
    )
    return order


def test_get_order_reproduces_the_seed_response_field_by_field_bcp_ord_04(live_mcp, agent) -> None:
    # given an order placed through the agent's platform
    order = place_seed_order(agent.platform_id)
    # when the seed's request is sent (meta["ucp-agent"].profile + id)
    result = call(live_mcp.mcp_url, "get_order", {"meta": agent.meta(), "id": order.public_id}, headers=agent.headers)
    # then structuredContent is the BCP order with the seed's fields, types and nesting
    body = result.structured_content
    assert result.is_error is False
    assert set(body) == {
        "ucp",
        "id",
        "label",
        "checkout_id",
        "permalink_url",
        "currency",
        "line_items",
        "fulfillment",
        "adjustments",
        "totals",
        "policies",  # BCP §7 optional member the seed predates (UCP #572, issue 14): the store's policies
        "updated_at",  # an extra member (schemas are open): when this snapshot was made, to order webhooks
    }
    assert body["ucp"] == {"version": "2026-07-28", "capabilities": SEED_ORDER_CAPABILITIES}
    assert body["id"] == order.public_id
    assert body["checkout_id"] == "checkout_xyz789"
    assert body["permalink_url"] == order.permalink_url
    assert body["currency"] == "BRL"
    assert body["line_items"] == [
        {
            "id": "li_shoes",
            "item": {"id": "prod_shoes", "title": "Running Shoes", "price": 3000},
            "quantity": {"total": 1, "fulfilled": 1},
            "totals": [{"type": "subtotal", "amount": 3000}, {"type": "total", "amount": 3000}],
            "status": "fulfilled",
        }
    ]
    expectation = body["fulfillment"]["expectations"][0]
    # the seed's members, plus BCP's optional `fulfillable_on`
    assert set(expectation) - {"fulfillable_on"} == {"id", "line_items", "method_type", "destination", "description"}
    assert expectation["line_items"] == [{"id": "li_shoes", "quantity": 1}]
    assert expectation["method_type"] == "shipping"
    assert expectation["destination"] == {
        "street_address": "Rua das Flores, 123",
        "address_locality": "São Paulo",
        "address_region": "SP",
        "address_country": "BR",
        "postal_code": "01310-100",
    }
    assert expectation["description"] == "Entregue"
    event = body["fulfillment"]["events"][0]
    # the seed's members (BCP's optional `carrier` is filled in for Correios codes)
    assert {k: v for k, v in event.items() if k not in ("id", "carrier")} == {
        "occurred_at": "2026-01-08T10:30:00Z",
        "type": "delivered",
        "line_items": [{"id": "li_shoes", "quantity": 1}],
        "tracking_number": "BR123456785BR",
        "tracking_url": "https://rastreamento.correios.com.br/app/index.php?objetos=BR123456785BR",
        "description": "Entregue na portaria",
    }
    assert body["adjustments"] == []
    assert body["totals"] == [
        {"type": "subtotal", "amount": 3000},
        {"type": "fulfillment", "amount": 800},
        {"type": "tax", "amount": 304},
        {"type": "total", "amount": 4104},
    ]
    # and content is one text block with its JSON
    assert len(result.content) == 1
    assert result.content[0].type == "text"
    assert json.loads(result.content[0].text) == body


def test_get_order_after_a_partial_cancel_promises_only_what_is_left_bcp_ord_06_07(live_mcp, agent) -> None:
    """BCP §7: the expectation lists what is still to be fulfilled (quantities >= 1), not the plan as placed; the
    line says original, total and fulfilled (BCP-ORD-06, BCP-ORD-07)."""
    from orders.services import order_cancel

    # given three pairs bought, one delivered and the other two cancelled
    order = place_seed_order(agent.platform_id, quantity=3)
    order_cancel(order_id=order.public_id, reason="Sem estoque")
    # when the platform reads the order over MCP
    result = call(live_mcp.mcp_url, "get_order", {"meta": agent.meta(), "id": order.public_id}, headers=agent.headers)
    # then the expectation holds the delivered pair only
    body = result.structured_content
    assert [e["line_items"] for e in body["fulfillment"]["expectations"]] == [[{"id": "li_shoes", "quantity": 1}]]
    assert [(i["quantity"], i["status"]) for i in body["line_items"]] == [
        ({"original": 3, "total": 1, "fulfilled": 1}, "fulfilled")
    ]


def test_get_order_not_found_is_the_seed_error_example_bcp_ord_03(live_mcp, agent) -> None:
    # when the order does not exist (English, as in the seed)
    result = call(
        live_mcp.mcp_url,
        "get_order",
        {"meta": agent.meta(), "id": "order_abc123"},
        headers={**agent.headers, "Accept-Language": "en"},
    )
    # then
    assert result.is_error is False
    assert result.structured_content == {
        "ucp": {"version": "2026-07-28", "status": "error", "capabilities": SEED_ORDER_CAPABILITIES},
        "messages": [
            {"type": "error", "code": "not_found", "severity": "unrecoverable", "content": "Order not found."}
        ],
    }
    assert [(c.type, c.text) for c in result.content] == [("text", "Order not found.")]


def test_get_order_of_another_platform_is_the_seed_unauthorized_example_bcp_ord_02(
    live_mcp,
    agent,
) -> None:
    # given an order placed by some other platform
    order = place_seed_order("plat_someoneelse")
    # when our agent asks for it
    result = call(
        live_mcp.mcp_url,
        "get_order",
        {"meta": agent.meta(), "id": order.public_id},
        headers={**agent.headers, "Accept-Language": "en"},
    )
    # then
    assert result.structured_content == {
        "ucp": {"version": "2026-07-28", "status": "error", "capabilities": SEED_ORDER_CAPABILITIES},
        "messages": [
            {
                "type": "error",
                "code": "unauthorized",
                "severity": "unrecoverable",
                "content": "Not authorized to access this order.",
            }
        ],
    }
    assert [(c.type, c.text) for c in result.content] == [("text", "Not authorized to access this order.")]


def test_get_order_without_credentials_is_unauthorized(live_mcp, agent) -> None:
    # given an order of the agent's platform, asked for anonymously
    order = place_seed_order(agent.platform_id)
    # when
    result = call(live_mcp.mcp_url, "get_order", {"meta": agent.meta(), "id": order.public_id})
    # then only the originating platform may read it
    assert result.structured_content["messages"][0]["code"] == "unauthorized"


def test_get_order_without_ucp_agent_is_invalid_profile_url_bcp_mcp_03(live_mcp, agent) -> None:
    # when meta is missing, or has no ucp-agent.profile
    no_meta = call_error(live_mcp.mcp_url, "get_order", {"id": "order_abc123"}, headers=agent.headers)
    no_agent = call_error(live_mcp.mcp_url, "get_order", {"meta": {}, "id": "order_abc123"}, headers=agent.headers)
    # then -32001 with data.code invalid_profile_url
    assert (no_meta.code, no_meta.data["code"]) == (-32001, "invalid_profile_url")
    assert (no_agent.code, no_agent.data["code"]) == (-32001, "invalid_profile_url")


def test_get_order_without_ucp_agent_answers_http_400_on_the_wire_bcp_err_04(live_mcp, agent) -> None:
    # when the seed's request is sent raw without meta
    response = raw_post(live_mcp.mcp_url, tools_call("get_order", {"id": "order_abc123"}))
    # then the JSON-RPC error travels with the §5.4 HTTP status
    assert response.status_code == 400
    assert response.json()["error"]["code"] == -32001
    assert response.json()["error"]["data"]["code"] == "invalid_profile_url"
    assert response.json()["id"] == 1


def test_get_order_on_the_wire_matches_the_seed_envelope(live_mcp, agent) -> None:
    # given
    order = place_seed_order(agent.platform_id)
    # when the seed's request is POSTed verbatim (JSON-RPC id 1, tools/call get_order)
    response = raw_post(
        live_mcp.mcp_url, tools_call("get_order", {"meta": agent.meta(), "id": order.public_id}), headers=agent.headers
    )
    # then the JSON-RPC response carries result.structuredContent and one text content block with its JSON
    message = response.json()
    assert response.status_code == 200
    assert (message["jsonrpc"], message["id"]) == ("2.0", 1)
    result = message["result"]
    assert result["structuredContent"]["id"] == order.public_id
    assert result["content"] == [{"type": "text", "text": result["content"][0]["text"]}]
    assert json.loads(result["content"][0]["text"]) == result["structuredContent"]
    assert result.get("isError", False) is False
