"""Issue 34: an A2A `get_order` message is answered without the SDK's task machinery
(`bcp_app/transports/a2a/server.py:BcpRequestHandler._direct`). The same messages go to two live servers, one
answering reads directly and one running every message through the SDK's `on_message_send`: the answers are the
same bytes but for the reply's own new `messageId`; a message sent to one is replayed, byte for byte, by the other
(one idempotency record, BCP-A2A-07); the official client reads the same order from both.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from google.protobuf.json_format import MessageToDict

from tests.bcp_app.test_a2a_helpers import (
    EXTENSION,
    SEED_PROFILE,
    LiveServer,
    cache_profile,
    platform_profile,
    sdk_send,
    send_message,
)
from tests.bcp_app.test_mcp_get_order import place_seed_order

pytestmark = [pytest.mark.postgres, pytest.mark.e2e, pytest.mark.django_db(transaction=True)]
_REPLY_ID = re.compile(rb'"messageId":"[^"]*"')


def _app(direct: bool) -> Any:
    from bcp_app.transports.a2a.server import DIRECT_ACTIONS, A2AApplication
    from config.asgi import PathRouter, django_app

    app = A2AApplication(direct_actions=DIRECT_ACTIONS if direct else frozenset())
    return PathRouter(django_app, {"/bcp/a2a": app, "/.well-known/agent-card.json": app})


@pytest.fixture
def servers(django_db_blocker: Any, settings: Any) -> Iterator[tuple[str, str]]:
    """(direct, SDK-only) base URLs."""
    settings.BCP_OUTBOUND_ALLOWLIST = ["127.0.0.1"]
    with django_db_blocker.unblock():
        direct, sdk = LiveServer(_app(True)).start(), LiveServer(_app(False)).start()
    try:
        yield direct.base_url, sdk.base_url
    finally:
        direct.stop()
        sdk.stop()


@pytest.fixture
def caller() -> tuple[str, dict[str, str]]:
    from bcp_app.service.platforms import platform_create

    cache_profile(SEED_PROFILE, platform_profile())
    created = platform_create(name="Agente A2A", profile_url=SEED_PROFILE)
    headers = {
        "BCP-Agent": f'profile="{SEED_PROFILE}"',
        "A2A-Version": "1.0",
        "A2A-Extensions": EXTENSION,
        "Authorization": f"Bearer {created.api_key}",
        "content-type": "application/json",
    }
    return created.platform.public_id, headers


def _post(base: str, body: dict[str, Any], headers: dict[str, str]) -> httpx.Response:
    return httpx.post(f"{base}/bcp/a2a", content=json.dumps(body).encode(), headers=headers, timeout=30)


def _shape(response: httpx.Response) -> tuple[int, str | None, bytes]:
    """Status, content type and body with the reply's own (new) messageId blanked."""
    body = _REPLY_ID.sub(b'"messageId":""', response.content)
    return response.status_code, response.headers.get("content-type"), body


def test_get_order_reads_the_same_directly_and_through_the_sdk(
    servers: tuple[str, str], caller: tuple[str, dict[str, str]]
) -> None:
    platform_id, headers = caller
    order = place_seed_order(platform_id)
    context = str(uuid.uuid4())
    cases = [
        [{"data": {"action": "get_order", "order_id": order.public_id}}],
        [{"data": {"action": "get_order", "order_id": "order_nao_existe"}}],  # not found
        [{"data": {"action": "get_order"}}],  # no order id: the intent's error
        [{"text": "oi"}, {"data": {"action": "get_order", "order_id": order.public_id}}],
    ]
    for parts in cases:
        direct, sdk = (_post(base, send_message(parts, context_id=context), headers) for base in servers)
        assert _shape(direct) == _shape(sdk)
    reply = _post(servers[0], send_message(cases[0], context_id=context), headers).json()
    assert reply["result"]["message"]["parts"][0]["data"]["a2a.bcp.order"]["id"] == order.public_id


def test_a_message_is_replayed_the_same_by_either_path(
    servers: tuple[str, str], caller: tuple[str, dict[str, str]]
) -> None:
    """A new conversation (the record and the conversation in one statement) and a known one, recorded by either
    path first: the other answers the same bytes, nothing is re-executed and no second conversation is opened."""
    from bcp_app.models import A2AContext

    platform_id, headers = caller
    order = place_seed_order(platform_id)
    known = _post(servers[1], send_message([{"text": "oi"}]), headers).json()["result"]["message"]["contextId"]
    for context in (None, known):
        for first, second in (servers, servers[::-1]):
            body = send_message([{"data": {"action": "get_order", "order_id": order.public_id}}], context_id=context)
            answered = _post(first, body, headers)
            conversations = A2AContext.objects.count()
            replayed, again = _post(second, body, headers), _post(first, body, headers)
            assert answered.status_code == 200
            assert "a2a.bcp.order" in answered.text
            assert (replayed.status_code, replayed.content) == (answered.status_code, answered.content)
            assert again.content == answered.content
            assert A2AContext.objects.count() == conversations


def _record(message_id: str) -> Any:
    from bcp_app.models import IdempotencyRecord

    return IdempotencyRecord.objects.get(key=message_id, operation="a2a_send_message")


def _error_code(response: httpx.Response) -> tuple[int, str]:
    error = response.json()["error"]
    return error["code"], error["data"][0]["metadata"]["code"]


def test_a_direct_read_is_recorded_done_with_its_reply_and_its_new_conversation(
    servers: tuple[str, str], caller: tuple[str, dict[str, str]]
) -> None:
    from bcp_app.models import A2AContext

    platform_id, headers = caller
    order = place_seed_order(platform_id)
    body = send_message([{"data": {"action": "get_order", "order_id": order.public_id}}])
    reply = _post(servers[0], body, headers).json()["result"]["message"]
    record = _record(body["params"]["message"]["messageId"])
    assert (record.state, record.response_status, record.principal) == ("done", 200, f"platform:{platform_id}")
    assert json.loads(json.loads(record.response_text)["message_json"]) == reply
    conversation = A2AContext.objects.get(context_id=reply["contextId"])
    assert (conversation.data, conversation.platform_id) == ({"principal": f"platform:{platform_id}"}, platform_id)


def test_the_same_message_id_with_another_message_is_a_conflict_on_either_path(
    servers: tuple[str, str], caller: tuple[str, dict[str, str]]
) -> None:
    """BCP-IDEM-05 whichever path recorded the messageId: another order, or a message that is not a read."""
    platform_id, headers = caller
    order = place_seed_order(platform_id)
    read = [{"data": {"action": "get_order", "order_id": order.public_id}}]
    others = ([{"data": {"action": "get_order", "order_id": "order_outro"}}], [{"text": "oi"}])
    for first, second in (servers, servers[::-1]):
        for other in others:
            message_id = str(uuid.uuid4())
            assert _post(first, send_message(read, message_id=message_id), headers).status_code == 200
            conflict = _post(second, send_message(other, message_id=message_id), headers)
            assert _error_code(conflict) == (-32000, "idempotency_conflict")
            # and the other way round: the read is the message that comes second
            message_id = str(uuid.uuid4())
            assert "result" in _post(second, send_message(other, message_id=message_id), headers).json()
            conflict = _post(first, send_message(read, message_id=message_id), headers)
            assert _error_code(conflict) == (-32000, "idempotency_conflict")


def test_a_read_whose_message_id_is_still_running_elsewhere_is_in_progress_until_its_lease_ends(
    servers: tuple[str, str], caller: tuple[str, dict[str, str]]
) -> None:
    """A claim the general path left `in_progress` (running, or its worker crashed): the direct path answers
    `idempotency_in_progress` as the general one does, and runs the read once the lease is over."""
    from datetime import timedelta

    from django.utils import timezone

    from bcp_app.models import IdempotencyRecord
    from bcp_app.transports.a2a.actions import fingerprint

    platform_id, headers = caller
    order = place_seed_order(platform_id)
    body = send_message([{"data": {"action": "get_order", "order_id": order.public_id}}])
    message = body["params"]["message"]
    now = timezone.now()
    IdempotencyRecord.objects.create(
        principal=f"platform:{platform_id}",
        operation="a2a_send_message",
        key=message["messageId"],
        fingerprint=fingerprint(message),
        state="in_progress",
        expires_at=now + timedelta(hours=48),
    )
    for base in servers:
        assert _error_code(_post(base, body, headers)) == (-32000, "idempotency_in_progress")
    IdempotencyRecord.objects.filter(key=message["messageId"]).update(created_at=now - timedelta(minutes=3))
    answered = _post(servers[0], body, headers)
    assert answered.json()["result"]["message"]["parts"][0]["data"]["a2a.bcp.order"]["id"] == order.public_id
    assert _record(message["messageId"]).state == "done"
    assert _post(servers[1], body, headers).content == answered.content


def test_a_conversation_of_another_caller_is_refused_the_same_by_both_paths(
    servers: tuple[str, str], caller: tuple[str, dict[str, str]]
) -> None:
    from bcp_app.models import A2AContext

    platform_id, headers = caller
    order = place_seed_order(platform_id)
    A2AContext.objects.create(context_id="ctx-alheio", data={"principal": "platform:plat_outra"})
    body = send_message([{"data": {"action": "get_order", "order_id": order.public_id}}], context_id="ctx-alheio")
    direct, sdk = (_post(base, body, headers) for base in servers)
    assert _shape(direct) == _shape(sdk)
    assert _error_code(direct)[1] == "forbidden"


def test_two_copies_of_a_new_message_sent_at_once_get_one_reply(
    servers: tuple[str, str], caller: tuple[str, dict[str, str]]
) -> None:
    """Both copies read; the first record to commit is the original and both are answered with it."""
    from concurrent.futures import ThreadPoolExecutor

    from bcp_app.models import A2AContext

    platform_id, headers = caller
    order = place_seed_order(platform_id)
    before = A2AContext.objects.count()
    for _ in range(5):
        body = send_message([{"data": {"action": "get_order", "order_id": order.public_id}}])
        with ThreadPoolExecutor(2) as pool:
            first, second = pool.map(lambda sent: _post(servers[0], sent, headers), [body, body])
        assert first.status_code == second.status_code == 200
        assert first.content == second.content
        assert "a2a.bcp.order" in first.text
    assert A2AContext.objects.count() == before + 5


def test_the_official_client_reads_the_same_order_from_both(
    servers: tuple[str, str], caller: tuple[str, dict[str, str]], settings: Any
) -> None:
    platform_id, headers = caller
    order = place_seed_order(platform_id)
    sent = {key: value for key, value in headers.items() if key != "content-type"}
    parts = [{"data": {"action": "get_order", "order_id": order.public_id}}]
    answers, context = [], str(uuid.uuid4())
    for base in servers:
        settings.BCP_PUBLIC_URL = base  # the Agent Card sends the client to this server
        answers.append(MessageToDict(sdk_send(base, parts, headers=sent, context_id=context)))
    direct, sdk = answers
    for answer, base in zip(answers, servers, strict=True):  # the permalink names the server's public URL
        assert answer["parts"][0]["data"]["a2a.bcp.order"].pop("permalink_url").startswith(base)
    assert {**direct, "messageId": ""} == {**sdk, "messageId": ""}
    assert direct["parts"][0]["data"]["a2a.bcp.order"]["id"] == order.public_id


def test_a_read_message_costs_its_read_and_one_statement(
    caller: tuple[str, dict[str, str]], django_assert_max_num_queries: Any
) -> None:
    """The record, the conversation (new or known) and a replay's stored reply are one statement beside the read
    (`reads.py`); the general path claims, reads the conversation and finishes: three."""
    from bcp_app.models import A2AContext, Platform
    from bcp_app.protocol.names import ORDER
    from bcp_app.service.context import RequestContext
    from bcp_app.transports.a2a.reads import read_message

    platform_id, _headers = caller
    order = place_seed_order(platform_id)
    platform = Platform.objects.get(public_id=platform_id)
    ctx = RequestContext(
        transport="a2a", profile_url=SEED_PROFILE, profile={}, capabilities={ORDER: "2026-07-28"}, platform=platform
    )
    parts = [{"data": {"action": "get_order", "order_id": order.public_id}}]

    def message(context_id: str | None = None) -> dict[str, Any]:
        return send_message(parts, context_id=context_id)["params"]["message"]

    read_message(ctx, message())  # the order's body remembered by the process, as after any first read
    with django_assert_max_num_queries(2):
        new = read_message(ctx, message())
    with django_assert_max_num_queries(2):
        known = read_message(ctx, sent := message(new["contextId"]))
    with django_assert_max_num_queries(2):
        assert read_message(ctx, sent) == known
    assert A2AContext.objects.filter(context_id=new["contextId"]).count() == 1
    assert known["parts"][0]["data"]["a2a.bcp.order"]["id"] == order.public_id


def test_a_read_record_leaves_the_connections_next_writes_synchronous_bcp_a2a_07(
    caller: tuple[str, dict[str, str]],
) -> None:
    """A read's record commits without waiting for its WAL flush (`reads.py`), set for its own statement's
    transaction only: the pooled connection's next transactions (checkout writes among them) still wait."""
    from django.db import connection

    from bcp_app.models import Platform
    from bcp_app.protocol.names import ORDER
    from bcp_app.service.context import RequestContext
    from bcp_app.transports.a2a.reads import read_message

    platform_id, _headers = caller
    order = place_seed_order(platform_id)
    ctx = RequestContext(
        transport="a2a",
        profile_url=SEED_PROFILE,
        profile={},
        capabilities={ORDER: "2026-07-28"},
        platform=Platform.objects.get(public_id=platform_id),
    )
    parts = [{"data": {"action": "get_order", "order_id": order.public_id}}]
    sent = send_message(parts)["params"]["message"]  # a new conversation, then a known one
    new = read_message(ctx, sent)
    again = send_message(parts, context_id=new["contextId"])["params"]["message"]
    assert read_message(ctx, again)["contextId"] == new["contextId"]
    assert [_record(m["messageId"]).state for m in (sent, again)] == ["done", "done"]
    with connection.cursor() as cursor:
        cursor.execute("SHOW synchronous_commit")
        assert cursor.fetchone()[0] == "on"


@pytest.mark.parametrize(
    "message",
    [
        {"role": "ROLE_USER", "messageId": "m-1", "parts": [{"data": {"action": "get_order", "order_id": "o_1"}}]},
        {"role": "ROLE_USER", "parts": [{"data": {"action": "get_order", "nested": {"a": [1, {"b": None}]}}}]},
        {"messageId": "m-2", "parts": []},
        {"role": "ROLE_USER", "messageId": "m-3", "parts": [{}, {"text": ""}, {"text": "oi"}]},
        {"role": "ROLE_AGENT", "messageId": "", "contextId": "c", "parts": [{"data": {}}], "metadata": {"k": {"x": 1}}},
        {},
    ],
)
def test_the_required_field_check_gives_the_sdks_errors(message: dict[str, Any]) -> None:
    """Issue 34: the direct read checks REQUIRED fields with the SDK's walk and its descriptors read once per type
    (bcp_app/transports/a2a/required.py): the same errors, in the same order, as the SDK's own check."""
    from a2a.types import SendMessageRequest
    from a2a.utils.errors import InvalidParamsError
    from a2a.utils.proto_utils import _validate_proto_required_fields_internal, validate_proto_required_fields
    from google.protobuf.json_format import ParseDict

    from bcp_app.transports.a2a.required import required_field_errors, validate_required_fields

    for params in ({"message": message}, {"message": message, "configuration": {"historyLength": 2}}, {}):
        request = ParseDict(params, SendMessageRequest())
        assert required_field_errors(request) == _validate_proto_required_fields_internal(request)
        raised = []
        for check in (validate_proto_required_fields, validate_required_fields):
            try:
                check(request)
                raised.append(None)
            except InvalidParamsError as exc:
                raised.append((exc.message, exc.data))
        assert raised[0] == raised[1]
    # the cases include refusals: no role, no parts, no messageId (and no message at all, `{}` above)
    assert bool(required_field_errors(ParseDict({"message": message}, SendMessageRequest()))) == (
        not message.get("role") or not message.get("parts") or not message.get("messageId")
    )


def test_a_stored_reply_is_compact_utf8_json_that_reads_back_as_the_reply_bcp_a2a_07() -> None:
    """Issue 34: a reply's record is written by orjson (compact, UTF-8); what orjson refuses (a lone surrogate) by
    `json` as before; either reads back as the reply a replay answers (BCP-A2A-07)."""
    from bcp_app.transports.a2a.actions import stored_reply

    reply = {"contextId": "c-1", "parts": [{"text": "Pedido de café"}, {"data": {"total": 1990}}], "role": "ROLE_AGENT"}
    odd = {**reply, "parts": [{"text": "x\ud800"}]}
    stored, fallback = stored_reply(reply).body["message_json"], stored_reply(odd).body["message_json"]
    assert stored == (
        '{"contextId":"c-1","parts":[{"text":"Pedido de café"},{"data":{"total":1990}}],"role":"ROLE_AGENT"}'
    )
    assert json.loads(stored) == reply
    assert json.loads(fallback) == odd and fallback == json.dumps(odd)


def test_a_read_in_a_conversation_is_not_parsed_by_the_sdk_again(
    servers: tuple[str, str], caller: tuple[str, dict[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 34: a read's `SendMessage` params are parsed once per shape (`send_memo`), not by the SDK's `ParseDict`
    at every call; each read still answers its own order, and the SDK-only server still parses every one."""
    from a2a.server.routes import jsonrpc_dispatcher

    platform_id, headers = caller
    order = place_seed_order(platform_id)
    parses: list[Any] = []
    sdk_parse = jsonrpc_dispatcher.ParseDict

    def counted(*args: Any, **kwargs: Any) -> Any:
        parses.append(args[0])
        return sdk_parse(*args, **kwargs)

    monkeypatch.setattr(jsonrpc_dispatcher, "ParseDict", counted)
    context = str(uuid.uuid4())
    parts = [{"data": {"action": "get_order", "order_id": order.public_id}}]
    for base, sdk_parses in zip(servers, (0, 3), strict=True):
        parses.clear()
        for _ in range(3):  # a fresh messageId each time, as an agent polls its order
            reply = _post(base, send_message(parts, context_id=context), headers).json()
            assert reply["result"]["message"]["parts"][0]["data"]["a2a.bcp.order"]["id"] == order.public_id
        assert len(parses) == sdk_parses
