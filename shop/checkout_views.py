"""Storefront cart and checkout views (thin: forms → shop.services → templates)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render


def _todo(request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
    return render(request, "shop/checkout/placeholder.html", {}, status=200)


cart_detail = cart_add = cart_change = cart_coupon = checkout_start = checkout_resume = _todo
checkout_pay = pix_page = checkout_status = terms = privacy = _todo
