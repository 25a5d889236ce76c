"""Buyer e-mails: subject, text and HTML rendered in the order's language (pt-BR or English).

Every e-mail carries the order as it stands (items, every totals line, refunds), the address or the pickup
store with its hours, and the payment; shipment and delivery e-mails list what that event covered. Bodies go
out as UTF-8 `8bit` (not quoted-printable) wherever the backend allows, so the development console is readable.
"""

from __future__ import annotations

import email.policy
import functools
import logging
import secrets
import smtplib
import threading
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from email.contentmanager import _encode_text  # type: ignore[attr-defined]  # what set_content encodes a text with
from email.generator import NLCRE as _NLCRE  # type: ignore[attr-defined]  # the generator's line-end pattern
from email.headerregistry import Address, BaseHeader
from email.message import EmailMessage as PyEmailMessage
from email.policy import EmailPolicy, Policy
from email.utils import format_datetime, parseaddr
from typing import Any

from django.conf import settings
from django.core.mail import EmailMultiAlternatives, mailers
from django.template.loader import render_to_string
from django.utils import translation
from django.utils.module_loading import import_string
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from orders.arrival import arrival_window, expectation_words, window_words
from orders.extras import order_extras
from orders.labels import payment_status_label, payment_type_label, units_text
from orders.models import (
    Adjustment,
    AdjustmentStatus,
    FulfillmentEvent,
    FulfillmentEventType,
    Order,
    OrderLine,
    ReturnRequest,
)
from orders.net_value import item_discount, lines_net_value
from orders.selectors import return_window_days, shipment_of_step, shipment_tracking_now
from orders.summary import all_delivered, installments_text, is_closed, money_rows, pickup_hours

logger = logging.getLogger(__name__)
# SMTP's own line limit (RFC 5322): lines up to 998 bytes stay 8bit instead of turning quoted-printable.
_READABLE = email.policy.default.clone(max_line_length=998)


_PARSED: dict[tuple[str, str], tuple[str, BaseHeader]] = {}  # (name, value) → the header parsed once (and folded)
_PARSED_MAX = 256


def _plain(name: str, value: str, limit: int) -> bool:
    """A value that goes on the wire as it is: printable ASCII, one line that needs no folding, no RFC 2047 word
    (the header classes decode one given as text)."""
    return value.isascii() and value.isprintable() and "=?" not in value and len(name) + 2 + len(value) <= limit


class _WirePolicy(EmailPolicy):
    """`email.policy.SMTP` without parsing what needs no parsing (issue 34: `email.headerregistry` parsing every
    header when set and re-folding it from its parse tree when written was a fifth of an e-mail's CPU).

    A plain value (`_plain`: printable ASCII, fits one line) is kept as the string it is and written as it is —
    what the standard policy writes for it after the round trip, and what it does with the headers of a parsed
    message. Any other value (non-ASCII: RFC 2047 words; long: folded) is parsed by the standard header classes,
    once per distinct value (the shop's sender, the same in every e-mail), its folded form kept with it. The
    generator still refuses a header with a line break (`verify_generated_headers`)."""

    def header_store_parse(self, name: str, value: Any) -> tuple[str, Any]:
        if isinstance(value, datetime):  # the Date header: what DateHeader would write
            value = format_datetime(value)
        if type(value) is str and _plain(name, value, self.max_line_length):
            return (name, value)
        if type(value) is not str:
            return super().header_store_parse(name, value)
        parsed = _PARSED.get((name, value))
        if parsed is None:
            if len(_PARSED) >= _PARSED_MAX:
                _PARSED.clear()
            stored = super().header_store_parse(name, value)
            parsed = _PARSED[(name, value)] = (stored[0], stored[1])
        return (name, parsed[1])

    def header_fetch_parse(self, name: str, value: Any) -> Any:
        if type(value) is str and _plain(name, value, self.max_line_length):
            return value  # as stored: reading a header back (Content-Type by the generator) parses nothing
        return super().header_fetch_parse(name, value)

    def header_max_count(self, name: str) -> int | None:
        # Asked at every header set (a duplicate Subject is refused); the registry builds a header class per ask.
        key = name.lower()
        count = _MAX_COUNTS.get(key, _UNKNOWN)
        if count is _UNKNOWN:
            count = _MAX_COUNTS[key] = super().header_max_count(name)
        return count  # type: ignore[return-value]

    def _fold(self, name: str, value: Any, refold_binary: bool = False) -> str:
        if isinstance(value, BaseHeader):  # shared between e-mails (immutable): folded once
            folded = value.__dict__.get("_wire_folded")
            if folded is None:
                folded = value.__dict__["_wire_folded"] = super()._fold(name, value, refold_binary)
            return folded
        return super()._fold(name, value, refold_binary)


_WIRE = _WirePolicy(linesep="\r\n")  # = email.policy.SMTP
_UNKNOWN = object()
_MAX_COUNTS: dict[str, object] = {}  # header name (lower case) → how many a message may hold (the registry's)


# How long this thread's SMTP connection may sit unused before it is closed rather than reused: servers drop an
# idle client after minutes (Postfix smtpd_timeout: 300 s), so a reused one is normally still open.
SMTP_IDLE_SECONDS = 30.0
_held = threading.local()


@dataclass
class _Held:
    backend: Any
    config: str  # the MAILERS it was made from (settings may change, e.g. in tests)
    used: float


def _drop_held() -> None:
    held, _held.value = getattr(_held, "value", None), None
    if held is not None:
        try:
            held.backend.close()
        except Exception:  # a connection already gone: nothing to close
            logger.debug("SMTP connection close failed", exc_info=True)


def send_email(message: EmailMultiAlternatives) -> None:
    """Send through this thread's connection to the mail server, opened on first use and kept for the next e-mail
    of the worker: connect, EHLO and QUIT were a quarter of an e-mail's CPU (issue 34). A connection unused for
    SMTP_IDLE_SECONDS, or made under other MAILERS settings, is closed first; one the server dropped meanwhile
    is replaced once (it accepted nothing). Any other failure closes it and propagates (the caller retries)."""
    config = repr(getattr(settings, "MAILERS", None))
    now = time.monotonic()
    held = getattr(_held, "value", None)
    if held is not None and (held.config != config or now - held.used > SMTP_IDLE_SECONDS):
        _drop_held()
        held = None
    reused = held is not None
    if held is None:
        backend = mailers.default
        if callable(getattr(backend, "prep_address", None)):
            # Django's SMTP backend parses the sender and every recipient of every message with `email`'s header
            # parser (8 % of an e-mail's CPU, issue 34); the answer depends on the address alone, so the backend this
            # thread keeps remembers it. An invalid address raises each time (exceptions are not remembered).
            backend.prep_address = functools.lru_cache(maxsize=256)(backend.prep_address)
        backend.open()  # kept open: send_messages closes only a connection it opened itself
        held = _held.value = _Held(backend=backend, config=config, used=now)
    try:
        held.backend.send_messages([message])
    except smtplib.SMTPServerDisconnected:
        _drop_held()
        if not reused:
            raise
        send_email(message)  # once more, on a new connection
        return
    except Exception:
        _drop_held()
        raise
    held.used = time.monotonic()


def _shop_context() -> dict[str, Any]:
    """The shop's name and identity for header and footer, from the provider the project names."""
    provider = getattr(settings, "ORDERS_EMAIL_CONTEXT_PROVIDER", "")
    return dict(import_string(provider)()) if provider else {}


class OrderEmail(EmailMultiAlternatives):
    def recipients(self) -> list[str]:
        # An erased buyer's placeholder (LGPD erasure: `…@apagado.invalid`) never delivers (RFC 6761 §6.4): it is
        # left out of the envelope, and a message to nobody else is not sent at all.
        return [address for address in super().recipients() if not address.lower().endswith(".invalid")]

    def message(self, *, policy: Policy = email.policy.default) -> PyEmailMessage:
        # The SMTP backend asks for its strict policy explicitly and gets it, without the header parsing it needs
        # not (the same bytes on the wire); console/file/locmem get 8bit.
        if policy is email.policy.SMTP:
            built = super().message(policy=_WIRE)
            if getattr(built, "_wire_bodies", False):  # `_add_bodies` put its own boundary already
                return built
            for part in built.walk():
                if part.is_multipart():
                    part.set_boundary(_boundary())
            return built
        return super().message(policy=_READABLE if policy is email.policy.default else policy)

    def _add_bodies(self, msg: PyEmailMessage) -> PyEmailMessage:
        """For the wire (the SMTP backend's policy), a text body with one HTML alternative — every order e-mail —
        is put together directly: the same headers, in the same order, and the same encoded bodies that
        `set_content`, `make_alternative` and `add_alternative` leave (email.contentmanager's own encoder
        chooses 7bit / 8bit / quoted-printable / base64), without their header parsing and re-setting (two thirds
        of building the message, issue 34). Any other shape goes the standard way."""
        alternatives = self.alternatives
        if (
            msg.policy is not _WIRE
            or msg._headers  # type: ignore[attr-defined]
            or not isinstance(self.body, str)
            or not self.body
            or self.attachments
            or len(alternatives) != 1
            or alternatives[0].mimetype != "text/html"
            or not isinstance(alternatives[0].content, str)
            or (self.encoding or settings.DEFAULT_CHARSET).lower() not in ("utf-8", "utf8")
        ):
            return super()._add_bodies(msg)
        # What set_content leaves on the top message, moved by make_alternative into the first part (its Content-*
        # headers; MIME-Version stays on top), and what add_alternative leaves on a part of its own (EmailMessage's
        # set_content adds MIME-Version to it). Every value is plain ASCII: stored as the policy stores it.
        boundary = _boundary()
        msg._headers = [("MIME-Version", "1.0"), ("Content-Type", _multipart(boundary))]  # type: ignore[attr-defined]
        msg._payload = [_text_part(self.body, "plain", ()), _text_part(alternatives[0].content, "html", _MIME_VERSION)]  # type: ignore[attr-defined]
        msg._wire_bodies = True  # type: ignore[attr-defined]
        msg.__class__ = _WireMessage  # written without the generator (as_bytes)
        msg._wire_boundary = boundary  # type: ignore[attr-defined]
        return msg


def _multipart(boundary: str) -> str:
    return f'multipart/alternative; boundary="{boundary}"'


class _WireMessage(PyEmailMessage):
    """The message `_add_bodies` puts together, written as `BytesGenerator` writes it (`as_bytes`, what Django's SMTP
    backend sends): each header folded by the policy, a blank line, then each part — its headers, a blank line, its
    encoded body with its line ends made CRLF — between the boundary lines. The generator reached the same bytes
    by parsing the Content-Type back for the type and the boundary, per part, in a generator of its own (a third of
    sending an e-mail, issue 34). Anything else (another policy, a From_ line, a message changed since) goes the
    standard way."""

    _wire_boundary: str

    def as_bytes(self, unixfrom: bool = False, policy: Policy | None = None) -> bytes:
        parts = self._payload  # type: ignore[attr-defined]
        if (
            unixfrom
            or (policy is not None and policy is not self.policy)
            or self.policy is not _WIRE
            or self.preamble is not None
            or self.epilogue is not None
            or not isinstance(parts, list)
            or not parts
            or not all(type(part) is PyEmailMessage and isinstance(part._payload, str) for part in parts)
            or self._headers[:2] != [("MIME-Version", "1.0"), ("Content-Type", _multipart(self._wire_boundary))]  # type: ignore[attr-defined]
        ):
            return super().as_bytes(unixfrom=unixfrom, policy=policy)
        fold, crlf = _WIRE.fold_binary, b"\r\n"
        out = [fold(name, value) for name, value in self._headers]  # type: ignore[attr-defined]
        out.append(crlf)
        boundary = self._wire_boundary.encode("ascii")
        for index, part in enumerate(parts):
            out.append((b"--" if index == 0 else b"\r\n--") + boundary + crlf)
            out += [fold(name, value) for name, value in part._headers]
            out.append(crlf)
            # _write_lines: the payload split at any line end (NLCRE), joined with CRLF — for a payload with no CR
            # (what `_text_part` encodes: "\n" after each line) the same as a replace; 8bit text is kept in str
            # as surrogate escapes of its bytes.
            payload = part._payload
            lines = payload.replace("\n", "\r\n") if "\r" not in payload else "\r\n".join(_NLCRE.split(payload))
            out.append(lines.encode("ascii", "surrogateescape"))
        out.append(b"\r\n--" + boundary + b"--" + crlf)
        return b"".join(out)


_MIME_VERSION = (("MIME-Version", "1.0"),)


def _text_part(text: str, subtype: str, extra: tuple[tuple[str, str], ...]) -> PyEmailMessage:
    """A text/`subtype` UTF-8 part as `set_content(text, subtype=…, charset="utf-8")` makes it under the wire policy."""
    cte, payload = _encode_text(text, "utf-8", None, _WIRE)
    part = PyEmailMessage(policy=_WIRE)
    part._headers = [  # type: ignore[attr-defined]
        ("Content-Type", f'text/{subtype}; charset="utf-8"'),
        ("Content-Transfer-Encoding", cte),
        *extra,
    ]
    part._payload = payload  # type: ignore[attr-defined]
    return part


def _boundary() -> str:
    # A boundary of its own, random (96 bits) and behind "=_", which no quoted-printable text holds: the generator's
    # default searches every body for it with a regex compiled per message, and its longer value folds the
    # Content-Type header (issue 34).
    return f"=_{secrets.token_hex(12)}"


# Lazy: only the subject of the e-mail at hand is translated (each lookup walks the catalogs).
_SUBJECTS = {
    "placed": gettext_lazy("Recebemos seu pedido #%(number)s"),
    "payment_confirmed": gettext_lazy("Pagamento confirmado: pedido #%(number)s"),
    "shipped": gettext_lazy("Seu pedido #%(number)s foi enviado"),
    "ready_for_pickup": gettext_lazy("Seu pedido #%(number)s está pronto para retirada"),
    "delivered": gettext_lazy("Seu pedido #%(number)s foi entregue"),
    "refunded": gettext_lazy("Reembolso do pedido #%(number)s"),
    "canceled": gettext_lazy("Pedido #%(number)s cancelado"),
    "invoice": gettext_lazy("Nota fiscal do pedido #%(number)s"),
    "order_link": gettext_lazy("Link para acompanhar o pedido #%(number)s"),
    "return_update": gettext_lazy("Sua devolução do pedido #%(number)s"),
    "out_for_delivery": gettext_lazy("Seu pedido #%(number)s saiu para entrega"),
    "delivery_failed": gettext_lazy("A entrega do seu pedido #%(number)s não foi feita"),
    "address_updated": gettext_lazy("Endereço de entrega do pedido #%(number)s alterado"),
}
# The carrier's steps of a shipment e-mailed to the buyer (ref: the shipment), by the event type of the step.
STEP_TYPES = {
    "out_for_delivery": FulfillmentEventType.OUT_FOR_DELIVERY,
    "delivery_failed": FulfillmentEventType.FAILED_ATTEMPT,
}


def _subject(kind: str, number: int, shop: str, *, partial: bool = False, correction: bool = False) -> str:
    if correction:
        subject = _("Código de rastreio corrigido: pedido #%(number)s")
    elif partial and kind == "shipped":
        subject = _("Parte do seu pedido #%(number)s foi enviada")
    elif partial and kind == "delivered":
        subject = _("Parte do seu pedido #%(number)s foi entregue")
    elif partial and kind == "canceled":
        subject = _("Parte do seu pedido #%(number)s foi cancelada")
    else:
        subject = str(_SUBJECTS[kind])
    return f"{shop}: " + subject % {"number": number}


@functools.lru_cache(maxsize=64)
def _address(from_email: str) -> str:
    """The address of DEFAULT_FROM_EMAIL (parsed once per value: the parser is `email`'s slow one)."""
    return parseaddr(from_email)[1]


@functools.lru_cache(maxsize=64)
def _sender(shop_name: str, from_email: str) -> str:
    """The From of every e-mail: the shop's current name, the configured address (once per pair of values)."""
    return str(Address(display_name=shop_name, addr_spec=_address(from_email)))


def _event_and_adjustment(order: Order, kind: str, ref: str) -> tuple[FulfillmentEvent | None, Adjustment | None]:
    event = adjustment = None
    if ref.startswith("evt_"):
        # The shipment, the delivery, or a tracking correction (its own event, with the shipment's items).
        event = FulfillmentEvent.objects.filter(order=order, public_id=ref).first()
    elif ref.startswith("adj_"):
        adjustment = Adjustment.objects.filter(order=order, public_id=ref).first()
    elif kind in ("shipped", "delivered"):  # a resend: the latest event of that kind
        event = FulfillmentEvent.objects.filter(order=order, type=kind).order_by("-occurred_at", "-id").first()
    elif kind in STEP_TYPES:  # a resend: the shipment of the latest such step
        step = FulfillmentEvent.objects.filter(order=order, type=STEP_TYPES[kind]).order_by("-occurred_at", "-id")
        event = shipment_of_step(step[0]) if step else None
    elif kind == "refunded":
        adjustment = Adjustment.objects.filter(order=order, type="refund").order_by("-occurred_at", "-id").first()
    return event, adjustment


def _step_context(order: Order, kind: str, shipment: FulfillmentEvent | None) -> dict[str, Any]:
    """A carrier step's e-mail (out for delivery, delivery failed): the shipment's tracking code as it stands now
    (staff's latest correction), and the carrier's latest note of that step for that code ("Objeto aguardando
    retirada no endereço indicado"), in the carrier's words."""
    if kind not in STEP_TYPES or shipment is None:
        return {"step_tracking": None, "step_note": ""}
    tracking = shipment_tracking_now(order_id=order.public_id, shipment_id=shipment.public_id) or shipment
    step = (
        FulfillmentEvent.objects.filter(order=order, type=STEP_TYPES[kind], tracking_number=tracking.tracking_number)
        .order_by("-occurred_at", "-id")
        .first()
    )
    note = step.description if step is not None else ""
    return {
        "step_tracking": tracking,
        "step_note": "" if note == str(FulfillmentEventType(STEP_TYPES[kind]).label) else note,
    }


def _refunded_items(order: Order, lines: list[OrderLine], refund: Adjustment | None) -> list[tuple[str, int, int]]:
    """What a refund was for, as (title, quantity, amount): the units it names at what the buyer paid for them (list
    price less their share of the discount, `orders.net_value`, the rule a return's refund follows), then whatever
    else the refund gave back or kept (the freight of a withdrawal, a sum staff chose) as one row, so the rows add
    up to the refunded amount. Empty for a refund that names no items."""
    if refund is None or not refund.line_items:
        return []
    by_id = {line.public_id: line for line in lines}
    bought = [(line.public_id, line.unit_price, line.quantity_original) for line in lines]
    discount = item_discount(order.totals or [])
    rows: list[tuple[str, int, int]] = []
    for item in refund.line_items:
        line = by_id.get(item["id"])
        quantity = abs(int(item["quantity"]))
        if line is not None and quantity:
            rows.append((line.title, quantity, lines_net_value(bought, discount, {line.public_id: quantity})))
    rest = -refund.amount - sum(amount for _title, _quantity, amount in rows)
    if rows and rest:
        rows.append(("", 0, rest))  # the templates name it in the buyer's language
    return rows


def _arrival_estimate(order: Order, kind: str, event: FulfillmentEvent | None) -> str:
    """The e-mails date the arrival as the order page does ("previsão de entrega entre 09/12 e 11/12") when the order
    kept the quote's business days: the shipped one from the shipment; the others, while nothing shipped, from the
    payment when the shop set handling days (its "prazo de postagem"). Else the words of the promise."""
    if kind == "shipped" and event is not None and event.type == FulfillmentEventType.SHIPPED:
        sent = {str(item["id"]) for item in event.line_items}
        for expectation in order.expectations.all():
            if expectation.method_type == "shipping" and any(str(i["id"]) in sent for i in expectation.line_items):
                window = arrival_window(expectation, order, shipped_at=event.occurred_at)
                if window:
                    return _("previsão de entrega %(when)s") % {"when": window_words(window)}
    elif order.status == "placed":
        for expectation in order.expectations.all():
            window = (
                arrival_window(expectation, order, shipped_at=None) if expectation.method_type == "shipping" else None
            )
            if window:
                return _("previsão de entrega %(when)s") % {"when": window_words(window)}
    # The checkout's words (Portuguese), said again in the reader's language from the days it kept.
    shipping = [e for e in order.expectations.all() if e.method_type == "shipping" and e.days_min is not None]
    return expectation_words(shipping[0]) if len(shipping) == 1 else order.fulfillment_description


def build_order_email(order: Order, kind: str, *, ref: str = "", to: str) -> EmailMultiAlternatives:
    event, adjustment = _event_and_adjustment(order, kind, ref)
    lines = list(order.lines.all())
    by_id = {line.public_id: line for line in lines}
    adjustments = list(order.adjustments.all())  # prefetched by the outbox task, else read (Meta orders them)
    # What this shipment / delivery covered, and whether something of the order is still to come.
    event_items = [(by_id[i["id"]], i["quantity"]) for i in (event.line_items if event else []) if i["id"] in by_id]
    live = [line for line in lines if line.quantity_total]
    if kind == "shipped":
        partial = any(line.quantity_shipped < line.quantity_total for line in live)
    elif kind in STEP_TYPES:
        partial = False  # about one parcel: its items are listed
    elif kind == "delivered":
        partial = not all_delivered(lines)
    else:
        # "canceled" of one cancellation (ref adj_…) while the order goes on: the rest of a partly shipped order
        partial = kind == "canceled" and adjustment is not None and order.status != "canceled"
    cancelled_items = [
        (by_id[i["id"]].title, by_id[i["id"]].sku, abs(int(i["quantity"])))
        for i in (adjustment.line_items if partial and adjustment is not None else [])
        if i["id"] in by_id
    ]
    # The money of that cancellation: the refund written with it (the next refund of the order after it).
    cancel_refund = (
        next((a for a in adjustments if a.type == "refund" and a.pk > adjustment.pk), None)
        if partial and adjustment is not None
        else None
    )
    closed = is_closed(order)
    return_days = return_window_days(order)
    bought_items = kind == "refunded" and any(line.quantity_total < line.quantity_original for line in lines)
    if kind in ("shipped", "delivered", *STEP_TYPES):
        items = [(line.title, line.sku, quantity, line.unit_price * quantity) for line, quantity in event_items]
    elif closed or bought_items:
        # Cancelled (every line at 0), or a refund after units were returned or cancelled: the buyer reads the items
        # as bought, which the subtotal still counts (the QA walk's cancellation and refund e-mails said "Itens:"
        # over an empty list).
        items = [
            (line.title, line.sku, line.quantity_original, line.unit_price * line.quantity_original)
            for line in lines
            if line.quantity_original
        ]
    else:
        items = [(line.title, line.sku, line.quantity_total, line.line_total) for line in live]
    # Whole numbers as text: what `{{ quantity }}` would write (no thousands separator, USE_THOUSAND_SEPARATOR off),
    # without Django's `localize` → `number_format` per value (30 calls each, issue 34).
    shown = [(title, sku, str(quantity), amount) for title, sku, quantity, amount in items]
    refunded_items = _refunded_items(order, lines, adjustment) if kind == "refunded" else []
    contact = _address(settings.DEFAULT_FROM_EMAIL)
    context = {
        "order": order,
        "order_number": str(order.number),  # as the templates wrote `order.number` (see `items`), three times
        "kind": kind,
        "lines": lines,
        "event": event,
        "items": shown,
        "closed": closed,
        **_step_context(order, kind, event),
        "partial": partial,
        "cancelled_items": units_text((quantity, title) for title, _sku, quantity in cancelled_items),
        "cancel_refund_amount": -cancel_refund.amount if cancel_refund is not None else 0,
        # A delivery starts the returns window: the e-mail says until when and where to ask (the order page), as
        # the page does (QA walk: the buyer learnt of it only by opening the page).
        "return_days": return_days,
        "return_deadline": event.occurred_at + timedelta(days=return_days)
        if kind == "delivered" and event is not None and event.type == FulfillmentEventType.DELIVERED
        else None,
        "adjustment": adjustment,
        "refund_amount": -adjustment.amount if adjustment is not None else 0,
        "refunded_items": refunded_items,
        "bought_items": bought_items,
        "permalink_url": order.permalink_url,
        # The delivery address changed by staff (ref "destination:<event>:shop"), not on the order page.
        "address_by_shop": kind == "address_updated" and ref.endswith(":shop"),
        "tracking_corrected": event is not None and event.type == FulfillmentEventType.TRACKING_CORRECTED,
        "shop_name": settings.SHOP_NAME,
        "shop_contact": contact,
        "shop_tax_id": "",
        "pickup_hours": pickup_hours(order),
        # The return request an acknowledgement, approval or refusal is about (ref "ret_…:<step>"), and that step:
        # the e-mail says what happened then, even if staff moved the request on before it was sent.
        "return_request": ReturnRequest.objects.filter(order=order, public_id=ref.split(":")[0]).first()
        if kind == "return_update"
        else None,
        "return_step": ref.partition(":")[2] if kind == "return_update" else "",
        "extras": order_extras(order),  # e.g. the authorized NF-e (DANFE link), from the shop
        **_shop_context(),
    }
    with translation.override(order.language or settings.LANGUAGE_CODE):
        # "Chega em 3 a 5 dias úteis" only while something is still on its way to the buyer (not cancelled,
        # not all delivered), as the order page shows its estimates; a carrier step's e-mail says where the parcel
        # is (no estimate made at the shipment). In the buyer's language (it was worded before the override: an
        # English shipped e-mail said "previsão de entrega entre 09/12 e 11/12").
        context["arrival_estimate"] = (
            "" if closed or all_delivered(lines) or kind in STEP_TYPES else _arrival_estimate(order, kind, event)
        )
        context["money_rows"] = money_rows(order, adjustments)
        context["payment_text"] = (
            f"{payment_type_label(order.payment_type)} — {payment_status_label(order.payment_status)}"
            if order.payment_type
            else payment_status_label(order.payment_status)
        )
        if order.payment_type == "card":
            context["payment_text"] += f" — {installments_text(order)}"  # the parcelamento chosen
        if any(a.type == "refund" and a.status == AdjustmentStatus.PENDING for a in adjustments):
            # "Pago" alone under "Reembolso em andamento" read as if nothing would come back (QA walk)
            context["payment_text"] += str(_("; reembolso em andamento"))
        subject = _subject(
            kind, order.number, context["shop_name"], partial=partial, correction=context["tracking_corrected"]
        )
        text = render_to_string(f"orders/email/{kind}.txt", context)
        html = render_to_string(f"orders/email/{kind}.html", context)
    # The shop's current name shows as the sender (a rename in the admin reaches it), the address stays the
    # configured one. Address quotes "," or "." in the name; Django encodes "Café" (RFC 2047) on the wire.
    # (formataddr's pre-encoded word is decoded and re-encoded by Django without its quotes: "Caju, Café"
    # became two addresses.)
    sender = _sender(context["shop_name"], settings.DEFAULT_FROM_EMAIL)
    message = OrderEmail(subject=subject, body=text, from_email=sender, to=[to])
    message.attach_alternative(html, "text/html")
    return message
