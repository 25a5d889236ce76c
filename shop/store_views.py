"""The shop's policy pages beyond terms and privacy: trocas e devoluções, entrega (store settings texts)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.translation import gettext as _

from shop.store import store_get


def returns_policy(request: HttpRequest) -> HttpResponse:
    store = store_get()
    return render(
        request,
        "shop/store/policy.html",
        {"policy_title": _("Trocas e devoluções"), "policy_text": store.returns_text, "policy_kind": "returns"},
    )


def shipping_policy(request: HttpRequest) -> HttpResponse:
    store = store_get()
    return render(
        request,
        "shop/store/policy.html",
        {"policy_title": _("Política de entrega"), "policy_text": store.shipping_text, "policy_kind": "shipping"},
    )
