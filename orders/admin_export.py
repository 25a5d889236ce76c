"""Order exports a Brazilian spreadsheet opens as is: one row per order line, with the address.

CSV: `;` separators, decimal comma, UTF-8 with a byte-order mark (Excel in pt-BR reads "João" right
and splits the columns), Portuguese headers and status labels. XLSX (openpyxl): the same rows with
numbers as numbers, dates as dates shown "dd/mm/aaaa hh:mm" and money shown "R$ 1.234,56". Phones read
"(11) 98765-4321" and CPF/CNPJ with their mask, so no spreadsheet turns them into numbers (no leading zero
lost) and no quote shows. "Reembolsado" is what went back; "Reembolso pendente" what is promised and not
settled yet. Both stream from an iterator; formula-looking text is neutralised (spreadsheet formula injection).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Iterator
from datetime import datetime
from decimal import Decimal

from django.conf import settings
from django.utils import timezone
from django.utils.module_loading import import_string
from django.utils.translation import gettext as _

from kernel.br_validation import phone_display, tax_id_text
from kernel.money import format_decimal_comma
from orders.labels import (
    fulfillment_method_label,
    order_status_label,
    payment_status_label,
    payment_type_label,
)
from orders.models import AdjustmentStatus, AdjustmentType, Order
from orders.summary import line_words_for_staff, superseded_tracking

BOM = "\ufeff"


def export_header() -> list[str]:
    return [
        _("Pedido"),
        _("Data"),
        _("Situação"),
        _("Pagamento"),
        _("Comprador"),
        _("E-mail"),
        _("Telefone"),
        _("CPF/CNPJ"),
        _("Entrega"),
        _("CEP"),
        _("Endereço"),
        _("Bairro"),
        _("Cidade"),
        _("UF"),
        _("SKU"),
        _("Produto"),
        _("Quantidade"),
        _("Preço unitário"),
        _("Total do item"),
        _("Situação do item"),
        _("Total do pedido"),
        _("Pago"),
        _("Reembolsado"),
        _("Reembolso pendente"),
        _("Rastreio"),
    ]


def formula_safe(value: object) -> object:
    # A cell starting with = + - @ would run as a formula in a spreadsheet: prefix a quote.
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return value


def export_rows(orders: Iterable[Order]) -> Iterator[list[object]]:
    """Typed rows (int centavos, datetime), one per order line; lines and events are prefetched."""
    for order in orders:
        d = order.destination or {}
        street = ", ".join(p for p in (d.get("street", ""), d.get("number", "")) if p)
        if d.get("complement"):
            street = f"{street} — {d['complement']}"
        events = list(order.fulfillment_events.all())
        replaced = superseded_tracking(events)  # a corrected code is left out: only the right one is useful
        # Each step of a shipment (shipped, in transit, delivered) carries its code: one code once, in order.
        tracking = " ".join(
            dict.fromkeys(e.tracking_number for e in events if e.tracking_number and e.pk not in replaced)
        )
        head = [
            order.number,
            timezone.localtime(order.placed_at).replace(tzinfo=None),
            order_status_label(order.status),
            payment_status_label(order.payment_status),
            order.buyer_name,
            order.buyer_email,
            phone_display(order.buyer_phone),
            tax_id_text(order.buyer_tax_id),
            order.fulfillment_title or fulfillment_method_label(order.fulfillment_method),
            d.get("postal_code", ""),
            street,
            d.get("neighborhood", ""),
            d.get("city", ""),
            d.get("state", ""),
        ]
        pending = -sum(
            a.amount
            for a in order.adjustments.all()  # prefetched by the admin export
            if a.type == AdjustmentType.REFUND and a.status == AdjustmentStatus.PENDING
        )
        tail = [order.total_amount, order.paid_amount, order.refunded_amount, pending, tracking]
        adjustments = list(order.adjustments.all())
        for line in order.lines.all():
            yield [
                *head,
                line.sku,
                line.title,
                line.quantity_total,
                line.unit_price,
                line.unit_price * line.quantity_total,
                str(line_words_for_staff(line, order, adjustments)),
                *tail,
            ]


MONEY_COLUMNS = {17, 18, 20, 21, 22, 23}  # indexes of centavos columns in export_header()
XLSX_MONEY_FORMAT = '"R$" #,##0.00'  # Excel in pt-BR shows R$ 1.234,56 (separators follow the locale)
XLSX_DATE_FORMAT = "dd/mm/yyyy hh:mm"


class _Echo:
    def write(self, value: str) -> str:
        return value


def csv_rows(orders: Iterable[Order]) -> Iterator[str]:
    writer = csv.writer(_Echo(), delimiter=";")
    yield BOM + writer.writerow(export_header())
    for row in export_rows(orders):
        cells: list[object] = []
        for index, value in enumerate(row):
            if index in MONEY_COLUMNS:
                cells.append(format_decimal_comma(int(value)))  # type: ignore[call-overload]
            elif isinstance(value, datetime):
                cells.append(value.strftime("%d/%m/%Y %H:%M"))
            else:
                cells.append(formula_safe("" if value is None else value))
        yield writer.writerow(cells)


# --- The accountant's export: one row per order, the money of the month and its NF-e ----------------------------


def finance_header() -> list[str]:
    return [
        _("Pedido"),
        _("Data do pedido"),
        _("Data do pagamento"),
        _("Situação"),
        _("Pagamento"),
        _("Comprador"),
        _("CPF/CNPJ"),
        _("Forma de pagamento"),
        _("Parcelas"),
        _("Subtotal"),
        _("Desconto"),
        _("Frete"),
        _("Juros do parcelamento"),
        _("Total do pedido"),
        _("Pago"),
        _("Reembolsado"),
        _("Reembolso pendente"),
        _("Reembolso com falha"),
        _("Líquido recebido"),
        _("Disputa Pix (MED)"),
        _("NF-e número"),
        _("NF-e chave de acesso"),
        _("NF-e situação"),
        _("NF-e valor total"),
    ]


FINANCE_MONEY_COLUMNS = {*range(9, 19), 23}  # Subtotal … Líquido recebido, NF-e valor total


def _totals_sum(order: Order, *kinds: str) -> int:
    return sum(int(entry.get("amount", 0)) for entry in order.totals or [] if entry.get("type") in kinds)


def _fiscal_columns(order_refs: list[str]) -> dict[str, tuple[object, str, str, int | None]]:
    """`settings.ORDERS_EXPORT_FISCAL` (dotted path; orders imports nothing of ours): {order public id: (NF-e
    number, access key, status in words, the note's total in centavos or None)} for one chunk of orders."""
    path = getattr(settings, "ORDERS_EXPORT_FISCAL", "")
    return import_string(path)(order_refs) if path else {}


def _key_groups(key: str) -> str:
    return " ".join(key[i : i + 4] for i in range(0, len(key), 4))


def _chunks(orders: Iterable[Order], size: int = 500) -> Iterator[list[Order]]:
    chunk: list[Order] = []
    for order in orders:
        chunk.append(order)
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def finance_rows(orders: Iterable[Order]) -> Iterator[list[object]]:
    """Typed rows, one per order, so a column's sum is the month's sum (the line export repeats the order's
    money on each of its lines). Adjustments are prefetched; the payment date is `orders_with_payment_date`'s."""
    for chunk in _chunks(orders):
        fiscal = _fiscal_columns([order.public_id for order in chunk])
        for order in chunk:
            refunds = [a for a in order.adjustments.all() if a.type == AdjustmentType.REFUND]
            done = order.refunded_amount  # what the order page shows as "Reembolsado"
            pending = sum(-a.amount for a in refunds if a.status == AdjustmentStatus.PENDING)
            failed = sum(-a.amount for a in refunds if a.status == AdjustmentStatus.FAILED)
            paid_at = order.payment_confirmed_at  # annotated by orders_with_payment_date
            number, key, situation, note_total = fiscal.get(order.public_id, ("", "", "", None))
            yield [
                order.number,
                timezone.localtime(order.placed_at).replace(tzinfo=None),
                timezone.localtime(paid_at).replace(tzinfo=None) if paid_at else "",
                order_status_label(order.status),
                payment_status_label(order.payment_status),
                order.buyer_name,
                tax_id_text(order.buyer_tax_id),
                payment_type_label(order.payment_type),
                order.installments if order.payment_type == "card" else "",
                _totals_sum(order, "subtotal"),
                -_totals_sum(order, "discount", "items_discount"),
                _totals_sum(order, "fulfillment"),
                _totals_sum(order, "fee"),
                order.total_amount,
                order.paid_amount,
                done,
                pending,
                failed,
                order.paid_amount - done,
                order.get_payment_dispute_display() if order.payment_dispute else "",
                "" if number is None else number,
                _key_groups(key),  # a bare 44-digit number reads 3,5E+43 in a spreadsheet: grouped as the DANFE
                situation,
                "" if note_total is None else note_total,  # vNF: what the note says the sale was worth
            ]


def finance_csv_rows(orders: Iterable[Order]) -> Iterator[str]:
    writer = csv.writer(_Echo(), delimiter=";")
    yield BOM + writer.writerow(finance_header())
    for row in finance_rows(orders):
        cells: list[object] = []
        for index, value in enumerate(row):
            if index in FINANCE_MONEY_COLUMNS and value != "":
                cells.append(format_decimal_comma(int(value)))  # type: ignore[call-overload]
            elif isinstance(value, datetime):
                cells.append(value.strftime("%d/%m/%Y %H:%M"))
            else:
                cells.append(formula_safe(value))
        yield writer.writerow(cells)


def xlsx_bytes(orders: Iterable[Order]) -> bytes:
    from openpyxl import Workbook  # noqa: PLC0415 (0.1 s of import at every start for a rare staff export)
    from openpyxl.cell import WriteOnlyCell  # noqa: PLC0415 (same: only the export needs openpyxl)

    book = Workbook(write_only=True)
    sheet = book.create_sheet(_("Pedidos"))
    sheet.append(export_header())
    for row in export_rows(orders):
        cells: list[object] = []
        for index, value in enumerate(row):
            cell = WriteOnlyCell(sheet)
            if index in MONEY_COLUMNS:
                cell.value = Decimal(int(value)) / 100  # type: ignore[call-overload]
                cell.number_format = XLSX_MONEY_FORMAT
            elif isinstance(value, datetime):
                cell.value = value
                cell.number_format = XLSX_DATE_FORMAT
            else:
                cell.value = value
                if isinstance(value, str) and value.startswith("="):
                    # openpyxl would store "=…" as a formula: keep it text. Other leading characters are
                    # harmless in XLSX (cells are typed), so "+55…" or "-" need no visible quote here.
                    cell.data_type = "s"
            cells.append(cell)
        sheet.append(cells)
    buffer = io.BytesIO()
    book.save(buffer)
    return buffer.getvalue()
