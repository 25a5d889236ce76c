"""One rate limiter for REST, MCP and A2A (bcp_app/service/ratelimit.py): per platform credential, per anonymous
client IP, per operation class; anonymous checkout creation has its own, lower budget (issue 12 item 6).

Budgets are set small per test; the counters are reset around every test (tests/conftest.py).
BCP-ERR: `rate_limited` is 429 + Retry-After over REST, JSON-RPC -32000 with `data.code` elsewhere.
"""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

import httpx
import pytest
from django.test import Client

from tests.bcp_app import test_mcp_helpers
from tests.bcp_app.bcp_fixtures import FakePlatform, agent
from tests.bcp_app.rest_helpers import call, catalog, create
from tests.bcp_app.test_a2a_helpers import (
    SEED_HEADERS,
    LiveServer,
    data,
    live_fixture,  # noqa: F401 (fixture "live")
    make_product,
    rpc,
    send_message,
    server_fixture,  # noqa: F401 (fixture "server")
)
from tests.bcp_app.test_mcp_helpers import raw_post, tools_call

live_mcp = test_mcp_helpers.live_mcp

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("bcp_settings")]


def budgets(settings: Any, **classes: tuple[str, str]) -> None:
    settings.BCP_RATE_LIMITS = {"read": ("", ""), "write": ("", ""), "checkout_create": ("", ""), **classes}


@pytest.fixture
def headers(fake_platform: FakePlatform, settings: Any) -> dict[str, str]:
    settings.BCP_PIX_SANDBOX = True
    settings.PIX_SANDBOX_WEBHOOK_URL = ""
    catalog()
    return agent(fake_platform.publish())


def with_key(headers: dict[str, str]) -> dict[str, str]:
    return {**headers, "Idempotency-Key": str(uuid.uuid4())}


# --- REST ---------------------------------------------------------------------------------------------


def test_rest_anonymous_checkout_creation_has_its_own_lower_budget(
    client: Client, headers: dict[str, str], settings: Any
) -> None:
    from bcp_app.service.platforms import platform_create
    from shop.models import Checkout

    budgets(settings, checkout_create=("5/minute", "2/minute"))
    # when an anonymous agent creates three checkouts within the minute
    statuses = [create(client, with_key(headers)).status_code for _ in range(3)]
    limited = create(client, with_key(headers))
    # then the third and later are refused with 429 and Retry-After, and nothing more was created
    assert statuses == [201, 201, 429]
    assert limited.status_code == 429
    assert 1 <= int(limited["Retry-After"]) <= 60
    assert limited.json() == {
        "code": "rate_limited",
        "content": f"Muitas chamadas; tente novamente em {limited['Retry-After']} s.",
    }
    assert Checkout.objects.count() == 2
    # and a platform with an API key still creates, from the same address, on its own budget
    platform = platform_create(name="Agente", profile_url=headers["BCP-Agent"].split('"')[1])
    authed = {**headers, "Authorization": f"Bearer {platform.api_key}"}
    assert [create(client, with_key(authed)).status_code for _ in range(3)] == [201, 201, 201]


def test_rest_reads_are_counted_per_anonymous_ip(client: Client, headers: dict[str, str], settings: Any) -> None:
    budgets(settings, read=("10/minute", "2/minute"))
    search = {"query": "café"}
    first = [call(client, "post", "/catalog/search", headers, search).status_code for _ in range(3)]
    # another client address has its own budget
    other = Client(REMOTE_ADDR="203.0.113.9")
    assert first == [200, 200, 429]
    assert call(other, "post", "/catalog/search", headers, search).status_code == 200


def test_an_idempotent_replay_is_not_counted(client: Client, headers: dict[str, str], settings: Any) -> None:
    budgets(settings, checkout_create=("5/minute", "1/minute"))
    replay = with_key(headers)
    assert [create(client, replay).status_code for _ in range(3)] == [201, 201, 201]
    assert create(client, with_key(headers)).status_code == 429


# --- MCP ----------------------------------------------------------------------------------------------


@pytest.mark.e2e
@pytest.mark.postgres
def test_mcp_checkout_creation_draws_from_the_same_budget_as_rest(
    live_mcp: Any, transactional_db: None, fake_platform: FakePlatform, settings: Any
) -> None:
    settings.BCP_PIX_SANDBOX = True
    catalog()
    profile = fake_platform.publish()
    budgets(settings, checkout_create=("5/minute", "2/minute"))
    body = {"line_items": [{"item": {"id": "SKU-CAFE-500G"}, "quantity": 1}]}
    # the windows are the clock's minutes: three calls across a minute's turn would count in two of them (a CI
    # run under load failed so), so they start early in one
    if time.time() % 60 > 40:
        time.sleep(60.5 - time.time() % 60)
    # given one anonymous checkout created over REST on the live server
    rest = httpx.post(
        f"{live_mcp.base_url}/bcp/v1/checkout-sessions",
        json=body,
        headers={**agent(profile), "Idempotency-Key": str(uuid.uuid4())},
        timeout=30,
    )
    assert rest.status_code == 201

    def mcp_create() -> httpx.Response:
        meta = {"ucp-agent": {"profile": profile}, "idempotency-key": str(uuid.uuid4())}
        return raw_post(live_mcp.mcp_url, tools_call("create_checkout", {"meta": meta, "checkout": body}))

    # when the same address creates two more over MCP
    allowed, limited = mcp_create(), mcp_create()
    # then the second MCP one is over the shared anonymous budget: 429 with the §5.4 JSON-RPC error
    assert allowed.status_code == 200
    assert allowed.json()["result"]["structuredContent"]["status"] == "incomplete"
    assert limited.status_code == 429
    error = limited.json()["error"]
    assert (error["code"], error["data"]["code"]) == (-32000, "rate_limited")
    assert limited.headers["retry-after"] == str(error["data"]["retry_after"])


@pytest.mark.e2e
@pytest.mark.postgres
def test_mcp_seed_002_tools_answer_the_rate_limited_envelope(
    live_mcp: Any, transactional_db: None, settings: Any
) -> None:
    budgets(settings, read=("10/minute", "1/minute"))
    typed = tools_call("catalogue.list", {"query": "café"})
    first = raw_post(live_mcp.mcp_url, typed)
    limited = raw_post(live_mcp.mcp_url, typed)
    assert first.json()["result"]["structuredContent"]["status"] == "ok"
    envelope = limited.json()["result"]["structuredContent"]
    assert (envelope["status"], envelope["error"]["code"]) == ("error", "rate_limited")
    assert 1 <= envelope["error"]["retry_after_seconds"] <= 60


# --- A2A ----------------------------------------------------------------------------------------------


def bcp_error(body: dict[str, Any]) -> dict[str, str]:
    """The BCP code of an A2A JSON-RPC error (the SDK carries it as google.rpc.ErrorInfo metadata)."""
    (info,) = body["error"]["data"]
    return info["metadata"]


@pytest.mark.e2e
@pytest.mark.postgres
def test_a2a_messages_and_checkout_creation_are_limited(server: LiveServer, settings: Any) -> None:
    make_product("Pixel 10 Pro", "PIXEL-10-PRO", 599900)
    budgets(settings, write=("10/minute", "3/minute"), checkout_create=("5/minute", "1/minute"))
    add = data({"action": "add_to_checkout", "product_id": "PIXEL-10-PRO"})
    # when an anonymous agent opens two checkouts (two contexts) and then sends two more messages
    first = rpc(server.a2a_url, send_message([add]))
    second = rpc(server.a2a_url, send_message([add]))
    context = first["result"]["message"]["contextId"]
    third = rpc(server.a2a_url, send_message([add], context_id=context))
    fourth = rpc(server.a2a_url, send_message([add], context_id=context))
    # then the second checkout creation is over its budget, the first context still grows,
    # and the fourth message is over the write budget
    assert "result" in first
    assert (second["error"]["code"], bcp_error(second)["code"]) == (-32000, "rate_limited")
    assert "result" in third
    assert bcp_error(fourth)["code"] == "rate_limited"
    assert 1 <= int(bcp_error(fourth)["retry_after"]) <= 60
    # a call with a platform credential is counted on that credential's budget: it passes the limiter
    # and reaches authentication (where this unknown key is refused)
    headers = {**SEED_HEADERS, "X-API-Key": "chave-qualquer"}
    refused = httpx.post(server.a2a_url, content=json.dumps(send_message([add])), headers=headers, timeout=30)
    assert bcp_error(refused.json())["code"] == "unauthenticated"


@pytest.mark.parametrize("limit", ["60/minute", "30/10minutes", "5/second", "100/hour"])
def test_a_kept_window_is_the_one_of_that_instant(limit: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 34: the windows of one second are kept for that second; each is the window computed at that instant
    (number, seconds left, key), also at a second's edges and across a window's end."""
    import hashlib
    import math

    from kernel.ops import ratelimit as counters

    allowed, seconds = counters._budget(limit)
    who = hashlib.sha256(b"bcp:read:key:abc").hexdigest()[:32]
    start = 1_800_000_000 // seconds * seconds + seconds  # a window's first second
    instants = [start - 1.0, start - 0.5, start - 1e-6, start, start + 1e-6, start + 0.25, start + 0.999999]
    instants += [start + seconds - 1 + fraction for fraction in (0.0, 0.5, 0.999)] + [start + seconds + 0.5]
    for now in instants:
        monkeypatch.setattr(counters.time, "time", lambda now=now: now)
        current = int(now // seconds)
        expected = counters.Window(
            f"rl:{seconds}:{current}:{who}", allowed, seconds + 1, max(1, math.ceil((current + 1) * seconds - now))
        )
        assert counters.window(limit, "bcp", "read", "key:abc") == expected, now
        assert counters.window(limit, "bcp", "read", "key:abc") == expected, now  # the kept one
