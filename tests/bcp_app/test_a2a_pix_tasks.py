"""A2A tasks for Pix (issue 35), with the official a2a-sdk client against a live uvicorn.

Seed 004 ("A2A interactions"): "Business agents may return a Message directly or create a Task when the operation
requires tracking"; BCP-A2A-04: `result` has exactly one of `message`/`task`; BCP-A2A-08: a terminal task takes no
messages. PIX.md §2: a Pix complete is `complete_in_progress` until the PSP settles. So a Pix complete over A2A
answers a Task in `working` that ends `completed` (with the order) when the charge settles; GetTask and
SubscribeToTask read it from any process; the platform's push URL gets the task, signed like an order webhook
(BCP §8 headers, BCP-WH-03/04), through the webhook outbox; a replayed settlement pushes nothing twice.
The platform (profile host and push receiver) is faked at its network boundary on 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from google.protobuf import struct_pb2
from google.protobuf.json_format import MessageToDict, ParseDict

from bcp_app.protocol.keys import public_jwk
from bcp_app.protocol.signatures import WEBHOOK_COMPONENTS, HttpMessage, verify_message
from bcp_app.transports.a2a.messages import intify
from tests.bcp_app.bcp_fixtures import FakePlatform
from tests.bcp_app.test_a2a_helpers import EXTENSION, LiveServer, make_product

pytestmark = [pytest.mark.postgres, pytest.mark.e2e, pytest.mark.usefixtures("bcp_settings")]
PIX = {"id": "instr_1", "handler_id": "pix_recebedor_001", "type": "pix", "selected": True}
BUYER = {"first_name": "Ana", "last_name": "Souza", "email": "ana@example.com.br"}
PUSH_PATH = "/a2a/notificacoes"


@pytest.fixture(scope="module")
def live(django_db_setup: None, django_db_blocker: Any) -> Iterator[LiveServer]:
    with django_db_blocker.unblock():
        started = LiveServer().start()
    yield started
    started.stop()


class Platform:
    """A registered platform (API key) speaking A2A with the official client; its push receiver is `fake`."""

    def __init__(self, live: LiveServer, fake: FakePlatform, *, push_url: str = "") -> None:
        from bcp_app.service.platforms import platform_create

        self.live, self.fake = live, fake
        self.profile_url = fake.publish()
        created = platform_create(name="Agente A2A", profile_url=self.profile_url)
        if push_url:
            created.platform.a2a_push_url = push_url
            created.platform.save()
        self.headers = {
            "BCP-Agent": f'profile="{self.profile_url}"',
            "A2A-Extensions": EXTENSION,
            "Authorization": f"Bearer {created.api_key}",
        }

    async def client(self, http: httpx.AsyncClient, *, streaming: bool = False, push: Any = None) -> Any:
        from a2a.client import ClientConfig, create_client

        return await create_client(
            self.live.base_url,
            client_config=ClientConfig(streaming=streaming, httpx_client=http, push_notification_config=push),
        )

    def send(self, data: dict[str, Any], *, context_id: str = "", push: Any = None) -> dict[str, Any]:
        """One SendMessage; the `result` as a dict (`{"message": …}` or `{"task": …}`), integers restored."""
        from a2a.types import Message, Part, Role, SendMessageRequest

        async def go() -> dict[str, Any]:
            async with httpx.AsyncClient(headers=self.headers, timeout=30) as http:
                client = await self.client(http, push=push)
                message = Message(
                    role=Role.ROLE_USER, message_id=str(uuid.uuid4()), context_id=context_id, extensions=[EXTENSION]
                )
                message.parts.append(Part(data=ParseDict(data, struct_pb2.Value()), media_type="application/json"))
                async for event in client.send_message(SendMessageRequest(message=message)):
                    return intify(MessageToDict(event))
                return {}

        return asyncio.run(go())

    def get_task(self, task_id: str) -> dict[str, Any]:
        from a2a.types import GetTaskRequest

        async def go() -> dict[str, Any]:
            async with httpx.AsyncClient(headers=self.headers, timeout=30) as http:
                client = await self.client(http)
                return intify(MessageToDict(await client.get_task(GetTaskRequest(id=task_id))))

        return asyncio.run(go())


def checkout_in(message: dict[str, Any]) -> dict[str, Any]:
    for part in message["parts"]:
        if "a2a.bcp.checkout" in part.get("data", {}):
            return part["data"]["a2a.bcp.checkout"]
    raise AssertionError(json.dumps(message)[:500])


def pix_task(agent: Platform, *, push: Any = None) -> tuple[dict[str, Any], str]:
    """add → buyer + Pix → complete: the `working` task and the charge's txid."""
    added = agent.send({"action": "add_to_checkout", "product_id": "PIXEL-10-PRO", "quantity": 1})
    context_id = added["message"]["contextId"]
    ready = checkout_in(
        agent.send(
            {"action": "update_checkout", "buyer": BUYER, "a2a.bcp.checkout.payment": {"instruments": [PIX]}},
            context_id=context_id,
        )["message"]
    )
    assert ready["status"] == "ready_for_complete", ready.get("messages")
    completing = agent.send(
        {"action": "complete_checkout", "a2a.bcp.checkout.payment": {"instruments": [PIX]}},
        context_id=context_id,
        push=push,
    )
    return completing, ready["payment"]["instruments"][0]["pix"]["txid"]


@pytest.fixture
def shop(live: LiveServer, transactional_db: None, settings: Any) -> LiveServer:
    settings.BCP_PUBLIC_URL = live.base_url
    settings.BCP_PIX_SANDBOX = True
    settings.PIX_SANDBOX_WEBHOOK_URL = ""  # the sandbox settles in-process (eager Celery)
    make_product("Pixel 10 Pro", "PIXEL-10-PRO", 599900)
    return live


def pushes(fake: FakePlatform) -> list[Any]:
    return [r for r in fake.received if r.method == "POST" and r.path == PUSH_PATH]


def test_a_pix_complete_is_a_working_task_that_settlement_completes_with_a_signed_push(
    shop: LiveServer, fake_platform: FakePlatform
) -> None:
    from bcp_app.models import A2ATask, WebhookDelivery
    from bcp_app.service.a2a_tasks import task_settle
    from payments.sandbox.services import PayOptions, pay, redeliver

    agent = Platform(shop, fake_platform, push_url=fake_platform.url(PUSH_PATH))

    completing, txid = pix_task(agent)

    # BCP-A2A-04: the result is a task, `working`, carrying the checkout waiting for the Pix
    assert list(completing) == ["task"]
    task = completing["task"]
    assert task["status"]["state"] == "TASK_STATE_WORKING"
    waiting = checkout_in(task["status"]["message"])
    assert waiting["status"] == "complete_in_progress" and "order" not in waiting
    assert agent.get_task(task["id"])["status"]["state"] == "TASK_STATE_WORKING"
    assert pushes(fake_platform) == []

    # the sandbox PSP is paid: webhook → settlement → charge_settled → the task completes, the push goes out
    [paid] = pay(txid=txid, options=PayOptions())

    done = agent.get_task(task["id"])
    assert done["status"]["state"] == "TASK_STATE_COMPLETED"
    completed = checkout_in(done["status"]["message"])
    assert completed["status"] == "completed"
    assert sorted(completed["order"]) == ["id", "permalink_url"]
    [received] = pushes(fake_platform)
    message = HttpMessage(
        method="POST", authority=f"127.0.0.1:{fake_platform.port}", path=PUSH_PATH, headers=received.headers
    )
    verify_message(message, received.body, [public_jwk()], required=WEBHOOK_COMPONENTS)  # BCP-WH-04
    assert uuid.UUID(received.headers["webhook-id"])  # BCP-WH-03
    pushed = json.loads(received.body)
    assert list(pushed) == ["task"]  # an A2A StreamResponse
    assert (pushed["task"]["id"], pushed["task"]["status"]["state"]) == (task["id"], "TASK_STATE_COMPLETED")
    assert checkout_in(pushed["task"]["status"]["message"])["order"] == completed["order"]

    # a replayed settlement (the PSP delivers the same Pix again) changes nothing and pushes nothing twice
    redeliver(e2eid=paid.end_to_end_id)
    assert task_settle(checkout_id=completed["id"]) == 0
    assert len(pushes(fake_platform)) == 1
    assert WebhookDelivery.objects.filter(event="a2a_task").count() == 1
    assert A2ATask.objects.get(task_id=task["id"]).version == 2


def test_the_push_url_named_in_the_message_wins_and_tasks_belong_to_their_caller(
    shop: LiveServer, fake_platform: FakePlatform
) -> None:
    from a2a.types import TaskPushNotificationConfig
    from a2a.utils.errors import TaskNotFoundError

    from payments.sandbox.services import PayOptions, pay

    agent = Platform(shop, fake_platform)  # no registered push URL
    completing, txid = pix_task(
        agent, push=TaskPushNotificationConfig(url=fake_platform.url(PUSH_PATH), token="tok-123")
    )
    task_id = completing["task"]["id"]
    other = Platform(shop, fake_platform)

    with pytest.raises(TaskNotFoundError):
        other.get_task(task_id)  # another platform's task is as unknown as a missing one
    pay(txid=txid, options=PayOptions())

    [received] = pushes(fake_platform)
    assert json.loads(received.body)["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert received.headers["x-a2a-notification-token"] == "tok-123"  # A2A: the task's token comes back


def test_resubscribe_streams_the_settlement_and_a_finished_task_takes_no_message_bcp_a2a_08(
    shop: LiveServer, fake_platform: FakePlatform
) -> None:
    from a2a.types import Message, Part, Role, SendMessageRequest, SubscribeToTaskRequest
    from a2a.utils.errors import UnsupportedOperationError
    from asgiref.sync import sync_to_async
    from django.db import connection

    from payments.sandbox.services import PayOptions, pay

    agent = Platform(shop, fake_platform)
    completing, txid = pix_task(agent)
    task_id = completing["task"]["id"]

    def settle() -> None:  # in a worker thread: its connection closed after, as a request's would be
        try:
            pay(txid=txid, options=PayOptions())
        finally:
            connection.close()

    async def follow() -> list[dict[str, Any]]:
        seen: list[dict[str, Any]] = []
        async with httpx.AsyncClient(headers=agent.headers, timeout=30) as http:
            client = await agent.client(http, streaming=True)
            async for event in client.subscribe(SubscribeToTaskRequest(id=task_id)):
                seen.append(intify(MessageToDict(event)))
                if len(seen) == 1:  # the snapshot arrived: now the PSP settles
                    await sync_to_async(settle, thread_sensitive=False)()
        return seen

    events = asyncio.run(follow())

    assert events[0]["task"]["status"]["state"] == "TASK_STATE_WORKING"
    assert events[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert checkout_in(events[-1]["statusUpdate"]["status"]["message"])["status"] == "completed"

    async def message_to_finished_task() -> None:
        async with httpx.AsyncClient(headers=agent.headers, timeout=30) as http:
            client = await agent.client(http)
            message = Message(
                role=Role.ROLE_USER,
                message_id=str(uuid.uuid4()),
                context_id=completing["task"]["contextId"],
                task_id=task_id,
                extensions=[EXTENSION],
            )
            message.parts.append(Part(text="status do pedido"))
            async for _ in client.send_message(SendMessageRequest(message=message)):
                pass

    with pytest.raises(UnsupportedOperationError):
        asyncio.run(message_to_finished_task())


def test_the_agent_card_says_tasks_are_streamed_and_pushed(shop: LiveServer) -> None:
    capabilities = httpx.get(f"{shop.base_url}/.well-known/agent-card.json", timeout=10).json()["capabilities"]

    assert (capabilities["streaming"], capabilities["pushNotifications"]) == (True, True)


def test_a_task_whose_checkout_ends_unpaid_is_canceled_by_the_sweep_and_pushed(
    shop: LiveServer, fake_platform: FakePlatform
) -> None:
    """PIX.md §2 expiry / BCP-CHK-14 cancel during `complete_in_progress`: the checkout ends without a settlement;
    the beat sweep ends its task (`canceled`, with the canceled checkout) so no resubscriber waits forever."""
    from datetime import timedelta

    from django.utils import timezone

    from bcp_app.models import A2ATask
    from bcp_app.tasks import reconcile_a2a_tasks

    agent = Platform(shop, fake_platform, push_url=fake_platform.url(PUSH_PATH))
    completing, _txid = pix_task(agent)
    task = completing["task"]
    canceled = checkout_in(agent.send({"action": "cancel_checkout"}, context_id=task["contextId"])["message"])
    assert canceled["status"] == "canceled"
    fresh = reconcile_a2a_tasks()  # a task is left alone for a minute (its settlement may be on its way)
    A2ATask.objects.filter(task_id=task["id"]).update(updated_at=timezone.now() - timedelta(minutes=2))

    ended = reconcile_a2a_tasks()
    again = reconcile_a2a_tasks()

    assert (fresh, ended, again) == (0, 1, 0)
    done = agent.get_task(task["id"])
    assert done["status"]["state"] == "TASK_STATE_CANCELED"
    assert checkout_in(done["status"]["message"])["status"] == "canceled"
    [received] = pushes(fake_platform)
    assert json.loads(received.body)["task"]["status"]["state"] == "TASK_STATE_CANCELED"


def test_push_config_methods_set_the_url_of_an_open_task_and_list_tasks_shows_it(
    shop: LiveServer, fake_platform: FakePlatform
) -> None:
    """A2A CreateTaskPushNotificationConfig / ListTaskPushNotificationConfigs / ListTasks on our tasks."""
    from a2a.types import ListTaskPushNotificationConfigsRequest, ListTasksRequest, TaskPushNotificationConfig

    from payments.sandbox.services import PayOptions, pay

    agent = Platform(shop, fake_platform)  # nothing registered, nothing named in the message
    completing, txid = pix_task(agent)
    task = completing["task"]

    async def configure() -> tuple[Any, Any, Any]:
        async with httpx.AsyncClient(headers=agent.headers, timeout=30) as http:
            client = await agent.client(http)
            created = await client.create_task_push_notification_config(
                TaskPushNotificationConfig(task_id=task["id"], url=fake_platform.url(PUSH_PATH), token="t-1")
            )
            listed = await client.list_task_push_notification_configs(
                ListTaskPushNotificationConfigsRequest(task_id=task["id"])
            )
            tasks = await client.list_tasks(ListTasksRequest(context_id=task["contextId"]))
            return created, listed, tasks

    created, listed, tasks = asyncio.run(configure())
    pay(txid=txid, options=PayOptions())

    assert (created.task_id, created.url) == (task["id"], fake_platform.url(PUSH_PATH))
    assert [c.url for c in listed.configs] == [fake_platform.url(PUSH_PATH)]
    assert [t.id for t in tasks.tasks] == [task["id"]]
    [received] = pushes(fake_platform)
    assert json.loads(received.body)["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


def test_a_push_url_on_a_private_address_is_refused(
    shop: LiveServer, fake_platform: FakePlatform, settings: Any
) -> None:
    """BCP §3 outbound rules (BCP-WH-07) for the push URL a message names: no special-use addresses."""
    from a2a.types import TaskPushNotificationConfig
    from a2a.utils.errors import InvalidParamsError

    agent = Platform(shop, fake_platform)
    added = agent.send({"action": "add_to_checkout", "product_id": "PIXEL-10-PRO", "quantity": 1})

    with pytest.raises(InvalidParamsError) as caught:
        agent.send(
            {"action": "get_checkout"},
            context_id=added["message"]["contextId"],
            push=TaskPushNotificationConfig(url="http://10.0.0.5/push"),
        )

    assert "taskPushNotificationConfig.url" in str(caught.value)
