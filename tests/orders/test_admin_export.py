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


@pytest.fixture
def finance_client(client: Client) -> Client:
    """A member of the Financeiro staff group (not a superuser), as the shop's bookkeeper logs in."""
    from django.contrib.auth.models import Group, User
    from django.core.management import call_command

    call_command("create_staff_groups", stdout=io.StringIO())
    user = User.objects.create_user("financeiro", password="x", is_staff=True)
    user.groups.add(Group.objects.get(name="Financeiro"))
    client.force_login(user)
    return client


def _finance_csv(client: Client, query: str = "") -> list[list[str]]:
    response = client.get(f"/admin/orders/order/export-financeiro.csv{query}")
    assert response.status_code == 200
    raw = b"".join(response.streaming_content)
    assert raw.startswith(b"\xef\xbb\xbf")
    return list(csv.reader(io.StringIO(raw.decode("utf-8-sig")), delimiter=";"))


def test_the_finance_export_has_one_row_per_order_with_the_money_and_the_nfe(
    finance_client: Client, place_order, django_capture_on_commit_callbacks
) -> None:
    """QA walk (closing the month with the accountant): the line export repeats an order's total on each of its
    lines (a sum over it counts an order twice) and had no method, installments, discount, freight, interest, net
    or NF-e. The finance export has one row per order with them, and its columns add up across."""
    from dataclasses import replace

    from django.contrib.auth.models import Group

    from fiscal.models import FiscalDocument, FiscalJob
    from orders.services import adjustment_mark_refund_result, order_place_from_checkout, order_refund
    from tests.orders.conftest import make_checkout

    # given a Pix order with a coupon and the Pix discount, two lines, part refunded
    pix = place_order(lines=[("CAM", 10000, 2), ("CAF", 5000, 1)], freight=2000, discounts=[(2500, "Cupom BEMVINDO")])
    refund = order_refund(order_id=pix.public_id, amount=3000, reason="Avaria")
    adjustment_mark_refund_result(adjustment_id=refund.public_id, status="completed")
    failed = order_refund(order_id=pix.public_id, amount=1000, reason="Frete")
    adjustment_mark_refund_result(adjustment_id=failed.public_id, status="failed")
    # and a card order in 10x with interest (a `fee` total, as the checkout prices it)
    card = make_checkout(payment_type="card", lines=[("TEN", 30000, 1)], freight=1500)
    totals = [*card.totals[:-1], ("fee", 2345, "Juros do parcelamento (10x)"), ("total", 33845, "")]
    with django_capture_on_commit_callbacks(execute=True):
        card_order = order_place_from_checkout(
            checkout=replace(card, totals=totals, paid_amount=33845, installments=10)
        )
    # with an authorized NF-e on the Pix order
    note = FiscalDocument.objects.create(
        order_ref=pix.public_id, status="authorized", number=123, series=1, access_key="35" + "1" * 42
    )
    # issued for the R$ 245,00 sold (the invoice as asked of the provider: its vNF); another attempt's
    # values (a rejected try) are not the note's: only the current attempt counts
    FiscalJob.objects.create(
        document=note, action="issue", key=f"{pix.public_id}:issue:1", payload={"total_amount": 24500},
        next_run_at=timezone.now(),
    )  # fmt: skip
    FiscalJob.objects.create(
        document=note, action="issue", key=f"{pix.public_id}:issue:0", payload={"total_amount": 99999},
        next_run_at=timezone.now(),
    )  # fmt: skip
    assert "orders.view_order" in {
        f"{p.content_type.app_label}.{p.codename}" for p in Group.objects.get(name="Financeiro").permissions.all()
    }

    # when the Financeiro member exports the orders
    rows = _finance_csv(finance_client)

    # then each order is one row with what the accountant asks for
    assert rows[0] == [
        "Pedido", "Data do pedido", "Data do pagamento", "Situação", "Pagamento", "Comprador", "CPF/CNPJ",
        "Forma de pagamento", "Parcelas", "Subtotal", "Desconto", "Frete", "Juros do parcelamento",
        "Total do pedido", "Pago", "Reembolsado", "Reembolso pendente", "Reembolso com falha", "Líquido recebido",
        "Disputa Pix (MED)", "NF-e número", "NF-e chave de acesso", "NF-e situação", "NF-e valor total",
    ]  # fmt: skip
    by_number = {row[0]: row for row in rows[1:]}
    assert len(rows) == 3
    placed = timezone.localtime(pix.placed_at).strftime("%d/%m/%Y %H:%M")
    assert by_number[str(pix.number)] == [
        str(pix.number), placed, placed, "Pedido recebido", "Reembolsado em parte", "Ana Souza", "390.533.447-05",
        "Pix", "", "250,00", "25,00", "20,00", "0,00", "245,00", "245,00", "30,00", "0,00", "10,00", "215,00", "",
        "123", "3511 " + " ".join(["1111"] * 10), "Autorizada", "245,00",  # key grouped: a spreadsheet keeps it text
    ]  # fmt: skip
    assert by_number[str(card_order.number)][7:19] == [
        "Cartão", "10", "300,00", "0,00", "15,00", "23,45", "338,45", "338,45", "0,00", "0,00", "0,00", "338,45",
    ]  # fmt: skip
    assert by_number[str(card_order.number)][20:] == ["", "", "", ""]  # no NF-e yet


def test_the_finance_export_counts_an_order_paid_at_23h30_on_the_last_day_in_that_month(
    finance_client: Client, place_order
) -> None:
    """A month filter in America/Sao_Paulo: 30/11 23:30 in Brasília is 01/12 02:30 UTC, and stays in November."""
    from zoneinfo import ZoneInfo

    late = place_order(lines=[("CAM", 10000, 1)], freight=0)
    december = place_order(lines=[("CAF", 5000, 1)], freight=0)
    brt = ZoneInfo("America/Sao_Paulo")
    Order.objects.filter(pk=late.pk).update(placed_at=datetime(2026, 11, 30, 23, 30, tzinfo=brt))
    Order.objects.filter(pk=december.pk).update(placed_at=datetime(2026, 12, 1, 0, 10, tzinfo=brt))

    november = _finance_csv(finance_client, "?placed_at__year=2026&placed_at__month=11")

    assert [row[:2] for row in november[1:]] == [[str(late.number), "30/11/2026 23:30"]]


def test_the_paid_month_filter_books_a_boleto_in_the_month_it_was_paid(finance_client: Client, place_order) -> None:
    """QA walk (closing the month): the only date filter is the order's date, so a boleto issued on 28/11 and paid
    on 01/12 00:10 (Brasília) counted in November. "Mês do pagamento" books it in December, and a Pix paid at
    23:30 of 30/11 (02:30 UTC of 01/12) in November."""
    from zoneinfo import ZoneInfo

    from orders.models import OrderEvent
    from orders.services import order_payment_confirm

    brt = ZoneInfo("America/Sao_Paulo")
    boleto = place_order(payment_type="boleto", paid=False, lines=[("CAF", 5000, 1)], freight=0)
    order_payment_confirm(order_id=boleto.public_id, paid_amount=5000, txid="bol_1")
    Order.objects.filter(pk=boleto.pk).update(placed_at=datetime(2026, 11, 28, 10, 0, tzinfo=brt))
    OrderEvent.objects.filter(order=boleto, kind="payment_confirmed").update(
        created_at=datetime(2026, 12, 1, 0, 10, tzinfo=brt)
    )
    pix = place_order(lines=[("CAM", 10000, 1)], freight=0)
    Order.objects.filter(pk=pix.pk).update(placed_at=datetime(2026, 11, 30, 23, 30, tzinfo=brt))
    unpaid = place_order(payment_type="boleto", paid=False, lines=[("CAF", 5000, 1)], freight=0)
    Order.objects.filter(pk=unpaid.pk).update(placed_at=datetime(2026, 11, 29, 9, 0, tzinfo=brt))

    november = _finance_csv(finance_client, "?pago_em=2026-11")
    december = _finance_csv(finance_client, "?pago_em=2026-12")

    assert [row[:3] for row in november[1:]] == [[str(pix.number), "30/11/2026 23:30", "30/11/2026 23:30"]]
    assert [row[:3] for row in december[1:]] == [[str(boleto.number), "28/11/2026 10:00", "01/12/2026 00:10"]]
    assert _finance_csv(finance_client, "?pago_em=2026-13")[1:] != []  # a bad month filters nothing, no 500


def test_the_paid_month_filter_lists_the_last_twelve_months_this_one_included(finance_client: Client) -> None:
    """Closing note: "Por mês do pagamento" listed 13 months, the oldest a year back (the same month as this one)."""
    import re

    today = timezone.localdate()
    expected = [
        f"{today.year - (today.month <= back):04d}-{(today.month - back - 1) % 12 + 1:02d}" for back in range(12)
    ]

    html = finance_client.get("/admin/orders/order/").content.decode()

    assert list(dict.fromkeys(re.findall(r"pago_em=(\d{4}-\d{2})", html))) == expected


def test_the_order_list_sums_the_filtered_orders_per_method_as_the_finance_export_adds_up(
    finance_client: Client, place_order, django_capture_on_commit_callbacks
) -> None:
    """QA walk (closing the month): "gross, discounts, freight, interest, refunds, net, per method?" had no answer
    on screen. Under the list, one column per method and the total; each equals the finance export's column sum."""
    from dataclasses import replace

    from orders.services import adjustment_mark_refund_result, order_place_from_checkout, order_refund
    from tests.orders.conftest import make_checkout

    pix = place_order(lines=[("CAM", 10000, 2)], freight=2000, discounts=[(1000, "Desconto Pix")])
    done = order_refund(order_id=pix.public_id, amount=3000, reason="Avaria")
    adjustment_mark_refund_result(adjustment_id=done.public_id, status="completed")
    manual = place_order(payment_type="manual", lines=[("CAF", 5000, 1)], freight=0)
    order_refund(order_id=manual.public_id, amount=500, reason="Troca")  # pending: paid outside the shop
    card = make_checkout(payment_type="card", lines=[("TEN", 30000, 1)], freight=1500)
    totals = [*card.totals[:-1], ("fee", 2345, "Juros do parcelamento (10x)"), ("total", 33845, "")]
    with django_capture_on_commit_callbacks(execute=True):
        order_place_from_checkout(checkout=replace(card, totals=totals, paid_amount=33845, installments=10))

    summary = finance_client.get("/admin/orders/order/").context["money_summary"]

    assert summary["methods"] == ["Cartão", "Pago fora da loja", "Pix", "Total"]
    assert dict(summary["rows"]) == {
        "Pedidos": ["1", "1", "1", "3"],
        "Total dos pedidos (bruto)": ["R$ 338,45", "R$ 50,00", "R$ 210,00", "R$ 598,45"],
        "Descontos (cupons, Pix)": ["R$ 0,00", "R$ 0,00", "R$ 10,00", "R$ 10,00"],
        "Frete": ["R$ 15,00", "R$ 0,00", "R$ 20,00", "R$ 35,00"],
        "Juros do parcelamento": ["R$ 23,45", "R$ 0,00", "R$ 0,00", "R$ 23,45"],
        "Pago": ["R$ 338,45", "R$ 50,00", "R$ 210,00", "R$ 598,45"],
        "Reembolsado": ["R$ 0,00", "R$ 0,00", "R$ 30,00", "R$ 30,00"],
        "Reembolso pendente": ["R$ 0,00", "R$ 5,00", "R$ 0,00", "R$ 5,00"],
        "Líquido recebido (pago − reembolsado)": ["R$ 338,45", "R$ 50,00", "R$ 180,00", "R$ 568,45"],
    }
    rows = _finance_csv(finance_client)

    def column_sum(name: str) -> str:
        index = rows[0].index(name)
        cents = sum(int(row[index].replace(",", "")) for row in rows[1:])
        return f"R$ {cents // 100},{cents % 100:02d}"

    total = {label: values[-1] for label, values in summary["rows"]}
    assert column_sum("Total do pedido") == total["Total dos pedidos (bruto)"]
    assert column_sum("Desconto") == total["Descontos (cupons, Pix)"]
    assert column_sum("Juros do parcelamento") == total["Juros do parcelamento"]
    assert column_sum("Reembolsado") == total["Reembolsado"]
    assert column_sum("Líquido recebido") == total["Líquido recebido (pago − reembolsado)"]


def test_the_order_list_asks_for_a_month_before_summing_too_many_orders(
    finance_client: Client, place_order, monkeypatch
) -> None:
    """The sum reads every filtered order: past the cap (a year of a small shop) the list asks for a month."""
    monkeypatch.setattr("orders.admin.MONEY_SUMMARY_MAX_ORDERS", 1)
    first, _second = place_order(), place_order()

    everything = finance_client.get("/admin/orders/order/")
    one = finance_client.get(f"/admin/orders/order/?q={first.number}")

    assert "money_summary" not in everything.context
    assert "Filtre por mês (data do pedido ou mês do pagamento)" in everything.content.decode()
    assert one.context["money_summary"]["methods"] == ["Pix", "Total"]


def test_a_cancelled_or_returned_item_reads_the_same_on_the_order_page_the_export_and_the_buyers_page(
    admin_client: Client, place_order
) -> None:
    from orders.services import fulfillment_event_create, order_cancel, order_return

    # given an order whose shirt was cancelled before shipping, and one whose delivered mug came back
    cancelled = place_order(lines=[("CAM-P", 3590, 1)], freight=0)
    order_cancel(order_id=cancelled.public_id, reason="Desistiu")
    returned = place_order(lines=[("CANECA", 4000, 1)], freight=0, email="bruno@example.com.br")
    order_ship(order_id=returned.public_id, tracking_number="BR123456785BR")
    fulfillment_event_create(order_id=returned.public_id, type="delivered", occurred_at=timezone.now())
    order_return(
        order_id=returned.public_id, lines=[LineQuantity(returned.lines.get().public_id, 1)], reason="Trincada"
    )
    # when staff export the orders and open each order's page
    raw = b"".join(admin_client.get("/admin/orders/order/export.csv").streaming_content).decode("utf-8-sig")
    item_status = {row[14]: row[19] for row in csv.reader(io.StringIO(raw), delimiter=";")}
    pages = {
        order.pk: admin_client.get(f"/admin/orders/order/{order.pk}/change/").content.decode()
        for order in (cancelled, returned)
    }
    # then each says what the buyer's page says: "Cancelado", "Devolvido" (both read "Removido": the order page
    # for the cancelled shirt, the export for both)
    assert (item_status["CAM-P"], item_status["CANECA"]) == ("Cancelado", "Devolvido")
    assert '<td class="field-status"><p>Cancelado</p></td>' in pages[cancelled.pk]
    assert '<td class="field-status"><p>Devolvido</p></td>' in pages[returned.pk]
    assert "Removido" not in pages[cancelled.pk] + pages[returned.pk]
