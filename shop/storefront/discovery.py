"""Being found: `/sitemap.xml`, `/robots.txt`, the Google Merchant Center feed and the JSON catalog feed.

Sitemap format: sitemaps.org protocol 0.9 (django.contrib.sitemaps renders it); every `<loc>` is absolute on
`BCP_PUBLIC_URL` (the host the shop is published on), never the request's Host header. robots.txt:
RFC 9309, with the `Sitemap:` line of the sitemaps.org protocol ("Informing search engine crawlers").
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.contrib.sitemaps import Sitemap
from django.contrib.sitemaps.views import sitemap as sitemap_view
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.urls import reverse
from django.views.decorators.http import require_GET

from shop.catalog import selectors
from shop.catalog.feeds import catalog_feed_json, feed_items, merchant_feed_xml
from shop.models import Category, Product
from shop.store.policies import store_policies
from shop.store.selectors import store_updated_at
from shop.store.services import store_get

# Crawlers and feed readers may keep these a few minutes; stock moves are seen within that time.
FEED_MAX_AGE_SECONDS = 300
# Pages that are personal or transactional: never indexed (they also carry `noindex`).
ROBOTS_DISALLOW = (
    "/admin/",
    "/api/",
    "/bcp/",
    "/carrinho/",
    "/checkout/",
    "/comprar",
    "/lembretes/",
    "/orders/",
    "/payments/",
    "/pedido",
    "/_sandbox/",
)


def _base_url() -> str:
    return settings.BCP_PUBLIC_URL.rstrip("/")


class _PublicSitemap(Sitemap):
    """Locations on `BCP_PUBLIC_URL` (scheme and host), whatever the request's Host."""

    def get_protocol(self, protocol: str | None = None) -> str:
        return urlsplit(_base_url()).scheme or "https"

    def get_domain(self, site: Any = None) -> str:
        return urlsplit(_base_url()).netloc


class ProductSitemap(_PublicSitemap):
    changefreq = "daily"
    priority = 0.8

    def items(self) -> QuerySet[Product]:
        return selectors.sitemap_products()

    def lastmod(self, item: Product) -> datetime:
        return item.updated_at


class CategorySitemap(_PublicSitemap):
    changefreq = "daily"
    priority = 0.6

    def items(self) -> QuerySet[Category]:
        return selectors.sitemap_categories()

    def lastmod(self, item: Category) -> datetime:
        return item.last_product_change  # type: ignore[attr-defined]


class PageSitemap(_PublicSitemap):
    """Home, the catalog and the policy pages served by the shop itself (a policy hosted elsewhere is not ours
    to list). Their text lives in the store settings, so its last change is their `lastmod`."""

    changefreq = "weekly"
    priority = 0.5

    def items(self) -> list[str]:
        base = _base_url()
        self._store_changed = store_updated_at()  # one read for every page's lastmod
        paths = [reverse("shop:home"), reverse("shop:product_list")]
        paths += [p.url[len(base) :] for p in store_policies("pt-br") if p.url.startswith(base + "/")]
        return paths

    def location(self, item: str) -> str:
        return item

    def lastmod(self, item: str) -> datetime | None:
        return self._store_changed


SITEMAPS = {"produtos": ProductSitemap, "categorias": CategorySitemap, "paginas": PageSitemap}


def sitemap(request: HttpRequest) -> HttpResponse:
    response = sitemap_view(request, sitemaps=SITEMAPS)
    response["Cache-Control"] = f"public, max-age={FEED_MAX_AGE_SECONDS}"
    return response


@require_GET
def robots_txt(request: HttpRequest) -> HttpResponse:
    lines = ["User-agent: *", *(f"Disallow: {path}" for path in ROBOTS_DISALLOW), "Allow: /"]
    lines += ["", f"Sitemap: {_base_url()}{reverse('shop:sitemap')}", ""]
    response = HttpResponse("\n".join(lines), content_type="text/plain; charset=utf-8")
    response["Cache-Control"] = "public, max-age=3600"
    return response


@require_GET
def merchant_feed(request: HttpRequest) -> HttpResponse:
    """Google Merchant Center product feed (RSS 2.0, `g:` namespace): one item per active variant."""
    store = store_get()
    base = _base_url()
    items = feed_items(selectors.feed_products(), base_url=base)
    body = merchant_feed_xml(
        items, title=store.trade_name, link=f"{base}/", description=f"Produtos de {store.trade_name}"
    )
    response = HttpResponse(body, content_type="application/rss+xml; charset=utf-8")
    response["Cache-Control"] = f"public, max-age={FEED_MAX_AGE_SECONDS}"
    return response


@require_GET
def catalog_feed(request: HttpRequest) -> HttpResponse:
    """The whole catalog for agents' bulk discovery: a schema.org DataFeed of the product pages' JSON-LD."""
    base = _base_url()
    feed = catalog_feed_json(
        selectors.feed_products(), base_url=base, name=store_get().trade_name, url=base + request.path
    )
    response = HttpResponse(
        json.dumps(feed, ensure_ascii=False, separators=(",", ":")), content_type="application/ld+json"
    )
    response["Cache-Control"] = f"public, max-age={FEED_MAX_AGE_SECONDS}"
    return response
