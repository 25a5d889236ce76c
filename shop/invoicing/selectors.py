"""Fiscal documents as the buyer and agents see them (BCP extension br.dev.bcp.shopping.fiscal_document)."""

from __future__ import annotations

from datetime import UTC
from typing import Any

from django.conf import settings

from fiscal.models import FiscalDocument
from fiscal.selectors import (
    document_for_order,
    documents_for_orders,
    documents_of_order,
    file_path,
    note_totals_for_orders,
)
from orders.models import Order


def _absolute(path: str) -> str | None:
    return f"{settings.BCP_PUBLIC_URL.rstrip('/')}{path}" if path else None


def _ibs_cbs(document: FiscalDocument) -> dict[str, int] | None:
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


def fiscal_document_view(document: FiscalDocument) -> dict[str, Any]:
    return {
        "type": document.doc_type,
        "status": document.status,
        "access_key": document.access_key or None,
        "number": document.number,
        "series": document.series,
        "issued_at": document.issued_at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ") if document.issued_at else None,
        "danfe_url": _absolute(file_path(document, "danfe")),
        "xml_url": _absolute(file_path(document, "xml")),
        "ibs_cbs": _ibs_cbs(document),
    }


def fiscal_documents_bcp(order_ref: str) -> list[dict[str, Any]]:
    """Every note of the order, the current one first, then those cancelled and reissued (`status: "cancelled"`,
    their DANFE and XML still served: the buyer's accountant and the SEFAZ keep them). One query. Absent values are
    omitted (the schema's style: optional members are left out)."""
    return [
        {key: value for key, value in fiscal_document_view(document).items() if value is not None}
        for document in documents_of_order(order_ref)
    ]


def fiscal_documents_for_order(order: Order) -> list[dict[str, Any]]:
    """`ORDERS_ORDER_EXTRAS["fiscal_documents"]`: the DRF back-office API and the buyer e-mails (DANFE link).
    The agents' view plus what staff act on (SEFAZ answer, protocol, environment). One query."""
    document = document_for_order(order.public_id)
    if document is None:
        return []
    return [
        {
            **fiscal_document_view(document),
            "protocol": document.protocol or None,
            "sefaz_status": document.sefaz_status or None,
            "sefaz_reason": document.sefaz_reason or None,
            "environment": document.environment,
        }
    ]


def fiscal_export_columns(order_refs: list[str]) -> dict[str, tuple[int | None, str, str, int | None]]:
    """`ORDERS_EXPORT_FISCAL`: each order's NF-e for the accountant's export — (number, access key, status in
    staff words: "Autorizada", "Cancelada", "Bloqueada (dados faltando)"…, the note's total vNF in centavos or
    None when it was never sent). Two queries per chunk of orders."""
    totals = note_totals_for_orders(order_refs)
    return {
        ref: (document.number, document.access_key, document.status_text(), totals.get(ref))
        for ref, document in documents_for_orders(order_refs).items()
    }
