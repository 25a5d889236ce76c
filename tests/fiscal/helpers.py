from __future__ import annotations

from typing import Any

from django.db import transaction

from fiscal.models import FiscalDocument
from fiscal.services import document_request_issue


def invoice(**overrides: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "order_ref": "order_test",
        "order_number": 1001,
        "issued_at": "2026-12-01T09:00:00-03:00",
        "environment": "homologacao",
        "series": 1,
        "issuer": {
            "cnpj": "11222333000181", "legal_name": "Loja Exemplo Ltda", "trade_name": "Loja Exemplo",
            "state_registration": "110042490114", "tax_regime": "simples", "cnae": "4781400", "state": "SP",
        },
        "recipient": {
            "name": "Maria Silva", "tax_id": "52998224725", "email": "maria@example.com",
            "address": {"street": "Rua A", "number": "10", "neighborhood": "Centro", "city": "São Paulo",
                        "state": "SP", "postal_code": "01001-000"},
        },
        "items": [{"sku": "CAM-P", "description": "Camiseta P", "ncm": "61091000", "cfop": "5102", "origin": "0",
                   "unit": "UN", "quantity": 2, "unit_price": 4990, "total": 9980}],
        "shipping_amount": 1500, "discount_amount": 0, "total_amount": 11480,
    }  # fmt: skip
    body.update(overrides)
    return body


def request_issue(order_ref: str = "order_test", problems: list[str] | None = None, **kw: Any) -> FiscalDocument:
    with transaction.atomic():
        return document_request_issue(
            order_ref=order_ref, order_number=1001, invoice=invoice(order_ref=order_ref), problems=problems or [], **kw
        )


def authorized_view(document: FiscalDocument, base_url: str) -> dict[str, Any]:
    """What agents get for an authorized NF-e (the `fiscal_documents` entry of the BCP order extension)."""
    base = base_url.rstrip("/")
    return {
        "type": "nfe", "status": "authorized", "access_key": document.access_key, "number": document.number,
        "series": 1, "issued_at": document.issued_at.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "danfe_url": f"{base}/fiscal/d/{document.download_token}/danfe",
        "xml_url": f"{base}/fiscal/d/{document.download_token}/xml",
    }  # fmt: skip
