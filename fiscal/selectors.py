"""Reads of the fiscal app (for the shop, the admin and BCP)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from django.db.models import Exists, OuterRef, QuerySet
from django.db.models.fields.files import FieldFile
from django.urls import reverse

from fiscal.models import BLOCKED_PREFIX, FiscalCorrection, FiscalDocument, FiscalJob, FiscalReturnNote
from kernel.compiled import compiled


def documents_for_orders(order_refs: Iterable[str]) -> dict[str, FiscalDocument]:
    """One query: the current document of each order that has one (its last: an earlier one was cancelled and
    reissued)."""
    documents = FiscalDocument.objects.filter(order_ref__in=list(order_refs)).order_by("order_ref", "sequence")
    return {d.order_ref: d for d in documents}  # the last of each order wins


def note_totals_for_orders(order_refs: Iterable[str]) -> dict[str, int]:
    """One query: the total (vNF, centavos) of each order's note as it was last asked of the provider, the issue
    of the document's current attempt (a re-issue after a rejection may carry other values); none while the
    order's note was never sent (blocked for missing data, or not asked yet)."""
    jobs = FiscalJob.objects.filter(document__order_ref__in=list(order_refs), action=FiscalJob.Action.ISSUE)
    jobs = jobs.order_by("document__sequence", "id")  # the current note's last: a reissued order's old note first
    totals: dict[str, int] = {}
    for ref, attempt, key, total in jobs.values_list(
        "document__order_ref", "document__attempt", "key", "payload__total_amount"
    ):
        if key == f"{ref}:issue:{attempt}" and total is not None:
            totals[ref] = int(total)
    return totals


def document_for_order(order_ref: str) -> FiscalDocument | None:
    """The order's current note: its last one (an earlier one was cancelled and reissued with corrected data)."""
    # Compiled once per process: read for every buyer e-mail (its DANFE link) and order webhook (issue 34).
    read = compiled(
        "fiscal.document_for_order",
        lambda ref: FiscalDocument.objects.filter(order_ref=ref).order_by("-sequence")[:1],
    )
    rows = read.rows(order_ref)
    return rows[0] if rows else None


def documents_of_order(order_ref: str) -> list[FiscalDocument]:
    """Every note of the order, the current one first (one query): a cancelled-and-reissued note stays listed.
    Each says in `corrected` whether a carta de correção of it is registered (read in the same statement, so an
    order without one needs no read of its letters: `registered_corrections`)."""
    # Compiled like `document_for_order`: agents' Get Order and order webhooks read it on every call.
    read = compiled(
        "fiscal.documents_of_order",
        lambda ref: (
            FiscalDocument.objects.filter(order_ref=ref)
            .annotate(corrected=Exists(_registered.filter(document=OuterRef("pk"))))
            .order_by("-sequence")
        ),
    )
    return list(read.rows(order_ref))


_registered = FiscalCorrection.objects.filter(status=FiscalCorrection.Status.REGISTERED)


def registered_corrections(documents: Iterable[FiscalDocument]) -> dict[int, list[FiscalCorrection]]:
    """The registered cartas de correção of each of `documents` (by its pk), the first first; one query, none for
    documents that `documents_of_order` read as having none."""
    wanted = [document.pk for document in documents if getattr(document, "corrected", True)]
    letters: dict[int, list[FiscalCorrection]] = {}
    if wanted:
        for letter in _registered.filter(document_id__in=wanted).order_by("document_id", "sequence"):
            letters.setdefault(letter.document_id, []).append(letter)
    return letters


def cancel_in_flight(document: FiscalDocument) -> bool:
    """A cancel of the note was asked and the provider has not answered it yet."""
    return document.jobs.filter(action=FiscalJob.Action.CANCEL).exclude(status=FiscalJob.Status.DONE).exists()


def document_file_field(document: FiscalDocument, kind: str) -> FieldFile:
    """The DANFE ("danfe"), the note's XML ("xml") or its cancellation event's XML ("cancelamento")."""
    return {"danfe": document.danfe, "cancelamento": document.cancel_xml}.get(kind, document.xml)


def file_path(document: FiscalDocument, kind: str) -> str:
    """Relative URL of the DANFE ("danfe"), XML ("xml") or cancellation XML ("cancelamento"), "" while there is
    none."""
    field = document_file_field(document, kind)
    if not field or document.status not in (FiscalDocument.Status.AUTHORIZED, FiscalDocument.Status.CANCELLED):
        return ""
    return reverse("fiscal:file", kwargs={"token": document.download_token, "kind": kind})


def corrections_of_document(document: FiscalDocument) -> list[FiscalCorrection]:
    """The note's cartas de correção in the order they were asked (one query)."""
    return list(document.corrections.order_by("sequence"))


def correction_file_path(document: FiscalDocument, correction: FiscalCorrection, kind: str) -> str:
    """Relative URL of a registered letter's XML ("xml") or PDF ("pdf"), behind the note's download token; "" while
    it has none."""
    field = correction.pdf if kind == "pdf" else correction.xml
    if not field or correction.status != FiscalCorrection.Status.REGISTERED or not correction.number:
        return ""
    return reverse("fiscal:file", kwargs={"token": document.download_token, "kind": f"cce-{correction.number}-{kind}"})


def correction_file_field(document: FiscalDocument, kind: str) -> tuple[FieldFile, str] | None:
    """The file behind a letter's kind ("cce-<number>-xml" | "cce-<number>-pdf") and its extension; None when the
    kind is not a letter's or the note has no such registered letter."""
    number, _, extension = kind.removeprefix("cce-").partition("-")
    if not kind.startswith("cce-") or not number.isdigit() or extension not in ("xml", "pdf"):
        return None
    correction = document.corrections.filter(number=int(number), status=FiscalCorrection.Status.REGISTERED).first()
    field = None if correction is None else (correction.pdf if extension == "pdf" else correction.xml)
    return (field, extension) if field else None


def return_notes_of_order(order_ref: str) -> list[FiscalReturnNote]:
    """The order's NF-e de devolução, the first asked first, with the sale's note each references (one query)."""
    return list(
        FiscalReturnNote.objects.select_related("document").filter(document__order_ref=order_ref).order_by("id")
    )


def return_notes_of_document(document: FiscalDocument) -> list[FiscalReturnNote]:
    """The NF-e de devolução that reference the sale's note `document` (one query)."""
    return list(document.return_notes.order_by("id"))


RETURN_KIND_PREFIX = "dev-"


def return_note_file_path(document: FiscalDocument, note: FiscalReturnNote, kind: str) -> str:
    """Relative URL of an authorized NF-e de devolução's DANFE ("danfe") or XML ("xml"), behind the sale's download
    token (staff and the accountant reach it from the sale); "" while it has none."""
    field = note.danfe if kind == "danfe" else note.xml
    if not field or note.status != FiscalReturnNote.Status.AUTHORIZED:
        return ""
    return reverse(
        "fiscal:file",
        kwargs={"token": document.download_token, "kind": f"{RETURN_KIND_PREFIX}{note.return_ref}-{kind}"},
    )


def return_note_file_field(document: FiscalDocument, kind: str) -> tuple[FieldFile, FiscalReturnNote, str] | None:
    """The file behind a devolução's kind ("dev-<return>-danfe" | "dev-<return>-xml"), its note and kind; None when
    the kind is not a devolução's or the sale's note has no such authorized one."""
    if not kind.startswith(RETURN_KIND_PREFIX):
        return None
    return_ref, _, file_kind = kind.removeprefix(RETURN_KIND_PREFIX).rpartition("-")
    if file_kind not in ("danfe", "xml") or not return_ref:
        return None
    note = document.return_notes.filter(return_ref=return_ref, status=FiscalReturnNote.Status.AUTHORIZED).first()
    field = None if note is None else (note.danfe if file_kind == "danfe" else note.xml)
    return (field, note, file_kind) if field and note is not None else None


def return_notes_for_export(
    documents: QuerySet[FiscalDocument], issued_in: Mapping[str, str]
) -> QuerySet[FiscalReturnNote]:
    """The NF-e de devolução beside an export of sale notes (`documents`, the list's selection): those authorized in
    the period the list filters by (`issued_in`: its `issued_at__…` parameters — an entrada of the month counts in
    that month, whatever month its sale was), else those that reference a selected sale. The first asked first."""
    notes = FiscalReturnNote.objects.select_related("document")
    notes = notes.filter(**issued_in) if issued_in else notes.filter(document__in=documents.order_by().values("pk"))
    return notes.order_by("issued_at", "id")


def blocked_order_refs(*, order_refs: Iterable[str] | None = None, limit: int = 200) -> list[str]:
    """Orders whose NF-e was blocked by missing data (never sent to the provider), oldest first. A SEFAZ
    rejection is not here: it needs the merchant's judgement and the "Emitir novamente" button."""
    documents = FiscalDocument.objects.filter(
        status=FiscalDocument.Status.REJECTED, sefaz_status="", sefaz_reason__startswith=BLOCKED_PREFIX
    )
    if order_refs is not None:
        documents = documents.filter(order_ref__in=list(order_refs))
    return list(documents.order_by("id").values_list("order_ref", flat=True)[:limit])
