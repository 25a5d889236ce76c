"""Get Order over A2A (the `get_order` intent, a BCP proposal beside the seed's checkout intents): the same
order object as REST and MCP through `operations.get_order`, with `br.dev.bcp.shopping.fiscal_document` only
when negotiated, driven by the official a2a-sdk client against a live uvicorn (issue 18).

BCP §7 Get Order, §13.3; BCP-ORD-01/02, BCP-A2A-05.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.db import transaction
from google.protobuf.json_format import MessageToDict

from tests.bcp_app.test_a2a_helpers import (
    EXTENSION,
    _capability,
    cache_profile,
    live_fixture,  # noqa: F401 (fixture "live")
    platform_profile,
    sdk_send,
    server_fixture,  # noqa: F401 (fixture "server")
)
from tests.bcp_app.test_mcp_get_order import place_seed_order
from tests.fiscal.helpers import authorized_view, invoice

pytestmark = [pytest.mark.postgres, pytest.mark.e2e]
FISCAL = "br.dev.bcp.shopping.fiscal_document"
ORDER = "br.dev.bcp.shopping.order"


def _agent(url: str, *, fiscal: bool) -> tuple[str, dict[str, str]]:
    from bcp_app.service.platforms import platform_create

    profile = platform_profile()
    if fiscal:
        profile["ucp"]["capabilities"][FISCAL] = _capability("fiscal-document", "fiscal_document", ORDER)
    cache_profile(url, profile)
    created = platform_create(name="Agente A2A", profile_url=url)
    headers = {"BCP-Agent": f'profile="{url}"', "A2A-Extensions": EXTENSION}
    headers["Authorization"] = f"Bearer {created.api_key}"
    return created.platform.public_id, headers


def _issued(order: Any) -> Any:
    from fiscal.models import FiscalDocument
    from fiscal.services import document_request_issue

    with transaction.atomic():  # committed: the after-commit task runs the sandbox issue (eager Celery)
        document_request_issue(
            order_ref=order.public_id, order_number=order.number, invoice=invoice(order_ref=order.public_id),
            problems=[], reissue=True,
        )  # fmt: skip
    return FiscalDocument.objects.get(order_ref=order.public_id)


def _order_part(message: Any) -> dict[str, Any]:
    for part in MessageToDict(message)["parts"]:
        if "a2a.bcp.order" in part.get("data", {}):
            return part["data"]["a2a.bcp.order"]
    raise AssertionError(f"no a2a.bcp.order in {message}")


def test_get_order_over_a2a_carries_the_negotiated_fiscal_documents(server, settings) -> None:
    platform_id, headers = _agent("https://agente.example/fiscal/bcp.json", fiscal=True)
    order = place_seed_order(platform_id, checkout_id="checkout_a2a_fiscal")
    document = _issued(order)
    reply = sdk_send(server.base_url, [{"data": {"action": "get_order", "order_id": order.public_id}}], headers=headers)
    body = _order_part(reply)
    assert body["id"] == order.public_id and body["checkout_id"] == "checkout_a2a_fiscal"
    assert body["ucp"]["capabilities"][FISCAL] == [{"version": "2026-07-28"}]
    assert body["fiscal_documents"] == [authorized_view(document, settings.BCP_PUBLIC_URL)]
    # the same object the MCP/REST operation answers (one operation, three transports)
    from bcp_app.service import operations
    from bcp_app.service.context import resolve_context

    ctx = resolve_context(
        transport="rest", profile_url="https://agente.example/fiscal/bcp.json",
        api_key=headers["Authorization"].removeprefix("Bearer "), signed=None, language=None, request_id=None,
    )  # fmt: skip
    assert body == operations.get_order(ctx, order.public_id).body
    # natural language with the order id gets the same data and a sentence
    text = sdk_send(server.base_url, [{"text": f"qual o status do pedido {order.public_id}?"}], headers=headers)
    assert _order_part(text) == body
    sentence = MessageToDict(text)["parts"][0]["text"]
    assert sentence == f"Este é o pedido #{order.number}. Acompanhe: {order.permalink_url}"


def test_without_the_extension_there_is_no_fiscal_member_and_others_orders_are_refused(server) -> None:
    platform_id, headers = _agent("https://agente.example/plain/bcp.json", fiscal=False)
    order = place_seed_order(platform_id, checkout_id="checkout_a2a_plain")
    _issued(order)
    body = _order_part(sdk_send(server.base_url, [{"data": {"action": "get_order", "order_id": order.public_id}}],
                                headers=headers))  # fmt: skip
    assert "fiscal_documents" not in body
    assert body["ucp"]["capabilities"] == {ORDER: [{"version": "2026-07-28"}]}
    # another platform asking for it: the §5.3 Error Response, never the order (BCP-ORD-02)
    _other, other_headers = _agent("https://outro.example/bcp.json", fiscal=True)
    refused = _order_part(sdk_send(server.base_url, [{"data": {"action": "get_order", "order_id": order.public_id}}],
                                   headers=other_headers))  # fmt: skip
    assert refused["messages"][0]["code"] == "unauthorized" and "id" not in refused


def test_a2a_order_and_error_data_parts_are_model_outputs(server) -> None:
    """Issue 14 "one output set": the `a2a.bcp.order` part (the order, or the §5.3 Error Response when the
    order is not the caller's or does not exist) is the output model's body and validates against the shared
    JSON Schemas (BCP-ORD-04, BCP-ERR-02, BCP-A2A-05)."""
    from bcp_app.protocol.schemas import ErrorResponse, OrderResponse
    from tests.bcp_app.schema_check import errors
    from tests.bcp_app.undeclared import undeclared

    platform_id, headers = _agent("https://agente.example/models/bcp.json", fiscal=False)
    order = place_seed_order(platform_id, checkout_id="checkout_a2a_models")
    ask = [{"data": {"action": "get_order", "order_id": order.public_id}}]
    body = _order_part(sdk_send(server.base_url, ask, headers=headers))
    missing = _order_part(sdk_send(server.base_url, [{"data": {"action": "get_order", "order_id": "order_nada"}}],
                                   headers=headers))  # fmt: skip
    assert errors(body, "shopping/order.json") == []
    # A data part is a protobuf Struct (a map, key order not kept), so the objects are compared, not bytes.
    assert OrderResponse.validated(body) == body
    assert undeclared(body, OrderResponse) == []  # every member declared (e.g. `policies`), so described
    assert [m["code"] for m in missing["messages"]] == ["not_found"]
    assert errors(missing, "common/types/error_response.json") == []
    assert ErrorResponse.validated(missing) == missing


def test_a_structured_get_order_for_an_unknown_order_says_why_as_cancel_order_does(server) -> None:
    """Agent walk: `{"action": "cancel_order"}` for an unknown order answered a sentence beside the Error Response,
    `{"action": "get_order"}` only the data part; a found order stays the bare data part (BCP-ORD-02, BCP-A2A-05)."""
    platform_id, headers = _agent("https://agente.example/sem-pedido/bcp.json", fiscal=False)
    order = place_seed_order(platform_id, checkout_id="checkout_a2a_sentence")

    missing = sdk_send(server.base_url, [{"data": {"action": "get_order", "order_id": "order_nada"}}], headers=headers)
    found = sdk_send(server.base_url, [{"data": {"action": "get_order", "order_id": order.public_id}}], headers=headers)

    body = _order_part(missing)
    [message] = body["messages"]
    texts = [part["text"] for part in MessageToDict(missing)["parts"] if "text" in part]
    assert message["code"] == "not_found"
    assert texts == [f"Não foi possível mostrar o pedido. {message['content']}"]
    assert [part for part in MessageToDict(found)["parts"] if "text" in part] == []
