"""One Celery task per placed order (issue 11): the order's outbox task sends the buyer's e-mail, asks for the
NF-e and prepares and tries the order webhook itself (BCP §8); a second task only for a platform profile that
could not be read, which retries it.

Tasks are observed through Celery's own `task_prerun` signal (eager mode runs them in-process).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import nullcontext
from typing import Any

import pytest
from celery.signals import task_prerun
from django.core import mail
from django.core.cache import cache
from django.test import Client

from bcp_app.models import ProfileCacheEntry, WebhookAttempt, WebhookDelivery
from bcp_app.service.platforms import platform_create, platform_revoke
from bcp_app.service.webhooks import on_order_changed
from bcp_app.tasks import prepare_order_webhook
from orders.models import OutboxMessage
from orders.services.adjustments import order_cancel
from orders.services.dispatch import outbox_process
from orders.signals import order_changed
from tests.bcp_app.bcp_fixtures import FakePlatform, agent
from tests.bcp_app.rest_helpers import CARD, call, catalog, create, full_update
from tests.bcp_app.test_rest_order import WEBHOOK_PATH

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("bcp_settings")]


@pytest.fixture
def tasks_run() -> Iterator[list[str]]:
    names: list[str] = []

    def record(sender: Any = None, task: Any = None, **_: Any) -> None:
        names.append(task.name)

    task_prerun.connect(record, weak=False)
    yield names
    task_prerun.disconnect(record)


def _place_by_card(client: Client, headers: dict[str, str], capture: Any, *, execute: bool = True) -> dict[str, Any]:
    created = create(client, headers).json()
    body = full_update(created, pix=False)
    addressed = call(client, "put", f"/checkout-sessions/{created['id']}", headers, body).json()
    body = full_update(addressed, pix=False)
    body["payment"] = {"instruments": [CARD]}
    ready = call(client, "put", f"/checkout-sessions/{created['id']}", headers, body).json()
    with capture(execute=execute):
        done = call(
            client,
            "post",
            f"/checkout-sessions/{ready['id']}/complete",
            {**headers, "Idempotency-Key": "k-1"},
            {"payment": {"instruments": [CARD]}},
        ).json()
    assert done["status"] == "completed", done.get("messages")
    return done


def _headers(fake_platform: FakePlatform, profile: dict[str, Any]) -> dict[str, str]:
    url = fake_platform.serve_json("/perfil.json", profile, headers={"Cache-Control": "public, max-age=300"})
    platform = platform_create(name="Agente", profile_url=url)
    return agent(url, Authorization=f"Bearer {platform.api_key}")


def test_no_webhook_task_when_the_profile_asks_for_none(
    client: Client, fake_platform: FakePlatform, tasks_run: list[str], django_capture_on_commit_callbacks: Any
) -> None:
    # given a platform whose profile negotiates orders without a webhook_url
    catalog()
    profile = fake_platform.profile(handlers=fake_platform.with_card())
    del profile["ucp"]["capabilities"]["br.dev.bcp.shopping.order"][0]["config"]
    headers = _headers(fake_platform, profile)
    # when it places an order
    _place_by_card(client, headers, django_capture_on_commit_callbacks)
    # then the order e-mail goes out, from the order's one task, but no webhook task is started
    assert prepare_order_webhook.name not in tasks_run
    assert tasks_run == ["orders.tasks.process_outbox_message"]
    assert [m.to for m in mail.outbox] == [["ana@example.com.br"]]


def test_an_order_without_webhook_url_writes_nothing_for_its_webhook(
    client: Client, fake_platform: FakePlatform, tasks_run: list[str], django_capture_on_commit_callbacks: Any
) -> None:
    """BCP §8 (order webhooks go to the profile's `webhook_url`): a platform that names none gets no webhook, and
    the order's task writes nothing for it — no delivery, no timeline line (issue 34: that line was a locked
    read and an INSERT per order, 11 % of the worker's CPU, for a platform's standing choice)."""
    from orders.models import OrderEvent

    catalog()
    profile = fake_platform.profile(handlers=fake_platform.with_card())
    del profile["ucp"]["capabilities"]["br.dev.bcp.shopping.order"][0]["config"]
    done = _place_by_card(client, _headers(fake_platform, profile), django_capture_on_commit_callbacks)

    events = OrderEvent.objects.filter(order__public_id=done["order"]["id"])
    assert not events.filter(kind="webhook_none").exists()
    assert list(events.filter(kind__startswith="email").values_list("kind", flat=True)) == ["email_sent"]
    assert WebhookDelivery.objects.count() == 0
    assert [r for r in fake_platform.received if r.method == "POST"] == []
    assert tasks_run == ["orders.tasks.process_outbox_message"]


def test_the_webhook_goes_out_from_the_placed_orders_one_task_bcp_wh_01(
    client: Client, fake_platform: FakePlatform, tasks_run: list[str], django_capture_on_commit_callbacks: Any
) -> None:
    from orders.models import OrderEvent

    catalog()
    headers = _headers(fake_platform, fake_platform.profile(handlers=fake_platform.with_card()))
    done = _place_by_card(client, headers, django_capture_on_commit_callbacks)
    # one task: the webhook was prepared and delivered from the order's outbox task, on its first attempt
    assert tasks_run == ["orders.tasks.process_outbox_message"]
    delivery = WebhookDelivery.objects.get()
    assert (delivery.order_id, delivery.event, delivery.status, delivery.attempts) == (
        done["order"]["id"],
        "placed",
        "delivered",
        1,
    )
    assert list(WebhookAttempt.objects.filter(delivery=delivery).values_list("number", "status_code")) == [(1, 200)]
    assert [r.path for r in fake_platform.received if r.method == "POST"] == [WEBHOOK_PATH]
    assert [m.to for m in mail.outbox] == [["ana@example.com.br"]]
    assert not OrderEvent.objects.filter(kind="webhook_none").exists()  # no such line is written any more
    # the webhook's receiver runs last, so a slow platform holds back neither the e-mail nor the NF-e request
    assert order_changed.receivers[-1][0][0] == "bcp_app.order_webhooks"


def test_an_unreadable_profile_hands_the_webhook_to_its_retrying_task_bcp_wh_03(
    client: Client, fake_platform: FakePlatform, tasks_run: list[str], django_capture_on_commit_callbacks: Any
) -> None:
    catalog()
    profile = fake_platform.profile(handlers=fake_platform.with_card())
    headers = _headers(fake_platform, profile)
    done = _place_by_card(client, headers, django_capture_on_commit_callbacks, execute=False)
    # given the platform's profile is no longer cached and answers 500 when the order's task runs
    cache.clear()
    ProfileCacheEntry.objects.all().delete()
    fake_platform.serve_json("/perfil.json", {"error": "down"}, status=500)
    outbox = OutboxMessage.objects.get(kind="order_changed")
    assert outbox_process(message_id=outbox.pk) == "done"
    # then the e-mail went out, no delivery was made, and the webhook went to its own (retrying) task
    assert tasks_run == [prepare_order_webhook.name]
    assert WebhookDelivery.objects.count() == 0
    assert [m.to for m in mail.outbox] == [["ana@example.com.br"]]
    # when the profile answers again, that task prepares and sends the webhook, once
    fake_platform.serve_json("/perfil.json", profile, headers={"Cache-Control": "public, max-age=300"})
    ProfileCacheEntry.objects.all().delete()  # the failure's backoff has passed
    assert prepare_order_webhook.apply(args=(done["order"]["id"], "placed", outbox.key)).get() == "delivered"
    assert prepare_order_webhook.apply(args=(done["order"]["id"], "placed", outbox.key)).get() == "skipped"
    assert WebhookDelivery.objects.get().status == "delivered"
    assert [r.path for r in fake_platform.received if r.method == "POST"] == [WEBHOOK_PATH]


def _order_reads(queries: list[dict[str, Any]]) -> list[str]:
    return [q["sql"] for q in queries if q["sql"].startswith("SELECT") and 'FROM "orders_order"' in q["sql"]]


@pytest.mark.parametrize("webhook_url", [True, False], ids=["webhook_url", "no_webhook_url"])
def test_the_placed_orders_task_reads_the_order_once_within_its_statement_budget(
    client: Client,
    fake_platform: FakePlatform,
    django_capture_on_commit_callbacks: Any,
    django_assert_max_num_queries: Any,
    webhook_url: bool,
) -> None:
    """Issue 34: the order's one task (buyer e-mail, NF-e request, webhook) reads the order once, with its lines
    and adjustments, in the statement that claims the outbox row, and passes it to every receiver; the NF-e's lock
    checks only what tells that read is current, in the statement that writes the blocked NF-e (the store has no
    fiscal data). A platform without `webhook_url` costs no write."""
    catalog()
    profile = fake_platform.profile(handlers=fake_platform.with_card())
    if not webhook_url:
        del profile["ucp"]["capabilities"]["br.dev.bcp.shopping.order"][0]["config"]
    _place_by_card(client, _headers(fake_platform, profile), django_capture_on_commit_callbacks, execute=False)
    outbox = OutboxMessage.objects.get(kind="order_changed")

    # 38 and 36, then 18 and 16, then 13 and 11 before (the lines and adjustments now come with the claim)
    with django_assert_max_num_queries(11 if webhook_url else 9) as captured:
        assert outbox_process(message_id=outbox.pk) == "done"

    assert _order_reads(captured.captured_queries) == []  # no read of its own: the outbox row's claim reads it
    claim = captured.captured_queries[0]["sql"]
    assert claim.startswith("WITH claimed AS (UPDATE") and 'LEFT JOIN "orders_order"' in claim
    # the NF-e's lock (status, payment, updated_at) guards the blocked document's own statement
    (blocked,) = [q["sql"] for q in captured.captured_queries if 'INSERT INTO "fiscal_fiscaldocument"' in q["sql"]]
    assert blocked.startswith('WITH guard AS (SELECT 1 FROM "orders_order"') and "FOR UPDATE" in blocked
    assert WebhookDelivery.objects.filter(status="delivered").count() == int(webhook_url)
    assert [m.to for m in mail.outbox] == [["ana@example.com.br"]]
    with django_assert_max_num_queries(1):  # a duplicate task: the claim finds the row done
        assert outbox_process(message_id=outbox.pk) == "skipped"


def test_a_platform_revoked_after_the_worker_kept_it_gets_no_more_webhooks(
    client: Client, fake_platform: FakePlatform, django_capture_on_commit_callbacks: Any
) -> None:
    """Issue 34: the worker keeps the order's platform per process (platform_get_kept); a revocation drops it at
    once, so the platform's next order event writes and sends nothing."""
    catalog()
    headers = _headers(fake_platform, fake_platform.profile(handlers=fake_platform.with_card()))
    done = _place_by_card(client, headers, django_capture_on_commit_callbacks)
    delivery = WebhookDelivery.objects.get()
    assert delivery.status == "delivered"
    platform_revoke(public_id=delivery.platform_id)

    on_order_changed(None, order_id=done["order"]["id"], event="canceled", outbox_key="later-event",
                     platform_id=delivery.platform_id)  # fmt: skip

    assert list(WebhookDelivery.objects.values_list("pk", flat=True)) == [delivery.pk]
    assert [r.method for r in fake_platform.received].count("POST") == 1


@pytest.mark.django_db(transaction=True)  # real commits: with no broker the whole chain runs inside the cancel's commit
def test_a_card_orders_cancel_is_a_webhook_labelled_canceled_before_its_refunds_bcp_wh_02(
    client: Client, fake_platform: FakePlatform
) -> None:
    """The gateway answers the card estorno at once: the refund's completion is a change of its own, made while the
    cancel's after-commit work runs. The cancellation's webhook goes first, so its delivery is the one recorded (and
    shown in the admin) as `canceled`, delivered — not a `refunded` one standing for it (BCP-WH-02: each change)."""
    catalog()
    headers = _headers(fake_platform, fake_platform.profile(handlers=fake_platform.with_card()))
    order_id = _place_by_card(client, headers, lambda execute: nullcontext())["order"]["id"]
    # when the shop cancels the paid order (its refund asked in the same transaction)
    order_cancel(order_id=order_id, reason="Cliente desistiu")
    # then the platform got the canceled order, then the refunded one, each delivery labelled by its change
    deliveries = WebhookDelivery.objects.order_by("id")
    assert [(d.event, d.status) for d in deliveries] == [
        ("placed", "delivered"), ("canceled", "delivered"), ("refunded", "delivered")
    ]  # fmt: skip
    hooks = [json.loads(r.body) for r in fake_platform.received if r.method == "POST" and r.path == WEBHOOK_PATH]
    assert hooks == [json.loads(d.body) for d in deliveries]
    assert [(a["type"], a["status"]) for a in hooks[1]["adjustments"]] == [
        ("cancellation", "completed"), ("refund", "pending")
    ]  # fmt: skip
    assert [(a["type"], a["status"]) for a in hooks[2]["adjustments"]][-1] == ("refund", "completed")
