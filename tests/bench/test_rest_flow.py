"""Benchmark (issue 11): the BCP REST flow create → update → complete (card sandbox) in flows per second at
1 and 8 clients, with distinct SKUs and with one shared SKU, side by side with a bare Django view doing the
minimal SQL of the same flow (tests/bcp_app/bench_urls.py) under the same uvicorn (4 workers, production
settings, tests/bench/live_proc.py); GET order against a bare SELECT. Every client is a process of its own
(tests/bench/bench_client.py), so the clients share neither the test process's GIL nor its CPU time.

Each client count is measured in ROUNDS rounds, each with one window of bare and shop × distinct and shared
SKUs (the order reversed every other round), every window sized from a short pilot of the same case to last
about WINDOW_S seconds; the ratios printed are medians of per-round ratios (min–max beside them), so one
noisy or cold window cannot make them. This machine is shared, so beside the rates it prints the server-side
CPU per flow (uvicorn + worker + Postgres) shop/bare, which other load moves less, and roughly how much of the
machine other processes took during the windows (busy time from /proc/stat minus the bench's own processes;
Redis and the kernel count as others).
Run as in production: nothing is eager, the placed order's task goes through Redis (CELERY_BROKER_URL, a
redis:// URL, else skipped) to a real Celery worker process, whose CPU per flow is printed apart from
uvicorn's (read once the worker has drained the window's outbox rows). Also prints same SKU/distinct SKUs,
SQL statements per request and the CPU of the Postgres backends per flow (read from /proc for the backends of
this database: pg_stat_statements is not preloaded on this machine); asserts only correctness (0 failed
flows, every order's task run), never time. `make bench`.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Callable
from typing import Any

import pytest
import redis
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from bcp_app.service.platforms import platform_create
from config.celery import app as celery_app
from orders.models import OutboxMessage
from tests.bcp_app.bcp_fixtures import FakePlatform, bcp_settings, fake_platform  # noqa: F401
from tests.bcp_app.bench_site import BARE_TABLES, BARE_TABLES_SQL
from tests.bcp_app.live import CeleryWorker, wait_for
from tests.bcp_app.rest_helpers import SP
from tests.bench.bench_client import COMPLETE, create_body, update_body
from tests.bench.live_proc import (
    Uvicorn,
    Window,
    cache_in_use,
    flow_server_env,
    load,
    measure,
    noise,
)
from tests.bench.rounds import Case, interleaved, median, rate_ratio, ratios, spread
from tests.shop.checkout_factories import make_shipping, make_variant

CLIENTS = (1, 8)
MODES = ("distinct", "shared")
WORKERS = 4  # uvicorn workers
ROUNDS = 3  # rounds of flows per client count
WINDOW_S = 1.5  # what a measured window should last; its calls per client come from the pilot's rate
# GET order windows are cheap but their ratio is the noisier (one read is a few ms, so a burst of other load
# weighs more): more, shorter rounds for about the same time.
READ_ROUNDS, READ_WINDOW_S = 4, 1.0  # an even count: each order of the pair runs as often
PILOT = {"flow": {1: 10, 8: 3}, "read": {1: 40, 8: 10}}  # calls per client of a case's (discarded) pilot
# Limits far above what 2 cores can reach: the limiter still runs on every call, but never refuses one (the
# defaults, 60 checkouts a minute per platform, would stop the bench in its first seconds).


def _drained(broker: str) -> bool:
    """The worker has run everything the flows enqueued: the broker's queue is empty and no outbox row of
    theirs is pending (a row is marked done at the end of its task)."""
    return (
        redis.Redis.from_url(broker).llen("celery") == 0
        and not OutboxMessage.objects.filter(status=OutboxMessage.Status.PENDING).exists()
    )


class Bench:
    """The server and worker under test, and how one window of client processes is measured on them."""

    def __init__(self, server: Uvicorn, worker: CeleryWorker, broker: str) -> None:
        assert worker.proc is not None
        self.server, self.worker, self.worker_pid, self.broker = server, worker, worker.proc.pid, broker

    def drain(self) -> None:
        wait_for(lambda: _drained(self.broker), timeout=300, interval=0.05, log=self.worker.log)

    def window(self, kind: str, clients: int, calls: int, job: dict[str, Any]) -> Window:
        # counted once the clients' warm-up calls are done and their tasks drained; the worker's share of the
        # window once it has drained again
        return measure(self.server, kind, clients, calls, job, worker_pid=self.worker_pid, settle=self.drain)

    def rounds(
        self,
        clients: int,
        pilot: int,
        jobs: dict[str, tuple[str, dict[str, Any]]],
        check: Callable[[str, Window], None],
        rounds: int = ROUNDS,
        seconds: float = WINDOW_S,
    ) -> dict[str, list[Window]]:
        """`jobs`: label → (client kind, job), measured in interleaved rounds (tests/bench/rounds.py: a pilot
        of each, then rounds of one window of each label, the order reversed every other round, so a shop
        window and its bare one are neighbours in every round); `check` runs on every measured window."""

        def window(label: str, calls: int) -> Window:
            kind, job = jobs[label]
            return self.window(kind, clients, calls, job)

        windows = interleaved({label: Case(clients, pilot) for label in jobs}, window, rounds, seconds)
        for label, measured in windows.items():
            for each in measured:
                check(label, each)
        return windows


def _ceiling(shop: list[Window], bare: list[Window]) -> str:
    """With the machine saturated, flows/s is the machine's CPU over the CPU one flow takes of it (clients, Redis and
    kernel included). What the 0.5× target leaves the shop per flow beside the bare flow's own cost, what the placed
    order's side effects alone take of it (the worker's one task: buyer e-mail, NF-e request, signed webhook; the
    bare flow has none), and the ratio the shop would reach, round by round, if its requests cost exactly what the
    bare ones do and only those side effects were added."""
    bare_ms = median([w.machine for w in bare])
    ceiling = spread([b.machine / (b.machine + s.worker) for s, b in zip(shop, bare, strict=True)])
    return (
        f"machine CPU per flow shop {median([w.machine for w in shop]):3.0f} ms | bare {bare_ms:3.0f} ms;"
        f" 0.5× leaves the shop {bare_ms:3.0f} ms beside bare's, its side effects alone take"
        f" {median([w.worker for w in shop]):3.0f} ms (worker) | shop/bare ceiling with requests as cheap as"
        f" bare's: {ceiling}"
    )


def _cpu_ratio(shop: list[Window], bare: list[Window]) -> str:
    """Server-side CPU (uvicorn + worker + Postgres) per shop call over per bare call, round by round: less
    moved than the rates by whatever else the machine runs."""
    return spread(ratios([s.server_cpu for s in shop], [b.server_cpu for b in bare]), 1)


@pytest.mark.postgres
@pytest.mark.timeout(1800)  # four uvicorn workers, ~60 windows of client processes (slow on a shared machine)
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
    headers = {"BCP-Agent": f'profile="{platform.platform.profile_url}"', "Authorization": f"Bearer {platform.api_key}"}
    with connection.cursor() as cursor:
        for sql in BARE_TABLES_SQL:
            cursor.execute(sql)
    port, base_url, env = flow_server_env(str(bcp_settings.BCP_SIGNING_KEY_FILE), broker, pool=(2, 4))
    # The worker gets the server's environment (same settings module, broker and database), solo pool as in
    # tests/e2e; it is a separate process, so its CPU is read on its own.
    worker = CeleryWorker(
        {
            k: env[k]
            for k in (
                "DJANGO_SETTINGS_MODULE",
                "DJANGO_DEBUG",
                "DJANGO_SECRET_KEY",
                "DJANGO_ALLOWED_HOSTS",
                "DJANGO_LOG_LEVEL",
                "BCP_PUBLIC_URL",
                "BCP_PIX_SANDBOX",
                "BCP_PIX_SANDBOX_FORCE",
                "PIX_SANDBOX_WEBHOOK_SECRET",
                "DJANGO_EMAIL_BACKEND",
                "CELERY_BROKER_URL",
                "CELERY_TASK_ALWAYS_EAGER",
                "REDIS_URL",
            )
        }
    )
    server: Uvicorn | None = None
    try:
        # the worker first: started beside the server's 4 processes importing the whole stack, a loaded 2-core
        # machine did not have it ready within its 60 s
        worker.start()
        server = Uvicorn(env, port, workers=WORKERS)
        server.wait_up()
        bench = Bench(server, worker, broker)

        def flow_jobs(mode: str) -> dict[str, tuple[str, dict[str, Any]]]:
            per_client = ["SKU-BENCH" if mode == "shared" else f"SKU-BENCH-{i}" for i in range(max(CLIENTS))]
            job = {"base_url": base_url, "skus": per_client, "address": SP}
            return {f"bare {mode}": ("bare_flow", job), f"shop {mode}": ("shop_flow", {**job, "headers": headers})}

        # every uvicorn worker warm (8 connections spread over the 4): imports, profile cache, shipping cache
        for kind, job in flow_jobs("distinct").values():
            bench.window(kind, max(CLIENTS), 2, job)
        print(
            f"\nBCP REST flow create → update → complete (card) vs a bare view doing the minimal SQL; uvicorn"
            f" {WORKERS} workers, production settings, one process per client; {ROUNDS} rounds"
            f" per client count interleaving shop/bare × distinct/shared SKUs, each window ≈ {WINDOW_S} s;"
            f" medians (per-round min–max); GET order in {READ_ROUNDS} rounds of ≈ {READ_WINDOW_S} s;"
            f" {cache_in_use(env)}"
        )
        orders: list[str] = []
        bare_orders: list[str] = []

        def unique_orders(label: str, window: Window) -> None:
            # every flow placed its own order
            assert len(set(window.clients.ids)) == len(window.clients.ids)
            (orders if label.startswith("shop") else bare_orders).extend(window.clients.ids)

        for clients in CLIENTS:
            before = load()
            # both SKU modes in the same rounds: same SKU / distinct SKUs is a per-round ratio too
            windows = bench.rounds(
                clients,
                PILOT["flow"][clients],
                {label: job for mode in MODES for label, job in flow_jobs(mode).items()},
                unique_orders,
            )
            for mode in MODES:
                shop, bare = windows[f"shop {mode}"], windows[f"bare {mode}"]
                print(
                    f"  {clients} client(s), {mode:8} SKUs: shop {median([w.rate for w in shop]):6.1f} flows/s |"
                    f" bare {median([w.rate for w in bare]):6.1f} flows/s | shop/bare {rate_ratio(shop, bare)} |"
                    f" server CPU per flow shop/bare ×{_cpu_ratio(shop, bare)}"
                )
                print(
                    f"      CPU per shop flow: uvicorn {median([w.uvicorn for w in shop]):4.0f} ms |"
                    f" worker {median([w.worker for w in shop]):4.0f} ms |"
                    f" Postgres {median([w.postgres for w in shop]):4.0f} ms"
                    f" (bare: uvicorn {median([w.uvicorn for w in bare]):3.0f} ms,"
                    f" Postgres {median([w.postgres for w in bare]):3.0f} ms) |"
                    f" clients {median([w.clients.client_cpu * 1000 for w in shop]):3.0f} ms |"
                    f" machine {median([w.clients.busy for w in shop]):3.0%} busy | {noise(shop + bare)}"
                )
                if clients == max(CLIENTS):  # the machine is saturated: flows/s is CPU-bound
                    print(f"      {_ceiling(shop, bare)}")
            print(
                f"  {clients} client(s): same SKU / distinct SKUs: shop"
                f" {rate_ratio(windows['shop shared'], windows['shop distinct'])} | bare"
                f" {rate_ratio(windows['bare shared'], windows['bare distinct'])} | {before} → {load()}"
            )
        # each client reads an order of its own, the shop's through BCP REST, the bare flow's by one SELECT
        reads = {
            "bare": ("get", {"urls": [f"{base_url}/_bench/orders/{order}" for order in bare_orders[: max(CLIENTS)]]}),
            "shop": (
                "get",
                {"urls": [f"{base_url}/bcp/v1/orders/{order}" for order in orders[: max(CLIENTS)]], "headers": headers},
            ),
        }
        for clients in CLIENTS:

            def answered_own_order(label: str, window: Window, clients: int = clients) -> None:
                read = (orders if label == "shop" else bare_orders)[:clients]
                calls = len(window.clients.ids) // clients
                assert window.clients.ids == [order for order in read for _ in range(calls)]

            windows = bench.rounds(
                clients, PILOT["read"][clients], reads, answered_own_order, READ_ROUNDS, READ_WINDOW_S
            )
            shop, bare = windows["shop"], windows["bare"]
            print(
                f"  GET order, {clients} client(s): shop {median([w.rate for w in shop]):6.1f} req/s |"
                f" bare SELECT {median([w.rate for w in bare]):6.1f} req/s | shop/bare {rate_ratio(shop, bare)} |"
                f" server CPU per req shop/bare ×{_cpu_ratio(shop, bare)} |"
                f" uvicorn CPU {median([w.uvicorn for w in shop]):4.1f} ms/req"
                f" (bare {median([w.uvicorn for w in bare]):3.1f}) |"
                f" clients {median([w.clients.client_cpu * 1000 for w in shop]):3.1f} ms/req |"
                f" {noise(shop + bare)}"
            )
        counts = _per_request_statements(headers)
        bench.drain()
        assert not OutboxMessage.objects.filter(status=OutboxMessage.Status.PENDING).exists()  # every task ran
        print(
            f"  SQL statements per request (create / update / complete / GET order; the worker's task not"
            f" counted): shop {' / '.join(map(str, counts))} | bare 3 / 1 / 4 / 1"
        )
    finally:
        worker.stop()
        celery_app.control.purge()  # nothing this bench enqueued is left for the next worker
        if server is not None:
            server.stop()
        with connection.cursor() as cursor:
            for table in BARE_TABLES:
                cursor.execute(f"DROP TABLE IF EXISTS {table}")


def _per_request_statements(headers: dict[str, str]) -> list[int]:
    """Statements of each request of one more flow plus a GET order, through Django's test client here (the
    same bodies as the client processes'), in steady state (after one flow that fills this process's
    caches); its task goes to the worker, as the server's do (this process is eager otherwise,
    tests/conftest.py)."""
    client = Client(headers=headers)
    counts: list[int] = []

    def send(method: str, path: str, body: dict[str, Any], **extra: str) -> dict[str, Any]:
        with CaptureQueriesContext(connection) as queries:
            response = getattr(client, method)(
                f"/bcp/v1{path}", data=json.dumps(body), content_type="application/json", headers=extra
            )
        counts.append(len(queries))
        return response.json()

    def flow() -> dict[str, Any]:
        created = send("post", "/checkout-sessions", create_body("SKU-BENCH"))
        updated = send("put", f"/checkout-sessions/{created['id']}", update_body(created, "SKU-BENCH", SP))
        assert updated["status"] == "ready_for_complete", updated.get("messages")
        done = send(
            "post", f"/checkout-sessions/{created['id']}/complete", COMPLETE, **{"Idempotency-Key": str(uuid.uuid4())}
        )
        assert done["status"] == "completed", done.get("messages")
        return done

    celery_app.conf.task_always_eager = False
    try:
        flow()  # steady state, as the server's processes are by now: this process's caches filled
        counts.clear()
        done = flow()
    finally:
        celery_app.conf.task_always_eager = True
    with CaptureQueriesContext(connection) as queries:
        assert client.get(f"/bcp/v1/orders/{done['order']['id']}").status_code == 200
    return [*counts, len(queries)]
