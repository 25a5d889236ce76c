"""Benchmark (issue 11): the BCP REST flow create → update → complete (card sandbox) in flows per second at
1 and 8 clients, with distinct SKUs and with one shared SKU, side by side with a bare Django view doing the
minimal SQL of the same flow (tests/bcp_app/bench_urls.py) under the same uvicorn (4 workers); GET order
against a bare SELECT. Run as in production: nothing is eager, the placed order's task goes through Redis
(CELERY_BROKER_URL, a redis:// URL, else skipped) to a real Celery worker process, whose CPU per flow is
printed apart from uvicorn's (read once the worker has drained the flows' outbox rows). Prints ratios (shop/bare,
same SKU/distinct SKUs), SQL statements per request, the server's CPU per flow and the CPU of the Postgres
backends serving it per flow (read from /proc for the backends of this database: pg_stat_statements is not
preloaded on this machine); asserts only correctness (0 failed flows, every order's task run), never time.
`make bench`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from bcp_app.platforms import platform_create
from orders.models import OutboxMessage
from shop.celery import app as celery_app
from tests.bcp_app.bcp_fixtures import FakePlatform, bcp_settings, fake_platform  # noqa: F401
from tests.bcp_app.bench_site import BARE_TABLES, BARE_TABLES_SQL
from tests.bcp_app.live import CeleryWorker, wait_for
from tests.bcp_app.rest_helpers import SP
from tests.bench.live_proc import cpu_seconds, free_port, production_env
from tests.shop.checkout_factories import make_shipping, make_variant

ROOT = Path(__file__).resolve().parents[2]
FLOWS = {1: 12, 8: 5}  # flows per client
ORDER_READS = {1: 100, 8: 40}  # GET order requests per client
CLIENTS = (1, 8)
CARD = {"id": "instr_card", "handler_id": "gpay", "type": "card", "selected": True,
        "credential": {"type": "PAYMENT_GATEWAY", "token": "success_token"}}
BUYER = {"first_name": "Ana", "last_name": "Souza", "email": "ana@example.com.br"}


def _shop_requests(client: Any, sku: str, counts: list[int] | None = None) -> list[Any]:
    """The three requests of one flow (httpx, or Django's test client counting each request's statements)."""

    def send(method: str, path: str, body: dict[str, Any], key: str | None = None) -> Any:
        headers = {"Idempotency-Key": key} if key else {}
        if not isinstance(client, Client):
            return getattr(client, method)(f"/bcp/v1{path}", json=body, headers=headers)
        with CaptureQueriesContext(connection) as queries:
            response = getattr(client, method)(
                f"/bcp/v1{path}", data=json.dumps(body), content_type="application/json", headers=headers
            )
        if counts is not None:
            counts.append(len(queries))
        return response

    responses = [send("post", "/checkout-sessions", {"line_items": [{"item": {"id": sku}, "quantity": 1}]})]
    created = responses[0].json()
    update = {"line_items": [{"id": created["line_items"][0]["id"], "item": {"id": sku}, "quantity": 1}],
              "buyer": BUYER,
              "fulfillment": {"methods": [{"type": "shipping", "destinations": [SP],
                                           "groups": [{"selected_option_id": "pac"}]}]},
              "payment": {"instruments": [CARD]}}
    responses.append(send("put", f"/checkout-sessions/{created['id']}", update))
    assert responses[1].json()["status"] == "ready_for_complete", responses[1].json().get("messages")
    responses.append(send("post", f"/checkout-sessions/{created['id']}/complete",
                          {"payment": {"instruments": [CARD]}}, key=str(uuid.uuid4())))
    return responses


def _shop_flow(client: httpx.Client, sku: str) -> str:
    done = _shop_requests(client, sku)[-1].json()
    assert done["status"] == "completed", done.get("messages")
    return str(done["order"]["id"])


def _bare_flow(client: httpx.Client, sku: str) -> str:
    created = client.post("/_bench/checkouts", json={"sku": sku, "quantity": 1}).json()
    client.put(f"/_bench/checkouts/{created['id']}", json={"buyer": BUYER, "address": SP}).raise_for_status()
    done = client.post(f"/_bench/checkouts/{created['id']}/complete", json={}).json()
    assert done["status"] == "completed"
    return str(done["order"]["id"])


def _postgres_cpu() -> dict[int, float]:
    """CPU seconds (utime + stime, from /proc) of every Postgres backend serving this database, by pid: the
    server's pooled connections (pg_stat_statements is not preloaded here, and exec time is not CPU)."""
    tick = os.sysconf("SC_CLK_TCK")
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        pids = [row[0] for row in cursor.fetchall()]
    cpu: dict[int, float] = {}
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:  # Postgres on another machine (or the backend just ended): not measurable here
            continue
        cpu[pid] = (int(fields[11]) + int(fields[12])) / tick
    return cpu


def _postgres_cpu_since(before: dict[int, float]) -> float:
    """Postgres CPU seconds used since `before` (backends that started meanwhile count whole)."""
    return sum(now - before.get(pid, 0.0) for pid, now in _postgres_cpu().items())


def _drained(broker: str) -> bool:
    """The worker has run everything the flows enqueued: the broker's queue is empty and no outbox row of
    theirs is pending (a row is marked done at the end of its task)."""
    return (redis.Redis.from_url(broker).llen("celery") == 0
            and not OutboxMessage.objects.filter(status=OutboxMessage.Status.PENDING).exists())


def _rate(clients: int, per_client: int, work: Callable[[httpx.Client, int], str], base_url: str,
          headers: dict[str, str]) -> tuple[float, list[str]]:
    def run(index: int) -> list[str]:
        with httpx.Client(base_url=base_url, headers=headers, timeout=120) as client:
            return [work(client, index) for _ in range(per_client)]

    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=clients) as pool:
        results = [r for batch in pool.map(run, range(clients)) for r in batch]
    elapsed = time.perf_counter() - started
    assert len(results) == clients * per_client  # 0 failed flows (a failure raised above)
    return len(results) / elapsed, results


@pytest.mark.postgres
@pytest.mark.timeout(1800)  # four uvicorn workers and ~200 flows: slower than the suite's 300 s per test
@pytest.mark.django_db(transaction=True)
def test_rest_flow_rate_vs_bare_flow(bcp_settings: Any, fake_platform: FakePlatform) -> None:  # noqa: F811
    broker = os.environ.get("CELERY_BROKER_URL", "")
    if not broker.startswith("redis://"):
        pytest.skip("needs CELERY_BROKER_URL=redis://… for the real worker the bench runs like production")
    skus = ["SKU-BENCH", *(f"SKU-BENCH-{i}" for i in range(max(CLIENTS)))]
    for sku in skus:
        make_variant(sku, price=4290, stock=1_000_000, title=f"Café de benchmark {sku}")
    make_shipping()
    platform = platform_create(name="Bench", profile_url=fake_platform.publish(handlers=fake_platform.with_card()))
    headers = {"BCP-Agent": f'profile="{platform.platform.profile_url}"',
               "Authorization": f"Bearer {platform.api_key}"}
    with connection.cursor() as cursor:
        for sql in BARE_TABLES_SQL:
            cursor.execute(sql)
    port = free_port()
    base_url = f"http://127.0.0.1:{port}"
    env = production_env(base_url, str(bcp_settings.BCP_SIGNING_KEY_FILE), CELERY_BROKER_URL=broker,
                         CELERY_TASK_ALWAYS_EAGER="false", DATABASE_POOL_MIN="2", DATABASE_POOL_MAX="4")
    # The worker gets the server's environment (same settings module, broker and database), solo pool as in
    # tests/e2e; it is a separate process, so its CPU is read on its own.
    worker = CeleryWorker({k: env[k] for k in ("DJANGO_SETTINGS_MODULE", "DJANGO_DEBUG", "DJANGO_SECRET_KEY",
                                              "DJANGO_ALLOWED_HOSTS", "DJANGO_LOG_LEVEL", "BCP_PUBLIC_URL",
                                              "BCP_PIX_SANDBOX", "BCP_PIX_SANDBOX_FORCE",
                                              "PIX_SANDBOX_WEBHOOK_SECRET", "DJANGO_EMAIL_BACKEND",
                                              "CELERY_BROKER_URL", "CELERY_TASK_ALWAYS_EAGER")})
    server = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "shop.asgi:application", "--host", "127.0.0.1", "--port", str(port),
         "--workers", "4", "--log-level", "warning", "--no-access-log"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        worker.start()
        wait_for(lambda: _up(base_url), timeout=300, interval=1)  # 4 processes import the whole stack
        with httpx.Client(base_url=base_url, headers=headers, timeout=120) as warm:
            for _ in range(8):  # every worker: profile cache, imports, shipping cache
                _shop_flow(warm, "SKU-BENCH")
                _bare_flow(warm, "SKU-BENCH")
        wait_for(lambda: _drained(broker), timeout=300, interval=0.2, log=worker.log)
        assert worker.proc is not None
        worker_pid = worker.proc.pid
        print("\nBCP REST flow create → update → complete (card) vs a bare view doing the minimal SQL, same server")
        orders: list[str] = []
        bare_orders: list[str] = []
        rates: dict[tuple[int, str], tuple[float, float]] = {}
        for clients in CLIENTS:
            for mode in ("distinct", "shared"):
                def sku_of(index: int, mode: str = mode) -> str:
                    return "SKU-BENCH" if mode == "shared" else f"SKU-BENCH-{index}"

                pg = _postgres_cpu()
                bare, bare_ids = _rate(clients, FLOWS[clients], lambda c, i: _bare_flow(c, sku_of(i)), base_url, {})
                bare_pg = _postgres_cpu_since(pg) / len(bare_ids) * 1000
                cpu, worker_cpu, pg = cpu_seconds(server.pid), cpu_seconds(worker_pid), _postgres_cpu()
                shop, ids = _rate(clients, FLOWS[clients], lambda c, i: _shop_flow(c, sku_of(i)), base_url,
                                  headers)
                cpu_per_flow = (cpu_seconds(server.pid) - cpu) / len(ids) * 1000
                wait_for(lambda: _drained(broker), timeout=300, interval=0.05, log=worker.log)
                worker_per_flow = (cpu_seconds(worker_pid) - worker_cpu) / len(ids) * 1000
                pg_per_flow = _postgres_cpu_since(pg) / len(ids) * 1000  # incl. the worker's backend
                orders += ids
                bare_orders += bare_ids
                rates[clients, mode] = (shop, bare)
                print(f"  {clients} client(s), {mode:8} SKUs: shop {shop:6.1f} flows/s | bare {bare:6.1f} flows/s |"
                      f" ratio {shop / bare:.2f} | uvicorn CPU {cpu_per_flow:5.0f} ms/flow |"
                      f" worker CPU {worker_per_flow:4.0f} ms/flow |"
                      f" Postgres CPU {pg_per_flow:4.0f} ms/flow (bare {bare_pg:3.0f})")
        for clients in CLIENTS:
            (shared, bare_shared), (distinct, bare_distinct) = rates[clients, "shared"], rates[clients, "distinct"]
            print(f"  {clients} client(s): same SKU / distinct SKUs: shop {shared / distinct:.2f}"
                  f" | bare {bare_shared / bare_distinct:.2f}")
        for clients in CLIENTS:
            bare, _ = _rate(clients, ORDER_READS[clients],
                            lambda c, i: str(c.get(f"/_bench/orders/{bare_orders[i % len(bare_orders)]}").json()["id"]),
                            base_url, {})
            shop, _ = _rate(clients, ORDER_READS[clients],
                            lambda c, i: str(c.get(f"/bcp/v1/orders/{orders[i % len(orders)]}").json()["id"]),
                            base_url, headers)
            print(f"  GET order, {clients} client(s): shop {shop:6.1f} req/s | bare SELECT {bare:6.1f} req/s |"
                  f" ratio {shop / bare:.2f}")
        counts = _per_request_statements(headers)
        wait_for(lambda: _drained(broker), timeout=300, interval=0.2, log=worker.log)
        assert not OutboxMessage.objects.filter(status=OutboxMessage.Status.PENDING).exists()  # every task ran
        print(f"  SQL statements per request (create / update / complete / GET order; the worker's task not"
              f" counted): shop "
              f"{' / '.join(map(str, counts))} | bare 3 / 1 / 4 / 1")
    finally:
        worker.stop()
        celery_app.control.purge()  # nothing this bench enqueued is left for the next worker
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(timeout=10)
        with connection.cursor() as cursor:
            for table in BARE_TABLES:
                cursor.execute(f"DROP TABLE IF EXISTS {table}")


def _per_request_statements(headers: dict[str, str]) -> list[int]:
    """Statements of each request of one more flow plus a GET order, through Django's test client here; its
    task goes to the worker, as the server's do (this process is eager otherwise, tests/conftest.py)."""
    client = Client(headers=headers)
    counts: list[int] = []
    celery_app.conf.task_always_eager = False
    try:
        done = _shop_requests(client, "SKU-BENCH", counts)[-1].json()
    finally:
        celery_app.conf.task_always_eager = True
    with CaptureQueriesContext(connection) as queries:
        assert client.get(f"/bcp/v1/orders/{done['order']['id']}").status_code == 200
    return [*counts, len(queries)]


def _up(base_url: str) -> bool:
    try:
        return httpx.get(f"{base_url}/.well-known/bcp", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False
