"""Benchmark: structured `add_to_checkout` over A2A (a2a-sdk JSON-RPC, live uvicorn) against the same
operation behind a bare Django JSON view, measured side by side in one run (`make bench`).

Both paths resolve the caller (BCP §3, cached profile) and call `bcp_app.operations.update_checkout` with
one more unit of the same item; A2A adds the SDK, messageId idempotency and the A2A context. No timing is
asserted: the ratio is printed.
"""

from __future__ import annotations

import json
import time
import uuid
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

ROUNDS = 40


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


def _timed(calls: int, send: Any) -> float:
    started = time.perf_counter()
    for _ in range(calls):
        send()
    return calls / (time.perf_counter() - started)


@pytest.mark.django_db(transaction=True)
def test_a2a_add_to_checkout_throughput(django_db_blocker: Any, settings: Any) -> None:
    settings.ROOT_URLCONF = __name__
    settings.ALLOWED_HOSTS = ["*"]
    server = LiveServer().start()
    try:
        settings.BCP_PUBLIC_URL = server.base_url
        cache_profile(SEED_PROFILE, platform_profile())
        make_product("Pixel 10 Pro", "PIXEL-10-PRO", 599900, stock=100_000)
        first = httpx.post(server.a2a_url, json=send_message([data({"action": "add_to_checkout",
                                                                    "product_id": "PIXEL-10-PRO"})]),
                           headers=SEED_HEADERS, timeout=30).json()
        assert "result" in first, first
        context_id = first["result"]["message"]["contextId"]
        checkout_id = checkout_of(first)["id"]

        with httpx.Client(headers=SEED_HEADERS, timeout=30) as http:
            def via_a2a() -> None:
                request = send_message([data({"action": "add_to_checkout", "product_id": "PIXEL-10-PRO",
                                              "quantity": 1})], context_id=context_id, message_id=str(uuid.uuid4()))
                assert "result" in http.post(server.a2a_url, json=request).json()

            def via_django() -> None:
                response = http.post(f"{server.base_url}/bench/add",
                                     json={"checkout_id": checkout_id, "product_id": "PIXEL-10-PRO", "quantity": 1})
                assert response.status_code == 200

            via_a2a(), via_django()  # warm both paths
            baseline = _timed(ROUNDS, via_django)
            a2a = _timed(ROUNDS, via_a2a)
    finally:
        server.stop()

    print(f"\nadd_to_checkout: bare Django view {baseline:.1f} msg/s, A2A (a2a-sdk) {a2a:.1f} msg/s, "
          f"ratio A2A/Django = {a2a / baseline:.2f}")
