"""Read-only lists of the fiscal rows (the order page shows the NF-e itself; `orders/admin` stays ours-free)."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import Q, QuerySet
from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _

from fiscal.models import BLOCKED_PREFIX, FiscalDocument, FiscalJob, FiscalWebhook

# A note refused before any provider call for missing data: stored as rejected, never seen by the SEFAZ.
_BLOCKED = Q(status=FiscalDocument.Status.REJECTED, sefaz_status="", sefaz_reason__startswith=BLOCKED_PREFIX)
BLOCKED = "blocked"


class DocumentSituationFilter(admin.SimpleListFilter):
    """The status as staff read it (`FiscalDocument.status_text`): a blocked note has its own choice, apart from
    the notes the SEFAZ rejected."""

    title = _("situação")
    parameter_name = "situacao"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, Any]]:
        situations: list[tuple[str, Any]] = list(FiscalDocument.Status.choices)
        return [*situations, (BLOCKED, _("Bloqueada (dados faltando)"))]

    def queryset(self, request: HttpRequest, queryset: QuerySet[FiscalDocument]) -> QuerySet[FiscalDocument]:
        value = self.value()
        if value == BLOCKED:
            return queryset.filter(_BLOCKED)
        if value == FiscalDocument.Status.REJECTED:
            return queryset.filter(status=value).exclude(_BLOCKED)
        if value:
            return queryset.filter(status=value)
        return queryset


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
        "cancelled_at",
        "attempt",
    )  # the reason: what to fix before re-issuing ("NCM não informado")
    # The month's notes for the accountant (QA walk): authorized or cancelled in a month, Brasília time.
    list_filter = (DocumentSituationFilter, "environment", "issued_at", "cancelled_at")
    date_hierarchy = "issued_at"
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
