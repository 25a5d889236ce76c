"""Order exports a Brazilian spreadsheet opens as is: one row per order line, with the address.

CSV: `;` separators, decimal comma, UTF-8 with a byte-order mark (Excel in pt-BR reads "João" right
and splits the columns), Portuguese headers and status labels. XLSX (openpyxl): the same rows with
numbers as numbers and dates as dates. Both stream from an iterator; formula-looking text is
neutralised (spreadsheet formula injection).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Iterator
from datetime import datetime
from decimal import Decimal

from django.utils import timezone
from django.utils.translation import gettext as _

from kernel.money import format_decimal_comma
from orders.labels import fulfillment_method_label, line_status_label, order_status_label, payment_status_label
from orders.models import Order
from orders.summary import superseded_tracking

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
        _("Rastreio"),
    ]


def _safe(value: object) -> object:
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
        tracking = " ".join(e.tracking_number for e in events if e.tracking_number and e.pk not in replaced)
        head = [
            order.number,
            timezone.localtime(order.placed_at).replace(tzinfo=None),
            order_status_label(order.status),
            payment_status_label(order.payment_status),
            order.buyer_name,
            order.buyer_email,
            order.buyer_phone,
            order.buyer_tax_id,
            order.fulfillment_title or fulfillment_method_label(order.fulfillment_method),
            d.get("postal_code", ""),
            street,
            d.get("neighborhood", ""),
            d.get("city", ""),
            d.get("state", ""),
        ]
        tail = [order.total_amount, order.paid_amount, order.refunded_amount, tracking]
        for line in order.lines.all():
            yield [
                *head,
                line.sku,
                line.title,
                line.quantity_total,
                line.unit_price,
                line.unit_price * line.quantity_total,
                str(line_status_label(line.status, order.fulfillment_method)),
                *tail,
            ]


MONEY_COLUMNS = {17, 18, 20, 21, 22}  # indexes of centavos columns in export_header()


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
                cells.append(_safe("" if value is None else value))
        yield writer.writerow(cells)


def xlsx_bytes(orders: Iterable[Order]) -> bytes:
    from openpyxl import Workbook  # noqa: PLC0415 (0.1 s of import at every start for a rare staff export)

    book = Workbook(write_only=True)
    sheet = book.create_sheet(_("Pedidos"))
    sheet.append(export_header())
    for row in export_rows(orders):
        cells: list[object] = []
        for index, value in enumerate(row):
            if index in MONEY_COLUMNS:
                cells.append(Decimal(int(value)) / 100)  # type: ignore[call-overload]
            else:
                cells.append(_safe(value))
        sheet.append(cells)
    buffer = io.BytesIO()
    book.save(buffer)
    return buffer.getvalue()
