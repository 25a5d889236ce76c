"""Slow agent profiles cannot take the shop down (issue 13 §1; BCP-NEG-02).

Before: the outbound client had a per-read timeout only, so a profile served at 1 byte/s never
tripped it, and each request held a pooled database connection during the fetch; ten such
requests emptied the 10-connection pool and the storefront answered 500 (PoolTimeout). Now every
fetch has a total deadline (`BCP_PROFILE_FETCH_TIMEOUT`), holds no connection, and concurrent
fetches of one URL make a single request.
"""

from __future__ import annotations

import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest

from bcp_app.service import flight, outbound
from tests.bcp_app.bcp_fixtures import FakePlatform
from tests.bcp_app.drip import DripServer
from tests.bcp_app.test_a2a_helpers import (
    SEED_PROFILE,
    LiveServer,
    live_fixture,  # noqa: F401 (fixture "live")
    server_fixture,  # noqa: F401 (fixture "server")
)

pytestmark = [pytest.mark.postgres, pytest.mark.e2e]
SEARCH = json.dumps({"query": "café"}).encode()


def search(server: LiveServer, profile_url: str) -> httpx.Response:
    headers = {"content-type": "application/json", "BCP-Agent": f'profile="{profile_url}"'}
    return httpx.post(f"{server.base_url}/bcp/v1/catalog/search", content=SEARCH, headers=headers, timeout=120)


def test_a_dripping_peer_hits_the_total_deadline(settings: Any) -> None:
    settings.BCP_OUTBOUND_ALLOWLIST = ["127.0.0.1"]
    with DripServer() as drip, pytest.raises(outbound.OutboundError) as caught:
        outbound.get(drip.url(), deadline=2)
    assert caught.value.kind == "timeout"
    assert drip.connections == 1


def test_twenty_dripping_profiles_leave_the_shop_answering(server: LiveServer, settings: Any) -> None:
    # given 20 profile servers that drip one byte a second and a 2-second profile deadline
    settings.BCP_PROFILE_FETCH_TIMEOUT = 2
    drips = [DripServer().__enter__() for _ in range(20)]
    try:
        with ThreadPoolExecutor(max_workers=20) as pool:
            # when 20 anonymous BCP requests name those profiles at once
            pending = [pool.submit(search, server, drip.url()) for drip in drips]
            assert all(drip.connected.wait(60) for drip in drips)  # every fetch is in the air
            # then the storefront and a request with a cached profile still answer while they drip
            home = httpx.get(f"{server.base_url}/", timeout=60)
            cached = search(server, SEED_PROFILE)
            outcomes = [future.result() for future in pending]
    finally:
        for drip in drips:
            drip.__exit__()
    assert home.status_code == 200
    assert cached.status_code == 200, cached.text
    # and every dripping profile ends as profile_unreachable, not as a 500
    assert [(r.status_code, r.json()["code"]) for r in outcomes] == [(424, "profile_unreachable")] * 20


def test_concurrent_fetches_of_one_profile_make_one_request(server: LiveServer, fake_platform: FakePlatform) -> None:
    # given a profile whose server holds its answer until released
    url = fake_platform.publish()
    path = url.removeprefix(f"http://127.0.0.1:{fake_platform.port}")
    release = threading.Event()
    original = fake_platform.routes[path]

    def held_route() -> Any:
        release.wait(60)
        return original

    fake_platform.routes = _WaitingRoutes(fake_platform.routes, path, held_route)
    with ThreadPoolExecutor(max_workers=10) as pool:
        # when ten requests need it at once
        pending = [pool.submit(search, server, url) for _ in range(10)]
        deadline = time.monotonic() + 60
        while flight.waiting(url) < 9 and fake_platform.hits.get(path, 0) < 10 and time.monotonic() < deadline:
            time.sleep(0.05)
        release.set()
        statuses = [future.result().status_code for future in pending]
    # then they all succeed and the platform saw one GET
    assert statuses == [200] * 10
    assert fake_platform.hits[path] == 1


class _WaitingRoutes(dict):
    """Routes where one path's answer is produced by a callable (which may block)."""

    def __init__(self, routes: dict, path: str, produce: Any) -> None:
        super().__init__(routes)
        self._path, self._produce = path, produce

    def get(self, key: Any, default: Any = None) -> Any:
        if key == self._path:
            return self._produce()
        return super().get(key, default)
