"""Benchmark (issue 34): CPU per Get Order of the MCP and A2A read fast paths against the same application
without them (every call through the SDK), in one process: the ASGI app driven in process by httpx's
ASGITransport (no sockets, no uvicorn), blocks of calls alternating fast / SDK-only so both see the same
machine, CPU time of this process (all its threads) per call. Load from other processes moves it less than the
live benches' rates. Printed, never asserted, except that every call answered its order.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import httpx
import pytest

from tests.bcp_app.test_a2a_direct_read import caller  # noqa: F401 (fixture)
from tests.bcp_app.test_mcp_fast_path import _body, agent, profile_host  # noqa: F401 (fixtures)
from tests.bench.rounds import median
from tests.bench.test_get_order_read import NO_LIMIT

pytestmark = [pytest.mark.postgres, pytest.mark.e2e, pytest.mark.django_db(transaction=True)]
CALLS = 60  # calls per block
BLOCKS = 4  # blocks per variant, alternating (an even count)


async def _blocks(variants: dict[str, Callable[[], Awaitable[None]]]) -> dict[str, list[float]]:
    cpu: dict[str, list[float]] = {name: [] for name in variants}
    for call in variants.values():  # warm: imports, caches, the shaped result
        for _ in range(10):
            await call()
    for index in range(BLOCKS):
        for name in list(variants) if index % 2 == 0 else list(variants)[::-1]:
            started = time.process_time()
            for _ in range(CALLS):
                await variants[name]()
            cpu[name].append((time.process_time() - started) / CALLS)
    return cpu


async def _run_apps(
    apps: dict[str, Any], path: str, call: Callable[[httpx.AsyncClient], Callable[[], Awaitable[None]]]
) -> dict[str, list[float]]:
    """Start each application behind the shop's ASGI router, time `call` on each through `_blocks`, shut them."""
    from config.asgi import OneHopHandler, PathRouter

    clients = {}
    for name, app in apps.items():
        await app.startup()
        transport = httpx.ASGITransport(PathRouter(OneHopHandler(), {path: app}))
        clients[name] = httpx.AsyncClient(transport=transport, base_url="http://testserver")
    try:
        return await _blocks({name: call(client) for name, client in clients.items()})
    finally:
        for name, app in apps.items():
            await clients[name].aclose()
            await app.shutdown()


def _production(settings: Any) -> None:
    settings.BCP_CHECK_OUTPUT = False  # as in production
    settings.BCP_RATE_LIMITS = {name: (NO_LIMIT, NO_LIMIT) for name in settings.BCP_RATE_LIMITS}


def _print(title: str, cpu: dict[str, list[float]]) -> None:
    fast, sdk = median(cpu["fast"]), median(cpu["sdk"])
    print(
        f"\n{title}: fast {fast * 1e6:5.0f} µs | SDK {sdk * 1e6:5.0f} µs | fast/SDK ×{fast / sdk:.2f}"
        f" ({CALLS} calls a block, {BLOCKS} blocks each, CPU of this process)"
    )


def test_mcp_get_order_cpu(agent: Any, settings: Any) -> None:  # noqa: F811
    from bcp_app.transports.mcp.server import FAST_TOOLS, McpAsgiApp
    from tests.bcp_app.test_mcp_get_order import place_seed_order

    _production(settings)
    settings.BCP_MCP_ALLOWED_HOSTS = ["testserver"]
    order = place_seed_order(agent.platform_id)
    body = json.dumps(_body({"meta": agent.meta(), "id": order.public_id})).encode()
    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": "get_order",
        **agent.headers,
    }

    async def go() -> dict[str, list[float]]:
        apps = {"fast": McpAsgiApp(fast_tools=FAST_TOOLS), "sdk": McpAsgiApp()}

        def call(client: httpx.AsyncClient) -> Callable[[], Awaitable[None]]:
            async def one() -> None:
                response = await client.post("/bcp/mcp", content=body, headers=headers)
                assert "result" in response.json(), response.text[:400]
                assert response.json()["result"]["structuredContent"]["id"] == order.public_id

            return one

        return await _run_apps(apps, "/bcp/mcp", call)

    _print("MCP get_order in process", anyio.run(go))


def test_a2a_get_order_cpu(caller: tuple[str, dict[str, str]], settings: Any) -> None:  # noqa: F811
    from bcp_app.transports.a2a.server import DIRECT_ACTIONS, A2AApplication
    from tests.bcp_app.test_mcp_get_order import place_seed_order

    _production(settings)
    settings.BCP_OUTBOUND_ALLOWLIST = ["127.0.0.1"]
    platform_id, headers = caller
    order = place_seed_order(platform_id)
    context = str(uuid.uuid4())

    async def go() -> dict[str, list[float]]:
        apps = {"fast": A2AApplication(direct_actions=DIRECT_ACTIONS), "sdk": A2AApplication(frozenset())}

        def call(client: httpx.AsyncClient) -> Callable[[], Awaitable[None]]:
            async def one() -> None:
                message = {
                    "role": "ROLE_USER",
                    "messageId": str(uuid.uuid4()),
                    "contextId": context,
                    "parts": [{"data": {"action": "get_order", "order_id": order.public_id}}],
                }
                sent = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}
                response = await client.post("/bcp/a2a", content=json.dumps(sent).encode(), headers=headers)
                part = response.json()["result"]["message"]["parts"][0]
                assert part["data"]["a2a.bcp.order"]["id"] == order.public_id, response.text

            return one

        return await _run_apps(apps, "/bcp/a2a", call)

    _print("A2A get_order in process", anyio.run(go))
