"""`/bcp/v1` over ASGI (shop/asgi.py `ApiHandler`): the API's own middleware chain, entered in one thread
hop per request (issue 11), answering exactly what the Django test client gets.

A real uvicorn serves `shop.asgi.application` (the path router in front of the site and the API handler);
BCP-ORD-01: the originating platform reads its order; BCP §5.3 errors keep their JSON over ASGI.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest
from asgiref.sync import AsyncToSync
from django.test import Client

from bcp_app.platforms import NewPlatform
from shop.asgi import ApiHandler
from tests.bcp_app.bcp_fixtures import FakePlatform
from tests.bcp_app.live import LiveServer
from tests.bcp_app.rest_helpers import call
from tests.bcp_app.test_rest_order import auth, place_order, platform  # noqa: F401 (fixture)

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("bcp_settings"), pytest.mark.e2e]


def test_the_api_chain_is_entered_in_one_thread_hop(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every API middleware and view is sync: the request enters the sync chain once, never hopping back from
    its thread to the event loop (Django's async chain with a sync-only middleware in it did, then hopped to a
    thread again for the view)."""
    back_to_the_loop: list[Any] = []
    original = AsyncToSync.__call__

    def counted(self: AsyncToSync, *args: Any, **kwargs: Any) -> Any:
        back_to_the_loop.append(self.awaitable)
        return original(self, *args, **kwargs)

    async def get() -> httpx.Response:  # straight through the handler, no server
        transport = httpx.ASGITransport(app=ApiHandler())
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            return await client.get("/bcp/v1/openapi.json")

    monkeypatch.setattr(AsyncToSync, "__call__", counted)
    response = asyncio.run(get())
    assert response.status_code == 200
    assert response.json()["info"]["title"]
    assert back_to_the_loop == []


def test_get_order_over_asgi_answers_as_the_test_client_bcp_ord_01(
    client: Client, fake_platform: FakePlatform, platform: NewPlatform,  # noqa: F811
    django_capture_on_commit_callbacks: Any,
) -> None:
    from shop.asgi import application

    headers = auth(fake_platform, platform)
    order = place_order(client, headers, django_capture_on_commit_callbacks)
    expected = call(client, "get", f"/orders/{order.public_id}", headers).json()
    server = LiveServer(application).start()
    try:
        url = f"{server.url}/bcp/v1/orders/{order.public_id}"

        def get(request_id: str) -> httpx.Response:
            return httpx.get(url, headers={**headers, "Request-Id": request_id}, timeout=30)

        with ThreadPoolExecutor(max_workers=6) as pool:  # concurrent requests, each on its own
            answers = list(pool.map(get, [f"req-{i}" for i in range(12)]))
        missing = httpx.get(f"{server.url}/bcp/v1/orders/order_abc123", headers=headers, timeout=30)
        anonymous = httpx.get(url, headers={"BCP-Agent": headers["BCP-Agent"]}, timeout=30)
    finally:
        server.stop()
    for i, answer in enumerate(answers):
        assert (answer.status_code, answer.json()) == (200, expected)
        assert answer.headers["Request-Id"] == f"req-{i}"
        assert answer.headers["X-Content-Type-Options"] == "nosniff"  # SecurityMiddleware is on the chain
        assert "set-cookie" not in answer.headers  # no session, CSRF or messages on the API
    assert (missing.status_code, missing.json()["messages"][0]["code"]) == (200, "not_found")  # BCP-ORD-03
    assert anonymous.json()["messages"][0]["code"] == "unauthorized"  # BCP-ORD-02
