"""A task sent after commit is one LPUSH of the message Celery itself writes (kernel/task_publish.py, issue 34).

On the real Redis broker (CELERY_BROKER_URL): the message `enqueue_on_commit` writes is compared with the one
`apply_async` writes for the same task and args, field by field but the per-message ids; and a publish stays
within its Python call budget (Celery's own path took about a thousand calls a publish). A real worker runs such a
message in tests/bcp_app/test_rest_e2e.py and tests/payments/test_worker_e2e.py (the PSP webhook's task).
"""

from __future__ import annotations

import base64
import cProfile
import json
import os
import pstats
from collections.abc import Iterator
from typing import Any

import pytest
import redis
from django.conf import LazySettings

from config.celery import app as celery_app
from kernel.tasks import enqueue_on_commit, task_named

TASK = "orders.tasks.process_outbox_message"
PER_MESSAGE = ("id", "root_id", "correlation_id", "delivery_tag", "reply_to")


@pytest.fixture
def on_commit(django_capture_on_commit_callbacks: Any) -> Any:
    return django_capture_on_commit_callbacks


@pytest.fixture
def broker(settings: LazySettings) -> Iterator[redis.Redis]:
    url = os.environ.get("CELERY_BROKER_URL", "")
    if not url.startswith("redis://"):
        pytest.skip("needs CELERY_BROKER_URL=redis://…")
    settings.CELERY_TASK_ALWAYS_EAGER = False
    celery_app.conf.task_always_eager = False
    client = redis.Redis.from_url(url)
    client.delete("celery")
    yield client
    client.delete("celery")  # nobody runs these
    celery_app.conf.task_always_eager = True


def _popped(client: redis.Redis) -> dict[str, Any]:
    raw = client.rpop("celery")  # kombu's Redis transport: LPUSH by the producer, the oldest at the right
    assert raw is not None, "no message in the queue"
    message = json.loads(raw)
    message["body"] = json.loads(base64.b64decode(message["body"]))
    for part in (message["headers"], message["properties"]):
        for name in PER_MESSAGE:
            part.pop(name, None)
    return message


@pytest.mark.django_db
def test_a_task_sent_after_commit_is_the_message_celery_writes(broker: redis.Redis, on_commit: Any) -> None:
    with on_commit(execute=True):
        enqueue_on_commit(TASK, 123)
    task_named(TASK).apply_async(args=(123,))
    ours, celerys = _popped(broker), _popped(broker)
    assert broker.llen("celery") == 0
    assert ours == celerys
    assert ours["headers"]["task"] == TASK and ours["body"][0] == [123]
    assert ours["properties"]["delivery_info"] == {"exchange": "", "routing_key": "celery"}


@pytest.mark.django_db
def test_a_task_with_a_countdown_is_sent_by_celery(broker: redis.Redis, on_commit: Any) -> None:
    """What the single LPUSH does not write (an ETA) goes through `apply_async`."""
    with on_commit(execute=True):
        enqueue_on_commit(TASK, 7, countdown=60)
    message = _popped(broker)
    assert message["headers"]["eta"] is not None and message["body"][0] == [7]


@pytest.mark.django_db
def test_a_publish_after_commit_stays_within_its_call_budget(broker: redis.Redis, on_commit: Any) -> None:
    """Issue 34: Celery's publish (routing, the producer pool, kombu's binding and declaration, the retry wrapper)
    took about 980 Python calls for the one LPUSH it ends in: 7 % of a BCP purchase's calls."""
    with on_commit(execute=True):
        enqueue_on_commit(TASK, 1)  # the first publish of the process resolves the route
    with on_commit() as callbacks:
        enqueue_on_commit(TASK, 2)
    (send,) = callbacks
    profile = cProfile.Profile()
    profile.enable()
    send()
    profile.disable()
    calls = pstats.Stats(profile).total_calls  # type: ignore[attr-defined]
    assert calls <= 300, calls
    assert broker.llen("celery") == 2
