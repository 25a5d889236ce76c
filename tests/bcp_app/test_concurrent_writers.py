"""Concurrent writers on one Pix checkout over REST against a live server (issue 13 §7).

Each update changes the total, so each replaces the active Pix charge while the others wait for the
checkout: the set of charges changes between the writers' statements. Every request must end as a normal
answer (the checkout, or a business message), never a 500 or a deadlock.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from payments.models import PixCharge
from shop.models import Checkout
from tests.bcp_app.bcp_fixtures import FakePlatform
from tests.bcp_app.live import LiveServer
from tests.bcp_app.rest_helpers import PIX, catalog, full_update

pytestmark = [pytest.mark.e2e, pytest.mark.postgres, pytest.mark.usefixtures("bcp_settings")]
WRITERS = 10


@pytest.fixture
def server(transactional_db: Any, settings: Any) -> Iterator[LiveServer]:
    settings.BCP_PIX_SANDBOX = True
    settings.PIX_SANDBOX_WEBHOOK_URL = ""
    live = LiveServer().start()
    try:
        yield live
    finally:
        live.stop()


def test_ten_concurrent_writers_on_one_pix_checkout_never_get_a_500(
    server: LiveServer, fake_platform: FakePlatform
) -> None:
    catalog()
    headers = {"BCP-Agent": f'profile="{fake_platform.publish()}"'}
    api = httpx.Client(base_url=f"{server.url}/bcp/v1", headers=headers, timeout=60)
    body = {"line_items": [{"item": {"id": "SKU-CAFE-500G"}, "quantity": 1}], "buyer": {"email": "ana@example.com.br"}}
    checkout = api.post("/checkout-sessions", json=body, headers={"Idempotency-Key": str(uuid.uuid4())}).json()
    for _ in range(2):  # address, then the option and Pix: ready, with an active charge
        checkout = api.put(f"/checkout-sessions/{checkout['id']}", json=full_update(checkout)).json()
    assert checkout["status"] == "ready_for_complete"

    barrier = threading.Barrier(WRITERS)
    answers: list[tuple[str, int, Any]] = []

    def write(n: int) -> None:
        update = full_update(checkout)
        update["line_items"][0]["quantity"] = 1 + n % 3  # a new total: the Pix charge is replaced
        with httpx.Client(base_url=f"{server.url}/bcp/v1", headers=headers, timeout=60) as own:
            barrier.wait()
            if n % 5 == 4:
                response = own.post(
                    f"/checkout-sessions/{checkout['id']}/complete",
                    json={"payment": {"instruments": [PIX]}},
                    headers={"Idempotency-Key": str(uuid.uuid4())},
                )
                kind = "complete"
            else:
                response = own.put(f"/checkout-sessions/{checkout['id']}", json=update)
                kind = "update"
        answers.append((kind, response.status_code, response.json()))

    threads = [threading.Thread(target=write, args=(n,)) for n in range(WRITERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)

    assert len(answers) == WRITERS
    assert sorted({status for _, status, _ in answers}) == [200]
    # and the checkout is coherent: at most one active charge, and when one is active it matches the total
    final = Checkout.objects.get(public_id=checkout["id"])
    active = list(PixCharge.objects.filter(reference=checkout["id"], status="active"))
    assert len(active) <= 1
    if active and final.status in ("ready_for_complete", "complete_in_progress"):
        assert active[0].amount == final.total_amount
