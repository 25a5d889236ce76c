"""Failed API-key authentication is limited per client IP across REST, MCP and A2A (issue 13 §13).

Before: 150 random API keys were 150 × 401 and never a 429; the per-credential limiter counted each
random key as a new caller, so rotating keys bypassed it on every transport. Now every failure from an
IP counts against one budget (`BCP_RATE_LIMIT_AUTH_FAILURES`) whatever the transport; past it, any key
that IP presents is answered `rate_limited` (BCP-ERR: REST 429 + Retry-After, JSON-RPC -32000).
"""

from __future__ import annotations

import json
import secrets
from typing import Any

import httpx
import pytest
from django.test import Client

from bcp_app.service.platforms import platform_create
from tests.bcp_app.bcp_fixtures import agent
from tests.bcp_app.rest_helpers import call
from tests.bcp_app.test_a2a_helpers import (
    SEED_HEADERS,
    SEED_PROFILE,
    LiveServer,
    data,
    live_fixture,  # noqa: F401 (fixture "live")
    send_message,
    server_fixture,  # noqa: F401 (fixture "server")
)
from tests.bcp_app.test_mcp_helpers import raw_post, tools_call

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("bcp_settings")]
SEARCH = {"query": "café"}


def random_key() -> str:
    return f"bcp_{secrets.token_hex(6)}_{secrets.token_urlsafe(24)}"


def rest(server: LiveServer, key: str) -> httpx.Response:
    headers = {**agent(SEED_PROFILE), "Authorization": f"Bearer {key}"}
    return httpx.post(f"{server.base_url}/bcp/v1/catalog/search", json=SEARCH, headers=headers, timeout=30)


def mcp(server: LiveServer, key: str) -> httpx.Response:
    return raw_post(f"{server.base_url}/bcp/mcp", tools_call("catalogue.list", {"query": "café"}),
                    headers={"x-api-key": key})


def a2a(server: LiveServer, key: str) -> httpx.Response:
    body = json.dumps(send_message([data({"action": "search", "query": "café"})]))
    return httpx.post(server.a2a_url, content=body, headers={**SEED_HEADERS, "X-API-Key": key}, timeout=30)


def a2a_code(response: httpx.Response) -> str:
    (info,) = response.json()["error"]["data"]
    return info["metadata"]["code"]


def mcp_code(response: httpx.Response) -> str:
    body = response.json()
    if "error" in body:
        return body["error"]["data"]["code"]
    return body["result"]["structuredContent"]["error"]["code"]


@pytest.mark.e2e
@pytest.mark.postgres
def test_random_keys_over_every_transport_share_one_failure_budget_per_ip(server: LiveServer, settings: Any) -> None:
    settings.BCP_RATE_LIMIT_AUTH_FAILURES = "6/10minutes"
    platform = platform_create(name="Agente", profile_url="")
    # when one address tries random keys, two over each transport
    failures = [
        rest(server, random_key()).status_code, rest(server, random_key()).status_code,
        mcp_code(mcp(server, random_key())), mcp_code(mcp(server, random_key())),
        a2a_code(a2a(server, random_key())), a2a_code(a2a(server, random_key())),
    ]
    # then each is refused as unauthenticated
    assert failures == [401, 401, "unauthenticated", "unauthenticated", "unauthenticated", "unauthenticated"]
    # and from then on every key from that address is rate_limited, on every transport, even a valid one
    limited = rest(server, random_key())
    assert limited.status_code == 429
    assert 1 <= int(limited.headers["retry-after"]) <= 600
    assert limited.json() == {
        "code": "rate_limited", "content": f"Muitas chamadas; tente novamente em {limited.headers['retry-after']} s."
    }
    assert rest(server, platform.api_key).status_code == 429
    assert mcp_code(mcp(server, random_key())) == "rate_limited"
    assert a2a_code(a2a(server, random_key())) == "rate_limited"
    # while a request without a key (anonymous) is not an authentication attempt and still answers
    anonymous = httpx.post(f"{server.base_url}/bcp/v1/catalog/search", json=SEARCH, headers=agent(SEED_PROFILE),
                           timeout=30)
    assert anonymous.status_code == 200


def test_another_address_keeps_its_own_budget(fake_platform: Any, settings: Any) -> None:
    settings.BCP_RATE_LIMIT_AUTH_FAILURES = "3/10minutes"
    headers = agent(fake_platform.publish())
    platform = platform_create(name="Agente", profile_url="")
    attacker = Client(REMOTE_ADDR="203.0.113.9")
    tries = [call(attacker, "post", "/catalog/search", {**headers, "Authorization": f"Bearer {random_key()}"},
                  SEARCH).status_code for _ in range(4)]
    assert tries == [401, 401, 401, 429]
    owner = Client(REMOTE_ADDR="198.51.100.7")
    authed = {**headers, "Authorization": f"Bearer {platform.api_key}"}
    assert call(owner, "post", "/catalog/search", authed, SEARCH).status_code == 200
