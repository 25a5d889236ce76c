"""Catalog responses, Error Responses and protocol-error bodies are produced from the pydantic output models
(`bcp_app/protocol/schemas/`) and validate against the shared JSON Schemas, over REST, MCP and A2A.

Issue 14 "Four schema sets" / Done when: "every BCP response body is produced from a pydantic model and
validates against the shared JSON Schemas in tests" (ARCHITECTURE.md, Protocol conventions; BCP §5.3
Error Response, §5.4 protocol errors, §16 catalog; BCP-CAT-06, BCP-ERR-02). "Produced from the model"
is checked three ways: the wire bytes are the model's dump, the model declares every member the body
carries (no member only the presenter knows, so MCP `outputSchema` describes it), and the body
validates against the spec's schema.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from django.test import Client
from pydantic import BaseModel

from bcp_app.protocol.results import body_bytes
from bcp_app.protocol.schemas import ErrorResponse, LookupResponse, ProductResponse, ProtocolErrorBody, SearchResponse
from tests.bcp_app import test_mcp_checkout
from tests.bcp_app.bcp_fixtures import FakePlatform, agent
from tests.bcp_app.rest_helpers import call
from tests.bcp_app.schema_check import errors
from tests.bcp_app.undeclared import undeclared

live_mcp = test_mcp_checkout.live_mcp
shopper = test_mcp_checkout.shopper

SEARCH = "shopping/catalog_search.json#/$defs/search_response"
LOOKUP = "shopping/catalog_lookup.json#/$defs/lookup_response"
PRODUCT = "shopping/catalog_lookup.json#/$defs/get_product_response"
ERROR = "common/types/error_response.json"


def assert_model_output(body: dict[str, Any], model: type[BaseModel], ref: str | None) -> None:
    if ref is not None:
        assert errors(body, ref) == []
    assert undeclared(body, model) == []
    assert body_bytes(model.validated(body)) == body_bytes(body)  # type: ignore[attr-defined]


@pytest.mark.django_db
@pytest.mark.usefixtures("rest_shop")
def test_rest_catalog_and_error_bodies_are_model_outputs_bcp_cat_06_err_02(
    client: Client, fake_platform: FakePlatform
) -> None:
    headers = agent(fake_platform.publish())
    search = call(client, "post", "/catalog/search", headers, {"query": "café"})
    lookup = call(client, "post", "/catalog/lookup", headers, {"ids": ["SKU-CAFE-500G", "SKU-NADA"]})
    product = call(client, "post", "/catalog/product", headers, {"id": "SKU-CAFE-500G"})
    missing = call(client, "post", "/catalog/product", headers, {"id": "SKU-NADA"})
    no_checkout = call(client, "get", "/checkout-sessions/checkout_x", headers)
    bad = call(client, "post", "/catalog/search", headers, {})

    for response, model, ref in (
        (search, SearchResponse, SEARCH),
        (lookup, LookupResponse, LOOKUP),
        (product, ProductResponse, PRODUCT),
        (missing, ErrorResponse, ERROR),
        (no_checkout, ErrorResponse, ERROR),
    ):
        assert response.status_code == 200
        assert_model_output(json.loads(response.content), model, ref)
        assert response.content == body_bytes(model.validated(json.loads(response.content)))  # the exact wire bytes
    assert json.loads(lookup.content)["messages"][0]["code"] == "not_found"
    assert json.loads(product.content)["policies"]  # declared by the model, not an extra member
    assert bad.status_code == 400
    assert_model_output(json.loads(bad.content), ProtocolErrorBody, None)  # §5.4: no shared schema for it


@pytest.mark.postgres
@pytest.mark.e2e
def test_mcp_catalog_and_error_bodies_are_model_outputs(shopper: test_mcp_checkout.Shopper) -> None:
    search = shopper.tool("search_catalog", catalog={"query": "café"})
    lookup = shopper.tool("lookup_catalog", catalog={"ids": ["SKU-CAFE-500G"]})
    product = shopper.tool("get_product", catalog={"id": "SKU-CAFE-500G"})
    missing = shopper.tool("get_product", catalog={"id": "SKU-NADA"})
    no_order = shopper.tool("get_order", id="order_nada")
    no_checkout = shopper.tool("cancel_checkout", key=str(uuid.uuid4()), id="checkout_nada")

    for body, model, ref in (
        (search, SearchResponse, SEARCH),
        (lookup, LookupResponse, LOOKUP),
        (product, ProductResponse, PRODUCT),
        (missing, ErrorResponse, ERROR),
        (no_order, ErrorResponse, ERROR),
        (no_checkout, ErrorResponse, ERROR),
    ):
        assert_model_output(body, model, ref)
    assert [m["code"] for m in no_order["messages"]] == ["not_found"]
    refused = shopper.error("search_catalog", catalog={})
    assert_model_output({k: v for k, v in refused.error.data.items() if k != "retry_after"}, ProtocolErrorBody, None)
