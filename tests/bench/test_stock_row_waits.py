"""What the Postgres backends wait on during 8-client BCP REST purchases, one shared SKU against distinct SKUs
(issue 34: the shared-SKU flow measured 0.8–0.9× the distinct one; is it the stock row's lock?).

The server as in tests/bench/test_rest_flow.py (uvicorn, production settings, the shared Redis cache; the placed
orders' tasks are published for nobody and purged). While each window of 8 client processes runs, this process
reads `pg_stat_activity` every few milliseconds and counts, per sample, the database's client backends that are
running a statement, by what they wait on: `Lock:transactionid` / `Lock:tuple` (a row another transaction has
locked: the stock row of a shared SKU, or the order-number counter every placement draws from), the WAL
(`LWLock:WALWrite`, `IO:WALSync`: a commit waiting for its flush), or nothing (`cpu`). Printed, never asserted.
"""

from __future__ import annotations

import collections
import os
import threading
import time
from typing import Any

import psycopg
import pytest
from django.db import connection

from bcp_app.service.platforms import platform_create
from config.celery import app as celery_app
from tests.bcp_app.bcp_fixtures import FakePlatform, bcp_settings, fake_platform  # noqa: F401
from tests.bcp_app.live import database_url
from tests.bcp_app.rest_helpers import SP
from tests.bench.live_proc import Uvicorn, Window, flow_server_env, measure
from tests.shop.checkout_factories import make_shipping, make_variant

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres]

CLIENTS = 8
CALLS = 8  # purchases per client and window
ROUNDS = 2
WORKERS = 4  # uvicorn workers, as the flow bench
ACTIVE = (
    "SELECT coalesce(wait_event_type, 'cpu'), coalesce(wait_event, '') FROM pg_stat_activity"
    " WHERE datname = %s AND pid <> pg_backend_pid() AND backend_type = 'client backend' AND state = 'active'"
)


class Waits:
    """Samples of what the database's running statements wait on, taken in a thread until `stop`."""

    def __init__(self, dsn: str, database: str) -> None:
        self.dsn, self.database = dsn, database
        self.samples, self.counts = 0, collections.Counter[str]()
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._sample)
        self.thread.start()

    def _sample(self) -> None:
        with psycopg.connect(self.dsn, autocommit=True) as reader:
            while not self.done.is_set():
                for kind, event in reader.execute(ACTIVE, [self.database]).fetchall():
                    self.counts[f"{kind}:{event}" if event else kind] += 1
                self.samples += 1
                time.sleep(0.003)

    def stop(self) -> str:
        self.done.set()
        self.thread.join()
        per = {name: count / max(1, self.samples) for name, count in self.counts.items()}
        locks = sum(value for name, value in per.items() if name.startswith("Lock:"))
        wal = per.get("LWLock:WALWrite", 0.0) + per.get("IO:WALSync", 0.0) + per.get("IO:WALWrite", 0.0)
        top = ", ".join(f"{name} {value:.2f}" for name, value in sorted(per.items(), key=lambda kv: -kv[1])[:5])
        return f"backends waiting on a row lock {locks:.2f}, on the WAL {wal:.2f} ({self.samples} samples: {top})"


@pytest.mark.timeout(900)
def test_what_backends_wait_on_shared_and_distinct_skus(
    bcp_settings: Any,  # noqa: F811
    fake_platform: FakePlatform,  # noqa: F811
) -> None:
    broker = os.environ.get("CELERY_BROKER_URL", "")
    if not broker.startswith("redis://"):
        pytest.skip("needs CELERY_BROKER_URL=redis://…: the placed order's task is published, as in production")
    for sku in ["SKU-BENCH", *(f"SKU-BENCH-{i}" for i in range(CLIENTS))]:
        make_variant(sku, price=4290, stock=1_000_000, title=f"Café de benchmark {sku}")
    make_shipping()
    platform = platform_create(name="Bench", profile_url=fake_platform.publish(handlers=fake_platform.with_card()))
    headers = {"BCP-Agent": f'profile="{platform.platform.profile_url}"', "Authorization": f"Bearer {platform.api_key}"}
    port, base_url, env = flow_server_env(str(bcp_settings.BCP_SIGNING_KEY_FILE), broker, pool=(2, 4))

    def job(mode: str) -> dict[str, Any]:
        skus = ["SKU-BENCH" if mode == "shared" else f"SKU-BENCH-{i}" for i in range(CLIENTS)]
        return {"base_url": base_url, "skus": skus, "address": SP, "headers": headers}

    server = Uvicorn(env, port, workers=WORKERS)
    try:
        server.wait_up()
        measure(server, "shop_flow", CLIENTS, 2, job("distinct"))  # every worker warm
        print(f"\nWhat the Postgres backends wait on, {CLIENTS} clients, BCP REST purchases (backends per sample):")
        for _ in range(ROUNDS):
            for mode in ("distinct", "shared"):
                waits = Waits(database_url(), connection.settings_dict["NAME"])
                window: Window = measure(server, "shop_flow", CLIENTS, CALLS, job(mode))
                print(
                    f"  {mode:8} SKUs: {window.rate:5.1f} flows/s, uvicorn {window.uvicorn:4.1f} ms and Postgres"
                    f" {window.postgres:4.1f} ms of CPU per flow; {waits.stop()}"
                )
    finally:
        server.stop()
        celery_app.control.purge()  # the placed orders' tasks: nobody runs them here
