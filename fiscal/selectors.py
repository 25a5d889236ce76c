"""Reads of the fiscal app (for the shop, the admin and BCP)."""

from __future__ import annotations

from collections.abc import Iterable

from django.urls import reverse

from fiscal.models import FiscalDocument


def documents_for_orders(order_refs: Iterable[str]) -> dict[str, FiscalDocument]:
    """One query: the document of each order that has one."""
    return {d.order_ref: d for d in FiscalDocument.objects.filter(order_ref__in=list(order_refs))}


def document_for_order(order_ref: str) -> FiscalDocument | None:
    return FiscalDocument.objects.filter(order_ref=order_ref).first()


def file_path(document: FiscalDocument, kind: str) -> str:
    """Relative URL of the DANFE ("danfe") or XML ("xml"), "" while there is none."""
    field = document.danfe if kind == "danfe" else document.xml
    if not field or document.status not in (FiscalDocument.Status.AUTHORIZED, FiscalDocument.Status.CANCELLED):
        return ""
    return reverse("fiscal:file", kwargs={"token": document.download_token, "kind": kind})
