"""Benchmark: product list page vs a bare Django view reading the same page of rows (`make bench`).

Both go through the Django test client in the same run, so the printed ratio compares like with like
on whatever machine runs it. The only assertion is on query counts (per_page 12 vs 50), not on time.
"""

from __future__ import annotations

import time

import pytest
from django.db import connection
from django.http import HttpRequest, HttpResponse
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import include, path

from shop.models import Product

REQUESTS = 200
WARMUP = 10
PAGE = 3
PER_PAGE = 24


def bare_product_page(request: HttpRequest) -> HttpResponse:
    """The floor: the same page of rows (title, price) with no template, prefetch or filtering logic."""
    page = int(request.GET.get("page", "1"))
    offset = (page - 1) * PER_PAGE
    rows = Product.objects.filter(active=True).order_by("title", "id").values_list("title", "slug")
    body = "\n".join(f'<a href="/produtos/{slug}/">{title}</a>' for title, slug in rows[offset : offset + PER_PAGE])
    return HttpResponse(body)


urlpatterns = [path("bench/bare/", bare_product_page), path("", include("config.urls"))]


def _throughput(client: Client, url: str) -> float:
    for _ in range(WARMUP):
        assert client.get(url).status_code == 200
    started = time.perf_counter()
    for _ in range(REQUESTS):
        client.get(url)
    return REQUESTS / (time.perf_counter() - started)


def _queries(client: Client, url: str) -> int:
    with CaptureQueriesContext(connection) as ctx:
        assert client.get(url).status_code == 200
    return len(ctx.captured_queries)


@pytest.mark.urls(__name__)
def test_product_list_throughput_and_query_count(thousand_products: int) -> None:
    client = Client()
    list_url = f"/produtos/?sort=title&page={PAGE}&per_page={PER_PAGE}"
    bare_url = f"/bench/bare/?page={PAGE}"

    # same rows on both sides
    page_html = client.get(list_url).content.decode()
    bare_html = client.get(bare_url).content.decode()
    first_title = bare_html.split(">", 1)[1].split("<", 1)[0]
    assert first_title == f"Produto de teste {(PAGE - 1) * PER_PAGE:04d}"
    assert first_title in page_html

    queries_12 = _queries(client, "/produtos/?per_page=12")
    queries_50 = _queries(client, "/produtos/?per_page=50")
    page_rps = _throughput(client, list_url)
    bare_rps = _throughput(client, bare_url)

    print(
        f"\n[bench] product list, {thousand_products} products, page {PAGE} of {PER_PAGE}:"
        f"\n  storefront page : {page_rps:8.1f} req/s"
        f"\n  bare view       : {bare_rps:8.1f} req/s"
        f"\n  ratio bare/page : {bare_rps / page_rps:8.2f}x"
        f"\n  queries per_page=12: {queries_12}, per_page=50: {queries_50}"
    )
    # The page's query count is fixed: it must not grow with the page size.
    assert queries_12 == queries_50
