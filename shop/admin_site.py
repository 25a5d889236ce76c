"""The admin site: "<trade name> — administração" in the header, the dashboard as its home page, and the
technical lists (login lockouts, API tokens, BCP, fiscal jobs, webhook inboxes) out of the merchant's way: grouped
under "Sistema", last, and shown to superusers only (the lists keep their own permissions)."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.contrib.admin.apps import AdminConfig
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.translation import gettext as _

from kernel.admin_actions import delete_selected_feminine
from kernel.money import format_brl

# (app label, model class name or None for the whole app): the plumbing a merchant never works in.
SYSTEM_MODELS = {
    ("axes", None),
    ("authtoken", None),
    ("bcp_app", None),
    ("fiscal", "FiscalJob"),
    ("fiscal", "FiscalWebhook"),
    ("payments", "PixWebhookEvent"),
    ("payments", "CardWebhookEvent"),
    ("payments", "PaymentEvent"),
}


# The registered models whose plural is feminine in Portuguese: their bulk delete reads "Remover categorias
# selecionadas", not Django's "selecionados" (tests/shop/test_admin_portuguese.py names every model's gender).
FEMININE_MODELS = {
    "axes.AccessAttempt",  # tentativas de acesso
    "axes.AccessFailureLog",  # falhas de acesso
    "orders.ReturnRequest",  # devoluções solicitadas
    "payments.PixCharge",  # cobranças Pix
    "payments.PixRefund",  # devoluções Pix
    "payments.BoletoRefund",  # devoluções de boleto
    "payments.PixInfraction",  # disputas Pix (MED)
    "payments.PixRecurringCharge",  # cobranças Pix Automático
    "fiscal.FiscalDocument",  # notas fiscais
    "fiscal.FiscalReturnNote",  # NF-e de devolução
    "fiscal.FiscalJob",  # tarefas fiscais
    "fiscal.FiscalWebhook",  # notificações do emissor
    "shop.Category",  # categorias
    "shop.Variant",  # variantes
    "shop.PackagingBox",  # caixas de embalagem
    "shop.Subscription",  # assinaturas
    "bcp_app.Platform",  # plataformas BCP
    "bcp_app.A2ATask",  # tarefas A2A
}


def _is_system(app_label: str, object_name: str) -> bool:
    return (app_label, None) in SYSTEM_MODELS or (app_label, object_name) in SYSTEM_MODELS


class ShopAdminSite(admin.AdminSite):
    index_template = "admin/shop_dashboard.html"

    def register(self, model_or_iterable: Any, admin_class: Any = None, **options: Any) -> None:
        super().register(model_or_iterable, admin_class, **options)
        for model in [model_or_iterable] if isinstance(model_or_iterable, type) else model_or_iterable:
            model_admin = self._registry.get(model)
            if model_admin is not None and model._meta.label in FEMININE_MODELS:
                # An instance attribute: the class (a third party's too) stays as it is.
                model_admin.actions = [*(model_admin.actions or ()), delete_selected_feminine]

    def _split_system(self, request: HttpRequest) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """(the merchant's apps without the technical models, the technical models)."""
        kept, system = [], []
        for app in super().get_app_list(request):
            models = [m for m in app["models"] if not _is_system(app["app_label"], m["object_name"])]
            system += [m for m in app["models"] if _is_system(app["app_label"], m["object_name"])]
            if models:
                kept.append({**app, "models": models})
        return kept, system

    def _system_app(self, models: list[dict[str, Any]]) -> dict[str, Any]:
        return {
            "name": _("Sistema"),
            "app_label": "sistema",
            "app_url": reverse("admin:shop_system"),
            "has_module_perms": True,
            "models": models,
        }

    def get_app_list(self, request: HttpRequest, app_label: str | None = None) -> list[dict[str, Any]]:
        if app_label is not None:
            return super().get_app_list(request, app_label)  # an app's own page stays whole
        kept, system = self._split_system(request)
        if system and request.user.is_superuser:
            kept.append(self._system_app(system))
        return kept

    def system_index(self, request: HttpRequest) -> TemplateResponse:
        """`/admin/sistema/`: the technical lists, for superusers."""
        _kept, system = self._split_system(request)
        if not request.user.is_superuser or not system:
            raise PermissionDenied
        context = {
            **self.each_context(request),
            "title": _("Sistema"),
            "subtitle": None,
            "app_list": [self._system_app(system)],
            "app_label": "sistema",
        }
        request.current_app = self.name
        return TemplateResponse(request, "admin/app_index.html", context)

    def each_context(self, request: HttpRequest) -> dict[str, Any]:
        from shop.store.services import store_get  # noqa: PLC0415 (this AppConfig's module loads before the app registry: models come at request time)

        context = super().each_context(request)
        name = store_get().trade_name
        context["site_header"] = _("%(name)s — administração") % {"name": name}
        context["site_title"] = _("%(name)s — administração") % {"name": name}
        return context

    def index(self, request: HttpRequest, extra_context: dict[str, Any] | None = None) -> TemplateResponse:
        from shop.admin.dashboard import chart_svg_bars, dashboard_get, sees_revenue  # noqa: PLC0415 (this AppConfig's module loads before the app registry: models come at request time)
        from shop.admin.first_steps import first_steps  # noqa: PLC0415 (same reason)
        from shop.subscriptions.selectors import subscription_stats  # noqa: PLC0415 (same reason)

        user = request.user
        # The revenue (sales, ticket médio, the chart) only to who may see it: Atendimento and Expedição work the
        # orders one by one and need not know what the shop makes.
        revenue = sees_revenue(user)
        dashboard = dashboard_get(revenue=revenue)
        bars = chart_svg_bars(dashboard.chart) if dashboard.chart else []
        for bar in bars:
            bar["title"] = f"{bar['day']:%d/%m}: {format_brl(int(bar['revenue']))}"
        context = {
            "dashboard": dashboard,
            # Django's admin opens a list to view_* or change_*: a counter is shown to who may open its list.
            "counters": [
                counter
                for counter in dashboard.counters
                if user.has_perm(counter.permission) or user.has_perm(counter.permission.replace(".view_", ".change_"))
            ],
            "chart_bars": bars,
            "chart_total": format_brl(sum(bar.revenue for bar in dashboard.chart)),
            "subscriptions": subscription_stats(),  # issue 38: subscriptions, next charges, failures, churn
            # Each next charge's amount is revenue too: Atendimento and Expedição read when and whose, not how much.
            "subscription_amounts": revenue,
            "first_steps": first_steps(request.user),  # a new store: what it still lacks before it sells
            **(extra_context or {}),
        }
        return super().index(request, context)

    def get_urls(self) -> list[Any]:
        from django.urls import path  # noqa: PLC0415 (this AppConfig's module loads before the app registry: models come at request time)

        from shop.admin.manual_order import manual_order_view  # noqa: PLC0415 (this AppConfig's module loads before the app registry: models come at request time)

        view = self.admin_view(lambda request: manual_order_view(self, request))
        return [
            path("venda-manual/", view, name="shop_manual_order"),
            path("sistema/", self.admin_view(self.system_index), name="shop_system"),
            *super().get_urls(),
        ]


class ShopAdminConfig(AdminConfig):
    default_site = "shop.admin_site.ShopAdminSite"
