"""A hanging PSP cannot take the shop down (issue 13 §2; PIX.md §3, BCP-PAY).

Before: complete called the PSP outside any transaction but with the request's pooled database
connection still checked out, so more Pix completes in flight than the pool holds emptied it, and the
storefront and every other BCP request waited out the pool timeout and answered 500 (`PoolTimeout`).
Now the PSP adapter hands the connection back to the pool before each HTTP call to the PSP.

Then (issue 11): the web process ran every request on as many threads as the pool has connections, so as
many completes hanging at the PSP held every thread, and the storefront waited until the PSP client gave up
(3 × 10 s). The server here is the production application with its lifespan (the executor it sizes), and
the pages must answer while every complete still waits at the PSP.

Then (issue 31 §2): a PSP that drips its answer one byte at a time never tripped the adapter's per-read
timeout (× 3 attempts), so more Pix calls than the process has threads held every one of them, and the
storefront timed out. Now one total deadline (`PIX_PSP_TIMEOUT_SECONDS`, kernel/http.py) bounds each call.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest
from django.db import connection

from bcp_app.service.negotiation import url_hash
from shop.checkout.selectors import agent_key
from shop.checkout.services import checkout_create
from shop.checkout.types import LineInput
from tests.bcp_app.bcp_fixtures import FakePlatform
from tests.bcp_app.live import LiveServer, wait_for
from tests.bcp_app.rest_helpers import PIX
from tests.payments.fake_bacen import FakeBacenServer, use_fake_bacen
from tests.shop.checkout_factories import full_input, make_shipping, make_variant

pytestmark = [pytest.mark.e2e, pytest.mark.postgres, pytest.mark.usefixtures("bcp_settings")]


@pytest.fixture
def hanging_psp(settings: Any) -> Iterator[FakeBacenServer]:
    """The fake Bacen PSP, holding every charge creation until the test opens its gate."""
    psp = FakeBacenServer().start()
    use_fake_bacen(settings, psp)
    psp.state.cob_gate = threading.Event()
    try:
        yield psp
    finally:
        psp.state.cob_gate.set()
        psp.stop()


@pytest.fixture
def dripping_psp(settings: Any) -> Iterator[FakeBacenServer]:
    """The fake Bacen PSP, answering every charge creation one byte a second."""
    psp = FakeBacenServer().start()
    use_fake_bacen(settings, psp)
    psp.state.cob_drip = 1.0
    try:
        yield psp
    finally:
        psp.state.drip_stop.set()
        psp.stop()


def _serve(settings: Any) -> Iterator[LiveServer]:
    from config.asgi import application

    live = LiveServer(application, lifespan="on").start()  # the executor production sizes at startup
    settings.BCP_PUBLIC_URL = live.url
    try:
        yield live
    finally:
        live.stop()


@pytest.fixture
def server(transactional_db: Any, settings: Any) -> Iterator[LiveServer]:
    yield from _serve(settings)


@pytest.fixture
def few_threads_server(transactional_db: Any, settings: Any) -> Iterator[LiveServer]:
    settings.WEB_THREADS = 4  # read at startup: fewer threads than Pix calls in flight, as 60 were against 40
    yield from _serve(settings)


def _in_flight(psp: FakeBacenServer) -> int:
    with psp.state.lock:
        return len({path for method, path, _ in psp.state.requests if method == "PUT" and path.startswith("/cob/")})


def _ready_checkouts(count: int, profile_url: str) -> list[str]:
    """Ready checkouts of the anonymous agent at `profile_url` (its checkouts are bound to it)."""
    make_variant(stock=count + 5)
    make_shipping()
    owner = agent_key(url_hash(profile_url))
    data = full_input(LineInput("SKU-CAFE-500G", 1), option="pac")
    return [checkout_create(data=data, session_key=owner).checkout.public_id for _ in range(count)]


def _complete(api: str, headers: dict[str, str], checkout_id: str) -> httpx.Response:
    return httpx.post(
        f"{api}/checkout-sessions/{checkout_id}/complete",
        json={"payment": {"instruments": [PIX]}},
        headers={**headers, "Idempotency-Key": str(uuid.uuid4())},
        timeout=180,
    )


def test_pix_completes_hanging_at_the_psp_leave_the_pool_to_everyone_else(
    server: LiveServer, hanging_psp: FakeBacenServer, fake_platform: FakePlatform, settings: Any
) -> None:
    # given more ready checkouts than the database pool has connections, and a PSP that does not answer
    pool_size = connection.pool.max_size if connection.pool is not None else 10
    hanging = pool_size + 2
    profile_url = fake_platform.publish()
    ids = _ready_checkouts(hanging + 1, profile_url)
    other = ids.pop()
    headers = {"BCP-Agent": f'profile="{profile_url}"'}
    api = f"{server.url}/bcp/v1"
    settings.BCP_RATE_LIMITS = {**settings.BCP_RATE_LIMITS, "write": ("", "")}

    with ThreadPoolExecutor(max_workers=hanging) as pool:
        # when that many buyers complete with Pix at once and every charge creation hangs at the PSP
        pending = [pool.submit(_complete, api, headers, checkout_id) for checkout_id in ids]
        # then no complete waits for a connection or a thread: every one of them reaches the PSP
        reached = wait_for(lambda: _in_flight(hanging_psp) >= hanging, timeout=60)
        # and the storefront and another BCP request answer while all of them still wait there
        home = httpx.get(f"{server.url}/", timeout=60)
        read = httpx.get(f"{api}/checkout-sessions/{other}", headers=headers, timeout=60)
        still_waiting = [not future.done() for future in pending]
        hanging_psp.state.cob_gate.set()
        outcomes = [future.result() for future in pending]
    assert reached
    assert home.status_code == 200
    assert read.status_code == 200, read.text
    assert all(still_waiting)  # nothing had to give up at the PSP first to free a thread for the pages
    # and once the PSP answers, every complete ends as an answer (awaiting the Pix, or a retry message)
    assert sorted({response.status_code for response in outcomes}) == [200], [r.text[:200] for r in outcomes]


def test_pix_calls_dripping_at_the_psp_end_at_their_deadline_and_the_storefront_answers(
    few_threads_server: LiveServer, dripping_psp: FakeBacenServer, fake_platform: FakePlatform, settings: Any
) -> None:
    # given twice as many ready checkouts as the web process has threads, and a PSP that drips every answer
    settings.PIX_PSP_TIMEOUT_SECONDS = 2
    profile_url = fake_platform.publish()
    ids = _ready_checkouts(2 * settings.WEB_THREADS, profile_url)
    headers = {"BCP-Agent": f'profile="{profile_url}"'}
    api = f"{few_threads_server.url}/bcp/v1"
    settings.BCP_RATE_LIMITS = {**settings.BCP_RATE_LIMITS, "write": ("", "")}
    with ThreadPoolExecutor(max_workers=len(ids)) as pool:
        # when they all complete with Pix at once and every thread is taken by a charge creation dripping in
        pending = [pool.submit(_complete, api, headers, checkout_id) for checkout_id in ids]
        reached = wait_for(lambda: _in_flight(dripping_psp) >= settings.WEB_THREADS, timeout=60)
        # then the storefront still answers: the dripping calls give up at their deadline and free the threads
        home = httpx.get(f"{few_threads_server.url}/", timeout=60)
        outcomes = [future.result() for future in pending]
    assert reached
    assert home.status_code == 200
    assert dripping_psp.state.drip_cut.is_set()  # the PSP saw the shop hang up while still dripping
    assert dripping_psp.state.drip_sent < dripping_psp.state.drip_total * len(ids)
    # and every complete ends as an answer the agent can act on (retry later), none as a 5xx
    assert all(response.status_code < 500 for response in outcomes), [r.text[:200] for r in outcomes]
