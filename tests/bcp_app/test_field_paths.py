"""One path form for a validation error on every transport (BCP-ERR-05, BCP §5.1's RFC 9535 JSONPath).

QA walk: a line item with quantity 0 was `line_items[0].quantity` over REST, `checkout.line_items.0.quantity`
over MCP and `quantity` (no path) over A2A. Each now names the member as a JSONPath in what the agent sent:
the REST body, the MCP tool's arguments (where the checkout is the `checkout` argument), the A2A data part.
REST through the Django client, MCP with the official `mcp` client and A2A over JSON-RPC against live uvicorn.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from tests.bcp_app import test_mcp_checkout, test_mcp_helpers
from tests.bcp_app.bcp_fixtures import FakePlatform, agent
from tests.bcp_app.rest_helpers import call, catalog
from tests.bcp_app.test_a2a_checkout import SEED_CONTEXT, SEED_STRUCTURED
from tests.bcp_app.test_a2a_helpers import (
    LiveServer,
    data,
    live_fixture,  # noqa: F401 (fixture "live")
    make_product,
    rpc,
    send_message,
    server_fixture,  # noqa: F401 (fixture "server")
)
from tests.bcp_app.test_mcp_checkout import Shopper

# Shared fixtures (pytest finds them by name in this module).
shopper = test_mcp_checkout.shopper
live_mcp = test_mcp_helpers.live_mcp

ZERO = [{"item": {"id": "SKU-CAFE-500G"}, "quantity": 0}]
TOO_FEW = "deve ser maior ou igual a 1"


@pytest.mark.django_db
@pytest.mark.usefixtures("bcp_settings")
def test_rest_names_the_member_as_a_jsonpath_in_the_body(client: Client, fake_platform: FakePlatform) -> None:
    catalog()
    headers = agent(fake_platform.publish())

    response = call(client, "post", "/checkout-sessions", headers, {"line_items": ZERO})

    assert (response.status_code, response.json()) == (
        400,
        {
            "code": "invalid_request",
            "content": f"Campo inválido $.line_items[0].quantity: {TOO_FEW}",
            "fields": {"$.line_items[0].quantity": TOO_FEW},
        },
    )


# Two members wrong at once: a line's quantity and the buyer's e-mail (not a text).
TWO_WRONG = {"line_items": ZERO, "buyer": {"email": 5}}
BOTH_NAMED = {"$.line_items[0].quantity": TOO_FEW, "$.buyer.email": "deve ser um texto"}


@pytest.mark.django_db
@pytest.mark.usefixtures("bcp_settings")
def test_rest_names_every_invalid_member_not_only_the_first(client: Client, fake_platform: FakePlatform) -> None:
    """BCP-ERR-05/-03: a body with two bad members named only the first over REST while MCP's -32602 named both;
    REST now names each one, in `content` and one entry each in `fields` (MCP's `data.fields`), for a body ninja
    refuses (create) and for one the operation's `validate` refuses (an update's)."""
    catalog()
    headers = agent(fake_platform.publish())
    created = call(client, "post", "/checkout-sessions", headers, {"line_items": [ZERO[0] | {"quantity": 1}]})

    refused = call(client, "post", "/checkout-sessions", headers, TWO_WRONG)
    updated = call(client, "put", f"/checkout-sessions/{created.json()['id']}", headers, TWO_WRONG)

    for response in (refused, updated):
        assert response.status_code == 400
        assert response.json() == {
            "code": "invalid_request",
            "content": f"Campos inválidos: $.line_items[0].quantity: {TOO_FEW}; $.buyer.email: deve ser um texto",
            "fields": BOTH_NAMED,
        }


@pytest.mark.postgres
def test_mcp_names_the_member_as_a_jsonpath_in_the_arguments(shopper: Shopper) -> None:
    wrong = shopper.error("create_checkout", checkout={"line_items": ZERO})
    typo = shopper.error("create_checkout", chekout={"line_items": ZERO})

    assert wrong.code == -32602
    assert wrong.data["fields"] == {"$.checkout.line_items[0].quantity": TOO_FEW}
    assert (
        wrong.data["content"]
        == f"Argumentos inválidos para create_checkout: $.checkout.line_items[0].quantity: {TOO_FEW}"
    )
    assert set(typo.data["fields"]) == {"$.chekout", "$.checkout"}


@pytest.mark.postgres
@pytest.mark.e2e
def test_a2a_names_the_member_as_a_jsonpath_in_the_data_part(server: LiveServer) -> None:
    make_product("Pixel 10 Pro", "PIXEL-10-PRO", 599900)
    rpc(server.a2a_url, SEED_STRUCTURED)  # the context's checkout

    def error_content(payload: dict[str, Any]) -> tuple[int, str]:
        body = rpc(server.a2a_url, send_message([data(payload)], context_id=SEED_CONTEXT))
        return body["error"]["code"], body["error"]["data"][0]["metadata"]["content"]

    lines = [{"item": {"id": "PIXEL-10-PRO"}, "quantity": 0}]
    assert error_content({"action": "update_checkout", "line_items": lines}) == (
        -32602,
        f"Campo inválido $.line_items[0].quantity: {TOO_FEW}",
    )
    assert error_content({"action": "add_to_checkout", "product_id": "PIXEL-10-PRO", "quantity": 0}) == (
        -32602,
        "Campo inválido $.quantity: deve ser um número inteiro ≥ 1",
    )


@pytest.mark.postgres
@pytest.mark.e2e
def test_a2a_names_every_invalid_member_not_only_the_first(server: LiveServer) -> None:
    """BCP-ERR-05, BCP.md §18 (3): an update with two bad members named only the first over A2A; the -32602 now
    names each one in its content and, one violation each, in the details' google.rpc.BadRequest (the A2A SDK's
    form of field errors), as MCP's `data.fields` does."""
    make_product("Pixel 10 Pro", "PIXEL-10-PRO", 599900)
    rpc(server.a2a_url, SEED_STRUCTURED)  # the context's checkout
    lines = [{"item": {"id": "PIXEL-10-PRO"}, "quantity": 0}]

    body = rpc(
        server.a2a_url,
        send_message(
            [data({"action": "update_checkout", "line_items": lines, "buyer": {"email": 5}})], context_id=SEED_CONTEXT
        ),
    )

    error = body["error"]
    assert error["code"] == -32602
    assert error["data"][0]["metadata"]["content"] == (
        f"Campos inválidos: $.line_items[0].quantity: {TOO_FEW}; $.buyer.email: deve ser um texto"
    )
    violations = next(d["fieldViolations"] for d in error["data"] if d["@type"].endswith("google.rpc.BadRequest"))
    assert {v["field"]: v["description"] for v in violations} == BOTH_NAMED


@pytest.mark.postgres
@pytest.mark.e2e
def test_mcp_catalogue_tools_name_the_member_as_a_jsonpath_too(live_mcp: Any, transactional_db: None) -> None:
    """The typed catalogue tools (seed 002) named fields `items.0.quantity`, `price_min`: the one JSONPath form of
    every other error now, in `invalid_params` and in the domain error envelope alike (official `mcp` client)."""
    url = live_mcp.mcp_url
    wrong = test_mcp_helpers.call_error(url, "inventory.check", {"items": [{"sku": "SKU-A", "quantity": 0}]})
    typo = test_mcp_helpers.call_error(url, "catalogue.list", {"query": "café", "categria": "x"})
    both = test_mcp_helpers.call_error(url, "product.detail", {"sku": "X", "slug": "y"})
    unknown = test_mcp_helpers.call(url, "inventory.check", {"items": [{"sku": "NOPE", "quantity": 1}]})

    assert wrong.data["fields"] == {"$.items[0].quantity": TOO_FEW}
    assert wrong.data["content"] == f"Argumentos inválidos para inventory.check: $.items[0].quantity: {TOO_FEW}"
    assert list(typo.data["fields"]) == ["$.categria"]
    assert list(both.data["fields"]) == ["$.product_id", "$.slug", "$.sku"]
    assert unknown.structured_content["error"]["fields"] == {"$.items[0].sku": "SKU desconhecido: NOPE."}
