"""Benchmark (issue 11): `get_order` over MCP (JSON-RPC `tools/call` through the official `mcp`
streamable-HTTP client) against the same order read by a bare Django JSON view (same selector and
presenter, tests/bcp_app/bench_urls.py) on the same server, at 1 and 8 concurrent clients, side by side in
one run. The server is uvicorn in its own process with production settings (tests/bench/live_proc.py) and
every client is a process of its own, so 8 clients are bound by neither the server's GIL nor one client
process. Prints req/s, MCP/bare, the 8-client/1-client ratio, the server's CPU per call (from /proc) and the
load average; asserts only correctness (every call answered with the right order id) and that the query
count does not grow with the order's size. Run with `make bench`.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.bcp_app import bcp_fixtures
from tests.bench.live_proc import Uvicorn, free_port, load, production_env, run_clients

# Shared fixtures (pytest finds them by name in this module).
bcp_settings = bcp_fixtures.bcp_settings
fake_platform = bcp_fixtures.fake_platform

pytestmark = [pytest.mark.postgres, pytest.mark.e2e]

CALLS = {1: 200, 8: 40}  # calls per client
WORKERS = 2  # uvicorn workers: one per core of the 2-core bench machine (the README's recommendation)


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


@pytest.mark.timeout(900)
def test_get_order_over_mcp_vs_bare_view(fake_platform: Any, bcp_settings: Any, transactional_db: None) -> None:
    from bcp_app.platforms import platform_create
    from bcp_app.transports.mcp_core import CallInfo
    from bcp_app.transports.mcp_tools import all_tools

    profile_url = fake_platform.publish()
    created = platform_create(name="Bench", profile_url=profile_url)
    small, large = place_order(created.platform.public_id, 1), place_order(created.platform.public_id, 20)
    arguments = {"meta": {"ucp-agent": {"profile": profile_url}}, "id": small}
    port = free_port()
    env = production_env(f"http://127.0.0.1:{port}", str(bcp_settings.BCP_SIGNING_KEY_FILE),
                         BCP_RATE_LIMIT_READ="")  # measure the transport, not the limiter
    server = Uvicorn(env, port, workers=WORKERS)
    try:
        server.wait_up()
        mcp_job = {"url": f"{server.base_url}/bcp/mcp", "headers": {"authorization": f"Bearer {created.api_key}"},
                   "tool": "get_order", "arguments": arguments}
        bare_job = {"url": f"{server.base_url}/_bench/bcp-orders/{small}"}
        run_clients("mcp", WORKERS, 2, mcp_job)  # every worker warm: imports, profile cache, validator
        run_clients("get", WORKERS, 2, bare_job)
        print(f"\nget_order: MCP tools/call (official client) vs bare Django JSON view; uvicorn {WORKERS} workers,"
              " production settings, one process per client")
        rates = {}
        for clients, calls in CALLS.items():
            before = load()
            cpu = server.cpu()
            bare = run_clients("get", clients, calls, bare_job)
            bare_cpu = (server.cpu() - cpu) / len(bare.ids) * 1e6
            cpu = server.cpu()
            mcp = run_clients("mcp", clients, calls, mcp_job)
            mcp_cpu = (server.cpu() - cpu) / len(mcp.ids) * 1e6
            assert mcp.ids == [small] * clients * calls and bare.ids == [small] * clients * calls
            rates[clients] = (bare.rate, mcp.rate)
            print(f"  {clients} client(s): bare {bare.rate:7.1f} req/s | MCP {mcp.rate:7.1f} req/s |"
                  f" MCP/bare {mcp.rate / bare.rate:.2f} | server CPU per call: MCP {mcp_cpu:5.0f} µs,"
                  f" bare {bare_cpu:5.0f} µs | MCP {mcp} | {before} → {load()}")
    finally:
        server.stop()
    print(f"  MCP throughput 8 clients / 1 client: {rates[8][1] / rates[1][1]:.2f}"
          f" (bare view: {rates[8][0] / rates[1][0]:.2f})")

    # the query count of the whole tool (auth, negotiation from cache, selector) is constant in order size
    get_order = next(tool for tool in all_tools() if tool.name == "get_order")
    counts = []
    for order_id in (small, small, large):  # the first call fills this process's caches (profile, platform)
        call = CallInfo(
            name="get_order",
            arguments={**arguments, "id": order_id},
            headers={"authorization": mcp_job["headers"]["authorization"]},
        )
        with CaptureQueriesContext(connection) as queries:
            outcome = get_order.run(call)
        assert outcome.structured["id"] == order_id
        counts.append(len(queries))
    print(f"  queries per get_order: 1 line {counts[1]}, 20 lines {counts[2]}")
    assert counts[1] == counts[2]
