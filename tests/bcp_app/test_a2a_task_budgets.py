"""Statement budgets of the A2A task operations (issue 35; bcp_app/service/a2a_tasks.py).

The settlement of every Pix charge asks whether an A2A task waits on its checkout: one query when none does
(nearly always). Ending a task (present the checkout, save the task, write its push row) is a fixed handful.
GetTask reads one row.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.db import transaction
from django.test import Client

from bcp_app.models import A2ATask, Platform, WebhookDelivery
from bcp_app.service import a2a_tasks
from bcp_app.service.context import RequestContext
from bcp_app.service.platforms import platform_create
from tests.bcp_app.bcp_fixtures import FakePlatform, agent
from tests.bcp_app.rest_helpers import complete, ready_checkout

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("rest_shop")]


def test_a_settlement_without_a_task_costs_one_query(django_assert_max_num_queries: Any) -> None:
    with django_assert_max_num_queries(1):
        assert a2a_tasks.task_settle(checkout_id="checkout_semtarefa") == 0


def test_get_task_reads_one_row(django_assert_max_num_queries: Any) -> None:
    with django_assert_max_num_queries(1):
        assert a2a_tasks.task_for_caller("nada", "platform:plat_x") is None


def test_ending_a_task_has_a_fixed_budget(
    client: Client,
    fake_platform: FakePlatform,
    django_assert_max_num_queries: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    from payments.sandbox.services import PayOptions, pay

    created = platform_create(name="Agente", profile_url=fake_platform.publish())
    Platform.objects.filter(pk=created.platform.pk).update(a2a_push_url=fake_platform.url("/push"))
    headers = agent(created.platform.profile_url, Authorization=f"Bearer {created.api_key}")
    ready = ready_checkout(client, headers)
    waiting = complete(client, ready["id"], headers).json()
    assert waiting["status"] == "complete_in_progress"
    ctx = RequestContext(
        transport="a2a",
        profile_url=created.platform.profile_url,
        profile={},
        capabilities={"br.dev.bcp.shopping.checkout": "2026-07-28"},
        platform=created.platform,
    )
    task = a2a_tasks.task_open(ctx, context_id="ctx-1", checkout=waiting)
    with django_capture_on_commit_callbacks(execute=True):  # the webhook → settlement → the task ends
        pay(txid=ready["payment"]["instruments"][0]["pix"]["txid"], options=PayOptions())
    row = A2ATask.objects.get(task_id=task["id"])
    assert row.state == A2ATask.State.COMPLETED
    # measured again on the completed checkout: the task back to `working`, its push row gone
    A2ATask.objects.filter(pk=row.pk).update(state=A2ATask.State.WORKING, version=1)
    WebhookDelivery.objects.filter(event="a2a_task").delete()

    with django_assert_max_num_queries(14), transaction.atomic(), django_capture_on_commit_callbacks(execute=False):
        assert a2a_tasks.task_settle(checkout_id=waiting["id"]) == 1

    delivery = WebhookDelivery.objects.get(event="a2a_task")
    assert json.loads(delivery.body)["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert delivery.url == fake_platform.url("/push")
