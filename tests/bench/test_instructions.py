"""The web process's work per BCP REST purchase against a bare Django view's, counted, not timed (issue 34).

The flow benches (tests/bench/test_rest_flow.py) read rates and CPU on a shared 2-core machine, which other
load moves by tens of percent. These two counts move only when the code does, so a change's effect is read in
one run:

- `test_web_process_instructions_per_flow`: uvicorn as production runs it (`tests.bcp_app.bench_site`, one
  process, the shared Redis cache, the placed order's task published to the broker for nobody) under
  valgrind's callgrind, instrumentation switched on by `callgrind_control` once the flows are warm. It
  counts the machine instructions the whole process executes (event loop, ASGI, Django, the shop, psycopg,
  the Redis client) over FLOWS purchases create → update → complete by card (the bodies of
  tests/bench/bench_client.py), over FLOWS purchases through the bare views doing the minimal SQL
  (tests/bcp_app/bench_urls.py), and per request of one more purchase. Python runs about 50× slower under
  callgrind, hence few flows; the rounds show how well the counts repeat (within a few percent: uvicorn's
  0.1 s tick, per-second rate-limit windows and the garbage collector's timing are not caused by one
  request alone). Some of that work grows with wall-clock time, so a run on a machine loaded by others (each
  request lasting longer under valgrind) read about 1 M instructions a purchase more than a quieter one:
  compare a change against its parent measured in the same sitting. Most of the test's time is the server
  starting under valgrind (about 50 s of CPU, minutes on a loaded machine).
- `test_python_calls_per_flow`: Python and builtin calls per purchase (cProfile's count) through Django's
  test client in this process, the shop's flow (the API's middleware chain, as config.asgi's ApiHandler
  serves /bcp/v1) against the bare views' (the site's chain), the placed order's task published as production
  does when CELERY_BROKER_URL is a redis:// URL (else Celery is a no-op here); no valgrind needed.

Printed, never asserted (beyond every flow completing). `make bench`, or alone with
`pytest tests/bench/test_instructions.py -p no:cacheprovider -s -o testpaths=tests/bench -o norecursedirs=`.
`BENCH_CALLGRIND_DIR` keeps the dumps (`callgrind_annotate` reads them); else they go to a temporary folder.
"""

from __future__ import annotations

import asyncio
import cProfile
import os
import pstats
import shutil
import statistics
import tempfile
import uuid
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from django.db import connection
from django.test import Client

from bcp_app.service.platforms import platform_create
from config.celery import app as celery_app
from tests.bcp_app.bcp_fixtures import FakePlatform, bcp_settings, fake_platform  # noqa: F401
from tests.bcp_app.bench_site import BARE_TABLES, BARE_TABLES_SQL
from tests.bcp_app.rest_helpers import SP
from tests.bench.bench_client import COMPLETE, bare_flow, create_body, shop_flow, update_body
from tests.bench.live_proc import NO_LIMIT, Callgrind, Uvicorn, callgrind_wrapper, flow_server_env
from tests.bench.test_flow_profile import _flow
from tests.shop.checkout_factories import make_shipping, make_variant

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres]

SKU = "SKU-BENCH"
WARM = 3  # purchases of each kind before counting: imports, profile, shipping table and compiled-SQL caches
FLOWS = 4  # purchases per counted window
ROUNDS = 2  # windows of each kind, alternating
CALLS_FLOWS = 20  # purchases of each kind under cProfile


@pytest.fixture
def bare_tables() -> Iterator[None]:
    with connection.cursor() as cursor:
        # Fresh: an earlier bench of the same run leaves its bare orders, whose unique checkout ids a new
        # checkout table (ids from 1 again) would collide with (a 500 from the bare complete).
        for table in BARE_TABLES:
            cursor.execute(f"DROP TABLE IF EXISTS {table}")
        for sql in BARE_TABLES_SQL:
            cursor.execute(sql)
    yield
    with connection.cursor() as cursor:
        for table in BARE_TABLES:
            cursor.execute(f"DROP TABLE IF EXISTS {table}")


def _shop_headers(fake_platform: FakePlatform) -> dict[str, str]:  # noqa: F811
    """The SKU in stock, the shipping table, a platform that takes cards: its request headers."""
    make_variant(SKU, price=4290, stock=1_000_000, title="Café de benchmark")
    make_shipping()
    platform = platform_create(name="Bench", profile_url=fake_platform.publish(handlers=fake_platform.with_card()))
    return {"BCP-Agent": f'profile="{platform.platform.profile_url}"', "Authorization": f"Bearer {platform.api_key}"}


Flow = Callable[[httpx.AsyncClient], Awaitable[str]]


def _run(flows: int, flow: Flow, base_url: str, headers: dict[str, str]) -> None:
    async def run() -> None:
        async with httpx.AsyncClient(base_url=base_url, headers=headers, timeout=600) as client:
            for _ in range(flows):
                await flow(client)

    asyncio.run(run())


def _per_flow(counts: list[int]) -> str:
    rounds = ", ".join(f"{count / FLOWS / 1e6:.2f}" for count in counts)
    return f"{statistics.median(counts) / FLOWS / 1e6:6.2f} M (rounds {rounds})"


@pytest.mark.timeout(900)
def test_web_process_instructions_per_flow(
    bcp_settings: Any,  # noqa: F811
    fake_platform: FakePlatform,  # noqa: F811
    bare_tables: None,
    tmp_path: Path,
) -> None:
    broker = os.environ.get("CELERY_BROKER_URL", "")
    if not shutil.which("valgrind") or not shutil.which("callgrind_control"):
        pytest.skip("needs valgrind (callgrind_control)")
    if not broker.startswith("redis://"):
        pytest.skip("needs CELERY_BROKER_URL=redis://…: the placed order's task is published, as in production")
    headers = _shop_headers(fake_platform)
    folder = Path(os.environ.get("BENCH_CALLGRIND_DIR") or tempfile.mkdtemp(dir=tmp_path))
    folder.mkdir(parents=True, exist_ok=True)
    out = folder / f"callgrind.{uuid.uuid4().hex[:8]}.out"
    port, base_url, env = flow_server_env(str(bcp_settings.BCP_SIGNING_KEY_FILE), broker, pool=(1, 2))
    # nothing counted until the flows are warm: Python starts about 5× slower uninstrumented under valgrind
    server = Uvicorn(env, port, wrapper=callgrind_wrapper(out))

    def shop(client: httpx.AsyncClient) -> Awaitable[str]:
        return shop_flow(client, SKU, SP)

    def bare(client: httpx.AsyncClient) -> Awaitable[str]:
        return bare_flow(client, SKU, SP)

    try:
        server.wait_up()
        _run(WARM, shop, base_url, headers)
        _run(WARM, bare, base_url, {})
        grind = Callgrind(server, out)
        grind.control("-i", "on")
        _run(1, shop, base_url, headers)  # the first instrumented calls re-translate the code: not counted either
        _run(1, bare, base_url, {})
        grind.control("-z")
        counts: dict[str, list[int]] = {"shop": [], "bare": []}
        for _ in range(ROUNDS):
            _run(FLOWS, shop, base_url, headers)
            counts["shop"].append(grind.dump())
            _run(FLOWS, bare, base_url, {})
            counts["bare"].append(grind.dump())
        steps = _shop_steps(grind, base_url, headers)
    finally:
        server.stop()
        celery_app.control.purge()  # the placed orders' tasks: nobody runs them here
    shop_flow_m, bare_flow_m = statistics.median(counts["shop"]), statistics.median(counts["bare"])
    print(
        f"\nInstructions executed by the web process (uvicorn, production settings, callgrind) per BCP REST purchase"
        f" create → update → complete by card, {ROUNDS} rounds of {FLOWS} flows each, median:"
        f"\n  shop {_per_flow(counts['shop'])} | bare views (minimal SQL) {_per_flow(counts['bare'])}"
        f" | shop/bare ×{shop_flow_m / bare_flow_m:.2f} (bare/shop {bare_flow_m / shop_flow_m:.3f})"
        f"\n  shop per request: {' | '.join(f'{name} {count / 1e6:.2f} M' for name, count in steps.items())}"
        f"\n  dumps in {folder} (callgrind_annotate)"
    )


def _shop_steps(grind: Callgrind, base_url: str, headers: dict[str, str]) -> dict[str, int]:
    """Instructions of each request of one more purchase (its own dumps)."""

    async def run() -> dict[str, int]:
        steps: dict[str, int] = {}
        async with httpx.AsyncClient(base_url=base_url, headers=headers, timeout=600) as client:
            grind.dump()  # whatever ran since the last window
            created = (await client.post("/bcp/v1/checkout-sessions", json=create_body(SKU))).json()
            steps["create"] = await asyncio.to_thread(grind.dump)
            path = f"/bcp/v1/checkout-sessions/{created['id']}"
            updated = (await client.put(path, json=update_body(created, SKU, SP))).json()
            assert updated["status"] == "ready_for_complete", updated.get("messages")
            steps["update"] = await asyncio.to_thread(grind.dump)
            done = (
                await client.post(f"{path}/complete", json=COMPLETE, headers={"Idempotency-Key": str(uuid.uuid4())})
            ).json()
            assert done["status"] == "completed", done
            steps["complete"] = await asyncio.to_thread(grind.dump)
        return steps

    return asyncio.run(run())


@pytest.mark.timeout(300)
def test_python_calls_per_flow(
    bcp_settings: Any,  # noqa: F811
    fake_platform: FakePlatform,  # noqa: F811
    bare_tables: None,
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
) -> None:
    # as production: no rate refusal, no output drift check, the placed order's task not run here
    bcp_settings.BCP_RATE_LIMITS = {name: (NO_LIMIT, NO_LIMIT) for name in bcp_settings.BCP_RATE_LIMITS}
    bcp_settings.BCP_CHECK_OUTPUT = False
    bcp_settings.ROOT_URLCONF = "tests.bcp_app.bench_urls"
    if os.environ.get("CELERY_BROKER_URL", "").startswith("redis://"):
        # the placed order's task published to the broker for nobody, as the web process does in production (its
        # publish was about 7 % of a purchase's calls and invisible here while Celery was replaced by a no-op)
        bcp_settings.CELERY_TASK_ALWAYS_EAGER = False
        celery_app.conf.task_always_eager = False
        request.addfinalizer(celery_app.control.purge)
    else:
        monkeypatch.setattr(celery_app.Task, "apply_async", lambda *args, **kwargs: None)
    headers = _shop_headers(fake_platform)
    # the bare views go through the site's chain, /bcp/v1 through the API's (config.asgi.ApiHandler): each
    # client builds its chain on its first request
    bare_client = Client()
    _bare_flow_in_process(bare_client)
    bcp_settings.MIDDLEWARE = [m for m in bcp_settings.MIDDLEWARE if m not in bcp_settings.ASGI_API_SKIPPED_MIDDLEWARE]
    shop_client = Client(headers=headers)
    _flow(shop_client)
    calls = {}
    for name, flow in (("shop", lambda: _flow(shop_client)), ("bare", lambda: _bare_flow_in_process(bare_client))):
        flow()
        profile = cProfile.Profile()
        profile.enable()
        for _ in range(CALLS_FLOWS):
            flow()
        profile.disable()
        calls[name] = pstats.Stats(profile).total_calls / CALLS_FLOWS  # type: ignore[attr-defined]
    print(
        f"\nPython and builtin calls per purchase (cProfile, Django's test client, {CALLS_FLOWS} flows):"
        f" shop {calls['shop']:,.0f} | bare views {calls['bare']:,.0f} | shop/bare ×{calls['shop'] / calls['bare']:.1f}"
    )


def _bare_flow_in_process(client: Client) -> None:
    created = client.post("/_bench/checkouts", {"sku": SKU, "quantity": 1}, content_type="application/json").json()
    client.put(f"/_bench/checkouts/{created['id']}", {"address": SP}, content_type="application/json")
    done = client.post(f"/_bench/checkouts/{created['id']}/complete", {}, content_type="application/json").json()
    assert done["status"] == "completed", done
