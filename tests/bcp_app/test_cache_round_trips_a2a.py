"""Redis round trips of an A2A message (issue 11), on the real Redis, through the whole ASGI app.

Identity (`_resolve`) and the message's work (`_handle`) run in two worker-thread calls; they share one
request-cache scope (opened in `BcpRequestHandler.on_message_send`), so what identity prefetched (failed-key
count, platform, profile and the checkout's read-mostly entries, read in the
round trip of the write counter's count)
is what the work reads. Counted
at redis-py's connection, as in test_cache_round_trips.py.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from bcp_app.service.platforms import platform_create
from tests.bcp_app.bcp_fixtures import bcp_settings  # noqa: F401 (fixture)
from tests.bcp_app.rest_helpers import catalog
from tests.bcp_app.test_a2a_helpers import (
    SEED_HEADERS,
    LiveServer,
    data,
    live_fixture,  # noqa: F401 (fixture "live")
    send_message,
    server_fixture,  # noqa: F401 (fixture "server")
)
from tests.bcp_app.test_cache_round_trips import counted, counted_redis  # noqa: F401 (fixture)

pytestmark = [pytest.mark.postgres, pytest.mark.e2e, pytest.mark.usefixtures("bcp_settings")]


def test_an_a2a_add_to_checkout_reads_the_cache_once_beside_its_catalog_line(
    counted_redis: list[str],  # noqa: F811
    server: LiveServer,
) -> None:
    catalog()
    platform = platform_create(name="Agente", profile_url="")
    headers = {**SEED_HEADERS, "X-API-Key": platform.api_key}

    def add(context_id: str | None) -> dict[str, Any]:
        message = send_message([data({"action": "add_to_checkout", "variant_id": "SKU-CAFE-500G", "quantity": 1})])
        if context_id:
            message["params"]["message"]["contextId"] = context_id
        return httpx.post(server.a2a_url, content=json.dumps(message), headers=headers, timeout=30).json()

    context_id = add(None)["result"]["message"]["contextId"]
    add(context_id)  # every entry cached
    counted_redis.clear()
    reply = add(context_id)
    assert reply["result"]["message"]["contextId"] == context_id
    # identity (key failures per IP and per key prefix), the checkout's entries (version tokens, kernel/ops/kept.py)
    # and the write counter at once; the line's catalog entry from this process's own copy (shop/checkout/stock.py
    # `_kept`, issue 34)
    assert counted_redis == [counted(7)]
