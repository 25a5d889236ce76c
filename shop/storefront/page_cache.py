"""Storefront pages shared by every buyer, rendered once per catalog version (issue 34).

The home page and a product page are the same HTML for every buyer but for three per-request parts: the CSRF
token of their forms, the mini-cart count and the flash messages. Rendering them was most of their CPU (a
product page: five statements and some 400 template nodes, about 10 ms). So the page is rendered once with
*holes* in those places (markers beginning with "<", which escaped merchant text can never contain), stored in
Django's cache (Redis when `REDIS_URL` is set, shared by every process) and each view fills the holes: its own
token, its own cart's count, its own messages. Nothing of one buyer is ever stored.

Key and freshness: one entry per (page, path, language), holding the catalog version it was rendered at
(`shop.checkout.stock.catalog_version`, bumped by every save or delete of a product, variant, photo, category,
subscription plan, shipping method or the store settings, by the admin's bulk actions and the photo thumbnails,
see shop/receivers.py) and, for a product page, its variants' live columns (`signature`). The version and the
entry are read in one cache round trip; an entry of another version or signature is rendered again. Only a
bare URL is cached (no query string: `?sku=`, `?cep=` and a search box value are per request).

Stock moves by conditional UPDATEs that send no signal (a sale, a release): the product page therefore reads its
variants' live columns with one hand-written statement on every view and renders again when they differ, so the
stock, "Últimas unidades!" and the add button are never stale. The home page's cards show only "Esgotado"/"Em
estoque": they may be `HOME_SECONDS` old, as before (shop/storefront/views.py).
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable, Hashable
from pathlib import Path

from django.conf import settings
from django.contrib.messages import get_messages
from django.contrib.staticfiles.storage import staticfiles_storage
from django.http import HttpRequest, HttpResponse
from django.template import Context
from django.template.loader import render_to_string
from django.template.utils import get_app_template_dirs
from django.utils.html import conditional_escape
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import get_language

from kernel.ops import request_cache
from shop.catalog.selectors import checkout_read_keys
from shop.checkout.stock import CACHE_SECONDS as CATALOG_SECONDS
from shop.checkout.stock import VERSION_KEY, catalog_version
from shop.storefront.context_processors import cart_count
from shop.storefront.csrf import csrf_token

HOLE_CSRF = "<!--hole:csrf-->"
HOLE_CART = "<!--hole:cart-count-->"
HOLE_FLASH = "<!--hole:flash-->"
# What the template renders in the holes' places (`{% csrf_token %}`, `{{ cart_count }}`, the flash block).
HOLES: dict[str, SafeString] = {
    "csrf_token": mark_safe(HOLE_CSRF),  # noqa: S308 (a fixed marker, replaced before the page is sent)
    "cart_count": mark_safe(HOLE_CART),  # noqa: S308
    "flash_hole": mark_safe(HOLE_FLASH),  # noqa: S308
}
PAGE_SECONDS = 3600  # a version bump or a signature change renders again sooner; this bounds a missed bump


def shared_seconds() -> int:
    """How long an entry lives: another process cannot hear a version bump in its own local-memory cache, so
    without Redis a page lives as long as a catalog snapshot (a minute)."""
    return PAGE_SECONDS if settings.REDIS_URL else CATALOG_SECONDS


KEY_PREFIX = "shop:page:v1:"


def cacheable(request: HttpRequest) -> bool:
    """Only a bare GET of the page is shared: a query string changes it (selected variant, CEP, search box)."""
    return request.method == "GET" and not request.META.get("QUERY_STRING")


@functools.cache
def _build() -> str:
    """The build that rendered a page: the static files' manifest (hashed names) and the templates. A deploy that
    changes either must not serve pages rendered by the old one (the hour an entry may live). The templates are
    hashed by content, once per process, so every server of one release shares its entries."""
    digest = hashlib.blake2b(digest_size=8)
    for folder in _template_dirs():
        for path in sorted(folder.rglob("*.htm*")):
            digest.update(str(path.relative_to(folder)).encode())
            digest.update(path.read_bytes())
    return f"{getattr(staticfiles_storage, 'manifest_hash', '') or ''}{digest.hexdigest()}"


def _template_dirs() -> list[Path]:
    folders = [Path(folder) for engine in settings.TEMPLATES for folder in engine.get("DIRS", ())]
    folders += [Path(folder) for folder in get_app_template_dirs("templates")]
    return [folder for folder in folders if folder.is_dir()]


def page_key(name: str, request: HttpRequest) -> str:
    return f"{KEY_PREFIX}{name}:{get_language()}:{_build()}:{request.path}"


def cached_page(key: str, signature: Hashable = None) -> str | None:
    """The stored page for `key` when it was rendered at the current catalog version with `signature`."""
    request_cache.prefetch(VERSION_KEY, key)  # one round trip for both
    entry = request_cache.get(key)
    if not isinstance(entry, tuple) or len(entry) != 3:
        return None
    version, stored_signature, html = entry
    if version != catalog_version() or stored_signature != signature:
        return None
    return str(html)


def render_shared(
    request: HttpRequest,
    key: str,
    template: str,
    context: dict[str, object],
    *,
    signature: Hashable = None,
    timeout: int | None = None,
    status: int = 200,
) -> HttpResponse:
    """Render `template` with holes, store it under `key` (at the version read before the rows were), and answer
    this request with its holes filled."""
    version = catalog_version()  # before rendering: a bump during the render makes the entry stale, not wrong
    html = render_to_string(template, {**context, **HOLES}, request=request)
    request_cache.set(key, (version, signature, html), min(timeout or PAGE_SECONDS, shared_seconds()))
    return filled(request, html, status=status)


def filled(request: HttpRequest, html: str, *, status: int = 200) -> HttpResponse:
    """The shared page with this request's own token, cart count and messages."""
    html = html.replace(HOLE_CSRF, csrf_token(request)).replace(HOLE_CART, str(cart_count(request)))
    if HOLE_FLASH in html:
        html = html.replace(HOLE_FLASH, _flash(request))
    return HttpResponse(html, status=status)


def _flash(request: HttpRequest) -> str:
    messages = get_messages(request)
    if not messages:  # reads the message cookie/session as the context processor did; nothing is marked used
        return ""
    return render_to_string("shop/partials/flash.html", {"messages": messages})


# --- the header and footer of every other page ------------------------------------------------------------------
# The cart, checkout, order and account pages are the buyer's own, but their header (logo, search, menu) and footer
# (store identity, links, language form) are everybody's: `{% shared "header" %}` in base.html keeps them rendered
# per catalog version and language the same way, with holes for the search box's value and the language form's
# `next` too (those two are the request's own on these pages).
HOLE_SEARCH = "<!--hole:search-->"
HOLE_NEXT = "<!--hole:next-->"
FRAGMENT_HOLES: dict[str, SafeString] = {
    **HOLES,
    "search_hole": mark_safe(HOLE_SEARCH),  # noqa: S308
    "next_hole": mark_safe(HOLE_NEXT),  # noqa: S308
}
FRAGMENTS = ("header", "footer")


def _fragment_key(name: str) -> str:
    return f"{KEY_PREFIX}fragment:{name}:{get_language()}:{_build()}"


def prefetch_page_reads() -> None:
    """One cache round trip, at the start of a buyer's own page (cart, checkout), for what its render reads one by
    one otherwise: the version tokens of the store settings (with their policies) and of the shipping table, the
    catalog version and this page's shared header and footer. The values behind the tokens are kept by each
    process (kernel/ops/kept.py)."""
    keys = checkout_read_keys(pricing=True)
    request_cache.prefetch(*keys, *(_fragment_key(name) for name in FRAGMENTS))


def shared_fragment(name: str, context: Context, render: Callable[[Context], str]) -> str:
    """The fragment `name` of base.html for this request: rendered with holes once per catalog version and
    language (`render(context)` with the holes pushed), then filled from `context` (its request, CSRF token and
    cart count). Rendered in place when there is no request, or inside a shared page (which is the cache)."""
    request = context.get("request")
    token = context.get("csrf_token")
    if request is None or "flash_hole" in context or not token or str(token) == "NOTPROVIDED":
        return render(context)
    key = _fragment_key(name)
    request_cache.prefetch(VERSION_KEY, *(_fragment_key(other) for other in FRAGMENTS))
    version = catalog_version()
    entry = request_cache.get(key)
    if isinstance(entry, tuple) and len(entry) == 2 and entry[0] == version:
        html = str(entry[1])
    else:
        with context.push(FRAGMENT_HOLES):
            html = render(context)
        request_cache.set(key, (version, html), shared_seconds())
    return (
        html.replace(HOLE_CSRF, conditional_escape(str(token)))
        .replace(HOLE_CART, conditional_escape(str(context.get("cart_count") or 0)))
        .replace(HOLE_SEARCH, conditional_escape(request.GET.get("q", "")))
        .replace(HOLE_NEXT, conditional_escape(request.get_full_path()))
    )


def shared_or_render(
    request: HttpRequest, name: str, render: Callable[[str], HttpResponse], *, signature: Hashable = None
) -> HttpResponse:
    """The cached page when fresh, else `render(key)` (which calls `render_shared`)."""
    key = page_key(name, request)
    html = cached_page(key, signature)
    if html is not None:
        return filled(request, html)
    return render(key)
