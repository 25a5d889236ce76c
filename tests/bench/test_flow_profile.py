"""Where the web process's CPU goes on the hot paths (issue 34), printed by `make bench`: cProfile over
FLOWS BCP REST purchases (create → update → complete by card, the bodies of tests/bench/bench_client.py) and
READS GET order requests, through Django's test client in this process, in steady state (profile, identity
and shipping table cached). Run with `REDIS_URL` set to see the shared cache's cost as production pays it.

Printed, never asserted: the top functions by own time and the share of a few landmarks (statements, cache,
context, idempotency, output) in the inclusive time, so the arithmetic of what remains is measured, not guessed.
"""

from __future__ import annotations

import cProfile
import io
import json
import os
import pstats
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from celery.app.task import Task
from django.test import Client

from bcp_app.service.platforms import platform_create
from tests.bcp_app.bcp_fixtures import FakePlatform, bcp_settings, fake_platform  # noqa: F401
from tests.bcp_app.rest_helpers import SP
from tests.bench.bench_client import COMPLETE, create_body, update_body
from tests.shop.checkout_factories import make_shipping, make_variant

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres]

OURS = r"/wt-[^/]+/(bcp_app|shop|orders|payments|kernel|config)/"
FLOWS = 40
READS = 300
# (label, substring of "file:line(function)") whose inclusive time is printed as a share of the whole
LANDMARKS = (
    ("context (resolve_context)", "context.py", "resolve_context"),
    ("idempotency run", "idempotency.py", "run"),
    ("SQL execute (CursorWrapper)", "django/db/backends/utils.py", "_execute"),
    ("SQL compile", "django/db/models/sql/compiler.py", "as_sql"),
    ("model init", "django/db/models/base.py", "__init__"),
    ("cache get (Redis)", "django/core/cache/backends/redis.py", "get"),
    ("unpickle", "django/core/cache/backends/redis.py", "loads"),
    ("pydantic validate", "pydantic/main.py", "model_validate"),
    ("json.dumps", "json/__init__.py", "dumps"),
    ("encoded (OperationResult)", "results.py", "encoded"),
)


def _send(client: Client, method: str, path: str, body: dict[str, Any] | None, **extra: str) -> dict[str, Any]:
    kwargs: dict[str, Any] = {"headers": extra}
    if body is not None:
        kwargs.update(data=json.dumps(body), content_type="application/json")
    response = getattr(client, method)(f"/bcp/v1{path}", **kwargs)
    assert response.status_code in (200, 201), response.content[:300]
    return response.json()


def flow_client(fake_platform: FakePlatform, *, stock: int) -> Client:  # noqa: F811
    """A platform's client for `_flow`: its SKU in stock, the shipping table, a platform that takes cards."""
    make_variant("SKU-BENCH", price=4290, stock=stock, title="Café de benchmark")
    make_shipping()
    platform = platform_create(name="Bench", profile_url=fake_platform.publish(handlers=fake_platform.with_card()))
    return Client(
        headers={
            "BCP-Agent": f'profile="{platform.platform.profile_url}"',
            "Authorization": f"Bearer {platform.api_key}",
        }
    )


def _flow(client: Client) -> str:
    created = _send(client, "post", "/checkout-sessions", create_body("SKU-BENCH"))
    updated = _send(client, "put", f"/checkout-sessions/{created['id']}", update_body(created, "SKU-BENCH", SP))
    assert updated["status"] == "ready_for_complete", updated.get("messages")
    done = _send(
        client,
        "post",
        f"/checkout-sessions/{created['id']}/complete",
        COMPLETE,
        **{"Idempotency-Key": str(uuid.uuid4())},
    )
    assert done["status"] == "completed", done.get("messages")
    return str(done["order"]["id"])


def _report(title: str, profile: cProfile.Profile, calls: int) -> None:
    if folder := os.environ.get("BENCH_PROFILE_DIR"):  # for pstats / snakeviz: `BENCH_PROFILE_DIR=var/prof`
        Path(folder).mkdir(parents=True, exist_ok=True)
        profile.dump_stats(Path(folder) / f"{title.split(' ×')[0].replace(' ', '_')}.pstats")
    stats = pstats.Stats(profile)
    total = stats.total_tt  # type: ignore[attr-defined]
    print(
        f"\n{title}: {total / calls * 1000:.2f} ms of CPU per call under cProfile (which inflates it: read the shares)"
    )
    for label, file_part, function in LANDMARKS:
        inclusive = sum(
            ct
            for (path, _, name), (_, _, _, ct, _) in stats.stats.items()  # type: ignore[attr-defined]
            if file_part in path and name == function
        )
        print(f"   {label:<30} {inclusive / total:6.1%}")
    out = io.StringIO()
    pstats.Stats(profile, stream=out).sort_stats("tottime").print_stats(25)
    print("\n".join(line for line in out.getvalue().splitlines() if line.strip())[-3000:])
    out = io.StringIO()
    pstats.Stats(profile, stream=out).sort_stats("cumulative").print_stats(OURS, 40)
    print("\n".join(line for line in out.getvalue().splitlines() if line.strip())[-5000:])


@pytest.mark.timeout(900)
def test_flow_and_get_order_profile(
    bcp_settings: Any,  # noqa: F811
    fake_platform: FakePlatform,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the limiter still runs on every call but never refuses one; the placed order's task is the worker's work
    # in production, so it is not run (nor published) here
    bcp_settings.BCP_RATE_LIMITS = {name: ("1000000/minute", "1000000/minute") for name in bcp_settings.BCP_RATE_LIMITS}
    # as production runs (DEBUG off): the output models' drift check is the test suite's, not a request's cost
    bcp_settings.BCP_CHECK_OUTPUT = False
    # /bcp/v1 is served by config.asgi's ApiHandler, without the page-only middleware: the same chain here
    bcp_settings.MIDDLEWARE = [m for m in bcp_settings.MIDDLEWARE if m not in bcp_settings.ASGI_API_SKIPPED_MIDDLEWARE]
    monkeypatch.setattr(Task, "apply_async", lambda *args, **kwargs: None)
    client = flow_client(fake_platform, stock=1_000_000)
    order = _flow(client)  # steady state
    # CPU without the profiler first: cProfile inflates code that makes many small calls more than the rest
    started = time.process_time()
    for _ in range(FLOWS):
        _flow(client)
    flow_cpu = (time.process_time() - started) / FLOWS
    started = time.process_time()
    for _ in range(READS):
        _send(client, "get", f"/orders/{order}", None)
    read_cpu = (time.process_time() - started) / READS
    print(f"\nwithout the profiler: {flow_cpu * 1000:.2f} ms of CPU per flow, {read_cpu * 1000:.3f} ms per GET order")
    profile = cProfile.Profile(time.process_time)
    profile.enable()
    for _ in range(FLOWS):
        _flow(client)
    profile.disable()
    _report(f"REST flow × {FLOWS} (the order's task not run)", profile, FLOWS)
    profile = cProfile.Profile(time.process_time)
    profile.enable()
    for _ in range(READS):
        _send(client, "get", f"/orders/{order}", None)
    profile.disable()
    _report(f"GET order × {READS}", profile, READS)
