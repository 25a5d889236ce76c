"""Benchmark: Pix settlement latency through a real Celery worker on Redis (`make bench` with a Redis broker).

Ours: signed webhook POST (Django test client) → inbox → broker → worker confirms with the sandbox PSP,
settles (charge row lock, `charge_settled`) → `PixPayment` row committed; measured by polling the row.
Baseline, same run, same worker: the bare broker hop — enqueue `process_pix_webhook` for an already
processed event and wait for its result (the task returns at once). Prints p50/p95 and ratios; asserts
only that every payment settled, never a time.
"""

from __future__ import annotations

import json
import os
import statistics
import time
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from config.celery import app as celery_app
from payments import webhook_auth
from payments.models import PixPayment, PixWebhookEvent
from payments.sandbox import bodies as sandbox_bodies
from payments.sandbox import services as sandbox
from payments.services import pix_charge_ensure
from payments.tasks import process_pix_webhook
from tests.bcp_app.live import LiveServer
from tests.payments.test_worker_e2e import real_worker  # noqa: F401 - fixture

SAMPLES = 30


@pytest.fixture
def result_backend_env(monkeypatch: pytest.MonkeyPatch) -> str:
    """The worker (started next, from this environment) stores results in Redis for the baseline."""
    broker = os.environ.get("CELERY_BROKER_URL", "")
    if broker.startswith("redis://"):
        monkeypatch.setenv("CELERY_RESULT_BACKEND", broker)
    return broker


def _forget_backend() -> None:
    # Celery keeps the backend it built first (thread-safe ones app-wide, others per thread); a changed
    # `result_backend` is read only by a new one.
    celery_app._backend_cache = None
    celery_app._local.__dict__.pop("backend", None)


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def _settle_once(client: Client, index: int) -> float:
    charge = pix_charge_ensure(reference=f"checkout_lat_{index}", amount=1000 + index)
    pix = sandbox.pay(txid=charge.txid, options=sandbox.PayOptions(deliver="none"))[0]
    raw = json.dumps({"pix": [sandbox_bodies.pix_item(pix)]}, separators=(",", ":")).encode()
    signature = webhook_auth.sign("sandbox-secret", raw)
    started = time.perf_counter()
    response = client.post(
        "/payments/pix/webhook/pix", data=raw, content_type="application/json", headers={webhook_auth.HEADER: signature}
    )
    assert response.status_code == 200
    deadline = started + 60
    while not PixPayment.objects.filter(end_to_end_id=pix.end_to_end_id).exists():
        assert time.perf_counter() < deadline, "settlement never happened"
        time.sleep(0.002)
    return time.perf_counter() - started


@pytest.mark.e2e
@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_settlement_latency_through_the_real_worker(
    result_backend_env: str,
    real_worker: tuple[LiveServer, Path],  # noqa: F811
    settings: Any,
) -> None:
    backend = result_backend_env
    saved_backend = celery_app.conf.result_backend
    celery_app.conf.result_backend = backend  # results only for the baseline round trip
    _forget_backend()  # the app caches its backend once read (disabled, before this test)
    settings.PIX_SANDBOX_REFUND_AUTOSETTLE = False
    settings.BCP_PIX_SANDBOX = True
    settings.PIX_SANDBOX_WEBHOOK_SECRET = "sandbox-secret"  # what the worker fixture gives the worker
    client = Client()
    try:
        _settle_once(client, -1)  # warm-up: worker imports, connections
        deadline = time.perf_counter() + 60
        while (processed := PixWebhookEvent.objects.exclude(processed_at=None).first()) is None:
            assert time.perf_counter() < deadline, "the warm-up event was never marked processed"
            time.sleep(0.01)
        baseline = []
        ours = []
        for index in range(SAMPLES):
            started = time.perf_counter()
            process_pix_webhook.apply_async(args=[processed.pk]).get(timeout=60, interval=0.002)
            baseline.append(time.perf_counter() - started)
            ours.append(_settle_once(client, index))
    finally:
        celery_app.conf.result_backend = saved_backend
        _forget_backend()
    b50, b95 = _percentile(baseline, 0.5), _percentile(baseline, 0.95)
    o50, o95 = _percentile(ours, 0.5), _percentile(ours, 0.95)
    print(f"\nPix settlement latency through a real worker, {SAMPLES} samples:")
    print(f"  bare broker hop (enqueue → result)       p50 {b50 * 1e3:7.1f} ms  p95 {b95 * 1e3:7.1f} ms")
    print(f"  webhook POST → payment settled (ours)    p50 {o50 * 1e3:7.1f} ms  p95 {o95 * 1e3:7.1f} ms")
    print(f"  ratio ours/bare                          p50 {o50 / b50:7.1f}     p95 {o95 / b95:7.1f}")
    print(f"  mean ours {statistics.mean(ours) * 1e3:.1f} ms")
    assert PixPayment.objects.count() == SAMPLES + 1
