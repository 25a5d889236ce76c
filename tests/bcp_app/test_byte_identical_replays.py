"""Idempotent replays return the exact stored bytes (BCP §12 "stored response verbatim", BCP-IDEM-04), over
REST and MCP (A2A: tests/bcp_app/test_a2a_checkout.py::test_a_repeated_message_id_replays_the_same_bytes).

Replays used to come from a jsonb column, which reorders object keys: the same object, other bytes. The
body is now stored as the text that was sent. The tests compare raw HTTP bodies.
"""

from __future__ import annotations

import json
import uuid

import httpx
import pytest
from django.test import Client

from tests.bcp_app import test_mcp_checkout
from tests.bcp_app.bcp_fixtures import FakePlatform, agent
from tests.bcp_app.rest_helpers import PIX, call, ready_checkout
from tests.bcp_app.test_mcp_helpers import raw_post, tools_call

live_mcp = test_mcp_checkout.live_mcp
shopper = test_mcp_checkout.shopper


@pytest.mark.django_db
@pytest.mark.usefixtures("rest_shop")
def test_rest_replays_are_byte_identical_bcp_idem_04(client: Client, fake_platform: FakePlatform) -> None:
    headers = agent(fake_platform.publish())
    body = {"line_items": [{"item": {"id": "SKU-CAFE-500G"}, "quantity": 2}], "buyer": {"email": "ana@example.com.br"}}
    keyed = {**headers, "Idempotency-Key": str(uuid.uuid4())}
    first = call(client, "post", "/checkout-sessions", keyed, body)
    again = call(client, "post", "/checkout-sessions", keyed, body)
    ready = ready_checkout(client, headers)
    complete_headers = {**headers, "Idempotency-Key": str(uuid.uuid4())}
    completing = call(
        client,
        "post",
        f"/checkout-sessions/{ready['id']}/complete",
        complete_headers,
        {"payment": {"instruments": [PIX]}},
    )
    completing_again = call(
        client,
        "post",
        f"/checkout-sessions/{ready['id']}/complete",
        complete_headers,
        {"payment": {"instruments": [PIX]}},
    )
    assert (first.status_code, again.status_code) == (201, 201)
    assert again.content == first.content
    assert completing_again.content == completing.content
    # the bytes are not the jsonb order: `ucp` stays first, as it was sent
    assert list(json.loads(again.content)) == list(json.loads(first.content))
    assert next(iter(json.loads(again.content))) == "ucp"


@pytest.mark.postgres
@pytest.mark.e2e
def test_mcp_replays_are_byte_identical_bcp_idem_04(shopper: test_mcp_checkout.Shopper) -> None:
    checkout = test_mcp_checkout.ready_checkout(shopper)
    meta = {**shopper.meta(str(uuid.uuid4()))}
    request = tools_call(
        "complete_checkout",
        {"meta": meta, "id": checkout["id"], "checkout": {"payment": {"instruments": [PIX]}}},
        request_id=7,
    )
    first = raw_post(shopper.url, request, headers=shopper.headers)
    again = raw_post(shopper.url, request, headers=shopper.headers)
    assert first.status_code == again.status_code == 200
    assert again.content == first.content
    result = json.loads(again.content)["result"]
    assert result["structuredContent"]["status"] == "complete_in_progress"
    assert (
        result["content"][0]["text"].encode()
        == json.dumps(result["structuredContent"], ensure_ascii=False, separators=(",", ":")).encode()
    )


@pytest.mark.postgres
@pytest.mark.e2e
def test_mcp_numbers_outside_json_exact_range_are_fingerprinted_not_a_500_bcp_idem_04(
    shopper: test_mcp_checkout.Shopper,
) -> None:
    """An integer past 2^53 in a member create_checkout ignores: before, JCS refused it inside the fingerprint
    and the call died with -32603 / HTTP 500; now it answers as REST does, and its replay is byte-identical."""
    key = str(uuid.uuid4())
    checkout = {"line_items": [{"item": {"id": "SKU-CAFE-500G"}, "quantity": 1}], "x": 9223372036854775808}

    def create(body: dict[str, object]) -> httpx.Response:
        request = tools_call("create_checkout", {"meta": shopper.meta(key), "checkout": body}, request_id=3)
        return raw_post(shopper.url, request, headers=shopper.headers)

    first = create(checkout)
    again = create(checkout)
    other = create({**checkout, "x": 9223372036854775809})
    assert first.status_code == again.status_code == 200
    assert json.loads(first.content)["result"]["structuredContent"]["status"] in {"incomplete", "ready_for_complete"}
    assert again.content == first.content
    # a different out-of-range number is a different body under the same key
    assert json.loads(other.content)["error"]["data"]["code"] == "idempotency_conflict"
