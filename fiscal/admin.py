"""Read-only lists of the fiscal rows (the order page shows the NF-e itself; `orders/admin` stays ours-free)."""

from __future__ import annotations

import csv
from collections.abc import Iterable, Iterator
from datetime import datetime
from typing import Any

from django.conf import settings
from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.db.models import Q, QuerySet
from django.http import HttpRequest, StreamingHttpResponse
from django.urls import path
from django.utils import formats, timezone
from django.utils.html import format_html_join
from django.utils.safestring import mark_safe
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from fiscal.ibscbs import SIMPLES_REGIMES, totals_brl
from fiscal.models import BLOCKED_PREFIX, FiscalDocument, FiscalJob, FiscalReturnNote, FiscalWebhook
from fiscal.selectors import (
    correction_file_path,
    corrections_of_document,
    file_path,
    return_note_file_path,
    return_notes_for_export,
    return_notes_of_document,
)
from kernel.admin_actions import ReadOnlyAdmin
from kernel.money import format_brl

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


DOC_TYPES = {"nfe": _("NF-e (modelo 55)")}
# The list's period filters (date hierarchy, "autorizada em"): the export's NF-e de devolução follow the same period.
ISSUED_IN_PARAMETERS = frozenset(
    {"issued_at__year", "issued_at__month", "issued_at__day", "issued_at__gte", "issued_at__lt"}
)


def ibs_cbs_absent_text(document: FiscalDocument) -> str:
    """Why a note carries no IBS/CBS group, in staff words (fiscal/ibscbs.py `applies`): the regime comes from the
    issuer the note was requested with (its issue job), the start dates from the settings."""
    job = FiscalJob.objects.filter(document=document, action=FiscalJob.Action.ISSUE).order_by("-id").first()
    issuer = job.payload.get("issuer") if job is not None and isinstance(job.payload, dict) else None
    regime = issuer.get("tax_regime") if isinstance(issuer, dict) else None
    if regime in SIMPLES_REGIMES:
        return gettext(
            "Sem grupo IBS/CBS: no Simples Nacional e no MEI o grupo IBS/CBS só vai na NF-e a partir de %(date)s."
        ) % {"date": formats.date_format(settings.FISCAL_IBSCBS_SIMPLES_FROM, "SHORT_DATE_FORMAT")}
    return gettext("Sem grupo IBS/CBS nesta NF-e (no regime normal, o grupo vai na NF-e a partir de %(date)s).") % {
        "date": formats.date_format(settings.FISCAL_IBSCBS_NORMAL_FROM, "SHORT_DATE_FORMAT")
    }


class _Echo:
    def write(self, value: str) -> str:
        return value


def _local(value: datetime | None) -> str:
    return timezone.localtime(value).strftime("%d/%m/%Y %H:%M") if value else ""


def _key_text(key: str) -> str:
    return " ".join(key[i : i + 4] for i in range(0, len(key), 4))


def documents_csv_rows(
    documents: Iterable[FiscalDocument], return_notes: Iterable[FiscalReturnNote] = ()
) -> Iterator[str]:
    """The NF-e list as Excel in pt-BR opens it: `;`, UTF-8 with a byte-order mark, dates in Brasília time, the
    44-digit key in groups of four as the DANFE prints it (a bare number would read 3,5E+43 in a spreadsheet). After
    the sale notes, the NF-e de devolução (`return_notes`): the accountant books each entrada too, with the sale's
    chave it references."""
    writer = csv.writer(_Echo(), delimiter=";")
    header = [
        gettext("Pedido"), gettext("Número"), gettext("Série"), gettext("Chave de acesso"), gettext("Situação"),
        gettext("Ambiente"), gettext("Autorizada em"), gettext("Cancelada em"), gettext("Tentativa"),
        gettext("Protocolo"), gettext("Motivo SEFAZ"), gettext("Finalidade"), gettext("NF-e referenciada"),
    ]  # fmt: skip
    yield "\ufeff" + writer.writerow(header)
    for document in documents:
        yield writer.writerow(_csv_row(document))
    for note in return_notes:
        yield writer.writerow(_csv_row(note))


def _csv_row(note: FiscalDocument | FiscalReturnNote) -> list[Any]:
    """One line of the export, from a sale's NF-e or from one of its NF-e de devolução: the order, the environment
    and the referenced chave are always the sale's."""
    if isinstance(note, FiscalReturnNote):
        sale = note.document
        situation, cancelled_at = note.get_status_display(), ""
        purpose, referenced = gettext("Devolução (entrada)"), _key_text(sale.access_key)
    else:
        sale = note
        situation, cancelled_at = note.status_text(), _local(note.cancelled_at)
        purpose, referenced = gettext("Venda"), ""
    return [
        sale.order_number or sale.order_ref,
        note.number or "",
        note.series or "",
        _key_text(note.access_key),
        situation,
        sale.get_environment_display(),
        _local(note.issued_at),
        cancelled_at,
        note.attempt,
        note.protocol,
        note.sefaz_reason.lstrip("=+-@"),
        purpose,
        referenced,
    ]


@admin.register(FiscalDocument)
class FiscalDocumentAdmin(ReadOnlyAdmin):
    # The first column opens the NF-e itself (QA walk: the order's link sat inside the row's link, so a click on
    # the row went to the order and the NF-e page could not be opened); the order is its own column.
    list_display = (
        "document_label",
        "order_label",
        "status_words",
        "sefaz_reason",
        "series",
        "access_key",
        "issued_at",
        "cancelled_at",
        "attempt",
    )  # the reason: what to fix before re-issuing ("NCM não informado")
    list_display_links = ("document_label",)
    # The month's notes for the accountant (QA walk): authorized or cancelled in a month, Brasília time.
    list_filter = (DocumentSituationFilter, "environment", "issued_at", "cancelled_at")
    date_hierarchy = "issued_at"
    search_fields = ("order_ref", "access_key")
    # The NF-e page in words (QA walk): the order by its number, the files as links, the IBS/CBS in R$; the
    # technical fields (download token, stored file paths, raw totals, the reference in the emitter, which is
    # the order's technical id) are not for staff.
    fields = (
        "order_label", "status_words", "doc_type_words", "environment", "number", "series", "access_key", "protocol",
        "sefaz_status", "sefaz_reason", "files", "return_notes_words", "ibs_cbs_words", "issued_at", "cancelled_at",
        "attempt", "provider",
    )  # fmt: skip
    readonly_fields = fields

    change_list_template = "admin/fiscal/fiscaldocument/change_list.html"

    @admin.display(description=_("situação"), ordering="status")
    def status_words(self, document: FiscalDocument) -> str:
        return document.status_text()

    @admin.display(description=_("NF-e"), ordering="number")
    def document_label(self, document: FiscalDocument) -> str:
        return gettext("NF-e nº %(number)s") % {"number": document.number or "—"}

    @admin.display(description=_("pedido"), ordering="order_number")
    def order_label(self, document: FiscalDocument) -> str:
        return f"#{document.order_number}" if document.order_number else document.order_ref

    @admin.display(description=_("tipo"))
    def doc_type_words(self, document: FiscalDocument) -> str:
        return str(DOC_TYPES.get(document.doc_type, document.doc_type))

    @admin.display(description=_("arquivos"))
    def files(self, document: FiscalDocument) -> str:
        # Through the token download URL the order page and the buyer use (only once authorized or cancelled).
        links = [
            (url, label)
            for url, label in (
                (file_path(document, "danfe"), gettext("DANFE (PDF)")),
                (file_path(document, "xml"), gettext("XML da NF-e")),
                (file_path(document, "cancelamento"), gettext("XML do cancelamento")),
            )
            if url
        ]
        # The registered cartas de correção beside the note (the accountant keeps their XML with the note's).
        for letter in corrections_of_document(document):
            url = correction_file_path(document, letter, "xml")
            if url:
                links.append((url, gettext("XML da carta de correção nº %(number)s") % {"number": letter.number}))
        # The NF-e de devolução that reference this sale (goods the buyer sent back), with their files.
        for note in return_notes_of_document(document):
            for kind, label in (
                ("danfe", gettext("DANFE da NF-e de devolução nº %(number)s")),
                ("xml", gettext("XML da NF-e de devolução nº %(number)s")),
            ):
                url = return_note_file_path(document, note, kind)
                if url:
                    links.append((url, label % {"number": note.number}))
        return format_html_join(" · ", '<a href="{}">{}</a>', links) if links else "—"

    @admin.display(description=_("NF-e de devolução"))
    def return_notes_words(self, document: FiscalDocument) -> str:
        """Each NF-e de devolução that references this sale, in staff words (its files are under "arquivos")."""
        lines = []
        for note in return_notes_of_document(document):
            words = gettext("nº %(number)s (%(status)s)") % {
                "number": note.number or "—", "status": note.get_status_display(),
            }  # fmt: skip
            if note.access_key:
                words += " " + gettext("chave %(key)s") % {"key": note.access_key}
            elif note.sefaz_reason:
                words += f": {note.sefaz_reason}"
            lines.append((words,))
        return format_html_join(mark_safe("<br>"), "{}", lines) if lines else "—"

    @admin.display(description=_("totais do IBS/CBS"))
    def ibs_cbs_words(self, document: FiscalDocument) -> str:
        amounts = totals_brl(document.ibs_cbs_totals)
        if amounts is not None:
            return gettext("base %(base)s · IBS %(ibs)s · CBS %(cbs)s") % amounts
        return ibs_cbs_absent_text(document)

    def get_urls(self) -> list:
        export = path(
            "export.csv", self.admin_site.admin_view(self.export_csv_view), name="fiscal_fiscaldocument_export_csv"
        )
        return [export, *super().get_urls()]

    def export_csv_view(self, request: HttpRequest) -> StreamingHttpResponse:
        """The notes the list's filters select (a month's authorized or cancelled ones), for the accountant, with the
        NF-e de devolução of that month (or of the selected sales)."""
        if not self.has_view_permission(request):
            raise PermissionDenied
        selected = self.get_changelist_instance(request).get_queryset(request)
        issued_in = {key: value for key, value in request.GET.items() if key in ISSUED_IN_PARAMETERS}
        notes = return_notes_for_export(selected, issued_in).iterator(chunk_size=500)
        response = StreamingHttpResponse(
            documents_csv_rows(selected.iterator(chunk_size=500), notes), content_type="text/csv; charset=utf-8"
        )
        response["Content-Disposition"] = f'attachment; filename="notas-fiscais-{timezone.localdate():%Y%m%d}.csv"'
        return response


@admin.register(FiscalReturnNote)
class FiscalReturnNoteAdmin(ReadOnlyAdmin):
    """The NF-e de devolução (entrada) the shop issued for returned goods: the accountant's month, beside the sales'
    notes; each one's files are on the sale's NF-e page and the order's NF-e box."""

    list_display = ("note_label", "sale_label", "status", "sefaz_reason", "access_key", "issued_at", "total_words")
    list_filter = ("status", "issued_at")
    date_hierarchy = "issued_at"
    search_fields = ("document__order_ref", "access_key", "document__access_key", "return_ref")
    list_select_related = ("document",)

    @admin.display(description=_("NF-e de devolução"), ordering="number")
    def note_label(self, note: FiscalReturnNote) -> str:
        return gettext("NF-e nº %(number)s") % {"number": note.number or "—"}

    @admin.display(description=_("NF-e de venda"), ordering="document__number")
    def sale_label(self, note: FiscalReturnNote) -> str:
        sale = note.document
        order = f"#{sale.order_number}" if sale.order_number else sale.order_ref
        return gettext("NF-e nº %(number)s — pedido %(order)s") % {"number": sale.number or "—", "order": order}

    @admin.display(description=_("valor total"), ordering="total_amount")
    def total_words(self, note: FiscalReturnNote) -> str:
        return format_brl(note.total_amount)


@admin.register(FiscalJob)
class FiscalJobAdmin(ReadOnlyAdmin):
    list_display = ("key", "action", "status", "attempts", "next_run_at", "last_error")
    list_filter = ("status", "action")


@admin.register(FiscalWebhook)
class FiscalWebhookAdmin(ReadOnlyAdmin):
    list_display = ("provider", "provider_ref", "event_id", "received_at", "processed_at")
