"""Pix completion over A2A with a real Celery worker on Redis (nothing eager): the seed's complete request,
the sandbox PSP pays, the worker delivers the webhook and settles, and the next A2A reply carries the order.

Seed 004 "Checkout completion"; PIX.md §3/§5; BCP-A2A-06.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.bcp_app.live import pix_settlement_stack, wait_for
from tests.bcp_app.test_a2a_checkout import SEED_COMPLETE, SEED_CONTEXT, pix_ready_checkout
from tests.bcp_app.test_a2a_helpers import (
    LiveServer,
    checkout_of,
    data,
    live_fixture,  # noqa: F401 (fixture "live")
    make_product,
    rpc,
    send_message,
    server_fixture,  # noqa: F401 (fixture "server")
)

pytestmark = [pytest.mark.postgres, pytest.mark.e2e]


@pytest.fixture
def real_worker(server: LiveServer, settings: Any) -> Iterator[Path]:
    if not os.environ.get("CELERY_BROKER_URL", "").startswith("redis://"):
        pytest.skip("needs CELERY_BROKER_URL=redis://… for a real worker")
    with pix_settlement_stack(
        settings, secret=settings.PIX_SANDBOX_WEBHOOK_SECRET, server=server, webhook_path="/payments/pix/webhook/pix"
    ) as (_server, worker):
        yield worker.log


def test_worker_settles_and_the_next_reply_carries_the_order_bcp_a2a_06(server: LiveServer, real_worker: Path):
    from payments.sandbox.services import PayOptions, pay

    make_product("Pixel 10 Pro", "PIXEL-10-PRO", 599900)
    _context, ready = pix_ready_checkout(server)

    completing = checkout_of(rpc(server.a2a_url, SEED_COMPLETE))
    pay(txid=ready["payment"]["instruments"][0]["pix"]["txid"], options=PayOptions())

    def completed() -> bool:
        body = rpc(server.a2a_url, send_message([data({"action": "get_checkout"})], context_id=SEED_CONTEXT))
        return checkout_of(body)["status"] == "completed"

    assert completing["status"] == "complete_in_progress"
    wait_for(completed, timeout=90, interval=0.5, log=real_worker)
    final = checkout_of(rpc(server.a2a_url, send_message([{"text": "show my cart"}], context_id=SEED_CONTEXT)))
    assert list(final["order"]) == ["id", "permalink_url"]
    assert final["order"]["permalink_url"].startswith(f"{server.base_url}/orders/")
