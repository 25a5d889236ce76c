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
    platform_id, headers = caller
    order = place_seed_order(platform_id)
    for first, second in (servers, servers[::-1]):
        body = send_message([{"data": {"action": "get_order", "order_id": order.public_id}}])
        answered, replayed = _post(first, body, headers), _post(second, body, headers)
        assert answered.status_code == 200
        assert (replayed.status_code, replayed.content) == (answered.status_code, answered.content)


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
