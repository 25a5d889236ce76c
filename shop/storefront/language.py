"""The site's language switch (the footer's form, `/i18n/setlang/`): Django's `set_language` (the cookie), and,
when the buyer switches on an order's page, a checkout's or a subscription's, that order (checkout, subscription)
follows: its next e-mails are written in the language the buyer chose, not in the one they ordered in."""

from __future__ import annotations

from urllib.parse import urlsplit

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from django.urls import Resolver404, resolve
from django.views.i18n import set_language as django_set_language

from orders.selectors import order_id_for_permalink
from orders.services import order_language_set
from shop.checkout.selectors import CheckoutNotFound, checkout_by_public_id, require_access
from shop.checkout.services import checkout_language_set
from shop.subscriptions.services import subscription_language_set


def set_language(request: HttpRequest) -> HttpResponse:
    response = django_set_language(request)
    cookie = response.cookies.get(settings.LANGUAGE_COOKIE_NAME)
    location = response.get("Location", "")
    # Only an explicit switch (a POST that set the cookie) to a page of ours (Django checked `next` is safe).
    if request.method == "POST" and cookie is not None and location:
        _follow_switch(request, urlsplit(location).path, cookie.value)
    return response


def _follow_switch(request: HttpRequest, path: str, language: str) -> None:
    try:
        match = resolve(path)
    except Resolver404:
        return
    if match.view_name == "orders:permalink":
        order_id = order_id_for_permalink(match.kwargs.get("token", ""))  # the token is the key to the page
        if order_id:
            order_language_set(order_id=order_id, language=language)
        return
    if match.view_name == "shop:subscription_page":  # the token is the key to the page, as an order's permalink
        subscription_language_set(access_token=match.kwargs.get("token", ""), language=language)
        return
    checkout_id = match.kwargs.get("checkout_id") if match.namespace == "checkout" else None
    if not checkout_id:
        return
    try:
        require_access(request, checkout_by_public_id(checkout_id))  # only a checkout this browser may open
    except (CheckoutNotFound, Http404):
        return
    order_id = checkout_language_set(checkout_id=checkout_id, language=language)
    if order_id:  # paid already (a Pix settled while the page was open): the order it became follows
        order_language_set(order_id=order_id, language=language)
