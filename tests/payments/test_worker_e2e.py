"""End to end with a real Celery worker on Redis and a live server: sandbox pay → task delivers the signed
webhook over HTTP → inbox → worker settles → (no such checkout: the shop rejects) → automatic refund.

Nothing runs eagerly here: every hop goes through the broker, as in production.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis

from payments.models import PixCharge, PixPayment, PixRefund, PixWebhookEvent
from payments.services import pix_charge_ensure
from tests.bcp_app.live import LiveServer, pix_settlement_stack, wait_for


@pytest.fixture
def real_worker(settings: Any) -> Iterator[tuple[LiveServer, Path]]:
    broker = os.environ.get("CELERY_BROKER_URL", "")
    if not broker.startswith("redis://"):
        pytest.skip("needs CELERY_BROKER_URL=redis://… for a real worker")
    try:
        redis.Redis.from_url(broker, socket_connect_timeout=3).ping()
    except redis.RedisError as exc:
        pytest.skip(f"Redis at {broker} unreachable: {exc}")
    with pix_settlement_stack(settings, secret="sandbox-secret", webhook_path="/payments/pix/webhook/pix") as (
        server,
        worker,
    ):
        yield server, worker.log


@pytest.mark.e2e
@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_real_worker_settles_and_refunds_through_the_broker(real_worker: tuple[LiveServer, Path]) -> None:
    server, worker_log = real_worker
    # given an active charge for a reference the shop does not know (so its receiver answers "rejected")
    charge = pix_charge_ensure(reference="checkout_worker_e2e", amount=4321)
    # when the sandbox PSP is paid through its HTTP control API
    response = httpx.post(
        f"{server.url}/_sandbox/psp/cob/{charge.txid}/pay",
        json={},
        headers={"BCP-Sandbox-Secret": "sandbox-secret"},
        timeout=30,
    )
    assert response.status_code == 200
    e2e = response.json()["pix"][0]["endToEndId"]
    # then the worker delivers the webhook over HTTP, settles it, and refunds the rejected payment
    wait_for(
        lambda: PixRefund.objects.filter(end_to_end_id=e2e, status="completed").exists(),
        timeout=90,
        interval=0.2,
        log=worker_log,
    )
    payment = PixPayment.objects.get(end_to_end_id=e2e)
    assert (payment.outcome, payment.amount, payment.source) == ("refunded_rejected", 4321, "webhook")
    assert PixWebhookEvent.objects.get(end_to_end_id=e2e, refund_state="").outcome == "refunded_rejected"
    assert PixRefund.objects.get(end_to_end_id=e2e).kind == "automatic"
    wait_for(lambda: PixCharge.objects.get(pk=charge.pk).status == "refunded", timeout=30, interval=0.2)
