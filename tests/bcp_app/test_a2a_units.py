"""Pure helpers of the A2A transport: integers on the wire, reply shape, request bodies from a checkout,
header checks and error mapping (no server, no database)."""

from __future__ import annotations

import pytest
from a2a.types import SendMessageRequest
from a2a.utils.errors import (
    InternalError,
    InvalidParamsError,
    InvalidRequestError,
    VersionNotSupportedError,
)
from google.protobuf.json_format import MessageToDict, ParseDict

from bcp_app.protocol.errors import ProtocolError
from bcp_app.transports.a2a.actions import lines_matching, writable_state
from bcp_app.transports.a2a.messages import (
    agent_message,
    brl,
    data_part,
    intify,
    message_to_dict,
    parse_intent,
    reply_text,
    to_proto,
)
from bcp_app.transports.a2a.send_memo import parsed_send
from bcp_app.transports.a2a.server import ServerError, a2a_error, check_headers

EXTENSION = "https://bcp.dev.br/draft/specification/reference"
HEADERS = {"a2a-version": "1.0", "a2a-extensions": EXTENSION, "bcp-agent": 'profile="https://agent.example/p.json"'}


def test_intify_restores_integral_floats_only():
    assert intify({"amount": 599900.0, "rate": 0.5, "lines": [1.0, "2", True], "big": 2.0**60}) == {
        "amount": 599900,
        "rate": 0.5,
        "lines": [1, "2", True],
        "big": 2.0**60,
    }
    assert type(intify(1.0)) is int


def test_agent_message_has_the_seed_member_order_and_survives_the_sdk_proto():
    message = agent_message(
        context_id="ctx", message_id="m1", parts=[data_part({"a2a.bcp.checkout": {"totals": [{"amount": 599900}]}})]
    )

    proto = to_proto(message)

    assert list(message) == ["contextId", "messageId", "parts", "role", "extensions"]
    assert message["role"] == "ROLE_AGENT" and message["extensions"] == [EXTENSION]
    assert intify(MessageToDict(proto)) == {
        "messageId": "m1",
        "contextId": "ctx",
        "role": "ROLE_AGENT",
        "extensions": [EXTENSION],
        "parts": [{"data": {"a2a.bcp.checkout": {"totals": [{"amount": 599900}]}}, "mediaType": "application/json"}],
    }


CHECKOUT = {
    "id": "checkout_1",
    "status": "incomplete",
    "line_items": [
        {
            "id": "li_1",
            "item": {"id": "CAM-PRETA-M", "title": "Camiseta Básica — Preta / M", "price": 4990},
            "quantity": 2,
            "totals": [],
        },
        {
            "id": "li_2",
            "item": {"id": "PIXEL-10-PRO", "title": "Pixel 10 Pro", "price": 599900},
            "quantity": 1,
            "totals": [],
        },
    ],
    "buyer": {"first_name": "Ana", "email": "ana@example.com.br"},
    "fulfillment": {
        "methods": [
            {
                "id": "method_shipping",
                "type": "shipping",
                "line_item_ids": ["li_1"],
                "destinations": [
                    {"id": "dest_1", "type": "shipping_address", "postal_code": "01310-100"},
                    {"id": "loc_1", "type": "business_location", "name": "Loja"},
                ],
                "selected_destination_id": "dest_1",
                "groups": [
                    {
                        "id": "group_shipping",
                        "line_item_ids": ["li_1"],
                        "options": [{"id": "pac"}],
                        "selected_option_id": "pac",
                    }
                ],
            }
        ]
    },
    "discounts": {"codes": ["BEMVINDO10"], "applied": [{"amount": 1}]},
    "payment": {
        "instruments": [
            {
                "id": "instr_1",
                "handler_id": "pix",
                "type": "pix",
                "selected": True,
                "pix": {"txid": "x"},
                "display": {"description": "Pix"},
            }
        ]
    },
    "totals": [{"type": "total", "amount": 1}],
}


def test_writable_state_reproduces_only_request_members_bcp_chk_06():
    assert writable_state(CHECKOUT) == {
        "line_items": [
            {"id": "li_1", "item": {"id": "CAM-PRETA-M"}, "quantity": 2},
            {"id": "li_2", "item": {"id": "PIXEL-10-PRO"}, "quantity": 1},
        ],
        "buyer": {"first_name": "Ana", "email": "ana@example.com.br"},
        "fulfillment": {
            "methods": [
                {
                    "type": "shipping",
                    "id": "method_shipping",
                    "line_item_ids": ["li_1"],
                    "selected_destination_id": "dest_1",
                    "destinations": [{"id": "dest_1", "postal_code": "01310-100"}],
                    "groups": [{"id": "group_shipping", "selected_option_id": "pac"}],
                }
            ]
        },
        "discounts": {"codes": ["BEMVINDO10"]},
        "payment": {"instruments": [{"id": "instr_1", "handler_id": "pix", "type": "pix", "selected": True}]},
    }


def test_lines_matching_by_words_and_ids():
    lines = CHECKOUT["line_items"]

    assert [line["id"] for line in lines_matching(lines, parse_intent("remova as camisetas pretas"))] == ["li_1"]
    assert [line["id"] for line in lines_matching(lines, parse_intent("remove the pixel"))] == ["li_2"]
    assert [line["id"] for line in lines_matching(lines, parse_intent("remove PIXEL-10-PRO"))] == ["li_2"]
    assert lines_matching(lines, parse_intent("remove the toaster")) == []


def test_reply_text_and_brl():
    checkout = {
        "status": "ready_for_complete",
        "totals": [{"type": "total", "amount": 123456}],
        "line_items": [{"item": {"id": "SKU-1", "title": "Café"}}],
    }

    assert brl(123456) == "R$ 1.234,56"
    assert brl(-5) == "-R$ 0,05"
    assert reply_text("added", "pt-br", checkout=checkout, quantity=2, sku="SKU-1") == (
        "Adicionei 2 × Café ao carrinho. Pronto para finalizar. Total: R$ 1.234,56."
    )
    assert reply_text(
        "current",
        "en",
        checkout={
            "status": "incomplete",
            "messages": [{"type": "error", "content": "Informe o e-mail."}, {"type": "info", "content": "x"}],
        },
    ) == ("Here is your checkout. Some information is still missing. Informe o e-mail.")


@pytest.mark.parametrize(
    ("headers", "error"),
    [
        ({**HEADERS, "a2a-version": ""}, VersionNotSupportedError),
        ({**HEADERS, "a2a-version": "0.3"}, VersionNotSupportedError),
        ({**HEADERS, "bcp-agent": ""}, InvalidRequestError),
    ],
)
def test_check_headers_bcp_a2a_03(headers: dict[str, str], error: type):
    with pytest.raises(error):
        check_headers(headers)


def test_check_headers_accepts_the_seed_headers_and_extension_lists():
    check_headers({**HEADERS, "a2a-extensions": f"https://example.com/x, {EXTENSION}"})
    # the card says the BCP extension is `required: false` (BCP §13.3): none activated is BCP, not a refusal
    check_headers({**HEADERS, "a2a-extensions": ""})


def test_protocol_errors_map_to_a2a_errors_with_the_bcp_code():
    conflict = a2a_error(ProtocolError("idempotency_conflict", "Já usada."))
    unreachable = a2a_error(ProtocolError("profile_unreachable", "Fora do ar."))
    internal = a2a_error(ProtocolError("internal_error", "Erro."))
    limited = a2a_error(ProtocolError("rate_limited", "Devagar.", retry_after=7))
    key_required = a2a_error(ProtocolError("idempotency_key_required", "Envie a chave."))

    assert (type(conflict), conflict.data) == (
        ServerError,  # JSON-RPC -32000 (BCP-IDEM-05), as MCP answers it
        {"code": "idempotency_conflict", "content": "Já usada."},
    )
    assert (type(unreachable), unreachable.message) == (InvalidRequestError, "Fora do ar.")
    assert type(internal) is InternalError
    assert limited.data == {"code": "rate_limited", "content": "Devagar.", "retry_after": "7"}
    assert type(key_required) is InvalidParamsError  # BCP-IDEM-02: -32602, as on MCP


@pytest.mark.parametrize(
    "code",
    ["rate_limited", "unavailable", "forbidden", "unauthenticated", "profile_not_trusted", "signature_invalid"],
)
def test_a_valid_request_refused_is_a_server_error_not_an_invalid_request_bcp_err_04(code: str):
    """BCP §5.4: MCP answers these -32000; A2A gave -32600 "Invalid Request", which tells the agent its JSON-RPC
    was malformed when it must wait or authenticate."""
    error = a2a_error(ProtocolError(code, "Recusado."))

    assert (type(error), error.data) == (ServerError, {"code": code, "content": "Recusado."})


def test_a_message_fingerprint_is_its_jcs_encoded_once_per_content_bcp_a2a_07(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 34: an agent reading an order again sends the same conversation and parts under a new messageId; the
    fingerprint (JCS of everything but the messageId) is the same, and is encoded once per process. Any other
    content, even one whose JCS would be the same, is fingerprinted by JCS as before."""
    import uuid

    import rfc8785

    from bcp_app.service.idempotency import fingerprint_jcs
    from bcp_app.transports.a2a import actions

    encoded: list[object] = []
    real = rfc8785.dumps

    def counting(value: object) -> bytes:
        encoded.append(value)
        return real(value)

    monkeypatch.setattr(rfc8785, "dumps", counting)
    context = str(uuid.uuid4())  # content this process has not fingerprinted yet
    parts = [{"data": {"action": "get_order", "order_id": "ord_f1ngerprint"}, "mediaType": "application/json"}]
    first = {"messageId": "m-1", "contextId": context, "parts": parts}
    again = {"messageId": "m-2", "contextId": context, "parts": parts}
    expected = fingerprint_jcs(
        {"contextId": context, "taskId": None, "parts": parts, "metadata": None, "referenceTaskIds": None}
    )
    encoded.clear()
    assert actions.fingerprint(first) == actions.fingerprint(again) == expected
    assert len(encoded) == 1
    # other member order: the same JCS, computed again (a miss, never a wrong fingerprint)
    reordered = [{"mediaType": "application/json", "data": {"order_id": "ord_f1ngerprint", "action": "get_order"}}]
    assert actions.fingerprint({**first, "parts": reordered}) == expected
    assert len(encoded) == 2
    # 1 and 1.0, true and 1: told apart
    numbers = [actions.fingerprint({**first, "metadata": {"n": value}}) for value in (1, 1.0, True)]
    assert len(encoded) == 5
    assert numbers[0] == numbers[1] != numbers[2]  # JCS writes 1.0 as 1; true is not 1


def _params(message_id: str, context_id: str, **extra: object) -> dict[str, object]:
    data = {"action": "get_order", "order_id": "order_1", "quantity": 2, "rate": 0.5, "nested": {"a": [1, None]}}
    message = {
        "messageId": message_id,
        "contextId": context_id,
        "role": "ROLE_USER",
        "parts": [{"text": "oi"}, {"data": data, "mediaType": "application/json"}],
        "extensions": [EXTENSION],
        "metadata": {"k": 1},
        **extra,
    }
    return {"message": message, "configuration": {"historyLength": 2}, "unknown": True}


@pytest.mark.parametrize(
    "params",
    [
        _params("m-1", "c-1"),
        _params("m-2", "c-2", taskId="t-1"),
        _params("m-3", "c-3", role="ROLE_NOT_KNOWN"),  # the SDK's parse makes an unknown enum value 0
        {"message": {"messageId": "m-4", "contextId": "c-4", "parts": []}},
    ],
)
def test_a_reads_params_parsed_once_per_shape_are_what_the_sdk_parses(params: dict[str, object]) -> None:
    """Issue 34 (`send_memo`): the remembered shape, given each call's own messageId and contextId, is the protobuf
    the SDK's `ParseDict` makes of the params as sent, and the message dict (member order too) of it."""
    message = params["message"]
    assert isinstance(message, dict)
    other = {**params, "message": {**message, "messageId": "outro-m", "contextId": "outro-c"}}
    for sent in (params, other, params):  # parsed, then twice from the memo
        expected = ParseDict(sent, SendMessageRequest(), ignore_unknown_fields=True)
        parsed = parsed_send(sent)
        assert parsed is not None
        assert parsed.request == expected
        incoming = message_to_dict(expected.message)
        assert list(parsed.incoming.items()) == list(incoming.items())
        for part in parsed.incoming.get("parts", []):  # copies: the next call gets its own
            part.clear()
        parsed.request.message.ClearField("parts")


@pytest.mark.parametrize(
    "params",
    [
        _params("", "c-1"),  # empty: MessageToDict would leave it out
        _params("m-é", "c-1"),  # not ASCII
        _params("m-1", 7),  # not a string: the SDK refuses it
        {"message": {"messageId": "m-1", "parts": []}},  # no contextId
        {"message": {"messageId": "m-1", "contextId": "c-1", "parts": "x"}},  # the SDK refuses it
        {"message": "x"},
        [],
    ],
)
def test_params_not_remembered_are_left_to_the_sdk(params: object) -> None:
    assert parsed_send(params) is None
