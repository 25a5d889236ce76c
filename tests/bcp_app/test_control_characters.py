"""U+0000 and other C0 controls are refused at every BCP boundary, naming the field, never a 500 (issue 13 §3).

Postgres refuses NUL in text (`DataError`); before the shared `NoControlCharacters` base every case
below reached the database and answered 500 (REST), -32603 (MCP) or an internal error (A2A).
BCP-ERR-01/05.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import httpx
import pytest
from django.test import Client

from bcp_app.models import A2AContext
from shop.models import Checkout
from tests.bcp_app import test_mcp_helpers
from tests.bcp_app.bcp_fixtures import FakePlatform, agent
from tests.bcp_app.rest_helpers import call, catalog
from tests.bcp_app.test_a2a_helpers import (
    EXTENSION,
    SEED_HEADERS,
    LiveServer,
    live_fixture,  # noqa: F401 (fixture "live")
    server_fixture,  # noqa: F401 (fixture "server")
)

live_mcp = test_mcp_helpers.live_mcp

LINE = {"item": {"id": "SKU-CAFE-500G"}, "quantity": 1}


@pytest.fixture
def headers(fake_platform: FakePlatform, bcp_settings: Any) -> dict[str, str]:
    catalog()
    return agent(fake_platform.publish())


def assert_refused(response: Any, field: str) -> None:
    assert response.status_code == 400, response.content
    body = response.json()
    assert body["code"] == "invalid_request"
    assert body["content"] == f"Campo inválido {field}: caractere de controle U+0000 não é permitido", body["content"]
    assert Checkout.objects.count() == 0


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"line_items": [LINE], "buyer": {"first_name": "Ana\x00"}}, "$.buyer.first_name"),
        ({"line_items": [{"item": {"id": "SKU\x00"}, "quantity": 1}]}, "$.line_items[0].item.id"),
        ({"line_items": [LINE], "discounts": {"codes": ["BEMVINDO\x00"]}}, "$.discounts.codes[0]"),
        ({"line_items": [LINE], "context": {"intent": "presente\x00"}}, "$.context.intent"),
        ({"line_items": [LINE], "signals": {"dev.ucp.buyer_ip": "1.2.3.4\x00"}}, "$.signals['dev.ucp.buyer_ip']"),
        ({"line_items": [LINE], "attribution": {"utm": [{"source": "x\x00"}]}}, "$.attribution.utm[0].source"),
        (
            {
                "line_items": [LINE],
                "fulfillment": {"methods": [{"type": "shipping", "destinations": [{"street_address": "Rua A\x00"}]}]},
            },
            "$.fulfillment.methods[0].destinations[0].street_address",
        ),
        (
            {"line_items": [LINE], "payment": {"instruments": [{"id": "i\x00", "handler_id": "pix", "type": "pix"}]}},
            "$.payment.instruments[0].id",
        ),
    ],
)
def test_nul_in_a_checkout_body_is_a_400_naming_the_member(
    client: Client, headers: dict[str, str], body: dict[str, Any], field: str
) -> None:
    assert_refused(call(client, "post", "/checkout-sessions", headers, body), field)


@pytest.mark.django_db
def test_other_controls_are_refused_but_text_keeps_tab_and_newline(client: Client, headers: dict[str, str]) -> None:
    # a bell in a name and a tab in an id are refused ...
    bell = call(client, "post", "/checkout-sessions", headers, {"line_items": [LINE], "buyer": {"first_name": "A\x07"}})
    tab_id = call(
        client, "post", "/checkout-sessions", headers, {"line_items": [{"item": {"id": "SKU\t1"}, "quantity": 1}]}
    )
    # ... while free text may carry a newline and a tab
    text = call(
        client,
        "post",
        "/checkout-sessions",
        headers,
        {"line_items": [LINE], "context": {"intent": "presente\npara\tmãe"}},
    )
    assert bell.status_code == 400 and "$.buyer.first_name: caractere de controle U+0007" in bell.json()["content"]
    assert tab_id.status_code == 400
    assert "$.line_items[0].item.id: caractere de controle U+0009" in tab_id.json()["content"]
    assert text.status_code == 201, text.content


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("/catalog/search", {"query": "café\x00"}, "$.query"),
        ("/catalog/search", {"query": "café", "context": {"x": {"y": "\x00"}}}, "$.context.x.y"),
        ("/catalog/search", {"query": "café", "signals": {"k\x00": "v"}}, "$.signals['k\\u0000']"),
        ("/catalog/lookup", {"ids": ["prod_\x00"]}, "$.ids[0]"),
        ("/catalog/product", {"id": "SKU-CAFE-500G\x00"}, "$.id"),
    ],
)
def test_nul_in_catalog_requests_is_a_400(
    client: Client, headers: dict[str, str], path: str, body: dict[str, Any], field: str
) -> None:
    assert_refused(call(client, "post", path, headers, body), field)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("method", "path", "field"),
    [
        ("get", "/checkout-sessions/chk_%00abc", "checkout_id"),
        ("post", "/checkout-sessions/chk_%00abc/cancel", "checkout_id"),
        ("get", "/orders/order_%00", "order_id"),
    ],
)
def test_nul_in_a_path_id_is_a_400(client: Client, headers: dict[str, str], method: str, path: str, field: str) -> None:
    extra = {"Idempotency-Key": str(uuid.uuid4())}
    response = call(client, method, path, {**headers, **extra}, {} if method == "post" else None)
    assert response.status_code == 400, response.content
    assert response.json() == {
        "code": "invalid_request",
        "content": f"Parâmetro de caminho inválido {field}: caractere de controle U+0000 não é permitido em {field}",
    }


# --- MCP ----------------------------------------------------------------------------------------------------


@pytest.mark.postgres
@pytest.mark.e2e
@pytest.mark.parametrize(
    ("name", "arguments", "field"),
    [
        (
            "create_checkout",
            {"checkout": {"line_items": [LINE], "buyer": {"last_name": "S\x00"}}},
            "$.checkout.buyer.last_name",
        ),
        ("get_checkout", {"id": "chk_\x00"}, "$.id"),
        ("search_catalog", {"catalog": {"query": "café", "signals": {"a": ["\x00"]}}}, "$.catalog.signals.a[0]"),
    ],
)
def test_nul_over_mcp_is_invalid_params(
    live_mcp: Any,
    fake_platform: FakePlatform,
    bcp_settings: Any,
    transactional_db: None,
    name: str,
    arguments: dict[str, Any],
    field: str,
) -> None:
    catalog()
    meta = {"ucp-agent": {"profile": fake_platform.publish()}}
    response = test_mcp_helpers.raw_post(
        live_mcp.mcp_url, test_mcp_helpers.tools_call(name, {"meta": meta, **arguments})
    )
    error = response.json()["error"]
    assert response.status_code == 400
    assert error["code"] == -32602
    assert f"{field}: caractere de controle U+0000 não é permitido" in error["message"], error
    assert error["data"]["fields"] == {field: "caractere de controle U+0000 não é permitido"}
    assert Checkout.objects.count() == 0


@pytest.mark.postgres
@pytest.mark.e2e
def test_nul_in_a_typed_tool_argument_is_invalid_params(live_mcp: Any, transactional_db: None) -> None:
    arguments = {"items": [{"sku": "SKU\x00", "quantity": 1}]}
    response = test_mcp_helpers.raw_post(live_mcp.mcp_url, test_mcp_helpers.tools_call("inventory.check", arguments))
    error = response.json()["error"]
    assert (response.status_code, error["code"]) == (400, -32602)
    assert "$.items[0].sku: caractere de controle U+0000 não é permitido" in error["message"], error


# --- A2A ----------------------------------------------------------------------------------------------------


@pytest.mark.postgres
@pytest.mark.e2e
@pytest.mark.parametrize(
    ("message", "field"),
    [
        ({"parts": [{"text": "quero café\x00"}]}, "$.message.parts[0].text"),
        ({"parts": [{"text": "oi"}], "messageId": "m\x00"}, "$.message.messageId"),
        ({"parts": [{"text": "oi"}], "contextId": "c\x00"}, "$.message.contextId"),
        (
            {
                "parts": [
                    {
                        "data": {"action": "add_to_checkout", "product_id": "SKU\x00", "quantity": 1},
                        "mediaType": "application/json",
                    }
                ]
            },
            "$.product_id",
        ),
    ],
)
def test_nul_over_a2a_is_invalid_params(server: LiveServer, message: dict[str, Any], field: str) -> None:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "SendMessage",
        "params": {
            "message": {"role": "ROLE_USER", "messageId": str(uuid.uuid4()), "extensions": [EXTENSION], **message}
        },
    }
    response = httpx.post(server.a2a_url, content=json.dumps(body).encode(), headers=SEED_HEADERS, timeout=30)
    error = response.json()["error"]
    assert error["code"] == -32602, error
    assert error["message"] == f"Campo inválido {field}: caractere de controle U+0000 não é permitido", error
    assert A2AContext.objects.count() == 0
