"""Benchmark: structured `add_to_checkout` over A2A (a2a-sdk JSON-RPC, live uvicorn) against the same
operation behind a bare Django JSON view, measured side by side in one run (`make bench`).

Both paths resolve the caller (BCP §3, cached profile) and call `bcp_app.operations.update_checkout` with
one more unit of the same item; A2A adds the SDK, messageId idempotency and the A2A context. At 1 and 8
concurrent clients (one conversation each), so a transport that serialises its requests shows as an 8/1
ratio near 1 or below. No timing is asserted: the ratios are printed.
"""

from __future__ import annotations

import json
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest
from django.conf import settings as django_settings
from django.http import HttpRequest, JsonResponse
from django.urls import include, path
from django.views.decorators.csrf import csrf_exempt

from tests.bcp_app.test_a2a_helpers import (
    SEED_HEADERS,
    SEED_PROFILE,
    LiveServer,
    cache_profile,
    checkout_of,
    data,
    make_product,
    platform_profile,
    send_message,
)

pytestmark = [pytest.mark.postgres]

ROUNDS = 40  # messages per client count at 1 client (80 at 8, 10 each)
CLIENTS = (1, 8)


@csrf_exempt
def bare_add(request: HttpRequest) -> JsonResponse:
    """The baseline: a plain Django view doing what the A2A add does, minus A2A."""
    from bcp_app.context import resolve_context
    from bcp_app.negotiation import parse_agent_header
    from bcp_app.transports import a2a_ops

    payload = json.loads(request.body)
    ctx = resolve_context(transport="rest", profile_url=parse_agent_header(request.headers.get("BCP-Agent")))
    current = a2a_ops.current_checkout(ctx, payload["checkout_id"])
    return JsonResponse(a2a_ops.add_line(ctx, current, payload["product_id"], payload["quantity"]))


urlpatterns = [path("bench/add", bare_add), path("", include(django_settings.ROOT_URLCONF))]


def _rate(clients: int, per_client: int, send: Any) -> float:
    """Messages per second with `clients` concurrent clients, each sending `per_client` messages."""
    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=clients) as pool:
        list(pool.map(lambda index: [send(index) for _ in range(per_client)], range(clients)))
    return clients * per_client / (time.perf_counter() - started)


@pytest.mark.django_db(transaction=True)
def test_a2a_add_to_checkout_throughput(django_db_blocker: Any, settings: Any) -> None:
    settings.ROOT_URLCONF = __name__
    settings.ALLOWED_HOSTS = ["*"]
    settings.BCP_RATE_LIMITS = {}  # measure the transport, not the limiter
    server = LiveServer().start()
    try:
        settings.BCP_PUBLIC_URL = server.base_url
        cache_profile(SEED_PROFILE, platform_profile())
        make_product("Pixel 10 Pro", "PIXEL-10-PRO", 599900, stock=100_000)
        # one conversation (and checkout) per client: concurrent clients do not queue on one checkout's lock
        conversations: list[tuple[str, str]] = []
        for _ in range(max(CLIENTS)):
            first = httpx.post(server.a2a_url, json=send_message([data({"action": "add_to_checkout",
                                                                        "product_id": "PIXEL-10-PRO"})]),
                               headers=SEED_HEADERS, timeout=30).json()
            assert "result" in first, first
            conversations.append((first["result"]["message"]["contextId"], checkout_of(first)["id"]))

        with httpx.Client(headers=SEED_HEADERS, timeout=60, limits=httpx.Limits(max_connections=16)) as http:
            def via_a2a(index: int) -> None:
                request = send_message([data({"action": "add_to_checkout", "product_id": "PIXEL-10-PRO",
                                              "quantity": 1})], context_id=conversations[index][0],
                                       message_id=str(uuid.uuid4()))
                assert "result" in http.post(server.a2a_url, json=request).json()

            def via_django(index: int) -> None:
                response = http.post(f"{server.base_url}/bench/add", json={
                    "checkout_id": conversations[index][1], "product_id": "PIXEL-10-PRO", "quantity": 1})
                assert response.status_code == 200

            via_a2a(0), via_django(0)  # warm both paths
            rates = {}
            for clients in CLIENTS:
                rates[clients] = (_rate(clients, ROUNDS // clients * 2, via_django),
                                  _rate(clients, ROUNDS // clients * 2, via_a2a))
    finally:
        server.stop()

    print("\nadd_to_checkout: A2A (a2a-sdk JSON-RPC) vs a bare Django view doing the same operation, same server")
    for clients, (baseline, a2a) in rates.items():
        print(f"  {clients} client(s): bare {baseline:6.1f} msg/s | A2A {a2a:6.1f} msg/s |"
              f" ratio A2A/bare {a2a / baseline:.2f}")
    print(f"  A2A throughput 8 clients / 1 client: {rates[8][1] / rates[1][1]:.2f}"
          f" (bare view: {rates[8][0] / rates[1][0]:.2f})")
