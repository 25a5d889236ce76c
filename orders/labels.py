"""Buyer-facing words for statuses and types (translated at render time: pt-BR source, English catalog)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Protocol

from django.utils import formats, timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, gettext_noop

from orders.choices import (
    AdjustmentType,
    FulfillmentEventType,
    FulfillmentMethod,
    LineStatus,
    OrderStatus,
    PaymentStatus,
    PaymentType,
    ReturnCondition,
)


class TitledLine(Protocol):
    """What a label needs of an order line (labels read choices, never models: the models read labels)."""

    title: str
    sku: str


class Adjustmentish(Protocol):
    """What a reason needs of an adjustment."""

    description: str
    condition: str


_ORDER = {choice.value: choice.label for choice in OrderStatus}
_PAYMENT = {choice.value: choice.label for choice in PaymentStatus}
_LINE = {choice.value: choice.label for choice in LineStatus}
_EVENT = {choice.value: choice.label for choice in FulfillmentEventType}
_ADJUSTMENT = {choice.value: choice.label for choice in AdjustmentType}
# Looked up, not built per call (`PaymentType(value)` and `.values`, a list made at each read): issue 34, every
# buyer e-mail names the payment type.
_PAYMENT_TYPE = {choice.value: choice.label for choice in PaymentType}
_FULFILLMENT_METHOD = {choice.value: choice.label for choice in FulfillmentMethod}
_ADJUSTMENT_STATUS = {
    "pending": gettext_noop("em andamento"),
    "completed": gettext_noop("concluído"),
    "failed": gettext_noop("não concluído"),
}


def order_status_label(value: str) -> str:
    return str(_ORDER.get(value, value))


def payment_status_label(value: str) -> str:
    return str(_PAYMENT.get(value, value))


def line_status_label(value: str, method: str = "") -> str:
    """Buyer words for a line status; a pickup order's items are picked up, not shipped."""
    if method == FulfillmentMethod.PICKUP:
        if value == LineStatus.FULFILLED:
            return _("Retirado")
        if value == LineStatus.PARTIAL:
            return _("Parcialmente retirado")
    return str(_LINE.get(value, value))


def fulfillment_method_label(value: str) -> str:
    label = _FULFILLMENT_METHOD.get(value)
    return value if label is None else str(label)


def payment_type_label(value: str) -> str:
    label = _PAYMENT_TYPE.get(value)
    return value if label is None else str(label)


def fulfillable_on_label(value: str) -> str:
    """An expectation's "now" or ISO timestamp, in words and in the active time zone."""
    if not value or value == "now":
        return _("Agora")
    return local_time_label(value)


def local_time_label(value: str) -> str:
    """A stored RFC 3339 time ("2026-12-06T16:45:19Z") as staff read it: local, "06/12/2026 13:45"; a value that
    is not one, as it is."""
    try:
        when = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return value
    if timezone.is_naive(when):
        return value
    return formats.date_format(timezone.localtime(when), "SHORT_DATETIME_FORMAT")


def units_text(units: Iterable[tuple[int, str]]) -> str:
    """[(2, "Café especial 500 g"), (1, "Caneca")] → "2× Café especial 500 g, 1× Caneca" (buyer's and staff's words)."""
    return ", ".join(f"{quantity}× {title}" for quantity, title in units)


def line_items_text(line_items: Iterable[Mapping[str, object]], lines: Mapping[str, TitledLine]) -> str:
    """[{"id": "li_…", "quantity": 2}] → "2× Café especial 500 g (SKU-CAFE-500G)"; an unknown id stays as is."""
    parts = []
    for item in line_items:
        line = lines.get(str(item["id"]))
        name = f"{line.title} ({line.sku})" if line else str(item["id"])
        parts.append(f"{item['quantity']}× {name}")
    return ", ".join(parts)


def event_label(value: str) -> str:
    # Unknown (custom) types read as words: "ready_for_pickup" → "ready for pickup".
    return str(_EVENT.get(value, value.replace("_", " ")))


def adjustment_label(value: str) -> str:
    return str(_ADJUSTMENT.get(value, value.replace("_", " ")))


def adjustment_status_label(value: str) -> str:
    return _(_ADJUSTMENT_STATUS[value]) if value in _ADJUSTMENT_STATUS else value


_TOTALS = {
    "subtotal": gettext_noop("Subtotal"),
    "fulfillment": gettext_noop("Frete"),
    "tax": gettext_noop("Impostos"),
    "fee": gettext_noop("Taxa"),
    "discount": gettext_noop("Desconto"),
    "items_discount": gettext_noop("Desconto nos itens"),
    "total": gettext_noop("Total"),
}


def total_label(entry: dict[str, object]) -> str:
    """A totals entry's words: its own display_text when it has one (BCP §6), else the type in words."""
    if entry.get("display_text"):
        return str(entry["display_text"])
    kind = str(entry.get("type", ""))
    return _(_TOTALS[kind]) if kind in _TOTALS else kind.replace("_", " ")


# Staff words for the timeline kinds written by orders.services (`fulfillment_<type>` use the event type's label).
TIMELINE_KINDS = {
    "placed": gettext_lazy("Pedido recebido"),
    "payment_confirmed": gettext_lazy("Pagamento confirmado"),
    "expectation_changed": gettext_lazy("Previsão alterada"),
    "expectation_split": gettext_lazy("Previsão dividida"),
    "expectation_merged": gettext_lazy("Previsões unidas"),
    "refund_requested": gettext_lazy("Reembolso solicitado"),
    "refund_completed": gettext_lazy("Reembolso concluído"),
    "refund_failed": gettext_lazy("Reembolso falhou"),
    "refund_dropped": gettext_lazy("Reembolso recusado descartado"),
    "canceled": gettext_lazy("Pedido cancelado"),
    "returned": gettext_lazy("Devolução"),
    "note": gettext_lazy("Nota"),
    "buyer_updated": gettext_lazy("Dados do comprador"),
    "destination_updated": gettext_lazy("Endereço de entrega corrigido"),
    "email_sent": gettext_lazy("E-mail enviado"),
    "email_resend": gettext_lazy("E-mail reenviado"),
    "tracking_corrected": gettext_lazy("Rastreio corrigido"),
    "credit_note": gettext_lazy("Vale-troca emitido"),
    "returned_to_sender": gettext_lazy("Devolvido ao remetente"),
    "returned_to_sender_closed": gettext_lazy("Volta à loja resolvida"),
    "return_requested": gettext_lazy("Devolução solicitada"),
    "return_approved": gettext_lazy("Devolução aprovada"),
    "return_rejected": gettext_lazy("Devolução recusada"),
    "return_refunded": gettext_lazy("Devolução encerrada (valor a devolver)"),
    "return_refund_failed": gettext_lazy("Reembolso da devolução falhou"),
    # shop.freight.labels: the carrier label's steps
    "label_requested": gettext_lazy("Etiqueta solicitada"),
    "label_purchased": gettext_lazy("Etiqueta comprada"),
    "label_failed": gettext_lazy("Etiqueta não comprada"),
    "label_canceled": gettext_lazy("Etiqueta cancelada"),
    "webhook_none": gettext_lazy("Sem webhook"),  # bcp_app.service.webhooks: the platform's profile has no webhook_url
    # shop.invoicing.lifecycle: `fiscal_<event>` of fiscal.services and the return note
    "dispute_opened": gettext_lazy("Pix contestado (MED)"),
    "dispute_answered": gettext_lazy("Disputa do Pix respondida"),
    "dispute_agreed": gettext_lazy("PSP deu razão ao pagador (MED)"),
    "dispute_returned": gettext_lazy("Valor devolvido pelo MED"),
    "dispute_kept": gettext_lazy("Disputa encerrada, pagamento mantido"),
    "fiscal_blocked": gettext_lazy("NF-e bloqueada"),
    "fiscal_requested": gettext_lazy("NF-e solicitada"),
    "fiscal_processing": gettext_lazy("NF-e em processamento"),
    "fiscal_retry": gettext_lazy("NF-e: nova tentativa"),
    "fiscal_authorized": gettext_lazy("NF-e autorizada"),
    "fiscal_rejected": gettext_lazy("NF-e rejeitada"),
    "fiscal_cancel_requested": gettext_lazy("Cancelamento da NF-e solicitado"),
    "fiscal_cancel_window_closed": gettext_lazy("NF-e fora do prazo de cancelamento"),
    "fiscal_cancel_refused": gettext_lazy("Cancelamento da NF-e recusado"),
    "fiscal_cancelled": gettext_lazy("NF-e cancelada"),
    "fiscal_correction_requested": gettext_lazy("Carta de correção enviada"),
    "fiscal_corrected": gettext_lazy("Carta de correção registrada"),
    "fiscal_correction_refused": gettext_lazy("Carta de correção recusada"),
    "fiscal_return_note": gettext_lazy("NF-e de devolução a emitir"),
    "fiscal_return_note_requested": gettext_lazy("NF-e de devolução solicitada"),
    "fiscal_return_note_authorized": gettext_lazy("NF-e de devolução autorizada"),
    "fiscal_return_note_rejected": gettext_lazy("NF-e de devolução rejeitada"),
}


def timeline_kind_label(kind: str) -> str:
    """ "fulfillment_shipped" → "Enviado"; an unknown kind reads as words."""
    if kind in TIMELINE_KINDS:
        return str(TIMELINE_KINDS[kind])
    if kind.startswith("fulfillment_"):
        kind = kind.removeprefix("fulfillment_")
        if kind in FulfillmentEventType.values:
            return str(FulfillmentEventType(kind).label)
    return kind.replace("_", " ")


# Reasons the shop writes itself when the buyer or the platform gave none: stored in Portuguese (the merchant's
# records and the admin), shown to a reader in their language (QA walk: an English order page and refund e-mail
# said "(Cancelado pelo comprador)"). Any other reason is the person's own words, shown as written.
CANCELED_BY_BUYER = gettext_noop("Cancelado pelo comprador")
CANCELED_BY_PLATFORM = gettext_noop("Cancelado pela plataforma de compra")
# The notes a pickup's events get when staff leave theirs empty (an English page read "Ready for pickup — Pronto
# para retirada"; QA walk).
READY_FOR_PICKUP_NOTE = gettext_noop("Pronto para retirada")
PICKED_UP_NOTE = gettext_noop("Retirado na loja")
_STORED_REASONS = frozenset({CANCELED_BY_BUYER, CANCELED_BY_PLATFORM, READY_FOR_PICKUP_NOTE, PICKED_UP_NOTE})


# Returns recorded before the condition was data kept it in the reason, in Portuguese: "Não serviu (estado: Novo,
# na embalagem)". Read back as a reason and a condition, so an English page says the condition in English.
_LEGACY_CONDITION = re.compile(r"^(?P<reason>.*) \(estado: (?P<label>[^()]+)\)$", re.S)
_LEGACY_CONDITIONS = {"Novo, na embalagem": "novo", "Usado, em bom estado": "usado", "Avariado": "avariado"}


def condition_label(condition: str) -> str:
    """ "novo" → "Novo, na embalagem" in the reader's language; an unknown code as it is."""
    return str(ReturnCondition(condition).label) if condition in ReturnCondition.values else condition


def _reason_and_condition(text: str, condition: str) -> str:
    reason = _(text) if text in _STORED_REASONS else text
    if not condition:
        return reason
    said = _("estado dos itens: %(condition)s") % {"condition": condition_label(condition)}
    return f"{reason}; {said}" if reason else said


def stored_reason_label(text: str) -> str:
    """A stored reason in the reader's language when the shop wrote it (a legacy return's condition included)."""
    legacy = _LEGACY_CONDITION.match(text)
    if legacy and legacy["label"] in _LEGACY_CONDITIONS:
        return _reason_and_condition(legacy["reason"], _LEGACY_CONDITIONS[legacy["label"]])
    return _reason_and_condition(text, "")


def adjustment_reason_label(adjustment: Adjustmentish) -> str:
    """An adjustment's reason and, for a return, the items' condition: "Não serviu; estado dos itens: Avariado"."""
    if adjustment.condition:
        return _reason_and_condition(adjustment.description, adjustment.condition)
    return stored_reason_label(adjustment.description)


# What the Correios write for a tracking event (SRO "descricao"), kept as the event's note. The ones that only say the
# step again are not shown beside it ("Saiu para entrega — Objeto saiu para entrega ao destinatário"); the ones that
# tell the buyer something are said in the reader's language (an English page read "Delivery attempt failed —
# Carteiro não atendido"). Any other carrier's note is shown as written.
_CARRIER_REPEATS = {
    "shipped": frozenset({"Objeto postado"}),
    "in_transit": frozenset({"Objeto em transferência - por favor aguarde", "Objeto em trânsito - por favor aguarde"}),
    "out_for_delivery": frozenset({"Objeto saiu para entrega ao destinatário"}),
    "delivered": frozenset({"Objeto entregue ao destinatário"}),
    "returned_to_sender": frozenset({"Objeto devolvido ao remetente"}),
}
_CARRIER_NOTES = frozenset(
    {
        gettext_noop("Carteiro não atendido"),
        gettext_noop("Destinatário ausente"),
        gettext_noop("Endereço incorreto"),
        gettext_noop("Objeto aguardando retirada no endereço indicado"),
    }
)


def carrier_note_label(text: str) -> str:
    """A carrier's note in the reader's language when it is one the Correios write, else as written."""
    return _(text) if text in _CARRIER_NOTES else text


def event_note(event_type: str, text: str) -> str:
    """The note shown beside a fulfillment event's step: "" when it only repeats the step."""
    if text in _CARRIER_REPEATS.get(event_type, ()):
        return ""
    return carrier_note_label(stored_reason_label(text))
