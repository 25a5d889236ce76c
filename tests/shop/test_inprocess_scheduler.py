"""`make run` without broker or beat still runs the periodic sweeps (config/scheduler.py, issue 12 item 7)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.conf import settings as django_settings
from django.utils import timezone

from config.scheduler import InProcessScheduler, start_if_enabled
from shop.checkout.services import checkout_create
from shop.checkout.types import CheckoutInput, LineInput
from shop.models import Checkout
from tests.shop.checkout_factories import make_shipping, make_variant


def test_it_runs_the_interval_entries_of_the_beat_schedule_and_leaves_crontabs_to_beat() -> None:
    scheduler = InProcessScheduler(django_settings.CELERY_BEAT_SCHEDULE, timezone.now())
    assert sorted(scheduler.entries) == [
        "expire-checkouts",
        "expire-pix-charges",
        "poll-carrier-tracking",
        "reconcile-a2a-tasks",
        "reconcile-card-payments",
        "reconcile-pix-charges",
        "reconcile-recurring-charges",
        "remind-abandoned-checkouts",
        "reprocess-recurrence-webhooks",
        "resend-account-links",
        "retry-order-webhooks",
        "send-pending-order-emails",
        "sweep-boleto-notices",
        "sweep-boletos",
        "sweep-fiscal",
        "sweep-fiscal-requests",
        "sweep-infractions",
        "sweep-outbox",
        "sweep-subscription-cycles",
    ]


@pytest.mark.django_db
def test_a_tick_runs_what_is_due_and_an_abandoned_checkout_is_released() -> None:
    make_variant(price=4290, stock=10)
    make_shipping()
    checkout = checkout_create(data=CheckoutInput(lines=(LineInput(sku="SKU-CAFE-500G", quantity=1),))).checkout
    Checkout.objects.filter(pk=checkout.pk).update(expires_at=timezone.now() - timedelta(minutes=1))
    started = timezone.now()
    schedule = {"expire-checkouts": django_settings.CELERY_BEAT_SCHEDULE["expire-checkouts"]}
    scheduler = InProcessScheduler(schedule, started)
    # before its interval nothing runs; once it passed, the sweep runs once per interval
    assert scheduler.tick(started + timedelta(seconds=30)) == []
    assert Checkout.objects.get(pk=checkout.pk).status == "incomplete"
    assert scheduler.tick(started + timedelta(seconds=61)) == ["expire-checkouts"]
    assert Checkout.objects.get(pk=checkout.pk).status == "canceled"
    assert scheduler.tick(started + timedelta(seconds=90)) == []
    assert scheduler.tick(started + timedelta(seconds=122)) == ["expire-checkouts"]


def test_the_thread_starts_only_when_enabled_and_without_a_broker(settings, caplog) -> None:
    settings.SHOP_INPROCESS_SCHEDULER = False
    assert start_if_enabled() is None
    settings.SHOP_INPROCESS_SCHEDULER = True
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:6379/2"
    assert start_if_enabled() is None
    # `make run` with a broker: the developer is told what to start, or a sandbox Pix waits forever
    assert "Start `make worker` and `make beat`" in caplog.text
    settings.CELERY_BROKER_URL = ""
    thread = start_if_enabled()
    assert thread is not None and thread.is_alive()
    thread.stop()
    assert not thread.is_alive()
