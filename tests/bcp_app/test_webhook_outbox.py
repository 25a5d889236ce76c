"""Order webhooks go through the orders outbox: a dead broker at commit time loses nothing (issue 13 item 8).

The broker is really unreachable (a bound socket that never listens); the sweep later sends the webhook,
once, and its delivery carries the outbox key so a re-run finds it instead of making a second one.
BCP-WH-01/03: the platform still gets each order change.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest
from django.core import mail
from django.db import transaction
from django.test import Client
from django.utils import timezone

from bcp_app.models import WebhookDelivery
from bcp_app.service.platforms import NewPlatform
from bcp_app.tasks import retry_order_webhooks
from config.celery import app as celery_app
from orders.models import OutboxMessage
from orders.services import order_place_from_checkout
from orders.services.fulfillment import order_mark_delivered, order_ship
from orders.tasks import sweep_outbox
from tests.bcp_app.bcp_fixtures import FakePlatform
from tests.bcp_app.test_rest_order import WEBHOOK_PATH, auth, place_order, platform  # noqa: F401 (fixture)
from tests.orders.conftest import make_checkout

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("bcp_settings")]


def _forget_connections() -> None:
    # What Celery itself resets after a fork (Celery._after_fork), without its signal.
    celery_app._pool = None
    celery_app.amqp._producer_pool = None


@pytest.fixture
def dead_broker(settings: Any) -> Iterator[None]:
    """Tasks go to a broker that refuses connections, as when Redis is down."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    saved = celery_app.conf.broker_write_url
    settings.CELERY_TASK_ALWAYS_EAGER = False
    celery_app.conf.task_always_eager = False
    celery_app.conf.broker_write_url = f"redis://127.0.0.1:{sock.getsockname()[1]}/0"
    celery_app.conf.task_publish_retry = False
    _forget_connections()  # the connection and producer pools were bound to the real broker
    yield
    celery_app.conf.broker_write_url = saved
    celery_app.conf.task_publish_retry = True
    _forget_connections()
    celery_app.conf.task_always_eager = True
    sock.close()


def shipped_hooks(fake_platform: FakePlatform) -> list[Any]:
    return [r for r in fake_platform.received if r.method == "POST" and r.path == WEBHOOK_PATH and b"shipped" in r.body]


def test_a_webhook_whose_enqueue_failed_is_sent_by_the_sweep_once(
    client: Client,
    fake_platform: FakePlatform,
    platform: NewPlatform,  # noqa: F811
    django_capture_on_commit_callbacks: Any,
    request: pytest.FixtureRequest,
) -> None:
    order = place_order(client, auth(fake_platform, platform), django_capture_on_commit_callbacks)
    # when the order ships while the broker is down
    request.getfixturevalue("dead_broker")
    with django_capture_on_commit_callbacks(execute=True):
        order_ship(order_id=order.public_id, tracking_number="BR123456785BR", carrier="Correios")
    # then the enqueue failed, the change is kept as a pending outbox row and nothing reached the platform
    pending = OutboxMessage.objects.get(kind="order_changed", status="pending")
    order.refresh_from_db()
    assert pending.payload == {
        "order_id": order.public_id,
        "event": "shipped",
        "platform_id": platform.platform.public_id,
        "snapshot": order.bcp_json,  # the order as shipped: the webhook's body even if it changes again
    }
    assert shipped_hooks(fake_platform) == []
    # when the broker is back (tasks run, here in-process) and beat runs the sweep
    celery_app.conf.task_always_eager = True
    OutboxMessage.objects.filter(pk=pending.pk).update(created_at=timezone.now() - timedelta(minutes=5))
    with django_capture_on_commit_callbacks(execute=True):
        assert sweep_outbox() == 1
    # then the platform got the shipped webhook once, from a delivery keyed by the outbox row
    assert len(shipped_hooks(fake_platform)) == 1
    delivery = WebhookDelivery.objects.get(event="shipped")
    assert (delivery.source_key, delivery.status) == (pending.key, "delivered")
    with django_capture_on_commit_callbacks(execute=True):
        assert sweep_outbox() == 0
    assert len(shipped_hooks(fake_platform)) == 1
    assert WebhookDelivery.objects.filter(event="shipped").count() == 1


def test_an_older_event_run_after_a_newer_ones_webhook_is_superseded_not_sent_bcp_wh_02(
    client: Client,
    fake_platform: FakePlatform,
    platform: NewPlatform,  # noqa: F811
    django_capture_on_commit_callbacks: Any,
    request: pytest.FixtureRequest,
) -> None:
    """The shipped event's outbox row runs (the sweep) after the delivered event's webhook went out: its first
    attempt was made without the check retries get, so the platform's last word was the older order (shipped,
    not delivered). BCP-WH-02: each webhook is the full order, so the older one is marked superseded, not sent."""
    order = place_order(client, auth(fake_platform, platform), django_capture_on_commit_callbacks)
    # given the shipment's webhook lost with the broker (its outbox row pending)…
    request.getfixturevalue("dead_broker")
    with django_capture_on_commit_callbacks(execute=True):
        order_ship(order_id=order.public_id, tracking_number="BR123456785BR", carrier="Correios")
    shipped_row = OutboxMessage.objects.get(kind="order_changed", status="pending")
    # …and the delivery's webhook sent when the broker was back
    celery_app.conf.task_always_eager = True
    with django_capture_on_commit_callbacks(execute=True):
        order_mark_delivered(order_id=order.public_id)
    assert [(d.event, d.status) for d in WebhookDelivery.objects.order_by("id")] == [
        ("placed", "delivered"), ("delivered", "delivered")
    ]  # fmt: skip
    # when the sweep runs the shipment's row
    OutboxMessage.objects.filter(pk=shipped_row.pk).update(created_at=timezone.now() - timedelta(minutes=5))
    with django_capture_on_commit_callbacks(execute=True):
        assert sweep_outbox() == 1
    # then its delivery is kept superseded, never attempted, and the platform's last word is the delivered order
    shipped = WebhookDelivery.objects.get(event="shipped")
    assert (shipped.source_key, shipped.status, shipped.attempts, shipped.next_attempt_at) == (
        shipped_row.key, "superseded", 0, None
    )  # fmt: skip
    hooks = [r for r in fake_platform.received if r.method == "POST" and r.path == WEBHOOK_PATH]
    assert [r.headers["webhook-id"] for r in hooks] == [
        str(d.webhook_id) for d in WebhookDelivery.objects.exclude(event="shipped").order_by("id")
    ]
    # and a re-run of the row (or the retry sweep) sends nothing either
    OutboxMessage.objects.filter(pk=shipped_row.pk).update(status="pending")
    with django_capture_on_commit_callbacks(execute=True):
        sweep_outbox()
    assert retry_order_webhooks() == 0
    sent = [r.headers["webhook-id"] for r in fake_platform.received if r.method == "POST" and r.path == WEBHOOK_PATH]
    assert str(shipped.webhook_id) not in sent and len(sent) == 2
    assert WebhookDelivery.objects.filter(event="shipped").count() == 1


def test_an_order_placed_and_shipped_in_one_transaction_is_one_webhook_of_the_final_order_bcp_wh_02(
    fake_platform: FakePlatform,
    platform: NewPlatform,  # noqa: F811
    django_capture_on_commit_callbacks: Any,
) -> None:
    """The placement's savepoint is released before the shipment writes its row; the transaction still commits one
    change of the order as the platform sees it, so it gets one webhook: the order as shipped (BCP-WH-02), while
    the placement's own side effects (the buyer's "Pedido recebido" e-mail) still go once."""
    placed = replace(make_checkout(), platform_id=platform.platform.public_id)
    # when one transaction places the order and ships it
    with django_capture_on_commit_callbacks(execute=True), transaction.atomic():
        order = order_place_from_checkout(checkout=placed)
        order_ship(order_id=order.public_id, tracking_number="BR123456785BR", carrier="Correios")
    # then its one order_changed row is the placement's, naming both changes and carrying the shipped order
    order.refresh_from_db()
    [row] = OutboxMessage.objects.filter(kind="order_changed")
    assert (row.status, row.payload["event"], row.payload["events"]) == ("done", "placed", ["placed", "shipped"])
    assert row.payload["snapshot"] == order.bcp_json
    # and the platform got one webhook, from that row, showing the order shipped
    delivery = WebhookDelivery.objects.get()
    assert (delivery.event, delivery.source_key, delivery.status) == ("placed", row.key, "delivered")
    [hook] = [r for r in fake_platform.received if r.method == "POST" and r.path == WEBHOOK_PATH]
    assert json.loads(hook.body)["fulfillment"]["events"][0]["type"] == "shipped"
    assert sorted(m.subject for m in mail.outbox) == [
        f"Loja Exemplo: Recebemos seu pedido #{order.number}", f"Loja Exemplo: Seu pedido #{order.number} foi enviado"
    ]  # fmt: skip


def test_changes_committed_one_after_another_are_one_webhook_each_bcp_wh_02(
    fake_platform: FakePlatform,
    platform: NewPlatform,  # noqa: F811
    django_capture_on_commit_callbacks: Any,
) -> None:
    """The same two changes, each in its own transaction (nothing run between them): two changes, two webhooks."""
    placed = replace(make_checkout(), platform_id=platform.platform.public_id)
    with django_capture_on_commit_callbacks(execute=True):
        order = order_place_from_checkout(checkout=placed)
        order_ship(order_id=order.public_id, tracking_number="BR123456785BR", carrier="Correios")
    rows = OutboxMessage.objects.filter(kind="order_changed").order_by("id")
    assert [(row.payload["event"], row.payload.get("events")) for row in rows] == [("placed", None), ("shipped", None)]
    deliveries = WebhookDelivery.objects.order_by("id")
    assert [(d.event, d.source_key, d.status) for d in deliveries] == [
        ("placed", rows[0].key, "delivered"), ("shipped", rows[1].key, "delivered")
    ]  # fmt: skip
