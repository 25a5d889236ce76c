"""Benchmark (issue 11): structured `add_to_checkout` over A2A (`SendMessage` through the official a2a-sdk
client) against the same operation behind a bare Django JSON view (tests/bcp_app/bench_urls.py), measured
side by side in one run (`make bench`).

Both paths resolve the caller (BCP §3, cached profile) and call `bcp_app.operations.update_checkout` with
one more unit of the same item; A2A adds the SDK, messageId idempotency and the A2A context. At 1 and 8
concurrent clients (one conversation each), so a transport that serialises its requests shows as an 8/1
ratio near 1 or below. The server is uvicorn in its own process with production settings and every client
is a process of its own (tests/bench/live_proc.py). Prints msg/s, the ratios, the server's CPU per message
(from /proc) and the load average; asserts only correctness (every message answered about its own
checkout), never time.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.bcp_app.bcp_fixtures import bcp_settings  # noqa: F401
from tests.bcp_app.test_a2a_helpers import (
    EXTENSION,
    SEED_HEADERS,
    SEED_PROFILE,
    cache_profile,
    checkout_of,
    data,
    make_product,
    platform_profile,
    send_message,
)
from tests.bench.live_proc import Uvicorn, free_port, load, production_env, run_clients

pytestmark = [pytest.mark.postgres]

CALLS = {1: 80, 8: 20}  # messages per client
WORKERS = 2  # uvicorn workers: one per core of the 2-core bench machine
ADD = {"action": "add_to_checkout", "product_id": "PIXEL-10-PRO", "quantity": 1}
UNLIMITED = {name: "" for name in ("BCP_RATE_LIMIT_READ", "BCP_RATE_LIMIT_ANONYMOUS_READ", "BCP_RATE_LIMIT_WRITE",
                                   "BCP_RATE_LIMIT_ANONYMOUS_WRITE", "BCP_RATE_LIMIT_CHECKOUT_CREATE",
                                   "BCP_RATE_LIMIT_ANONYMOUS_CHECKOUT_CREATE")}  # the transport, not the limiter


@pytest.mark.timeout(900)
@pytest.mark.django_db(transaction=True)
def test_a2a_add_to_checkout_throughput(bcp_settings: Any) -> None:  # noqa: F811
    cache_profile(SEED_PROFILE, platform_profile())
    make_product("Pixel 10 Pro", "PIXEL-10-PRO", 599900, stock=100_000)
    port = free_port()
    server = Uvicorn(production_env(f"http://127.0.0.1:{port}", str(bcp_settings.BCP_SIGNING_KEY_FILE), **UNLIMITED),
                     port, workers=WORKERS)
    try:
        server.wait_up()
        a2a_url = f"{server.base_url}/bcp/a2a"
        # one conversation (and checkout) per client: concurrent clients do not queue on one checkout's lock
        conversations: list[tuple[str, str]] = []
        for _ in range(max(CALLS)):
            first = httpx.post(a2a_url, json=send_message([data({"action": "add_to_checkout",
                                                                  "product_id": "PIXEL-10-PRO"})]),
                               headers=SEED_HEADERS, timeout=60).json()
            assert "result" in first, first
            conversations.append((first["result"]["message"]["contextId"], checkout_of(first)["id"]))
        a2a_job = {"base_url": server.base_url, "data": ADD, "extensions": [EXTENSION],
                   "headers": {"BCP-Agent": SEED_HEADERS["BCP-Agent"], "A2A-Extensions": EXTENSION},
                   "contexts": [context for context, _ in conversations]}
        bare_job = {"url": f"{server.base_url}/_bench/a2a-add", "headers": SEED_HEADERS,
                    "bodies": [{**ADD, "checkout_id": checkout} for _, checkout in conversations]}
        run_clients("a2a", WORKERS, 2, a2a_job)  # every worker warm
        run_clients("post", WORKERS, 2, bare_job)
        print(f"\nadd_to_checkout: A2A (a2a-sdk client, SendMessage) vs a bare Django view doing the same operation;"
              f" uvicorn {WORKERS} workers, production settings, one process per client")
        rates = {}
        for clients, calls in CALLS.items():
            expected = [checkout for _, checkout in conversations[:clients] for _ in range(calls)]
            before = load()
            cpu = server.cpu()
            bare = run_clients("post", clients, calls, bare_job)
            bare_cpu = (server.cpu() - cpu) / len(bare.ids) * 1000
            cpu = server.cpu()
            a2a = run_clients("a2a", clients, calls, a2a_job)
            a2a_cpu = (server.cpu() - cpu) / len(a2a.ids) * 1000
            assert a2a.ids == expected and bare.ids == expected  # every message answered, about its own checkout
            rates[clients] = (bare.rate, a2a.rate)
            print(f"  {clients} client(s): bare {bare.rate:6.1f} msg/s | A2A {a2a.rate:6.1f} msg/s |"
                  f" ratio A2A/bare {a2a.rate / bare.rate:.2f} | server CPU per message: A2A {a2a_cpu:4.1f} ms,"
                  f" bare {bare_cpu:4.1f} ms | A2A {a2a} | {before} → {load()}")
    finally:
        server.stop()
    print(f"  A2A throughput 8 clients / 1 client: {rates[8][1] / rates[1][1]:.2f}"
          f" (bare view: {rates[8][0] / rates[1][0]:.2f})")
