"""The shop's policy pages beyond terms and privacy: trocas e devoluções, entrega (store settings texts)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.safestring import mark_safe
from django.utils.translation import gettext as _

from shop.store.policies import default_body
from shop.store.services import store_get


def _policy_page(request: HttpRequest, kind: str, title: str, text: str) -> HttpResponse:
    store = store_get()
    default = "" if text else mark_safe(default_body(kind, store))  # noqa: S308 (our own template's HTML)
    return render(
        request,
        "shop/store/policy.html",
        {"policy_title": title, "policy_text": text, "policy_default": default, "policy_kind": kind},
    )


def returns_policy(request: HttpRequest) -> HttpResponse:
    return _policy_page(request, "returns", _("Trocas e devoluções"), store_get().returns_text)


def shipping_policy(request: HttpRequest) -> HttpResponse:
    return _policy_page(request, "shipping", _("Política de entrega"), store_get().shipping_text)
