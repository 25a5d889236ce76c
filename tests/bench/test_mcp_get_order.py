"""Benchmark (issue 11): `get_order` over MCP (JSON-RPC `tools/call` through the official `mcp`
streamable-HTTP client) against the same order read by a bare Django JSON view (tests/bcp_app/bench_urls.py:
`order_for_bcp` and the presenter on every call, through the site's middleware, whereas `get_order` now
reads one row and reuses the order's stored body, so MCP can beat it; both query counts are printed) on the
same server, at 1 and 8 concurrent clients, side by side in one run. The server is uvicorn in its own
process with production settings (tests/bench/live_proc.py) and every client is a process of its own, so 8
clients are bound by neither the server's GIL nor one client process.

The four cases (bare and MCP × 1 and 8 clients) run in ROUNDS interleaved rounds after a discarded pilot
each (tests/bench/rounds.py), every window sized to last about WINDOW_S seconds, so the issue's ratio,
8-client/1-client throughput, is taken inside each round as MCP/bare is; the medians of the per-round ratios
are printed with their min–max. Also prints the server-side CPU per call (uvicorn + Postgres, from /proc),
how busy the machine was and how much of it other processes took; asserts only correctness (every call
answered with the right order id) and that the query count does not grow with the order's size. Run with
`make bench`.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.db import connection
from django.test import RequestFactory
from django.test.utils import CaptureQueriesContext

from tests.bcp_app import bcp_fixtures
from tests.bench.live_proc import Uvicorn, cache_in_use, free_port, production_env, windows_against_bare
from tests.bench.live_proc import print_against_bare as summary

# Shared fixtures (pytest finds them by name in this module).
bcp_settings = bcp_fixtures.bcp_settings
fake_platform = bcp_fixtures.fake_platform

pytestmark = [pytest.mark.postgres, pytest.mark.e2e]

CLIENTS = (1, 8)
PILOT = {1: 40, 8: 10}  # calls per client of a case's discarded pilot window
ROUNDS = 5
WINDOW_S = 1.5  # what a measured window should last
WORKERS = 2  # uvicorn workers: one per core of the 2-core bench machine (the README's recommendation)


def place_order(platform_id: str, lines: int) -> str:
    """An order as a completed checkout places it, with the store policies in force kept with it (so Get Order
    reads its stored body, as for every order placed since the snapshot exists)."""
    from orders.services import order_place_from_checkout
    from orders.types import PlacedCheckout, PlacedLine
    from shop.checkout.complete import policies_in_force

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
            policies=policies_in_force("pt-br"),
        )
    )
    return order.public_id


@pytest.mark.timeout(900)
def test_get_order_over_mcp_vs_bare_view(fake_platform: Any, bcp_settings: Any, transactional_db: None) -> None:
    from bcp_app.service.platforms import platform_create
    from bcp_app.transports.mcp.tools import CallInfo, all_tools

    profile_url = fake_platform.publish()
    created = platform_create(name="Bench", profile_url=profile_url)
    small, large = place_order(created.platform.public_id, 1), place_order(created.platform.public_id, 20)
    arguments = {"meta": {"ucp-agent": {"profile": profile_url}}, "id": small}
    port = free_port()
    env = production_env(
        f"http://127.0.0.1:{port}", str(bcp_settings.BCP_SIGNING_KEY_FILE), BCP_RATE_LIMIT_READ=""
    )  # measure the transport, not the limiter
    server = Uvicorn(env, port, workers=WORKERS)
    try:
        server.wait_up()
        mcp_job = {
            "url": f"{server.base_url}/bcp/mcp",
            "headers": {"authorization": f"Bearer {created.api_key}"},
            "tool": "get_order",
            "arguments": arguments,
        }
        bare_job = {"url": f"{server.base_url}/_bench/bcp-orders/{small}"}
        windows, before = windows_against_bare(
            server,
            "MCP",
            ("mcp", mcp_job),
            ("get", bare_job),
            clients=CLIENTS,
            pilot=PILOT,
            rounds=ROUNDS,
            window_s=WINDOW_S,
            workers=WORKERS,
            expected_ids=lambda count, calls: [small] * count * calls,  # every call answered, with this order
        )
    finally:
        server.stop()
    print(
        f"\nget_order: MCP tools/call (official client) vs bare Django JSON view; uvicorn {WORKERS} workers,"
        f" production settings, one process per client; {ROUNDS} rounds interleaving bare/MCP × 1/8 clients,"
        f" each window ≈ {WINDOW_S} s; medians (per-round min–max); {cache_in_use(env)}"
    )
    summary(windows, "MCP", CLIENTS, unit="req/s", per="call", cpu_in_us=True, cpu_digits=1, load_before=before)

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
    # the baseline's own count, so the reader sees how much of MCP/bare is the two paths' SQL
    from tests.bcp_app.bench_urls import bare_bcp_order

    with CaptureQueriesContext(connection) as queries:
        assert json.loads(bare_bcp_order(RequestFactory().get("/"), small).content)["id"] == small
    print(f"  queries per get_order: 1 line {counts[1]}, 20 lines {counts[2]} | bare view (1 line) {len(queries)}")
    assert counts[1] == counts[2]
