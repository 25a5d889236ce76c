"""A task message written to a Redis broker in one LPUSH, as Celery and kombu would write it (issue 34).

`Task.apply_async` spends about a thousand Python calls on every publish (option merging, routing, the producer
pool, kombu's entity binding and declaration, the retry wrapper) for what ends as one `LPUSH <queue> <json>` on a
Redis broker: about 7 % of a BCP purchase's Python calls, one publish per placed order. `publish` writes the
same message itself when nothing would make Celery's own publish differ from it, else answers False and the
caller uses `apply_async`:

- the broker is a plain `redis://` URL with no transport option that changes the key or the list (only the
  visibility timeout, read by consumers);
- the task runs later (no eager mode), without countdown, outside a running task (whose id Celery would record
  as the parent), with no receiver of Celery's publish signals (they would not be sent), no result backend (it
  would subscribe to the result), and is routed to a direct exchange's queue at priority 0 (the anon exchange:
  the list named after the queue).

The headers come from Celery's own builder (`app.amqp.as_task_v2`) once per task and process; each message then
gets its id, its args and kombu's envelope (base64 body, delivery tag and info). tests/kernel/test_task_publish.py
compares the message with the one `apply_async` writes for the same task and args, and runs it in a real worker.
"""

from __future__ import annotations

import base64
import json
import os
import threading
import uuid
from typing import Any, NamedTuple

import redis
from celery import Celery, Task, signals
from celery.utils.saferepr import saferepr
from kombu.entity import PERSISTENT_DELIVERY_MODE
from redis.backoff import ConstantBackoff
from redis.retry import Retry

_SAFE_TRANSPORT_OPTIONS = frozenset({"visibility_timeout"})
_EMBED = {"callbacks": None, "errbacks": None, "chain": None, "chord": None}
_DELIVERY = {"persistent": PERSISTENT_DELIVERY_MODE, "transient": 1}


class _Route:
    """What every message of one task shares in this process: the queue's list, the headers, the properties."""

    __slots__ = ("delivery_mode", "headers", "queue")

    def __init__(self, queue: str, headers: dict[str, Any], delivery_mode: int) -> None:
        self.queue, self.headers, self.delivery_mode = queue, headers, delivery_mode


_routes: dict[tuple[int, str], _Route | None] = {}
_clients: dict[tuple[int, str, bool], redis.Redis] = {}
_lock = threading.Lock()


def _route(app: Celery, task: Task) -> _Route | None:
    """The task's route as `send_task` resolves it, or None where the fast path would not write the same."""
    options = dict(task._get_exec_options())  # what apply_async merges first
    ignore_result = options.pop("ignore_result", task.ignore_result)
    time_limit, soft_time_limit = options.pop("time_limit", None), options.pop("soft_time_limit", None)
    options.pop("expires", None)
    routed = app.amqp.router.route(options, task.name, (), {}, task)
    queue = routed.get("queue")
    if queue is None or isinstance(queue, str) or routed.get("exchange") or routed.get("priority"):
        return None
    exchange = queue.exchange
    if exchange is None or exchange.type != "direct" or queue.queue_arguments or queue.max_priority:
        return None
    message = app.amqp.as_task_v2(
        "0",
        task.name,
        (),
        {},
        time_limit=time_limit,
        soft_time_limit=soft_time_limit,
        ignore_result=ignore_result,
    )
    mode = exchange.delivery_mode or app.conf.task_default_delivery_mode
    return _Route(queue.name, message.headers, _DELIVERY.get(mode, mode))


def _client(url: str, retry: bool, timeout: float) -> redis.Redis:
    key = (os.getpid(), url, retry)  # a forked process gets its own connections
    client = _clients.get(key)
    if client is None:
        with _lock:
            client = _clients.get(key)
            if client is None:
                # as the broker connection: its timeout, and one retry when Celery's publish would retry
                client = redis.Redis.from_url(
                    url,
                    socket_connect_timeout=timeout,
                    socket_timeout=timeout,
                    retry=Retry(ConstantBackoff(0.2), 1 if retry else 0),
                    retry_on_error=[redis.ConnectionError, redis.TimeoutError] if retry else [],
                )
                _clients[key] = client
    return client


class _Target(NamedTuple):
    url: str  # "" where the fast path does not apply to this broker
    retry: bool
    timeout: float


_targets: dict[tuple[Any, ...], _Target] = {}


def _target(conf: Any) -> _Target:
    """The broker as the publish settings name it. Reading them all costs about 300 Python calls (each a chain of
    lookups in Celery's and Django's settings), so they are read again only when what a process (or a test) may
    change at run time changed: the broker URL, and the write URL and retry flag set on the app itself."""
    changes = conf.changes
    key = (conf.broker_url, changes.get("broker_write_url"), changes.get("task_publish_retry"))
    target = _targets.get(key)
    if target is None:
        url = conf.broker_write_url or conf.broker_url
        usable = (
            isinstance(url, str)
            and url.startswith("redis://")
            and not conf.result_backend
            and set(conf.broker_transport_options or {}) <= _SAFE_TRANSPORT_OPTIONS
        )
        timeout = conf.broker_connection_timeout or 4.0
        target = _targets[key] = _Target(url if usable else "", bool(conf.task_publish_retry), float(timeout))
    return target


def publish(app: Celery, task: Task, args: tuple[Any, ...]) -> bool:
    """Write the task's message to the Redis broker (True), or False where `apply_async` must send it.
    A broker error propagates, as from `apply_async`."""
    conf = app.conf
    if (
        conf.task_always_eager
        or signals.before_task_publish.receivers
        or signals.after_task_publish.receivers
        or app.current_worker_task is not None
    ):
        return False
    target = _target(conf)
    if not target.url:
        return False
    key = (os.getpid(), task.name)
    if key not in _routes:
        _routes[key] = _route(app, task)
    route = _routes[key]
    if route is None:
        return False
    task_id = str(uuid.uuid4())
    simple = all(type(arg) in (int, str) for arg in args) and len(args) < 16
    headers = {
        **route.headers,
        "id": task_id,
        "root_id": task_id,
        "argsrepr": repr(args) if simple else saferepr(args, app.amqp.argsrepr_maxsize),
    }
    body = json.dumps([list(args), {}, _EMBED])
    message = {
        "body": base64.b64encode(body.encode()).decode(),
        "content-encoding": "utf-8",
        "content-type": "application/json",
        "headers": headers,
        "properties": {
            "correlation_id": task_id,
            "reply_to": app.thread_oid,
            "delivery_mode": route.delivery_mode,
            "delivery_info": {"exchange": "", "routing_key": route.queue},
            "priority": 0,
            "body_encoding": "base64",
            "delivery_tag": str(uuid.uuid4()),
        },
    }
    _client(target.url, target.retry, target.timeout).lpush(route.queue, json.dumps(message))
    return True
