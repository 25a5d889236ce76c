"""Fiscal documents as the buyer and agents see them (BCP extension br.dev.bcp.shopping.fiscal_document)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from django.conf import settings

from fiscal.models import FiscalCorrection, FiscalDocument, FiscalReturnNote
from fiscal.selectors import (
    correction_file_path,
    documents_for_orders,
    documents_of_order,
    file_path,
    note_totals_for_orders,
    registered_corrections,
    return_note_file_path,
    return_notes_of_order,
)
from orders.models import Order


def _absolute(path: str) -> str | None:
    return f"{settings.BCP_PUBLIC_URL.rstrip('/')}{path}" if path else None


def _ibs_cbs(document: FiscalDocument | FiscalReturnNote) -> dict[str, int] | None:
    """The note's IBSCBSTot (NT 2025.002, W34) in centavos; None when the note carries no IBS/CBS."""
    totals = document.ibs_cbs_totals or {}
    if not totals:
        return None
    return {
        "base": int(totals["base"]),  # vBCIBSCBS (W35)
        "ibs_state": int(totals["ibs_uf_amount"]),  # vIBSUF (W41)
        "ibs_municipal": int(totals["ibs_mun_amount"]),  # vIBSMun (W46)
        "ibs": int(totals["ibs_amount"]),  # vIBS (W47)
        "cbs": int(totals["cbs_amount"]),  # vCBS (W56)
    }


def _timestamp(moment: datetime | None) -> str | None:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ") if moment else None


def fiscal_document_view(document: FiscalDocument) -> dict[str, Any]:
    return {
        "type": document.doc_type,
        "status": document.status,
        "access_key": document.access_key or None,
        "number": document.number,
        "series": document.series,
        "issued_at": _timestamp(document.issued_at),
        "danfe_url": _absolute(file_path(document, "danfe")),
        "xml_url": _absolute(file_path(document, "xml")),
        "ibs_cbs": _ibs_cbs(document),
    }


def correction_view(document: FiscalDocument, letter: FiscalCorrection) -> dict[str, Any]:
    """A registered carta de correção (CC-e, evento 110110) of `document`: its number at the SEFAZ (nSeqEvento), the
    correction's text, when it was registered and its XML and PDF behind the note's download token."""
    return {
        "number": letter.number,
        "text": letter.text,
        "registered_at": _timestamp(letter.registered_at),
        "xml_url": _absolute(correction_file_path(document, letter, "xml")),
        "pdf_url": _absolute(correction_file_path(document, letter, "pdf")),
    }


def _note_bcp_view(document: FiscalDocument, letters: list[FiscalCorrection]) -> dict[str, Any]:
    """The sale's note for agents: its view, the XML of its cancellation event once cancelled, its CC-e."""
    cancelled = document.status == FiscalDocument.Status.CANCELLED
    return {
        **fiscal_document_view(document),
        "cancellation_xml_url": _absolute(file_path(document, "cancelamento")) if cancelled else None,
        "corrections": [
            {key: value for key, value in correction_view(document, letter).items() if value is not None}
            for letter in letters
        ]
        or None,
    }


def return_note_view(note: FiscalReturnNote) -> dict[str, Any]:
    """An NF-e de devolução in the shape of the sale's note, with what tells it apart: `purpose` "return", the
    sale's chave it references and the return it records (`ret_…` request or `adj_…` return adjustment)."""
    sale = note.document
    return {
        "type": sale.doc_type,
        "purpose": "return",
        "status": note.status,
        "access_key": note.access_key or None,
        "number": note.number,
        "series": note.series,
        "issued_at": _timestamp(note.issued_at),
        "danfe_url": _absolute(return_note_file_path(sale, note, "danfe")),
        "xml_url": _absolute(return_note_file_path(sale, note, "xml")),
        "ibs_cbs": _ibs_cbs(note),
        "referenced_access_key": sale.access_key or None,
        "return_id": note.return_ref,
    }


def fiscal_documents_bcp(order_ref: str, *, returns: bool = True, staff: bool = False) -> list[dict[str, Any]]:
    """Every note of the order, the current one first, then those cancelled and reissued (`status: "cancelled"`,
    their DANFE and XML still served: the buyer's accountant and the SEFAZ keep them, with the cancellation event's
    XML), each with its registered cartas de correção (`corrections`), then its NF-e de devolução (`purpose:
    "return"`), the first asked first. One query, one more when a note has a CC-e, one more when `returns` (the
    caller knows the order had goods come back; without any, no note of entrada can exist). Absent values are
    omitted (the schema's style: optional members are left out). `staff`: each note also says what staff act on
    (SEFAZ answer, protocol, environment) and keeps every member, absent ones as null (the back-office API's stable
    shape)."""
    sales = documents_of_order(order_ref)
    letters = registered_corrections(sales)
    notes: list[tuple[FiscalDocument | FiscalReturnNote, dict[str, Any]]] = [
        (document, _note_bcp_view(document, letters.get(document.pk, []))) for document in sales
    ]
    if returns and sales:
        notes += [(note, return_note_view(note)) for note in return_notes_of_order(order_ref)]
    if staff:
        return [{**view, **_staff_view(note)} for note, view in notes]
    return [{key: value for key, value in view.items() if value is not None} for _note, view in notes]


def _staff_view(note: FiscalDocument | FiscalReturnNote) -> dict[str, Any]:
    """What staff read of a note beyond the agents' view: the SEFAZ's answer and the environment it was sent to (a
    devolução note goes where its sale note went)."""
    sale = note.document if isinstance(note, FiscalReturnNote) else note
    return {
        "protocol": note.protocol or None,
        "sefaz_status": note.sefaz_status or None,
        "sefaz_reason": note.sefaz_reason or None,
        "environment": sale.environment,
    }


def fiscal_documents_for_order(order: Order) -> list[dict[str, Any]]:
    """`ORDERS_ORDER_EXTRAS["fiscal_documents"]`: the DRF back-office API and the buyer e-mails (DANFE link). Every
    note of the order as agents read it (`fiscal_documents_bcp`: the sale's current note first, those cancelled and
    reissued, its NF-e de devolução with `purpose` and `referenced_access_key`), plus what staff act on. Two queries
    when the order has a note, one when it has none."""
    return fiscal_documents_bcp(order.public_id, staff=True)


def fiscal_export_columns(order_refs: list[str]) -> dict[str, tuple[int | None, str, str, int | None]]:
    """`ORDERS_EXPORT_FISCAL`: each order's NF-e for the accountant's export — (number, access key, status in
    staff words: "Autorizada", "Cancelada", "Bloqueada (dados faltando)"…, the note's total vNF in centavos or
    None when it was never sent). Two queries per chunk of orders."""
    totals = note_totals_for_orders(order_refs)
    return {
        ref: (document.number, document.access_key, document.status_text(), totals.get(ref))
        for ref, document in documents_for_orders(order_refs).items()
    }
