"""Benchmark: Pix webhook ingestion (deliveries accepted per second) vs a bare insert-and-enqueue view.

Both go through the Django test client with real commits, both insert one inbox row and enqueue
`payments.tasks.process_pix_webhook` after commit (Celery's configured broker, or the in-memory
transport when none is configured, so only the enqueue is measured, never the processing). Ours
adds HMAC verification, full body validation, a savepoint per item and the header subset. Prints
the ratio measured in the same run; only correctness is asserted, never the time.

Settlement latency through a real worker (webhook received → order placed, p50/p95) is not
measured here yet.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from django.http import HttpRequest, JsonResponse
from django.test import Client
from django.urls import include, path
from django.views.decorators.csrf import csrf_exempt

from config.celery import app as celery_app
from payments import webhook_auth
from payments.models import PixWebhookEvent
from payments.tasks import process_pix_webhook

ROUNDS = 5
PER_ROUND = 100
SECRET = "bench-secret"


@csrf_exempt
def bare_insert_and_enqueue(request: HttpRequest) -> JsonResponse:
    """Baseline: what any webhook receiver must do at least (parse, insert raw, enqueue after commit)."""
    first = json.loads(request.body)["pix"][0]
    event = PixWebhookEvent.objects.create(
        end_to_end_id=first["endToEndId"], txid=first["txid"], payload=first, raw_body=request.body, body_sha256=""
    )
    process_pix_webhook.delay_on_commit(event.pk)
    return JsonResponse({"received": 1})


urlpatterns = [path("bench/bare-webhook", bare_insert_and_enqueue), path("", include("payments.urls"))]
pytestmark = pytest.mark.urls(__name__)


@pytest.fixture
def queued_not_run(settings: Any) -> Iterator[None]:
    settings.BCP_PIX_SANDBOX = True
    settings.PIX_SANDBOX_WEBHOOK_SECRET = SECRET
    saved = (celery_app.conf.task_always_eager, celery_app.conf.broker_url)
    celery_app.conf.task_always_eager = False
    if not settings.CELERY_BROKER_URL:
        celery_app.conf.broker_url = "memory://"
    yield
    celery_app.control.purge()
    celery_app.conf.task_always_eager, celery_app.conf.broker_url = saved


def _deliveries(prefix: str, count: int) -> list[tuple[bytes, str]]:
    bodies = []
    for index in range(count):
        item = {
            "endToEndId": f"E99999999202607281504{prefix}{index:0{11 - len(prefix)}d}",
            "txid": "4dbaa2bc0a4a45d8b63e50117f566fca",
            "valor": "5999.00",
            "horario": "2026-07-28T15:04:10.123Z",
        }
        raw = json.dumps({"pix": [item]}, separators=(",", ":")).encode()
        bodies.append((raw, webhook_auth.sign(SECRET, raw)))
    return bodies


def _rate(client: Client, url: str, deliveries: list[tuple[bytes, str]]) -> float:
    started = time.perf_counter()
    for raw, signature in deliveries:
        response = client.post(url, data=raw, content_type="application/json", headers={webhook_auth.HEADER: signature})
        assert response.status_code == 200
    return len(deliveries) / (time.perf_counter() - started)


@pytest.mark.django_db(transaction=True)
def test_webhook_ingestion_rate_vs_bare_baseline(queued_not_run: None) -> None:
    client = Client()
    _rate(client, "/payments/pix/webhook/pix", _deliveries("w", 20))  # warm-up (connections, templates, imports)
    ours: list[float] = []
    bare: list[float] = []
    for round_number in range(ROUNDS):
        # Interleaved rounds so drift (autovacuum, caches) hits both sides alike.
        bare.append(_rate(client, "/bench/bare-webhook", _deliveries(f"b{round_number}", PER_ROUND)))
        ours.append(_rate(client, "/payments/pix/webhook/pix", _deliveries(f"o{round_number}", PER_ROUND)))
    best_ours, best_bare = max(ours), max(bare)
    print(f"\nPix webhook ingestion, {ROUNDS}×{PER_ROUND} deliveries each (best round):")
    print(f"  bare insert+enqueue : {best_bare:8.0f} deliveries/s")
    print(f"  /payments/pix/webhook: {best_ours:8.0f} deliveries/s")
    print(f"  ratio ours/bare     : {best_ours / best_bare:8.2f}")
    assert PixWebhookEvent.objects.count() == 20 + 2 * ROUNDS * PER_ROUND
