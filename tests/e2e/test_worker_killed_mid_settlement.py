"""A worker SIGKILLed in the middle of a Pix settlement loses nothing and doubles nothing (issue 13 §9).

The settlement task is acknowledged only after it ran (`acks_late`); a killed worker leaves it in
Redis' unacked set, and the broker's visibility timeout (CELERY_VISIBILITY_TIMEOUT, short here) hands
it to the restarted worker. Before, the timeout was kombu's default hour: the paid checkout waited
that long for its order. The task is held at a known point by a row lock the test takes on the
charge, so the kill always lands during the settlement, and the test waits on observed states
(the worker's backend waiting for that lock, the message's age in Redis), never on a duration.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx
import psycopg
import pytest
import redis

from orders.models import Order
from payments.models import PixCharge
from shop.models import Checkout
from tests.bcp_app.live import CeleryWorker, LiveServer, database_url, pix_settlement_stack, wait_for
from tests.e2e.test_storefront_pix_worker import post_form
from tests.shop.checkout_factories import make_shipping, make_variant
from tests.shop.test_checkout_storefront import ADDRESS, CONTACT

pytestmark = [pytest.mark.e2e, pytest.mark.postgres]

SECRET = "worker-kill-secret"
VISIBILITY = 2


@pytest.fixture
def stack(transactional_db: Any, settings: Any) -> Iterator[tuple[LiveServer, CeleryWorker]]:
    settings.DEBUG = True  # the sandbox "pay" endpoint is a development tool
    env = {"CELERY_VISIBILITY_TIMEOUT": str(VISIBILITY)}
    with pix_settlement_stack(settings, secret=SECRET, extra_env=env) as stack:
        yield stack


def active_charge(server: LiveServer) -> tuple[str, PixCharge]:
    """A storefront checkout waiting for its Pix (cart → form → "Pagar com Pix")."""
    make_variant(price=4290, stock=10, title="Café especial 500 g")
    make_shipping()
    browser = httpx.Client(base_url=server.url, timeout=30)
    cart = browser.get("/carrinho/")
    post_form(browser, "/carrinho/adicionar", cart, {"sku": "SKU-CAFE-500G", "quantity": "1"})
    checkout_path = browser.get("/checkout/").headers["location"]
    form = {**CONTACT, **ADDRESS, "shipping_option": "sedex"}
    filled = post_form(browser, checkout_path, browser.get(checkout_path), {"action": "update", **form})
    paying = post_form(browser, checkout_path, filled, {"action": "pay", **form})
    assert paying.status_code == 302
    checkout_id = checkout_path.rsplit("/", 1)[1]
    return checkout_id, PixCharge.objects.get(reference=checkout_id, status="active")


def waiting_on_charge_lock(conn: psycopg.Connection) -> bool:
    row = conn.execute(
        "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query ILIKE %s "
        "AND pid <> pg_backend_pid()",
        ("%payments_pixcharge%",),
    ).fetchone()
    return bool(row and row[0])


def unacked_older_than(client: redis.Redis, seconds: float) -> bool:
    entries = client.zrange("unacked_index", 0, -1, withscores=True)
    return bool(entries) and all(time.time() - score > seconds for _, score in entries)


def test_killed_worker_mid_settlement_still_makes_exactly_one_order(stack: tuple[LiveServer, CeleryWorker]) -> None:
    server, worker = stack
    checkout_id, charge = active_charge(server)
    broker = redis.Redis.from_url(worker.env["CELERY_BROKER_URL"])
    url = database_url().replace("postgres://", "postgresql://", 1)
    with psycopg.connect(url, autocommit=True) as observer, psycopg.connect(url) as holder:
        # given the charge row locked, so the settlement task will stop at its first statement
        holder.execute("SELECT id FROM payments_pixcharge WHERE id = %s FOR UPDATE", (charge.pk,))
        # when the bank pays and the worker is killed while its settlement waits for that row
        paid = httpx.post(
            f"{server.url}/_sandbox/psp/cob/{charge.txid}/pay",
            json={},
            headers={"BCP-Sandbox-Secret": SECRET},
            timeout=30,
        )
        assert paid.status_code == 200
        wait_for(lambda: waiting_on_charge_lock(observer), log=worker.log)
        worker.kill()
        holder.rollback()
    assert not Order.objects.filter(checkout_id=checkout_id).exists()
    # and a worker is started again once the stranded message is past the visibility timeout
    wait_for(lambda: unacked_older_than(broker, VISIBILITY), timeout=60)
    restarted = CeleryWorker(worker.env).start(purge=False)
    try:
        # then the redelivered settlement places the order, exactly once
        order = wait_for(lambda: Order.objects.filter(checkout_id=checkout_id).first(), timeout=90, log=restarted.log)
    finally:
        restarted.stop()
    charge.refresh_from_db()
    assert Order.objects.filter(checkout_id=checkout_id).count() == 1
    assert (order.payment_status, charge.status) == ("paid", "paid")
    assert Checkout.objects.get(public_id=checkout_id).status == "completed"
