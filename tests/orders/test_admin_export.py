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
        "(11) 98765-4321",  # as Brazilians write it: no "+" to quote, no visible apostrophe
        "390.533.447-05",  # masked: a spreadsheet keeps it text (a CPF's leading zero is not lost)
        order.fulfillment_title,
        "01310-100",
        "Rua das Flores, 123 — Apto 45",
        "Jardim Paulista",
        "São Paulo",
        "SP",
    ]
    tail = ["1316,36", "1316,36", "0,00", "0,00", "BR123456785BR"]  # 2 × 35,90 + 1.234,56 + frete 10,00
    assert rows == [
        [
            "Pedido", "Data", "Situação", "Pagamento", "Comprador", "E-mail", "Telefone", "CPF/CNPJ", "Entrega",
            "CEP", "Endereço", "Bairro", "Cidade", "UF", "SKU", "Produto", "Quantidade", "Preço unitário",
            "Total do item", "Situação do item", "Total do pedido", "Pago", "Reembolsado", "Reembolso pendente",
            "Rastreio",
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
    assert rows[2][14] == "=CAF"  # text, not a formula (XLSX cells are typed: no visible quote)
    assert rows[2][20:25] == [1316.36, 1316.36, 0, 0, "BR123456785BR"]
    assert first[6:8] == ["(11) 98765-4321", "390.533.447-05"]
    cells = next(sheet.iter_rows(min_row=2, max_row=2))
    assert cells[1].number_format == "dd/mm/yyyy hh:mm"  # a date shown the Brazilian way, not ISO
    assert [cells[i].number_format for i in (17, 18, 20, 21, 22, 23)] == ['"R$" #,##0.00'] * 6
    assert cells[14].data_type == "s"


def test_refunds_pending_and_done_are_both_in_the_export(admin_client: Client, place_order) -> None:
    from orders.services import adjustment_settle_offline, order_refund

    order = place_order(payment_type="manual", lines=[("CAF", 5000, 1)], freight=0)
    Order.objects.filter(pk=order.pk).update(buyer_tax_id="01234567890")
    done = order_refund(order_id=order.public_id, amount=1000, reason="Avaria")
    adjustment_settle_offline(adjustment_id=done.public_id, means="dinheiro")
    order_refund(order_id=order.public_id, amount=500, reason="Frete")
    response = admin_client.get("/admin/orders/order/export.csv")
    rows = list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode("utf-8-sig")), delimiter=";"))
    assert rows[1][7] == "012.345.678-90"
    assert rows[1][20:24] == ["50,00", "50,00", "10,00", "5,00"]


def test_the_tracking_column_names_each_code_once(admin_client: Client, two_line_order: Order) -> None:
    """QA walk: each step of a shipment carries its code, and the column read "BR123456785BR BR123456785BR …"."""
    from orders.services import fulfillment_event_create

    for step in ("in_transit", "out_for_delivery"):
        fulfillment_event_create(order_id=two_line_order.public_id, type=step, tracking_number="BR123456785BR")
    response = admin_client.get("/admin/orders/order/export.csv")
    rows = list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode("utf-8-sig")), delimiter=";"))
    assert [row[24] for row in rows[1:]] == ["BR123456785BR", "BR123456785BR"]
