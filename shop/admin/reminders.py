"""Abandoned-checkout reminders in the admin: read-only, filtered the way the dashboard counts them."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _

from kernel.admin_actions import ReadOnlyAdmin
from shop.checkout.types import STATUS_COMPLETED
from shop.models import BoletoNotice, CheckoutReminder

YES_NO = (("yes", _("Sim")), ("no", _("Não")))


class SentFilter(admin.SimpleListFilter):
    title = _("enviado")
    parameter_name = "sent"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> tuple[tuple[str, Any], ...]:
        return YES_NO

    def queryset(self, request: HttpRequest, queryset: QuerySet[CheckoutReminder]) -> QuerySet[CheckoutReminder]:
        if self.value() in ("yes", "no"):
            return queryset.filter(sent_at__isnull=self.value() == "no")
        return queryset


class RecoveredFilter(admin.SimpleListFilter):
    """Recovered: the reminded checkout became an order (the dashboard's "carrinhos recuperados")."""

    title = _("compra concluída")
    parameter_name = "recovered"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> tuple[tuple[str, Any], ...]:
        return YES_NO

    def queryset(self, request: HttpRequest, queryset: QuerySet[CheckoutReminder]) -> QuerySet[CheckoutReminder]:
        if self.value() == "yes":
            return queryset.filter(checkout__status=STATUS_COMPLETED)
        if self.value() == "no":
            return queryset.exclude(checkout__status=STATUS_COMPLETED)
        return queryset


@admin.register(CheckoutReminder)
class CheckoutReminderAdmin(ReadOnlyAdmin):
    """The abandoned-checkout reminders: what was sent (or why not), written by the sweeps, read here."""

    list_display = ["email", "checkout", "created_at", "sent_at", "skipped"]
    list_filter = [SentFilter, RecoveredFilter]
    list_select_related = ["checkout"]
    search_fields = ["email"]
    ordering = ["-created_at", "-id"]


@admin.register(BoletoNotice)
class BoletoNoticeAdmin(ReadOnlyAdmin):
    """The buyers' boleto e-mails (issued, due tomorrow): who was told, when, and why one was not sent."""

    list_display = ["email", "kind", "payment_id", "checkout", "created_at", "sent_at", "skipped"]
    list_filter = ["kind", "sent_at"]
    list_select_related = ["checkout"]
    search_fields = ["email", "payment_id", "checkout__public_id"]
    ordering = ["-created_at", "-id"]
