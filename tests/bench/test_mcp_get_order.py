"""Benchmark: `get_order` over MCP (live uvicorn, JSON-RPC `tools/call`) against the same order read by a
bare Django JSON view on the same server, at 1 and 8 concurrent clients, measured side by side in one
run. Prints requests per second and the MCP/bare ratio; asserts only the query count, which must not
grow with the order's size. Run with `make bench`.
"""

from __future__ import annotations

import json
import time
from typing import Any

import anyio
import httpx
import pytest
from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.test.utils import CaptureQueriesContext
from django.urls import include, path

from tests.bcp_app import bcp_fixtures, test_mcp_helpers
from tests.bcp_app.test_mcp_helpers import tools_call

# Shared fixtures (pytest finds them by name in this module).
bcp_settings = bcp_fixtures.bcp_settings
fake_platform = bcp_fixtures.fake_platform
live_mcp = test_mcp_helpers.live_mcp

pytestmark = [pytest.mark.postgres, pytest.mark.e2e]


def bare_order(request: HttpRequest, order_id: str) -> JsonResponse:
    """The baseline: the same selector and presenter, no protocol (no negotiation, auth or JSON-RPC)."""
    from bcp_app import presenters
    from orders.selectors import order_for_bcp

    order = order_for_bcp(order_id)
    return JsonResponse(presenters.order(order, None), json_dumps_params={"ensure_ascii": False})


urlpatterns = [path("bench/orders/<str:order_id>", bare_order), path("", include("shop.urls"))]


def place_order(platform_id: str, lines: int) -> str:
    from orders.services import order_place_from_checkout
    from orders.types import PlacedCheckout, PlacedLine

    placed = [
        PlacedLine(line_id=f"li_{lines}_{i}", sku=f"SKU-{i}", title=f"Item {i}", unit_price=1000, quantity=1)
        for i in range(lines)
    ]
    amount = 1000 * lines
    order = order_place_from_checkout(
        checkout=PlacedCheckout(
            checkout_id=f"checkout_bench{lines}",
            currency="BRL",
            buyer_first_name="Ana",
            buyer_last_name="Souza",
            buyer_email="ana@example.com.br",
            buyer_phone="",
            buyer_tax_id="",
            lines=placed,
            totals=[("subtotal", amount, ""), ("total", amount, "")],
            fulfillment_method="shipping",
            fulfillment_title="PAC",
            fulfillment_description="Chega em 3 a 5 dias úteis",
            destination={
                "street": "Rua das Flores",
                "number": "123",
                "city": "São Paulo",
                "state": "SP",
                "postal_code": "01310-100",
                "country": "BR",
            },
            platform_id=platform_id,
            language="pt-br",
            payment_handler_id="pix_recebedor_001",
            payment_type="pix",
            payment_reference=f"checkout_bench{lines}",
            payment_txid="",
            paid_amount=amount,
        )
    )
    return order.public_id


async def _measure(send: Any, clients: int, total: int) -> float:
    """Requests per second for `total` requests spread over `clients` concurrent workers."""
    remaining = total

    async def worker(client: httpx.AsyncClient) -> None:
        nonlocal remaining
        while remaining > 0:
            remaining -= 1
            response = await send(client)
            assert response.status_code == 200, response.text[:300]

    async with httpx.AsyncClient(timeout=60) as client:
        await send(client)  # warm-up (profile cache, connection pool)
        started = time.perf_counter()
        async with anyio.create_task_group() as group:
            for _ in range(clients):
                group.start_soon(worker, client)
        return total / (time.perf_counter() - started)


def test_get_order_over_mcp_vs_bare_view(live_mcp, fake_platform, bcp_settings, transactional_db) -> None:
    from bcp_app.platforms import platform_create
    from bcp_app.transports.mcp_core import CallInfo
    from bcp_app.transports.mcp_tools import all_tools

    bcp_settings.ROOT_URLCONF = __name__
    bcp_settings.BCP_RATE_LIMITS = {"read": ("", "")}  # measure the transport, not the limiter
    profile_url = fake_platform.publish()
    created = platform_create(name="Bench", profile_url=profile_url)
    small, large = place_order(created.platform.public_id, 1), place_order(created.platform.public_id, 20)
    headers = {
        "authorization": f"Bearer {created.api_key}",
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2025-11-25",
    }
    arguments = {"meta": {"ucp-agent": {"profile": profile_url}}, "id": small}
    mcp_body = json.dumps(tools_call("get_order", arguments)).encode()

    async def via_mcp(client: httpx.AsyncClient) -> httpx.Response:
        return await client.post(live_mcp.mcp_url, content=mcp_body, headers=headers)

    async def via_bare(client: httpx.AsyncClient) -> httpx.Response:
        return await client.get(f"{live_mcp.base_url}/bench/orders/{small}")

    print("\nget_order: MCP tools/call vs bare Django JSON view (same server, same run)")
    rates = {}
    for clients, total in ((1, 100), (8, 240)):
        bare = anyio.run(_measure, via_bare, clients, total)
        mcp = anyio.run(_measure, via_mcp, clients, total)
        rates[clients] = (bare, mcp)
        print(f"  {clients} client(s): bare {bare:7.1f} req/s | MCP {mcp:7.1f} req/s | MCP/bare {mcp / bare:.2f}")
    print(f"  MCP throughput 8 clients / 1 client: {rates[8][1] / rates[1][1]:.2f}"
          f" (bare view: {rates[8][0] / rates[1][0]:.2f})")

    # the query count of the whole tool (auth, negotiation from cache, selector) is constant in order size
    get_order = next(tool for tool in all_tools() if tool.name == "get_order")
    counts = []
    for order_id in (small, large):
        call = CallInfo(
            name="get_order",
            arguments={**arguments, "id": order_id},
            headers={"authorization": headers["authorization"]},
        )
        with CaptureQueriesContext(connection) as queries:
            outcome = get_order.run(call)
        assert outcome.structured["id"] == order_id
        counts.append(len(queries))
    print(f"  queries per get_order: 1 line {counts[0]}, 20 lines {counts[1]}")
    assert counts[0] == counts[1]
