"""Read caches across processes (issue 11): with Redis (`REDIS_URL`) a merchant's change made in one process is
seen at once by the next checkout served by another process.

The shipping table, the store settings and their policies are kept by each process behind a version token in
Django's cache, and the catalog snapshot is cached there under the catalog version; both are invalidated on save
(kernel/ops/kept.py, shop/checkout/fulfillment.py, shop/models/store.py, shop/checkout/stock.py). With the default
local-memory cache every process has its own copy and another process sees the change only after the cache's TTL (5
min for shipping, 60 s for the catalog): production runs several uvicorn workers, so the README tells to set
`REDIS_URL`. Here the other process is a real uvicorn serving the BCP REST API with `REDIS_URL`; this test process
changes a rate, a product title and the store settings through the models' `save()`, as the admin does, on the same
Redis.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from django.core.cache import cache

from shop.checkout.fulfillment import CACHE_KEY as SHIPPING_KEY
from shop.checkout.stock import VERSION_KEY
from shop.models import Product, ShippingRate
from shop.models.store import CACHE_KEY as STORE_KEY
from shop.models.store import StoreSettings
from tests.bcp_app.bcp_fixtures import FakePlatform, bcp_settings, fake_platform  # noqa: F401
from tests.bcp_app.live import require_committed_data, subprocess_env, wait_for
from tests.bcp_app.rest_helpers import SP, catalog

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]
ROOT = Path(__file__).resolve().parents[2]


def _redis_url() -> str:
    """The Redis the test run already uses (its Celery broker), as the cache of both processes."""
    from config.celery import app

    url = os.environ.get("REDIS_URL") or str(app.conf.broker_url)
    if not url.startswith("redis://"):
        pytest.skip("no Redis configured (REDIS_URL or a redis:// CELERY_BROKER_URL)")
    return url


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _up(base_url: str) -> bool:
    try:
        return httpx.get(f"{base_url}/.well-known/bcp", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def _quote(base_url: str, profile_url: str) -> tuple[str, int, str]:
    """Create a checkout in the other process: (line title, PAC price quoted for São Paulo, returns policy text)."""
    body = {
        "line_items": [{"item": {"id": "SKU-CAFE-500G"}, "quantity": 1}],
        "fulfillment": {"methods": [{"type": "shipping", "destinations": [SP]}]},
    }
    response = httpx.post(
        f"{base_url}/bcp/v1/checkout-sessions",
        json=body,
        headers={"BCP-Agent": f'profile="{profile_url}"'},
        timeout=60,
    )
    assert response.status_code == 201, response.text[:500]
    created = response.json()
    options = created["fulfillment"]["methods"][0]["groups"][0]["options"]
    pac = next(option for option in options if option["id"] == "pac")
    total = next(entry["amount"] for entry in pac["totals"] if entry["type"] == "total")
    returns = next(policy for policy in created["policies"] if policy["type"].endswith(".return"))
    return created["line_items"][0]["item"]["title"], total, returns["description"]["plain"]


@contextmanager
def _other_process(settings: Any) -> Iterator[str]:
    """A uvicorn subprocess serving the shop, sharing this process's Redis cache (set on `settings`, the
    `bcp_settings` fixture): its base URL."""
    require_committed_data("the uvicorn subprocess")
    redis_url = _redis_url()
    settings.CACHES = {"default": {"BACKEND": "kernel.ops.redis_cache.KeptClientRedisCache", "LOCATION": redis_url}}
    cache.clear()
    port = _free_port()
    base_url = f"http://127.0.0.1:{port}"
    env = subprocess_env(
        REDIS_URL=redis_url,
        BCP_PUBLIC_URL=base_url,
        DJANGO_DEBUG="true",
        DJANGO_LOG_LEVEL="WARNING",
        DATABASE_POOL_MIN="1",
    )
    server = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "config.asgi:application", "--host", "127.0.0.1", "--port", str(port),
         "--log-level", "warning", "--no-access-log"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        wait_for(lambda: _up(base_url), timeout=120, interval=0.5)
        yield base_url
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(timeout=10)
        cache.clear()


def test_a_change_in_one_process_is_seen_at_once_by_another_with_redis(
    bcp_settings: Any,  # noqa: F811
    fake_platform: FakePlatform,  # noqa: F811
) -> None:
    # given this process and a uvicorn subprocess sharing one Redis cache
    with _other_process(bcp_settings) as base_url:
        catalog()
        profile_url = fake_platform.publish()
        title, price, returns = _quote(base_url, profile_url)
        assert (title, price) == ("Café especial 500 g", 1890) and returns != "Trocas em até 30 dias."
        # the other process started the shared tokens (this process never evaluated a checkout) and keeps its own
        # copies under them: a second checkout there reads only the tokens
        tokens = [cache.get(key) for key in (SHIPPING_KEY, STORE_KEY, VERSION_KEY)]
        assert all(isinstance(token, int) for token in tokens)
        assert _quote(base_url, profile_url) == (title, price, returns)
        assert [cache.get(key) for key in (SHIPPING_KEY, STORE_KEY, VERSION_KEY)] == tokens
        # when the merchant changes the PAC rate for SP, the product's title and the returns policy here (as the
        # admin's save does)
        rate = ShippingRate.objects.get(method__code="pac", uf="SP")
        rate.price = 2190
        rate.save()
        product = Product.objects.get(variants__sku="SKU-CAFE-500G")
        product.title = "Café da fazenda"
        product.save()
        row, _ = StoreSettings.objects.get_or_create(pk=1)
        row.returns_text = "Trocas em até 30 dias."
        row.save()
        # then the other process's very next checkout quotes and shows them, long before any TTL
        assert _quote(base_url, profile_url) == ("Café da fazenda", 2190, "Trocas em até 30 dias.")


def test_a_key_revoked_in_one_process_is_refused_at_once_by_another_with_redis(
    bcp_settings: Any,  # noqa: F811
    fake_platform: FakePlatform,  # noqa: F811
) -> None:
    """Revocation is never delayed (issue 34): the other process keeps the platform it read behind a version
    token, but reads that token in each request's one Redis command (over its thread's own connection,
    kernel/ops/redis_cache.py), so the request right after a revoke here is refused there."""
    from bcp_app.service.platforms import platform_create, platform_revoke

    created = platform_create(name="Agente", profile_url=fake_platform.publish())
    headers = {"BCP-Agent": f'profile="{created.platform.profile_url}"', "Authorization": f"Bearer {created.api_key}"}
    with (
        _other_process(bcp_settings) as base_url,
        httpx.Client(base_url=base_url, headers=headers, timeout=60) as client,
    ):
        for _ in range(3):  # the other process now keeps the platform behind its token
            answer = client.get("/bcp/v1/orders/ord_nao_existe")
            assert answer.status_code == 200 and answer.json()["messages"][0]["code"] == "not_found"
        platform_revoke(public_id=created.platform.public_id)
        refused = client.get("/bcp/v1/orders/ord_nao_existe")  # same process, same kept connection
    assert refused.status_code == 401
    assert refused.json()["code"] == "unauthenticated"
