"""Read-only lists of the fiscal rows (the order page shows the NF-e itself; `orders/admin` stays ours-free)."""

from __future__ import annotations

from django.contrib import admin
from django.utils.translation import gettext_lazy as _

from fiscal.models import FiscalDocument, FiscalJob, FiscalWebhook


class _ReadOnly(admin.ModelAdmin):
    def has_add_permission(self, request, obj=None) -> bool:  # type: ignore[no-untyped-def]
        return False

    def has_change_permission(self, request, obj=None) -> bool:  # type: ignore[no-untyped-def]
        return False

    def has_delete_permission(self, request, obj=None) -> bool:  # type: ignore[no-untyped-def]
        return False


@admin.register(FiscalDocument)
class FiscalDocumentAdmin(_ReadOnly):
    list_display = (
        "order_number",
        "order_ref",
        "status_words",
        "sefaz_reason",
        "number",
        "series",
        "access_key",
        "issued_at",
    )  # the reason: what to fix before re-issuing ("NCM não informado")
    list_filter = ("status", "environment")
    search_fields = ("order_ref", "access_key")

    @admin.display(description=_("situação"), ordering="status")
    def status_words(self, document: FiscalDocument) -> str:
        return document.status_text()


@admin.register(FiscalJob)
class FiscalJobAdmin(_ReadOnly):
    list_display = ("key", "action", "status", "attempts", "next_run_at", "last_error")
    list_filter = ("status", "action")


@admin.register(FiscalWebhook)
class FiscalWebhookAdmin(_ReadOnly):
    list_display = ("provider", "provider_ref", "event_id", "received_at", "processed_at")
