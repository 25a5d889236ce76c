"""Pix completion over A2A with a real Celery worker on Redis (nothing eager): the seed's complete request,
the sandbox PSP pays, the worker delivers the webhook and settles, and the next A2A reply carries the order.

Seed 004 "Checkout completion"; PIX.md §3/§5; BCP-A2A-06.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.db import connection

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
ROOT = Path(__file__).resolve().parents[2]


def wait_for(condition: Callable[[], bool], *, timeout: float = 90.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.5)
    return False


@pytest.fixture
def real_worker(server: LiveServer, settings: Any, tmp_path: Path) -> Iterator[Path]:
    from shop.celery import app as celery_app

    broker = os.environ.get("CELERY_BROKER_URL", "")
    if not broker.startswith("redis://"):
        pytest.skip("needs CELERY_BROKER_URL=redis://… for a real worker")
    db = connection.settings_dict
    credentials = db["USER"] + (f":{db['PASSWORD']}" if db["PASSWORD"] else "")
    webhook_url = f"{server.base_url}/payments/pix/webhook/pix"
    env = {
        **os.environ,
        "DATABASE_URL": f"postgres://{credentials}@{db['HOST']}:{db['PORT'] or 5432}/{db['NAME']}",
        "CELERY_BROKER_URL": broker,
        "CELERY_TASK_ALWAYS_EAGER": "false",
        "DJANGO_DEBUG": "true",
        "BCP_PIX_SANDBOX": "true",
        "PIX_SANDBOX_WEBHOOK_SECRET": settings.PIX_SANDBOX_WEBHOOK_SECRET,
        "PIX_SANDBOX_WEBHOOK_URL": webhook_url,
        "BCP_PUBLIC_URL": server.base_url,
    }
    settings.CELERY_TASK_ALWAYS_EAGER = False  # the live server's threads enqueue to the broker too
    settings.PIX_SANDBOX_WEBHOOK_URL = webhook_url
    saved = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = False
    celery_app.control.purge()
    log = tmp_path / "worker.log"
    with log.open("wb") as out:
        worker = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "shop", "worker", "--pool=solo", "--without-heartbeat",
             "--without-gossip", "--without-mingle", "--loglevel=INFO"],
            cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
        )
    try:
        yield log
    finally:
        worker.terminate()
        try:
            worker.wait(timeout=15)
        except subprocess.TimeoutExpired:
            worker.kill()
            worker.wait()
        celery_app.control.purge()
        celery_app.conf.task_always_eager = saved


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
    assert wait_for(completed), real_worker.read_text()[-3000:]
    final = checkout_of(rpc(server.a2a_url, send_message([{"text": "show my cart"}], context_id=SEED_CONTEXT)))
    assert list(final["order"]) == ["id", "permalink_url"]
    assert final["order"]["permalink_url"].startswith(f"{server.base_url}/orders/")
