"""`GET {endpoint}/{items}?{query}`: a buy link becomes a storefront checkout and a `303` to it (BCP §15).

The checkout is created through `bcp_app.service.operations.create_checkout` (the same engine, limits and
messages as every agent transport) with the shop's own storefront context, bound to the buyer's browser
session exactly as the storefront's own "Finalizar compra" binds it (the checkout's `session_key` and the
session's `checkout_id` and cart), so the checkout page the `303` lands on is the buyer's own.

Loading a link never orders or charges (BCP-PL-06): the checkout is only created. Every answer is a
`303` with `Cache-Control: no-store` and `Referrer-Policy: no-referrer` (BCP-PL-05), or a Portuguese
HTML page (400 malformed, 429 too many links) — never JSON, never a redirect the link chose off-site.
"""

from __future__ import annotations

import logging
from urllib.parse import parse_qsl, urlencode, urlsplit

from django.conf import settings
from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.cache import add_never_cache_headers
from django.views.decorators.http import require_safe

from bcp_app.protocol.errors import ProtocolError
from bcp_app.protocol.names import CHECKOUT, DISCOUNT, FULFILLMENT, PROTOCOL_VERSION
from bcp_app.protocol.permalink import ENDPOINT_PATH, Permalink, PermalinkError, attribution_rewrites, parse_permalink
from bcp_app.service import operations
from bcp_app.service.context import RequestContext, normalize_language
from shop.cart import cart_replace

logger = logging.getLogger(__name__)


def storefront_context(request: HttpRequest, *, session_key: str) -> RequestContext:
    """The shop's own storefront as the caller: checkout with its extensions, no platform, no profile."""
    language = normalize_language(getattr(request, "LANGUAGE_CODE", "") or settings.LANGUAGE_CODE)
    ctx = RequestContext(
        transport="permalink",
        profile_url="",
        profile={},
        capabilities={CHECKOUT: PROTOCOL_VERSION, FULFILLMENT: PROTOCOL_VERSION, DISCOUNT: PROTOCOL_VERSION},
        language=language,
    )
    ctx.extra.update(client_ip=request.META.get("REMOTE_ADDR"), session_key=session_key)
    return ctx


def _items_segment(request: HttpRequest, parsed: str) -> str:
    """The item path as sent (ASGI `raw_path`), so %-encoded separators are seen and refused (BCP-PL-02)."""
    scope = getattr(request, "scope", None) or {}
    raw = scope.get("raw_path")
    if isinstance(raw, bytes):
        text = raw.decode("latin-1")
        prefix = ENDPOINT_PATH + "/"
        return text[len(prefix) :] if text.startswith(prefix) else ""
    return parsed


def _see_other(path: str, link: Permalink | None) -> HttpResponse:
    """`303` to a path of ours, with the non-BCP parameters (and attribution) kept for the page's analytics."""
    parts = urlsplit(path)
    query = parse_qsl(parts.query, keep_blank_values=True)
    if link is not None:
        query += [*link.passthrough, *attribution_rewrites(link.fields, link.passthrough)]
    location = f"{settings.BCP_PUBLIC_URL.rstrip('/')}{parts.path}" + (f"?{urlencode(query)}" if query else "")
    response = HttpResponse(status=303)
    response["Location"] = location
    return _private(response)


def _private(response: HttpResponse) -> HttpResponse:
    add_never_cache_headers(response)
    response["Cache-Control"] = "no-store"
    response["Referrer-Policy"] = "no-referrer"
    response["X-Robots-Tag"] = "noindex"
    return response


def _page(request: HttpRequest, message: str, *, status: int, retry_after: int | None = None) -> HttpResponse:
    response = render(request, "bcp/permalink_error.html", {"problem": message, "status": status}, status=status)
    if retry_after is not None:
        response["Retry-After"] = str(retry_after)
    return _private(response)


def _bind_to_session(request: HttpRequest, checkout: dict[str, object]) -> None:
    """The storefront's binding: the session names the checkout, and its cart holds the checkout's lines."""
    lines = [
        (str(line["item"]["id"]), int(line["quantity"]))  # type: ignore[index]
        for line in checkout.get("line_items") or []
    ]  # type: ignore[union-attr]
    codes = list((checkout.get("discounts") or {}).get("codes") or [])  # type: ignore[union-attr]
    cart_replace(request.session, items=lines, coupons=codes, checkout_id=str(checkout["id"]))


@require_safe
def permalink(request: HttpRequest, items: str = "") -> HttpResponse:
    if not getattr(settings, "BCP_PERMALINK_ENABLED", True):
        raise Http404("permalinks desativados")
    try:
        link = parse_permalink(_items_segment(request, items), request.META.get("QUERY_STRING", ""))
    except PermalinkError as exc:
        return _page(request, exc.message, status=400)
    fallback = reverse("checkout:cart")
    if not link.items or request.method == "HEAD":
        # Nothing to buy (or a prefetcher's HEAD): no state is created, the buyer goes on where asked.
        return _see_other(link.continue_to or (fallback if link.items else reverse("shop:home")), link)
    if not request.session.session_key:
        request.session.save()
    ctx = storefront_context(request, session_key=request.session.session_key or "")
    body = {
        "line_items": [{"item": {"id": item_id}, "quantity": quantity} for item_id, quantity in link.items],
        **link.fields,
    }
    try:
        result = operations.create_checkout(ctx, body)
    except ProtocolError as exc:
        if exc.code == "rate_limited":
            return _page(
                request,
                "Muitos links abertos em pouco tempo. Aguarde um instante e tente de novo.",
                status=429,
                retry_after=exc.retry_after,
            )
        if exc.code == "invalid_request":
            return _page(request, f"O link tem um dado inválido. {exc.content}", status=400)
        logger.warning("permalink refused: %s", exc.code)
        return _page(
            request,
            "Não foi possível abrir este link agora. Tente de novo em instantes.",
            status=503,
            retry_after=exc.retry_after,
        )
    if result.is_error_response:
        # A handled shopping error (nothing purchasable): the buyer sees why on the cart page (UCP §Error Handling).
        for message in result.body.get("messages") or []:
            messages.error(request, str(message.get("content", "")))
        return _see_other(link.continue_to or fallback, link)
    _bind_to_session(request, result.body)
    checkout_path = reverse("checkout:resume", kwargs={"checkout_id": result.body["id"]})
    return _see_other(link.continue_to or checkout_path, link)
