"""Read-mostly cache entries read once per request, MCP call, A2A message or Celery task
(kernel/ops/request_cache.py), and never staler than that.

The cache is Django's local-memory backend with a count of the keys read (a subclass of Django's backend:
nothing of ours is replaced).
"""

from __future__ import annotations

import asyncio
import uuid
from collections import Counter
from typing import Any

import httpx
import pytest
from django.core.cache import caches
from django.core.cache.backends.locmem import LocMemCache
from django.test import Client

from config.celery import app as celery_app
from kernel.ops import request_cache
from shop.checkout.fulfillment import CACHE_KEY as SHIPPING_KEY
from shop.models.store import CACHE_KEY, StoreSettings
from shop.store.services import store_get
from tests.bcp_app.bcp_fixtures import bcp_settings, fake_platform  # noqa: F401
from tests.bcp_app.rest_helpers import call, catalog, full_update

pytestmark = pytest.mark.django_db


class CountingLocMemCache(LocMemCache):
    reads: Counter[str] = Counter()

    def get(self, key: str, default: Any = None, version: int | None = None) -> Any:
        CountingLocMemCache.reads[key] += 1
        return super().get(key, default, version)


@pytest.fixture
def counted(settings: Any) -> Counter[str]:
    settings.CACHES = {"default": {"BACKEND": f"{__name__}.CountingLocMemCache", "LOCATION": uuid.uuid4().hex}}
    CountingLocMemCache.reads = Counter()
    return CountingLocMemCache.reads


def test_within_a_scope_the_first_read_is_kept_and_the_next_scope_reads_again(counted: Counter[str]) -> None:
    with request_cache.request_scope():
        first = store_get()
        caches["default"].delete(CACHE_KEY)  # what another process's save does: the token is dropped
        assert store_get() is first and store_get() is first
    assert counted[CACHE_KEY] == 1
    store_get()  # outside a scope every read goes to the cache
    store_get()
    assert counted[CACHE_KEY] == 3


def test_a_save_inside_the_scope_is_seen_by_the_rest_of_it(counted: Counter[str]) -> None:
    with request_cache.request_scope():
        assert store_get().trade_name != "Torrefação Aurora"
        row, _ = StoreSettings.objects.get_or_create(pk=1)
        row.trade_name = "Torrefação Aurora"
        row.save()  # drops the cached copy (`forget`), here and in the scope
        assert store_get().trade_name == "Torrefação Aurora"


def test_a_prefetch_reads_its_keys_once_and_remembers_the_absent_ones(counted: Counter[str]) -> None:
    caches["default"].set("present", {"a": 1}, 60)
    request_cache.prefetch("present", "absent")  # outside a scope: nothing read, nothing kept
    assert request_cache.get("absent") is None and counted["absent"] == 1
    with request_cache.request_scope():
        request_cache.prefetch("present", "absent")  # one get_many (LocMemCache's is get per key)
        reads = counted.copy()
        assert request_cache.get("present") == {"a": 1}
        assert request_cache.get("absent") is None  # known absent: not asked again
        assert counted == reads
        request_cache.remember("absent", 3)  # what the scope itself wrote
        assert request_cache.get("absent") == 3
    assert request_cache.get("absent") is None  # the scope's memory ended with it


def test_a_rest_checkout_reads_each_entry_once_per_request(
    client: Client,
    counted: Counter[str],
    bcp_settings: Any,  # noqa: F811
    fake_platform: Any,  # noqa: F811
) -> None:
    catalog()
    headers = {"BCP-Agent": f'profile="{fake_platform.publish()}"'}
    body = {"line_items": [{"item": {"id": "SKU-CAFE-500G"}, "quantity": 1}], "buyer": {"email": "ana@example.com.br"}}
    created = call(client, "post", "/checkout-sessions", {**headers, "Idempotency-Key": "k1"}, body).json()
    counted.clear()
    updated = call(client, "put", f"/checkout-sessions/{created['id']}", headers, full_update(created)).json()
    assert updated["fulfillment"]["methods"][0]["groups"][0]["options"]  # the shipping table was used
    assert counted[CACHE_KEY] == 1
    assert counted[SHIPPING_KEY] == 1
    assert all(reads == 1 for key, reads in counted.items() if ":policies:" in key)


@pytest.mark.django_db(transaction=True)  # the ASGI handler's thread has a connection of its own
def test_the_page_and_api_chains_over_asgi_both_keep_a_scope(
    counted: Counter[str],
    bcp_settings: Any,  # noqa: F811
) -> None:
    """The storefront's async chain and the API's sync one (config/asgi.py): one read per request in each."""
    from config.asgi import application

    catalog()

    async def get(path: str) -> httpx.Response:
        transport = httpx.ASGITransport(app=application)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8000") as client:
            return await client.get(path)

    for path in ("/", "/bcp/v1/openapi.json"):
        counted.clear()
        assert asyncio.run(get(path)).status_code == 200
        assert counted[CACHE_KEY] <= 1, path


def test_a_celery_task_has_a_scope_of_its_own_and_gives_the_callers_back(counted: Counter[str]) -> None:
    @celery_app.task(name=f"tests.request_cache.{uuid.uuid4().hex}")
    def reads_the_store_twice() -> bool:
        return store_get() is store_get()

    with request_cache.request_scope():
        outer = store_get()
        assert reads_the_store_twice.apply().get() is True  # run as the worker runs it, signals included
        assert store_get() is outer  # the request's scope is back
    assert counted[CACHE_KEY] == 2  # the request once, the task once
