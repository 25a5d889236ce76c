"""Benchmark: the BCP REST flow create → update → complete (Pix) in flows per second, at 1 and 8 concurrent
clients, side by side with a bare Django JSON view doing one INSERT, measured in the same run against the
same uvicorn (4 worker processes). Prints ratios; asserts only correctness, never time. `make bench`.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
from django.db import connection

from tests.bcp_app.bcp_fixtures import FakePlatform, bcp_settings, fake_platform  # noqa: F401
from tests.bcp_app.bench_site import BASELINE_TABLE
from tests.bcp_app.live import database_url, wait_for
from tests.bcp_app.rest_helpers import PIX, SP
from tests.shop.checkout_factories import make_shipping, make_variant

ROOT = Path(__file__).resolve().parents[2]
FLOWS = {1: 15, 8: 6}  # flows per client
BASELINE = {1: 150, 8: 60}  # requests per client


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _flow(client: httpx.Client) -> str:
    created = client.post("/bcp/v1/checkout-sessions",
                          json={"line_items": [{"item": {"id": "SKU-BENCH"}, "quantity": 1}]}).json()
    line = created["line_items"][0]
    update = {"line_items": [{"id": line["id"], "item": {"id": "SKU-BENCH"}, "quantity": 1}],
              "buyer": {"first_name": "Ana", "last_name": "Souza", "email": "ana@example.com.br"},
              "fulfillment": {"methods": [{"type": "shipping", "destinations": [SP],
                                           "groups": [{"selected_option_id": "pac"}]}]},
              "payment": {"instruments": [PIX]}}
    ready = client.put(f"/bcp/v1/checkout-sessions/{created['id']}", json=update).json()
    assert ready["status"] == "ready_for_complete", ready.get("messages")
    done = client.post(f"/bcp/v1/checkout-sessions/{created['id']}/complete", json={"payment": {"instruments": [PIX]}},
                       headers={"Idempotency-Key": str(uuid.uuid4())}).json()
    return str(done["status"])


def _rate(clients: int, per_client: int, work: Any, base_url: str, headers: dict[str, str]) -> float:
    def run(_: int) -> list[str]:
        with httpx.Client(base_url=base_url, headers=headers, timeout=60) as client:
            return [work(client) for _ in range(per_client)]

    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=clients) as pool:
        results = [r for batch in pool.map(run, range(clients)) for r in batch]
    elapsed = time.perf_counter() - started
    assert len(results) == clients * per_client
    return len(results) / elapsed


def _insert(client: httpx.Client) -> str:
    response = client.post("/_bench/insert", json={"line_items": [{"item": {"id": "SKU-BENCH"}, "quantity": 1}]})
    assert response.status_code == 201
    return "ok"


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_rest_flow_rate_vs_bare_insert(bcp_settings: Any, fake_platform: FakePlatform) -> None:  # noqa: F811
    make_variant("SKU-BENCH", price=4290, stock=1_000_000, title="Café de benchmark")
    make_shipping()
    with connection.cursor() as cursor:
        cursor.execute(f"CREATE TABLE IF NOT EXISTS {BASELINE_TABLE} (id bigserial primary key, payload jsonb)")
    port = _free_port()
    base_url = f"http://127.0.0.1:{port}"
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "tests.bcp_app.bench_site", "DATABASE_URL": database_url(),
           "DJANGO_DEBUG": "true", "DJANGO_LOG_LEVEL": "WARNING", "BCP_PUBLIC_URL": base_url,
           "BCP_OUTBOUND_ALLOWLIST": "127.0.0.1", "BCP_SIGNING_KEY_FILE": str(bcp_settings.BCP_SIGNING_KEY_FILE),
           "BCP_PIX_SANDBOX": "true", "CELERY_BROKER_URL": "", "CELERY_TASK_ALWAYS_EAGER": "true",
           "DATABASE_POOL_MAX": "4"}
    server = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "shop.asgi:application", "--host", "127.0.0.1", "--port", str(port),
         "--workers", "4", "--log-level", "warning", "--no-access-log"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        wait_for(lambda: _up(base_url), timeout=300, interval=1)  # 4 processes import the whole stack
        headers = {"BCP-Agent": f'profile="{fake_platform.publish()}"'}
        _flow(httpx.Client(base_url=base_url, headers=headers, timeout=60))  # warm-up: profile cache, imports
        print("\nBCP REST flow (create → update → complete) vs bare one-INSERT Django JSON view, same server")
        print("(every flow buys the same SKU, so completes serialize on its stock row lock):")
        for clients in (1, 8):
            baseline = _rate(clients, BASELINE[clients], _insert, base_url, {})
            flows = _rate(clients, FLOWS[clients], _flow, base_url, headers)
            print(f"  {clients} client(s): {flows:7.1f} flows/s | baseline {baseline:7.1f} inserts/s | "
                  f"ratio {flows / baseline:.3f} (1 flow = 3 requests)")
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(timeout=10)
        with connection.cursor() as cursor:
            cursor.execute(f"DROP TABLE IF EXISTS {BASELINE_TABLE}")


def _up(base_url: str) -> bool:
    try:
        return httpx.get(f"{base_url}/.well-known/bcp", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False

