"""Benchmark (issue 34): the storefront's home, product, cart and checkout pages at 8 clients against a bare Django
template view rendering a page of the same size (tests/bcp_app/bench_urls.py `bare_page`, no query, the same
middleware) under the same uvicorn (production settings, tests/bench/live_proc.py), measured side by side in one
run: each page and its own bare twin (sized to the page's bytes) in ROUNDS interleaved rounds after a discarded
pilot (tests/bench/rounds.py). Prints pages/s, page/bare (median and per-round min–max), the uvicorn and Postgres
CPU per page and SQL statements per page; asserts only correctness (every answer 200, of the page's size). The
cart and checkout pages are one buyer's session (cookie), read by every client; every client sends the cookies a
browser keeps (the session and the CSRF cookie of the page's first answer), the bare twin the same. `make bench`.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from django.conf import settings
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from tests.bcp_app.bcp_fixtures import bcp_settings  # noqa: F401
from tests.bench.live_proc import Uvicorn, Window, cache_in_use, free_port, load, measure, noise, production_env
from tests.bench.rounds import Case, interleaved, median, rate_ratio, ratios, spread
from tests.shop.checkout_factories import make_shipping

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

CLIENTS = 8
WORKERS = 2  # uvicorn workers: one per core of the 2-core bench machine (the README's recommendation)
ROUNDS = 3
WINDOW_S = 1.5
PILOT = 5  # calls per client of a case's discarded pilot window


def _buyer_session(sku: str) -> tuple[str, str]:
    """A buyer with `sku` in the cart and a checkout started: (session cookie, checkout page path)."""
    client = Client()
    assert client.post("/carrinho/adicionar", {"sku": sku, "quantity": "1"}).status_code == 302
    started = client.get("/checkout/")
    assert started.status_code in (200, 302), started.status_code
    checkout_path = started["Location"] if started.status_code == 302 else "/checkout/"
    return f"sessionid={client.cookies['sessionid'].value}", checkout_path


def bench_pages() -> dict[str, tuple[str, str]]:
    """The four pages measured, by name: (path, the session cookie its views send). A buyer has the first product's
    first variant in stock in the cart and a checkout started."""
    from shop.models import Product

    make_shipping()
    product = Product.objects.order_by("id").first()
    assert product is not None
    sku = product.variants.filter(stock__gt=0).order_by("position").first().sku  # type: ignore[union-attr]
    cookie, checkout_path = _buyer_session(sku)
    pages = {
        "home": ("/", ""),
        "product": (f"/produtos/{product.slug}/", ""),
        "cart": ("/carrinho/", cookie),
        "checkout": (checkout_path, cookie),
    }
    return pages


def _browser_headers(url: str, session: str) -> dict[str, str]:
    """The Cookie header a browser sends on its next views of `url`: the session's and the CSRF cookie the page's
    first answer set (a browser keeps it; without it every view makes a new CSRF secret and sets its cookie). The
    home and product clients keep it already (httpx's jar); cookies given by hand would hide the jar's. The bare
    twin is sent the same header (it reads no cookie)."""
    if not session:
        return {}
    first = httpx.get(url, headers={"Cookie": session}, timeout=60)
    csrf = first.cookies.get("csrftoken")
    return {"Cookie": f"{session}; csrftoken={csrf}" if csrf else session}


def _statements(path: str, cookie: str) -> int:
    client = Client(headers={"Cookie": cookie} if cookie else {})
    client.get(path)  # this process's caches warm, as the server's are
    with CaptureQueriesContext(connection) as queries:
        assert client.get(path).status_code == 200
    return len(queries)


@pytest.mark.timeout(900)
def test_storefront_pages_vs_bare_template_view(bcp_settings: Any, thousand_products: int) -> None:  # noqa: F811
    pages = bench_pages()
    port = free_port()
    # the buyer's session was signed here: with a key of its own the server read it as empty (an empty cart page)
    env = production_env(
        f"http://127.0.0.1:{port}", str(bcp_settings.BCP_SIGNING_KEY_FILE), DJANGO_SECRET_KEY=settings.SECRET_KEY
    )
    server = Uvicorn(env, port, workers=WORKERS)
    try:
        server.wait_up()
        jobs: dict[str, tuple[dict[str, Any], int]] = {}
        for name, (path, session) in pages.items():
            headers = _browser_headers(f"{server.base_url}{path}", session)
            pages[name] = (path, headers.get("Cookie", ""))
            size = len(httpx.get(f"{server.base_url}{path}", headers=headers, timeout=60).content)
            bare = f"{server.base_url}/_bench/page?bytes="
            first = len(httpx.get(f"{bare}{size}", timeout=60).content)  # sized once more to match the page's
            twin = f"{bare}{size * size // first}"
            jobs[name] = ({"url": f"{server.base_url}{path}", "headers": headers}, size)
            jobs[f"bare {name}"] = ({"url": twin, "headers": headers}, len(httpx.get(twin, timeout=60).content))

        def window(label: str, calls: int) -> Window:
            job, size = jobs[label]
            measured = measure(server, "page", CLIENTS, calls, job)
            # a page's size moves a little (a CSRF token, the cart's message) but never far from its first
            assert all(abs(int(i) - size) <= size // 10 for i in measured.clients.ids), (label, size)
            return measured

        before = load()
        windows = interleaved({label: Case(CLIENTS, PILOT) for label in jobs}, window, ROUNDS, WINDOW_S)
    finally:
        server.stop()
    print(
        f"\nStorefront pages vs a bare Django template view of the same size; uvicorn {WORKERS} workers, production"
        f" settings, {CLIENTS} client processes; {ROUNDS} rounds, each window ≈ {WINDOW_S} s; medians (per-round"
        f" min–max); {cache_in_use(env)}"
    )
    for name, (path, session) in pages.items():
        ours, bare = windows[name], windows[f"bare {name}"]
        print(
            f"  {name:8} {jobs[name][1]:6d} B: page {median([w.rate for w in ours]):6.1f}/s |"
            f" bare {median([w.rate for w in bare]):6.1f}/s | page/bare {rate_ratio(ours, bare)} |"
            f" uvicorn CPU {median([w.uvicorn for w in ours]):4.1f} ms/page"
            f" (bare {median([w.uvicorn for w in bare]):3.1f}), ×{spread(ratios([w.uvicorn for w in ours], [w.uvicorn for w in bare]), 1)} |"  # noqa: E501
            f" Postgres {median([w.postgres for w in ours]):3.1f} ms | statements {_statements(path, session)} |"
            f" {noise(ours + bare)}"
        )
    print(f"  {before} → {load()}")
