"""Benchmark (issue 34): the Celery worker's CPU per placed order, printed by `make bench` (never asserted).

Orders are placed through BCP REST (Django's test client, the bodies of tests/bench/bench_client.py, card
sandbox) with every task the request path enqueues caught instead of published; then this process plays the
worker: it runs each caught task through its registered Celery task (what `celery worker` calls), and every
task those enqueue in turn (the fiscal job, a second outbox row, …), until none is left. Only that drain is
measured, by the CPU clock of this thread (the fake platform and the fake SMTP server answer from threads of
their own, as the outside world would). The e-mail goes through Django's SMTP backend to an SMTP server on
127.0.0.1; the webhook to the fake platform's receiver, signed; the NF-e as in `make bench`'s REST flow (the
store has no fiscal data: the request is recorded blocked).

Two platforms: one whose profile names a `webhook_url` (as the REST flow bench), one without. Baseline, same
rounds, same orders: a bare task doing the least a worker could do per order (claim the outbox row, read the
order with its lines, insert one timeline row, mark the row done). Rounds interleave the cases; medians of
per-round values (min–max). Also printed: statements per order by kind (SELECT / INSERT / UPDATE / other), the
inclusive share of a few landmarks under cProfile, and two measures the shared machine's load does not move, each
against the bare task on the same orders: Python function calls per order (cProfile's count), and, when run under
callgrind (tests/bench/callgrind.py says how), instructions per order.
"""

from __future__ import annotations

import cProfile
import io
import json
import logging
import os
import pstats
import statistics
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from celery.app.task import Task
from django.db import connection, transaction
from django.db.models import F
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from bcp_app.service.platforms import platform_create
from kernel import http
from kernel.tasks import task_named
from orders import emails
from orders.models import Order, OrderEvent, OutboxMessage
from tests.bcp_app.bcp_fixtures import FakePlatform, bcp_settings, fake_platform  # noqa: F401
from tests.bcp_app.rest_helpers import SP
from tests.bench.bench_client import COMPLETE, create_body, update_body
from tests.bench.callgrind import counter
from tests.bench.rounds import spread
from tests.orders.fake_smtp import FakeSMTP, fake_smtp
from tests.shop.checkout_factories import make_shipping, make_variant

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres]

ORDERS = 20  # orders per case and round
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))
COUNTED = 5  # orders whose statements are counted (a separate pass: recording queries costs CPU)
ORDER_CAPABILITY = "br.dev.bcp.shopping.order"
# (label, substring of the file, function) whose inclusive time is printed as a share of the drain
LANDMARKS = (
    ("outbox_process", "orders/services/dispatch.py", "outbox_process"),
    ("placed e-mail (order_placed_email_send)", "orders/services/notes.py", "order_placed_email_send"),
    ("  build_order_email", "orders/emails.py", "build_order_email"),
    ("  email.headerregistry", "email/headerregistry.py", None),
    ("  SMTP backend send_messages", "mail/backends/smtp.py", "send_messages"),
    ("NF-e receiver (on_order_changed)", "shop/invoicing/lifecycle.py", "on_order_changed"),
    ("webhook receiver (on_order_changed)", "bcp_app/service/webhooks.py", "on_order_changed"),
    ("  signed_headers", "bcp_app/service/webhooks.py", "signed_headers"),
    ("  outbound.post", "bcp_app/service/outbound.py", "post"),
    ("SQL execute (CursorWrapper)", "django/db/backends/utils.py", "_execute"),
    ("SQL compile", "django/db/models/sql/compiler.py", "as_sql"),
)


@pytest.fixture
def smtp_server(settings: Any) -> Iterator[FakeSMTP]:
    """A mail server on 127.0.0.1 (the boundary), and the shop's production mailer (SMTP) pointed at it."""
    with fake_smtp() as server:
        settings.MAILERS = server.mailers()
        yield server


class Broker:
    """Stands for Redis: what the code publishes (`apply_async`) is kept, to be run by `drain` as the worker."""

    def __init__(self) -> None:
        self.queue: list[tuple[str, tuple[Any, ...]]] = []
        self.later = 0  # tasks published with a countdown (a retry): not this order's immediate work
        self.run: dict[str, int] = {}

    def publish(self, task: Task, args: Any = None, kwargs: Any = None, countdown: Any = None, **_: Any) -> None:
        assert not kwargs, kwargs
        if countdown:
            self.later += 1
            return
        self.queue.append((task.name, tuple(args or ())))

    def drain(self) -> int:
        """Run every queued task, and what they queue, as the worker would; the number run."""
        count = 0
        while self.queue:
            name, args = self.queue.pop(0)
            task_named(name)(*args)
            self.run[name] = self.run.get(name, 0) + 1
            count += 1
        return count


def _place(client: Client, sku: str) -> str:
    def send(method: str, path: str, body: dict[str, Any], **extra: str) -> dict[str, Any]:
        response = getattr(client, method)(
            f"/bcp/v1{path}", data=json.dumps(body), content_type="application/json", headers=extra
        )
        assert response.status_code in (200, 201), response.content[:300]
        return response.json()

    created = send("post", "/checkout-sessions", create_body(sku))
    updated = send("put", f"/checkout-sessions/{created['id']}", update_body(created, sku, SP))
    assert updated["status"] == "ready_for_complete", updated.get("messages")
    done = send(
        "post", f"/checkout-sessions/{created['id']}/complete", COMPLETE, **{"Idempotency-Key": str(uuid.uuid4())}
    )
    assert done["status"] == "completed", done.get("messages")
    return str(done["order"]["id"])


def _bare(order_ids: list[str]) -> None:
    """The least a worker could do per order: claim its outbox row, read the order with its lines in one
    query each, write one timeline row, mark the row done."""
    for order_id in order_ids:
        message = OutboxMessage.objects.create(kind="bench_bare", key=f"bare:{uuid.uuid4().hex}", payload={})
        OutboxMessage.objects.filter(pk=message.pk, status="pending").update(
            attempts=F("attempts") + 1, claimed_until=timezone.now()
        )
        order = Order.objects.prefetch_related("lines").get(public_id=order_id)
        with transaction.atomic():
            OrderEvent.objects.create(
                order=order, kind="bench", message=f"{len(order.lines.all())} linhas", internal=True
            )
        OutboxMessage.objects.filter(pk=message.pk).update(status="done", processed_at=timezone.now())


def _timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    started = time.thread_time()
    result = fn()
    return time.thread_time() - started, result


def _calls(fn: Callable[[], Any]) -> int:
    """The function calls (Python and C) made in this thread while fn runs: the same for the same work, whatever the
    load. (A profile hook of this thread's own: cProfile's counts take in every thread, the fake servers' too.)"""
    count = 0

    def tally(frame: Any, event: str, arg: Any) -> None:
        nonlocal count
        if event == "call" or event == "c_call":
            count += 1

    sys.setprofile(tally)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return count


def _kinds(queries: list[dict[str, Any]]) -> dict[str, int]:
    counts = {"SELECT": 0, "INSERT": 0, "UPDATE": 0, "other": 0}
    for query in queries:
        verb = query["sql"].lstrip().split(" ", 1)[0].upper()
        counts[verb if verb in counts else "other"] += 1
    return counts


def _landmarks(profile: cProfile.Profile) -> None:
    stats = pstats.Stats(profile)
    total = stats.total_tt  # type: ignore[attr-defined]
    entries = stats.stats.items()  # type: ignore[attr-defined]
    for label, file_part, function in LANDMARKS:
        if function is None:  # a module: its functions' own time
            share = sum(tt for (path, _, _), (_, _, tt, _, _) in entries if file_part in path)
        else:
            share = sum(ct for (path, _, name), (_, _, _, ct, _) in entries if file_part in path and name == function)
        print(f"      {label:<42} {share / total:6.1%}")
    out = io.StringIO()
    pstats.Stats(profile, stream=out).sort_stats("tottime").print_stats(12)
    print("\n".join(line for line in out.getvalue().splitlines()[-14:] if line.strip()))


@pytest.mark.timeout(1800)
def test_worker_cpu_per_placed_order(
    bcp_settings: Any,  # noqa: F811
    fake_platform: FakePlatform,  # noqa: F811
    smtp_server: FakeSMTP,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(logging.getLogger("httpx"), "level", logging.WARNING)  # a line per webhook POST
    # A busy worker's SMTP and platform connections stay open between orders; placing the next orders (slow under
    # callgrind) must not let them lapse, or a drain's counts would take in a reconnection now and then.
    monkeypatch.setattr(emails, "SMTP_IDLE_SECONDS", 3600.0)
    monkeypatch.setattr(http, "KEEP_SECONDS", 3600.0)
    bcp_settings.BCP_RATE_LIMITS = {name: ("1000000/minute", "1000000/minute") for name in bcp_settings.BCP_RATE_LIMITS}
    bcp_settings.BCP_CHECK_OUTPUT = False  # as in production (the suite checks every built body against its model)
    broker = Broker()
    monkeypatch.setattr(Task, "apply_async", lambda task, *args, **kwargs: broker.publish(task, *args, **kwargs))
    make_variant("SKU-BENCH", price=4290, stock=1_000_000, title="Café de benchmark")
    make_shipping()
    with_url = fake_platform.profile(handlers=fake_platform.with_card())
    without_url = fake_platform.profile(handlers=fake_platform.with_card())
    del without_url["ucp"]["capabilities"][ORDER_CAPABILITY][0]["config"]
    clients = {}
    for label, document, path in (
        ("webhook_url", with_url, "/com-webhook.json"),
        ("no webhook_url", without_url, "/sem-webhook.json"),
    ):
        url = fake_platform.serve_json(path, document, headers={"Cache-Control": "public, max-age=3600"})
        platform = platform_create(name=f"Bench {label}", profile_url=url)
        clients[label] = Client(
            headers={"BCP-Agent": f'profile="{url}"', "Authorization": f"Bearer {platform.api_key}"}
        )

    def place(label: str, count: int) -> list[str]:
        orders = [_place(clients[label], "SKU-BENCH") for _ in range(count)]
        assert broker.queue, "placing an order published no task"
        return orders

    for label in clients:  # steady state: profiles cached, templates compiled, connections open
        place(label, 2)
        broker.drain()
    cpu: dict[str, list[float]] = {label: [] for label in clients}
    bare: dict[str, list[float]] = {label: [] for label in clients}
    tasks: dict[str, list[int]] = {label: [] for label in clients}
    for index in range(ROUNDS):
        for label in list(clients) if index % 2 == 0 else list(clients)[::-1]:
            orders = place(label, ORDERS)
            seconds, count = _timed(broker.drain)
            cpu[label].append(seconds / ORDERS * 1000)
            tasks[label].append(count)
            seconds, _ = _timed(partial(_bare, orders))
            bare[label].append(seconds / ORDERS * 1000)
    assert not OutboxMessage.objects.filter(status="pending").exclude(kind="bench_bare").exists()
    print(
        f"\nWorker CPU per placed order (issue 34; this thread's CPU running the tasks the placement queued, and what"
        f" they queued; {ROUNDS} rounds × {ORDERS} orders per case, interleaved; medians (min–max)); e-mail over"
        f" SMTP to 127.0.0.1, NF-e blocked (store without fiscal data, as the REST flow bench)"
    )
    everything = [value for values in bare.values() for value in values]
    print(f"  bare task (claim, read order+lines, 1 timeline row, done): {spread(everything, 2)} ms/order")
    for label in clients:
        ratio = [ours / base for ours, base in zip(cpu[label], bare[label], strict=True)]
        print(
            f"  platform with {label:<15} worker CPU {spread(cpu[label], 2)} ms/order | ×bare {spread(ratio, 1)}"
            f" | tasks per order {statistics.median(tasks[label]) / ORDERS:.1f}"
        )
    # Load-independent: counts per order, against the bare task on the same orders. Instructions first: counting
    # calls puts a profile hook in, and its removal re-instruments each function on its next call, at a cost.
    lines = {label: f"  platform with {label:<15}" for label in clients}
    instructions = counter(os.environ.get("BENCH_CALLGRIND_OUT"))
    for label in clients if instructions is not None else ():
        orders = place(label, COUNTED)
        ours, base = (instructions.count(fn)[0] / COUNTED for fn in (broker.drain, partial(_bare, orders)))
        lines[label] += f" instructions {ours / 1e6:6.2f} M/order | ×bare {ours / base:.2f} (bare {base / 1e6:.2f} M) |"
    for label in clients:
        orders = place(label, COUNTED)
        ours, base = _calls(broker.drain) / COUNTED, _calls(partial(_bare, orders)) / COUNTED
        print(f"{lines[label]} function calls {ours:6.0f}/order | ×bare {ours / base:.2f} (bare {base:.0f})")
    for label in clients:
        place(label, COUNTED)
        with CaptureQueriesContext(connection) as queries:
            broker.drain()
        kinds = _kinds(queries.captured_queries)
        if os.environ.get("BENCH_SHOW_SQL"):  # the statements of the last order, to read
            for query in queries.captured_queries[-len(queries) // COUNTED :]:
                print(f"        {query['sql'][:160]}")
        print(
            f"  statements per order, platform with {label:<15} {len(queries) / COUNTED:5.1f}: "
            + ", ".join(f"{verb} {count / COUNTED:.1f}" for verb, count in kinds.items())
        )
        place(label, ORDERS)
        profile = cProfile.Profile(time.process_time)
        profile.enable()
        broker.drain()
        profile.disable()
        if folder := os.environ.get("BENCH_PROFILE_DIR"):  # for pstats / snakeviz
            Path(folder).mkdir(parents=True, exist_ok=True)
            profile.dump_stats(Path(folder) / f"worker_{label.replace(' ', '_')}.pstats")
        print(f"  where it goes, platform with {label} (cProfile, inclusive share of the drain):")
        _landmarks(profile)
    print(
        f"  tasks run: {broker.run}; with a countdown (not run): {broker.later};"
        f" e-mails received by the SMTP server: {len(smtp_server.messages)}"
        f" over {smtp_server.connections} connection(s)"
    )
