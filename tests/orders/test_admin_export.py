"""Exports a Brazilian spreadsheet opens: CSV (`;`, decimal comma, UTF-8 BOM, Portuguese labels, one row
per order line with the address) and XLSX with the same rows, numbers as numbers."""

from __future__ import annotations

import csv
import io
from datetime import datetime

import pytest
from django.test import Client
from django.utils import timezone
from openpyxl import load_workbook

from orders.models import Order
from orders.services import order_ship
from orders.types import LineQuantity

pytestmark = pytest.mark.django_db


@pytest.fixture
def two_line_order(place_order) -> Order:
    order = place_order(lines=[("CAM-P", 3590, 2), ("=CAF", 123456, 1)], freight=1000)
    Order.objects.filter(pk=order.pk).update(buyer_first_name="João", buyer_last_name="Ávila")
    first = order.lines.order_by("position", "id").first()
    order_ship(order_id=order.public_id, tracking_number="BR123456785BR", lines=[LineQuantity(first.public_id, 2)])
    order.refresh_from_db()
    return order


def test_csv_opens_in_brazilian_excel(admin_client: Client, two_line_order: Order) -> None:
    response = admin_client.get("/admin/orders/order/export.csv")
    raw = b"".join(response.streaming_content)
    assert raw.startswith(b"\xef\xbb\xbf")  # UTF-8 byte-order mark
    rows = list(csv.reader(io.StringIO(raw.decode("utf-8-sig")), delimiter=";"))
    order = two_line_order
    placed = timezone.localtime(order.placed_at).strftime("%d/%m/%Y %H:%M")
    common = [
        str(order.number),
        placed,
        "Enviado em parte",
        "Pago",
        "João Ávila",
        "ana@example.com.br",
        "'+5511987654321",  # a leading + could run as a formula: quoted
        order.buyer_tax_id,
        order.fulfillment_title,
        "01310-100",
        "Rua das Flores, 123 — Apto 45",
        "Jardim Paulista",
        "São Paulo",
        "SP",
    ]
    tail = ["1316,36", "1316,36", "0,00", "BR123456785BR"]  # 2 × 35,90 + 1.234,56 + frete 10,00
    assert rows == [
        [
            "Pedido", "Data", "Situação", "Pagamento", "Comprador", "E-mail", "Telefone", "CPF/CNPJ", "Entrega",
            "CEP", "Endereço", "Bairro", "Cidade", "UF", "SKU", "Produto", "Quantidade", "Preço unitário",
            "Total do item", "Situação do item", "Total do pedido", "Pago", "Reembolsado", "Rastreio",
        ],
        [*common, "CAM-P", "Produto CAM-P", "2", "35,90", "71,80", "Enviado", *tail],
        [*common, "'=CAF", "Produto =CAF", "1", "1234,56", "1234,56", "Em preparação", *tail],
    ]  # fmt: skip


def test_xlsx_has_the_same_rows_with_numbers(admin_client: Client, two_line_order: Order) -> None:
    response = admin_client.get("/admin/orders/order/export.xlsx")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
    sheet = load_workbook(io.BytesIO(response.content)).active
    rows = [list(row) for row in sheet.iter_rows(values_only=True)]
    assert rows[0][:3] == ["Pedido", "Data", "Situação"]
    assert len(rows) == 3
    first = rows[1]
    assert first[0] == two_line_order.number
    assert isinstance(first[1], datetime)
    assert first[14:20] == ["CAM-P", "Produto CAM-P", 2, 35.9, 71.8, "Enviado"]
    assert rows[2][14] == "'=CAF"
    assert rows[2][20:23] == [1316.36, 1316.36, 0]
