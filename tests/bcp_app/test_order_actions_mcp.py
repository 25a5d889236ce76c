"""The order_actions extension over MCP with the official `mcp` client against a live uvicorn (issue 35):
`cancel_order` and `request_return` answer from the same operations as REST; the idempotency key is required and a
replay does not double; refusals are Error Responses in Portuguese (BCP §5.3, BCP-MCP-07, BCP-IDEM-02/03)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from tests.bcp_app import test_mcp_helpers
from tests.bcp_app.order_actions_helpers import ACTIONS, ORDER, place_paid_order
from tests.bcp_app.test_mcp_helpers import Agent, call, call_error

live_mcp = test_mcp_helpers.live_mcp
profile_host = test_mcp_helpers.profile_host

pytestmark = [pytest.mark.postgres, pytest.mark.e2e]
PATH = "/acoes/.well-known/bcp"


@pytest.fixture
def actions_agent(profile_host: str, settings: Any, transactional_db: None) -> Iterator[Agent]:
    from bcp_app.service.platforms import platform_create

    profile = test_mcp_helpers.platform_profile()
    profile["ucp"]["capabilities"][ACTIONS] = test_mcp_helpers._capability(ACTIONS, ORDER)
    test_mcp_helpers._ProfileHandler.documents[PATH] = json.dumps(profile).encode()
    settings.BCP_OUTBOUND_ALLOWLIST = ["127.0.0.1"]
    created = platform_create(name="Agente Ações", profile_url=f"{profile_host}{PATH}")
    yield Agent(created.platform.profile_url, created.api_key, created.platform.public_id)
    test_mcp_helpers._ProfileHandler.documents.pop(PATH, None)


def test_cancel_order_over_mcp_once_per_key(live_mcp, actions_agent) -> None:
    from orders.models import Adjustment, Order

    order = place_paid_order(actions_agent.platform_id)
    arguments = {"meta": actions_agent.meta("c0ffee00-0000-4000-8000-000000000001"), "id": order.public_id,
                 "cancel": {"reason": "Comprou duas vezes"}}  # fmt: skip
    first = call(live_mcp.mcp_url, "cancel_order", arguments, headers=actions_agent.headers)
    again = call(live_mcp.mcp_url, "cancel_order", arguments, headers=actions_agent.headers)
    body = first.structured_content
    assert body["ucp"]["capabilities"][ACTIONS] == [{"version": "2026-07-28"}]
    assert body["order_actions"]["cancel"] == {"available": False, "unavailable_reason": "order_canceled"}
    assert again.content[0].text == first.content[0].text  # the stored response, verbatim
    assert Order.objects.get(pk=order.pk).status == "canceled"
    assert [-a.amount for a in Adjustment.objects.filter(order=order, type="refund")] == [5800]


def test_cancel_order_without_a_key_is_invalid_params(live_mcp, actions_agent) -> None:
    order = place_paid_order(actions_agent.platform_id)
    error = call_error(live_mcp.mcp_url, "cancel_order", {"meta": actions_agent.meta(), "id": order.public_id},
                       headers=actions_agent.headers)  # fmt: skip
    assert error.error.code == -32602
    assert error.error.data["code"] == "idempotency_key_required"


def test_request_return_over_mcp_and_its_refusal(live_mcp, actions_agent) -> None:
    order = place_paid_order(actions_agent.platform_id, delivered=True)
    line = order.lines.get()
    ask = {"reason_code": "changed_mind", "line_items": [{"id": line.public_id, "quantity": 2}]}
    result = call(live_mcp.mcp_url, "request_return",
                  {"meta": actions_agent.meta("c0ffee00-0000-4000-8000-000000000002"), "id": order.public_id,
                   "return_request": ask}, headers=actions_agent.headers)  # fmt: skip
    [asked] = result.structured_content["return_requests"]
    assert (asked["status"], asked["line_items"]) == ("requested", [{"id": line.public_id, "quantity": 2}])
    # asking again for the same units (another key) is refused: they are already in an open request
    refused = call(live_mcp.mcp_url, "request_return",
                   {"meta": actions_agent.meta("c0ffee00-0000-4000-8000-000000000003"), "id": order.public_id,
                    "return_request": ask}, headers=actions_agent.headers)  # fmt: skip
    assert refused.structured_content["ucp"]["status"] == "error"
    # BCP §5.1 path form, named in the tool's arguments as invalid_params names them (QA walk: `$.line_items[0]…`)
    [message] = refused.structured_content["messages"]
    assert message["path"] == "$.return_request.line_items[0].quantity"
    # BCP §5.1: no unit of the line is left to return, so no change to the request can succeed (asking fewer is
    # refused too): `unrecoverable`, not `recoverable`; the line named by its title, as the order's texts name it
    assert (message["code"], message["severity"]) == ("quantity_exceeded", "unrecoverable")
    assert refused.content[0].text == (
        "Não é possível devolver 2 unidades de Caneca: nenhuma unidade recebida está livre para devolução (ainda "
        "não foi entregue ou já foi pedida)."
    )
    assert not refused.is_error  # a business outcome, not a tool failure


def test_tools_list_describes_both_tools(live_mcp, actions_agent) -> None:
    async def go() -> Any:
        async with test_mcp_helpers.mcp_client(live_mcp.mcp_url, headers=actions_agent.headers) as client:
            return await client.list_tools()

    tools = {tool.name: tool for tool in test_mcp_helpers.run(go).tools}
    assert "order_actions" in tools["cancel_order"].description
    schema = tools["request_return"].input_schema
    assert set(schema["required"]) == {"meta", "id", "return_request"}


def test_request_return_for_another_reason_without_the_reason_is_field_required(live_mcp, actions_agent) -> None:
    """QA walk: code `required` and "Campo obrigatório."; now the usual `field_required` naming the member in the
    tool's arguments, `$.return_request.reason` (BCP §5.1; a later QA walk found the REST body's `$.reason`)."""
    from orders.models import ReturnRequest

    order = place_paid_order(actions_agent.platform_id, delivered=True)
    ask = {"reason_code": "other", "line_items": [{"id": order.lines.get().public_id, "quantity": 1}]}
    refused = call(live_mcp.mcp_url, "request_return",
                   {"meta": actions_agent.meta("c0ffee00-0000-4000-8000-000000000009"), "id": order.public_id,
                    "return_request": ask}, headers=actions_agent.headers)  # fmt: skip
    [message] = refused.structured_content["messages"]
    assert (message["code"], message["severity"], message["path"]) == (
        "field_required",
        "recoverable",
        "$.return_request.reason",
    )
    assert message["content"] == (
        "Informe o motivo da devolução em $.return_request.reason: é obrigatório quando reason_code é other."
    )
    assert not refused.is_error and not ReturnRequest.objects.exists()
