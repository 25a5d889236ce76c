"""`/bcp/v1` over ASGI (config/asgi.py `ApiHandler`): the API's own middleware chain, each request served in
one thread hop on the loop's bounded executor (issue 11), answering exactly what the Django test client gets.

A real uvicorn serves `config.asgi.application` (the path router in front of the site and the API handler);
BCP-ORD-01: the originating platform reads its order; BCP §5.3 errors keep their JSON over ASGI.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest
from django.db import connection
from django.test import Client, RequestFactory
from django.urls import Resolver404, URLResolver, get_resolver

from bcp_app.service.platforms import NewPlatform
from config.asgi import ApiHandler
from kernel.threads import in_thread
from tests.asgi_crossings import count_crossings
from tests.bcp_app.bcp_fixtures import FakePlatform
from tests.bcp_app.live import LiveServer
from tests.bcp_app.rest_helpers import call
from tests.bcp_app.test_rest_order import auth, place_order, platform  # noqa: F401 (fixture)

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("bcp_settings"), pytest.mark.e2e]


def test_each_request_is_one_thread_hop_on_a_reused_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every API middleware and view is sync: a request crosses into a thread once (Django's handler crossed
    three times: `request_started`, the chain, `response.close()`), never hops back to the event loop, and
    runs on the loop's executor instead of a thread started for it (Django's `ThreadSensitiveContext`)."""
    started: list[threading.Thread] = []
    start = threading.Thread.start

    def counted_start(self: threading.Thread) -> None:
        started.append(self)
        start(self)

    async def get_ten() -> tuple[list[httpx.Response], int]:  # through the handler, no server, one after another
        transport = httpx.ASGITransport(app=ApiHandler())
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            responses = [await client.get("/bcp/v1/openapi.json") for _ in range(10)]
        return responses, len(started)  # before asyncio.run's own shutdown thread

    crossings = count_crossings(monkeypatch)
    monkeypatch.setattr(threading.Thread, "start", counted_start)
    responses, threads_started = asyncio.run(get_ten())
    assert [response.status_code for response in responses] == [200] * 10
    assert responses[0].json()["info"]["title"]
    assert len(crossings.into_a_thread) == 10
    assert crossings.back_to_the_loop == []
    # The executor's threads, reused by each request in turn (Django's handler started one per request: 10). It
    # starts another only when a request arrives before the last one's thread is back to idle, a race a loaded
    # machine can lose now and then (seen once in a suite run beside a profiler).
    assert threads_started <= 3


def test_the_hop_runs_in_an_executor_thread_with_the_callers_context_and_keeps_what_it_sets() -> None:
    """`in_thread`: the request's thread sees the caller's context variables (the access log's record); what it
    sets stays in its copy (nothing is copied back, unlike `sync_to_async`); its result and errors come back."""
    seen = contextvars.ContextVar("seen", default="unset")

    def work(value: str, *, suffix: str = "") -> tuple[str, bool]:
        before = seen.get()
        seen.set(value + suffix)
        return before + suffix, threading.current_thread() is threading.main_thread()

    def fail() -> None:
        raise LookupError("in the thread")

    async def main() -> tuple[tuple[str, bool], str]:
        seen.set("caller")
        answer = await in_thread(work, "thread", suffix="!")  # keyword arguments reach the function too
        with pytest.raises(LookupError, match="in the thread"):
            await in_thread(fail)
        return answer, seen.get()

    (before, on_main_thread), after = asyncio.run(main())
    assert (before, on_main_thread, after) == ("caller!", False, "caller")


API_PATHS = (
    "/bcp/v1/orders/ord_abc",
    "/bcp/v1/orders/ord_abc/cancel",
    "/bcp/v1/checkout-sessions",
    "/bcp/v1/checkout-sessions/chk_1/complete",
    "/bcp/v1/openapi.json",
    "/ucp/v1/orders/ord_abc",
    "/ucp/v1/anything/else",
    "/testing/simulate-shipping/ord_abc",
)


def test_the_api_handler_resolves_its_paths_as_the_site_urlconf_does() -> None:
    """`ApiHandler` tries the API's own patterns (`settings.ASGI_API_URLCONF`) first: the same view, arguments,
    route and namespace as the site's whole URLconf gives; a path they do not hold is still Django's 404."""
    handler, factory = ApiHandler(), RequestFactory()
    for path in API_PATHS:
        ours, django = handler.resolve_request(factory.get(path)), get_resolver().resolve(path)
        assert (ours.func, ours.args, ours.kwargs, ours.route, ours.namespaces, ours.url_name) == (
            django.func,
            django.args,
            django.kwargs,
            django.route,
            django.namespaces,
            django.url_name,
        ), path
    with pytest.raises(Resolver404):
        handler.resolve_request(factory.get("/bcp/v1x/unknown"))


def test_the_api_handler_resolves_get_order_without_walking_the_site_urlconf(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 34: the walk down the site's root resolver and its include was ~100 Python calls of every agent
    request; the API's patterns are one resolver."""
    walked: list[str] = []
    resolve = URLResolver.resolve

    def counted(self: URLResolver, path: str) -> Any:
        walked.append(str(self.urlconf_name))
        return resolve(self, path)

    monkeypatch.setattr(URLResolver, "resolve", counted)
    match = ApiHandler().resolve_request(RequestFactory().get("/bcp/v1/orders/ord_abc"))
    assert match.kwargs == {"order_id": "ord_abc"}
    assert walked == ["bcp_app.urls"]


def test_every_request_hands_its_connection_back_to_the_pool(
    client: Client,
    fake_platform: FakePlatform,
    platform: NewPlatform,  # noqa: F811
    django_capture_on_commit_callbacks: Any,
) -> None:
    """`request_finished` runs in the request's own thread and hands its connection back: after more reads than
    the pool has connections, the pool lends out no more connections than before them."""
    if connection.pool is None:
        pytest.skip("needs the psycopg connection pool (PostgreSQL)")
    headers = auth(fake_platform, platform)
    order = place_order(client, headers, django_capture_on_commit_callbacks)
    reads = connection.pool.max_size + 3

    def lent() -> int:
        stats = connection.pool.get_stats()
        return stats["pool_size"] - stats["pool_available"]

    before = lent()  # this test's own connection

    async def read_all() -> list[int]:
        transport = httpx.ASGITransport(app=ApiHandler())
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1", headers=headers) as http:
            return [(await http.get(f"/bcp/v1/orders/{order.public_id}")).status_code for _ in range(reads)]

    assert asyncio.run(read_all()) == [200] * reads
    assert lent() == before


def test_get_order_over_asgi_answers_as_the_test_client_bcp_ord_01(
    client: Client,
    fake_platform: FakePlatform,
    platform: NewPlatform,  # noqa: F811
    django_capture_on_commit_callbacks: Any,
) -> None:
    from config.asgi import application

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


def test_the_server_runs_web_threads_calls_at_once_more_than_the_pool_has_connections(settings: Any) -> None:
    """At startup the loop's default executor (the site's, API's, MCP's and A2A's threads) gets WEB_THREADS
    threads, by default four per pooled connection: calls waiting on the network hold no connection, so more of
    them than the pool's `max_size` run side by side; one more than WEB_THREADS waits for a thread."""
    from config.asgi import application

    if connection.pool is None:
        pytest.skip("needs the psycopg connection pool (PostgreSQL)")
    assert 4 * connection.pool.max_size == settings.WEB_THREADS  # the default
    settings.WEB_THREADS = size = connection.pool.max_size + 3  # fewer threads keep the barrier test short

    def meet(barrier: threading.Barrier) -> bool:
        try:
            barrier.wait(timeout=2)
        except threading.BrokenBarrierError:
            return False
        return True

    async def side_by_side(calls: int) -> list[bool]:
        barrier = threading.Barrier(calls)  # passes once `calls` threads wait on it together
        loop = asyncio.get_running_loop()
        return await asyncio.gather(*(loop.run_in_executor(None, meet, barrier) for _ in range(calls)))

    async def serve() -> tuple[list[bool], list[bool]]:
        inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        outbox: list[dict[str, Any]] = []

        async def send(message: dict[str, Any]) -> None:
            outbox.append(message)

        await inbox.put({"type": "lifespan.startup"})
        lifespan = asyncio.create_task(application({"type": "lifespan"}, inbox.get, send))
        while not outbox:
            await asyncio.sleep(0.01)
        assert outbox == [{"type": "lifespan.startup.complete"}]
        fitting, one_more = await side_by_side(size), await side_by_side(size + 1)
        await inbox.put({"type": "lifespan.shutdown"})
        await lifespan
        return fitting, one_more

    fitting, one_more = asyncio.run(serve())
    assert fitting == [True] * size
    assert not any(one_more)
