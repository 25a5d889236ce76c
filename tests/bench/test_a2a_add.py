"""Benchmark (issue 11): structured `add_to_checkout` over A2A (`SendMessage` through the official a2a-sdk
client) against the same operation behind a bare Django JSON view (tests/bcp_app/bench_urls.py), measured
side by side in one run (`make bench`).

Both paths resolve the caller (BCP §3, cached profile) and call `bcp_app.service.operations.update_checkout` with
one more unit of the same item; A2A adds the SDK, messageId idempotency and the A2A context. At 1 and 8
concurrent clients (one conversation each), so a transport that serialises its requests shows as an 8/1
ratio near 1 or below. The server is uvicorn in its own process with production settings and every client
is a process of its own (tests/bench/live_proc.py).

The four cases (bare and A2A × 1 and 8 clients) run in ROUNDS interleaved rounds after a discarded pilot
each (tests/bench/rounds.py), every window sized to last about WINDOW_S seconds, so A2A/bare and the 8/1
ratios are taken inside each round; the medians of the per-round ratios are printed with their min–max.
Also prints the server-side CPU per message (uvicorn + Postgres, from /proc), how busy the machine was and
how much of it other processes took; asserts only correctness (every message answered about its own
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
from tests.bench.live_proc import Uvicorn, cache_in_use, free_port, production_env, windows_against_bare
from tests.bench.live_proc import print_against_bare as summary

pytestmark = [pytest.mark.postgres]

CLIENTS = (1, 8)
PILOT = {1: 20, 8: 5}  # messages per client of a case's discarded pilot window
ROUNDS = 5
WINDOW_S = 1.5  # what a measured window should last
WORKERS = 2  # uvicorn workers: one per core of the 2-core bench machine
ADD = {"action": "add_to_checkout", "product_id": "PIXEL-10-PRO", "quantity": 1}
UNLIMITED = {
    name: ""
    for name in (
        "BCP_RATE_LIMIT_READ",
        "BCP_RATE_LIMIT_ANONYMOUS_READ",
        "BCP_RATE_LIMIT_WRITE",
        "BCP_RATE_LIMIT_ANONYMOUS_WRITE",
        "BCP_RATE_LIMIT_CHECKOUT_CREATE",
        "BCP_RATE_LIMIT_ANONYMOUS_CHECKOUT_CREATE",
    )
}  # the transport, not the limiter


@pytest.mark.timeout(900)
@pytest.mark.django_db(transaction=True)
def test_a2a_add_to_checkout_throughput(bcp_settings: Any) -> None:  # noqa: F811
    cache_profile(SEED_PROFILE, platform_profile())
    make_product("Pixel 10 Pro", "PIXEL-10-PRO", 599900, stock=100_000)
    port = free_port()
    env = production_env(f"http://127.0.0.1:{port}", str(bcp_settings.BCP_SIGNING_KEY_FILE), **UNLIMITED)
    server = Uvicorn(env, port, workers=WORKERS)
    try:
        server.wait_up()
        a2a_url = f"{server.base_url}/bcp/a2a"
        # one conversation (and checkout) per client: concurrent clients do not queue on one checkout's lock
        conversations: list[tuple[str, str]] = []
        for _ in range(max(CLIENTS)):
            first = httpx.post(
                a2a_url,
                json=send_message([data({"action": "add_to_checkout", "product_id": "PIXEL-10-PRO"})]),
                headers=SEED_HEADERS,
                timeout=60,
            ).json()
            assert "result" in first, first
            conversations.append((first["result"]["message"]["contextId"], checkout_of(first)["id"]))
        a2a_job = {
            "base_url": server.base_url,
            "data": ADD,
            "extensions": [EXTENSION],
            "headers": {"BCP-Agent": SEED_HEADERS["BCP-Agent"], "A2A-Extensions": EXTENSION},
            "contexts": [context for context, _ in conversations],
        }
        bare_job = {
            "url": f"{server.base_url}/_bench/a2a-add",
            "headers": SEED_HEADERS,
            "bodies": [{**ADD, "checkout_id": checkout} for _, checkout in conversations],
        }
        # every message answered, about its own client's checkout
        windows, before = windows_against_bare(
            server,
            "A2A",
            ("a2a", a2a_job),
            ("post", bare_job),
            clients=CLIENTS,
            pilot=PILOT,
            rounds=ROUNDS,
            window_s=WINDOW_S,
            workers=WORKERS,
            expected_ids=lambda count, calls: [checkout for _, checkout in conversations[:count] for _ in range(calls)],
        )
    finally:
        server.stop()
    print(
        f"\nadd_to_checkout: A2A (a2a-sdk client, SendMessage) vs a bare Django view doing the same operation;"
        f" uvicorn {WORKERS} workers, production settings, one process per client; {ROUNDS} rounds interleaving"
        f" bare/A2A × 1/8 clients, each window ≈ {WINDOW_S} s; medians (per-round min–max); {cache_in_use(env)}"
    )
    summary(windows, "A2A", CLIENTS, unit="msg/s", per="message", cpu_in_us=False, cpu_digits=2, load_before=before)
