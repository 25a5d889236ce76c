"""Read-only lists of the fiscal rows (the order page shows the NF-e itself; `orders/admin` stays ours-free)."""

from __future__ import annotations

import csv
from collections.abc import Iterable, Iterator
from datetime import datetime
from typing import Any

from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.db.models import Q, QuerySet
from django.http import HttpRequest, StreamingHttpResponse
from django.urls import path
from django.utils import timezone
from django.utils.translation import gettext
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


class _Echo:
    def write(self, value: str) -> str:
        return value


def _local(value: datetime | None) -> str:
    return timezone.localtime(value).strftime("%d/%m/%Y %H:%M") if value else ""


def documents_csv_rows(documents: Iterable[FiscalDocument]) -> Iterator[str]:
    """The NF-e list as Excel in pt-BR opens it: `;`, UTF-8 with a byte-order mark, dates in Brasília time, the
    44-digit key in groups of four as the DANFE prints it (a bare number would read 3,5E+43 in a spreadsheet)."""
    writer = csv.writer(_Echo(), delimiter=";")
    header = [
        gettext("Pedido"), gettext("Número"), gettext("Série"), gettext("Chave de acesso"), gettext("Situação"),
        gettext("Ambiente"), gettext("Autorizada em"), gettext("Cancelada em"), gettext("Tentativa"),
        gettext("Protocolo"), gettext("Motivo SEFAZ"),
    ]  # fmt: skip
    yield "\ufeff" + writer.writerow(header)
    for document in documents:
        yield writer.writerow(
            [
                document.order_number or document.order_ref,
                document.number or "",
                document.series or "",
                " ".join(document.access_key[i : i + 4] for i in range(0, len(document.access_key), 4)),
                document.status_text(),
                document.get_environment_display(),
                _local(document.issued_at),
                _local(document.cancelled_at),
                document.attempt,
                document.protocol,
                document.sefaz_reason.lstrip("=+-@"),
            ]
        )


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

    change_list_template = "admin/fiscal/fiscaldocument/change_list.html"

    @admin.display(description=_("situação"), ordering="status")
    def status_words(self, document: FiscalDocument) -> str:
        return document.status_text()

    def get_urls(self) -> list:
        export = path(
            "export.csv", self.admin_site.admin_view(self.export_csv_view), name="fiscal_fiscaldocument_export_csv"
        )
        return [export, *super().get_urls()]

    def export_csv_view(self, request: HttpRequest) -> StreamingHttpResponse:
        """The notes the list's filters select (a month's authorized or cancelled ones), for the accountant."""
        if not self.has_view_permission(request):
            raise PermissionDenied
        documents = self.get_changelist_instance(request).get_queryset(request).iterator(chunk_size=500)
        response = StreamingHttpResponse(documents_csv_rows(documents), content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="notas-fiscais-{timezone.localdate():%Y%m%d}.csv"'
        return response


@admin.register(FiscalJob)
class FiscalJobAdmin(_ReadOnly):
    list_display = ("key", "action", "status", "attempts", "next_run_at", "last_error")
    list_filter = ("status", "action")


@admin.register(FiscalWebhook)
class FiscalWebhookAdmin(_ReadOnly):
    list_display = ("provider", "provider_ref", "event_id", "received_at", "processed_at")
