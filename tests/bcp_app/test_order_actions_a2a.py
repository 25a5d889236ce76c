"""The order_actions extension over A2A with the official a2a-sdk client against a live uvicorn (issue 35):
`{"action": "cancel_order"}` and `{"action": "request_return"}` reach the same operations as REST and MCP; the
order comes back under `a2a.bcp.order` with a sentence; a repeated messageId returns the first reply and changes
nothing (BCP-A2A-07, BCP §12); refusals are the Error Response in Portuguese (BCP §5.3)."""

from __future__ import annotations

from typing import Any

import pytest
from google.protobuf.json_format import MessageToDict

from tests.bcp_app.order_actions_helpers import ACTIONS, ORDER, place_paid_order
from tests.bcp_app.test_a2a_helpers import (
    EXTENSION,
    _capability,
    cache_profile,
    live_fixture,  # noqa: F401 (fixture "live")
    platform_profile,
    rpc,
    sdk_send,
    send_message,
    server_fixture,  # noqa: F401 (fixture "server")
)

pytestmark = [pytest.mark.postgres, pytest.mark.e2e]


def _agent(url: str) -> tuple[str, dict[str, str]]:
    from bcp_app.service.platforms import platform_create

    profile = platform_profile()
    profile["ucp"]["capabilities"][ACTIONS] = _capability("order-actions", "order_actions", ORDER)
    cache_profile(url, profile)
    created = platform_create(name="Agente A2A", profile_url=url)
    headers = {"BCP-Agent": f'profile="{url}"', "A2A-Extensions": EXTENSION,
               "Authorization": f"Bearer {created.api_key}"}  # fmt: skip
    return created.platform.public_id, headers


def _parts(message: Any) -> tuple[str, dict[str, Any]]:
    text, order = "", {}
    for part in MessageToDict(message)["parts"]:
        if "text" in part:
            text = part["text"]
        elif "a2a.bcp.order" in part.get("data", {}):
            order = part["data"]["a2a.bcp.order"]
    return text, order


def test_cancel_order_over_a2a_once_per_message_id(server) -> None:
    from orders.models import Adjustment, Order

    platform_id, headers = _agent("https://agente.example/acoes/bcp.json")
    order = place_paid_order(platform_id)
    parts = [{"data": {"action": "cancel_order", "order_id": order.public_id, "reason": "Desistiu"}}]
    first = sdk_send(server.base_url, parts, headers=headers, message_id="msg-cancel-1")
    again = sdk_send(server.base_url, parts, headers=headers, message_id="msg-cancel-1")
    text, body = _parts(first)
    assert text == "Pedido cancelado; o valor pago será devolvido."
    assert body["id"] == order.public_id and body["order_actions"]["cancel"]["available"] is False
    assert _parts(again) == (text, body)
    assert Order.objects.get(pk=order.pk).status == "canceled"
    assert Adjustment.objects.filter(order=order, type="refund").count() == 1


def test_request_return_over_a2a_and_a_refusal(server) -> None:
    platform_id, headers = _agent("https://agente.example/acoes2/bcp.json")
    order = place_paid_order(platform_id, delivered=True)
    line = order.lines.get()
    parts = [{"data": {"action": "request_return", "order_id": order.public_id, "reason_code": "damaged",
                       "line_items": [{"id": line.public_id, "quantity": 1}]}}]  # fmt: skip
    text, body = _parts(sdk_send(server.base_url, parts, headers=headers, message_id="msg-ret-1"))
    assert text == "Devolução solicitada; a loja vai analisar o pedido."
    assert [(r["status"], r["reason_code"]) for r in body["return_requests"]] == [("requested", "damaged")]
    # cancel after delivery: the Error Response, its Portuguese message as the sentence
    cancel = [{"data": {"action": "cancel_order", "order_id": order.public_id}}]
    text, body = _parts(sdk_send(server.base_url, cancel, headers=headers, message_id="msg-cancel-late"))
    assert body["messages"][0]["code"] == "already_shipped"
    assert text == (f"O pedido #{order.number} já foi enviado e não pode mais ser cancelado: depois de recebê-lo, "
                    "solicite a devolução.")  # fmt: skip


def test_request_return_for_another_reason_without_the_reason_is_field_required(server) -> None:
    """QA walk: code `required` and "Campo obrigatório."; now the usual `field_required` naming $.reason."""
    from orders.models import ReturnRequest

    platform_id, headers = _agent("https://agente.example/acoes3/bcp.json")
    order = place_paid_order(platform_id, delivered=True)
    parts = [{"data": {"action": "request_return", "order_id": order.public_id, "reason_code": "other",
                       "line_items": [{"id": order.lines.get().public_id, "quantity": 1}]}}]  # fmt: skip
    text, body = _parts(sdk_send(server.base_url, parts, headers=headers, message_id="msg-ret-other"))
    [message] = body["messages"]
    assert (message["code"], message["severity"], message["path"]) == ("field_required", "recoverable", "$.reason")
    assert text == "Informe o motivo da devolução em $.reason: é obrigatório quando reason_code é other."
    assert not ReturnRequest.objects.exists()


def test_an_order_action_in_an_english_conversation_answers_in_english(server) -> None:
    """A data part alone states no language: the sentence of an order action sent in a conversation the buyer holds
    in English spoke pt-BR ("Pedido cancelado; …") beside English replies. It speaks the conversation's language,
    the one its last message with words used (BCP §5.1 content, pt-BR only by default)."""
    platform_id, headers = _agent("https://agente.example/acoes4/bcp.json")
    order = place_paid_order(platform_id)
    hello = sdk_send(server.base_url, [{"text": "what can you do?"}], headers=headers)
    cancel = [{"data": {"action": "cancel_order", "order_id": order.public_id}}]
    text, body = _parts(sdk_send(server.base_url, cancel, headers=headers, context_id=hello.context_id))
    assert MessageToDict(hello)["parts"][0]["text"].startswith("Sorry, I did not understand.")
    assert text == "Order canceled; the amount paid will be refunded."
    assert body["id"] == order.public_id


def test_an_order_id_that_is_not_a_text_is_named_not_said_missing_bcp_err_05(server) -> None:
    """Agent walk: `{"action": "get_order", "order_id": 5}` answered "get_order precisa de order_id." as if the id
    were missing; it is named as the other A2A fields are, for the order reads and actions alike."""
    _, headers = _agent("https://agente.example/acoes5/bcp.json")
    headers = {**headers, "A2A-Version": "1.0"}
    answers = {
        action: rpc(server.a2a_url, send_message([{"data": {"action": action, "order_id": 5}}]), headers=headers)
        for action in ("get_order", "cancel_order", "request_return")
    }
    missing = rpc(server.a2a_url, send_message([{"data": {"action": "cancel_order"}}]), headers=headers)

    for body in answers.values():
        assert body["error"]["message"] == "Campo inválido $.order_id: deve ser um texto"
        assert body["error"]["data"][0]["metadata"]["code"] == "invalid_request"
    assert missing["error"]["message"] == "cancel_order precisa de order_id."
