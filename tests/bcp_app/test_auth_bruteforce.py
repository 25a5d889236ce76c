"""Failed API-key authentication is limited per client IP and per key prefix across REST, MCP and A2A
(issue 13 §13, issue 31 §1).

Before: 150 random API keys were 150 × 401 and never a 429; the per-credential limiter counted each
random key as a new caller, so rotating keys bypassed it on every transport. Now every failure from an
IP counts against one budget (`BCP_RATE_LIMIT_AUTH_FAILURES`) whatever the transport; past it, any key
that IP presents is answered `rate_limited` (BCP-ERR: REST 429 + Retry-After, JSON-RPC -32000).

Issue 31 §1: the IP was whatever X-Forwarded-For said (`.env.example` trusted every client as a proxy), so
150 bad keys with a new header each were 150 × 401. Now the example trusts only the compose network, and
failures also count per key prefix, so one platform's key guessed from many addresses is limited too.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from django.test import Client

from bcp_app.service.platforms import platform_create
from tests.bcp_app.bcp_fixtures import agent
from tests.bcp_app.rest_helpers import call
from tests.bcp_app.test_a2a_helpers import (
    PIX_HANDLERS,
    SEED_HEADERS,
    SEED_PROFILE,
    LiveServer,
    cache_profile,
    data,
    live_fixture,  # noqa: F401 (fixture "live")
    platform_profile,
    send_message,
    server_fixture,  # noqa: F401 (fixture "server")
)
from tests.bcp_app.test_mcp_helpers import raw_post, tools_call
from tests.bcp_app.test_signed_platforms import Signer
from tests.deploy.production import env_example

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("bcp_settings")]
SEARCH = {"query": "café"}


def random_key() -> str:
    return f"bcp_{secrets.token_hex(6)}_{secrets.token_urlsafe(24)}"


def rest(server: LiveServer, key: str) -> httpx.Response:
    headers = {**agent(SEED_PROFILE), "Authorization": f"Bearer {key}"}
    return httpx.post(f"{server.base_url}/bcp/v1/catalog/search", json=SEARCH, headers=headers, timeout=30)


def mcp(server: LiveServer, key: str) -> httpx.Response:
    return raw_post(
        f"{server.base_url}/bcp/mcp", tools_call("catalogue.list", {"query": "café"}), headers={"x-api-key": key}
    )


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
        rest(server, random_key()).status_code,
        rest(server, random_key()).status_code,
        mcp_code(mcp(server, random_key())),
        mcp_code(mcp(server, random_key())),
        a2a_code(a2a(server, random_key())),
        a2a_code(a2a(server, random_key())),
    ]
    # then each is refused as unauthenticated
    assert failures == [401, 401, "unauthenticated", "unauthenticated", "unauthenticated", "unauthenticated"]
    # and from then on every key from that address is rate_limited, on every transport, even a valid one
    limited = rest(server, random_key())
    assert limited.status_code == 429
    assert 1 <= int(limited.headers["retry-after"]) <= 600
    assert limited.json() == {
        "code": "rate_limited",
        "content": f"Muitas chamadas; tente novamente em {limited.headers['retry-after']} s.",
    }
    assert rest(server, platform.api_key).status_code == 429
    assert mcp_code(mcp(server, random_key())) == "rate_limited"
    assert a2a_code(a2a(server, random_key())) == "rate_limited"
    # while a request without a key (anonymous) is not an authentication attempt and still answers
    anonymous = httpx.post(
        f"{server.base_url}/bcp/v1/catalog/search", json=SEARCH, headers=agent(SEED_PROFILE), timeout=30
    )
    assert anonymous.status_code == 200


def test_another_address_keeps_its_own_budget(fake_platform: Any, settings: Any) -> None:
    settings.BCP_RATE_LIMIT_AUTH_FAILURES = "3/10minutes"
    headers = agent(fake_platform.publish())
    platform = platform_create(name="Agente", profile_url="")
    attacker = Client(REMOTE_ADDR="203.0.113.9")
    tries = [
        call(
            attacker, "post", "/catalog/search", {**headers, "Authorization": f"Bearer {random_key()}"}, SEARCH
        ).status_code
        for _ in range(4)
    ]
    assert tries == [401, 401, 401, 429]
    owner = Client(REMOTE_ADDR="198.51.100.7")
    authed = {**headers, "Authorization": f"Bearer {platform.api_key}"}
    assert call(owner, "post", "/catalog/search", authed, SEARCH).status_code == 200


def test_one_platforms_key_guessed_from_many_addresses_is_limited_by_its_prefix(
    fake_platform: Any, settings: Any
) -> None:
    # Before: each address had its own budget, so 150 guesses from 150 addresses were 150 × 401.
    settings.BCP_RATE_LIMIT_AUTH_FAILURES = "3/10minutes"
    headers = agent(fake_platform.publish())
    target = platform_create(name="Alvo", profile_url="")
    other = platform_create(name="Outro", profile_url="")
    prefix = target.api_key.split("_")[1]
    # when wrong secrets for that platform's prefix come from a new address each time
    tries = [
        call(
            Client(REMOTE_ADDR=f"203.0.113.{n}"),
            "post",
            "/catalog/search",
            {**headers, "Authorization": f"Bearer bcp_{prefix}_{secrets.token_urlsafe(24)}"},
            SEARCH,
        ).status_code
        for n in range(1, 6)
    ]
    # then past the budget every key with that prefix is refused, from any address
    assert tries == [401, 401, 401, 429, 429]
    fresh = Client(REMOTE_ADDR="198.51.100.7")
    assert (
        call(
            fresh, "post", "/catalog/search", {**headers, "Authorization": f"Bearer {target.api_key}"}, SEARCH
        ).status_code
        == 429
    )
    # while another platform's key, from the same fresh address, is unaffected
    assert (
        call(
            fresh, "post", "/catalog/search", {**headers, "Authorization": f"Bearer {other.api_key}"}, SEARCH
        ).status_code
        == 200
    )


def test_a_locked_address_still_reaches_the_shop_by_signature(fake_platform: Any, settings: Any) -> None:
    settings.BCP_RATE_LIMIT_AUTH_FAILURES = "2/10minutes"
    url = fake_platform.publish()
    attacker = Client(REMOTE_ADDR="203.0.113.9")
    tries = [
        call(
            attacker, "post", "/catalog/search", {**agent(url), "Authorization": f"Bearer {random_key()}"}, SEARCH
        ).status_code
        for _ in range(3)
    ]
    assert tries == [401, 401, 429]
    # a request from that address authenticated by its RFC 9421 signature presents no key: it is answered
    assert "products" in Signer(attacker, url, fake_platform.key)("post", "/catalog/search", SEARCH)


@pytest.fixture
def behind_example_proxy(
    django_db_blocker: Any, transactional_db: None, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> Iterator[LiveServer]:
    """The shop served as compose's `web` is: `--proxy-headers` with `.env.example`'s FORWARDED_ALLOW_IPS (uvicorn
    reads it from the environment), reached from 127.0.0.1, which is not the proxy."""
    monkeypatch.setenv("FORWARDED_ALLOW_IPS", env_example()["FORWARDED_ALLOW_IPS"])
    with django_db_blocker.unblock():
        started = LiveServer().start()
    settings.BCP_PUBLIC_URL = started.base_url
    settings.BCP_OUTBOUND_ALLOWLIST = ["127.0.0.1"]
    cache_profile(SEED_PROFILE, platform_profile(handlers=PIX_HANDLERS))
    yield started
    started.stop()


@pytest.mark.e2e
@pytest.mark.postgres
def test_a_forged_x_forwarded_for_buys_no_fresh_budget(behind_example_proxy: LiveServer, settings: Any) -> None:
    # Before: FORWARDED_ALLOW_IPS=* made every client a proxy; 150 bad keys, each with a new X-Forwarded-For,
    # were 150 × 401 and never a 429.
    settings.BCP_RATE_LIMIT_AUTH_FAILURES = "10/10minutes"
    statuses = [
        httpx.post(
            f"{behind_example_proxy.base_url}/bcp/v1/catalog/search",
            json=SEARCH,
            timeout=30,
            headers={
                **agent(SEED_PROFILE),
                "Authorization": f"Bearer {random_key()}",
                "X-Forwarded-For": f"198.51.{n // 250}.{n % 250 + 1}",
            },
        ).status_code
        for n in range(30)
    ]
    assert statuses == [401] * 10 + [429] * 20
