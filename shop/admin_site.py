"""The admin site: "<trade name> — administração" in the header, the dashboard as its home page."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.contrib.admin.apps import AdminConfig
from django.http import HttpRequest
from django.template.response import TemplateResponse
from django.utils.translation import gettext as _

from kernel.money import format_brl


class ShopAdminSite(admin.AdminSite):
    index_template = "admin/shop_dashboard.html"

    def each_context(self, request: HttpRequest) -> dict[str, Any]:
        from shop.store.services import store_get  # noqa: PLC0415 (this AppConfig's module loads before the app registry: models come at request time)

        context = super().each_context(request)
        name = store_get().trade_name
        context["site_header"] = _("%(name)s — administração") % {"name": name}
        context["site_title"] = _("%(name)s — administração") % {"name": name}
        return context

    def index(self, request: HttpRequest, extra_context: dict[str, Any] | None = None) -> TemplateResponse:
        from shop.admin.dashboard import chart_svg_bars, dashboard_get  # noqa: PLC0415 (this AppConfig's module loads before the app registry: models come at request time)

        dashboard = dashboard_get()
        bars = chart_svg_bars(dashboard.chart)
        for bar in bars:
            bar["title"] = f"{bar['day']:%d/%m}: {format_brl(int(bar['revenue']))}"
        context = {
            "dashboard": dashboard,
            "chart_bars": bars,
            "chart_total": format_brl(sum(bar.revenue for bar in dashboard.chart)),
            **(extra_context or {}),
        }
        return super().index(request, context)

    def get_urls(self) -> list[Any]:
        from django.urls import path  # noqa: PLC0415 (this AppConfig's module loads before the app registry: models come at request time)

        from shop.admin.manual_order import manual_order_view  # noqa: PLC0415 (this AppConfig's module loads before the app registry: models come at request time)

        view = self.admin_view(lambda request: manual_order_view(self, request))
        return [path("venda-manual/", view, name="shop_manual_order"), *super().get_urls()]


class ShopAdminConfig(AdminConfig):
    default_site = "shop.admin_site.ShopAdminSite"
