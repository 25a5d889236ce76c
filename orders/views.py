"""The buyer's order page `/orders/<token>`: no login, unguessable token, noindex, pt-BR or English."""

from __future__ import annotations

import re
import secrets
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django import forms
from django.conf import settings
from django.contrib import messages
from django.http import HttpRequest, HttpResponse, HttpResponseNotFound, HttpResponseRedirect
from django.shortcuts import render
from django.template.loader import render_to_string
from django.utils import timezone, translation
from django.utils.translation import gettext_lazy as _
from django.utils.translation import gettext_noop
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from orders.arrival import arrival_window, expectation_words, last_shipment, window_words
from orders.errors import OrderError
from orders.extras import destination_notes
from orders.labels import units_text
from orders.lookup import buyer_action_allowed, lookup_allowed, order_lookup_request
from orders.models import (
    AdjustmentType,
    FulfillmentEvent,
    FulfillmentEventType,
    FulfillmentExpectation,
    Order,
    OrderStatus,
    PaymentType,
    ReturnReason,
)
from orders.panels import render_panels
from orders.selectors import order_actions, order_for_permalink, return_requests_of
from orders.services import order_cancel_requested, order_destination_set, order_note_add, return_request_create
from orders.services.notes import DESTINATION_FIELDS, destination_clean, destination_refusal
from orders.summary import (
    ExpectationProgress,
    came_back_lines,
    current_tracking,
    expectation_progress,
    installments_text,
    is_closed,
    line_words,
    lines_gone,
    money_rows,
    order_words,
    pickup_hours,
    ready_for_pickup,
    redone_refunds,
)
from orders.types import LineQuantity

SUPPORTED = {"pt-br", "en"}


def _language(request: HttpRequest, order_language: str) -> str:
    """The site's language switch (its cookie) wins; else the language the buyer ordered in."""
    cookie = (request.COOKIES.get(settings.LANGUAGE_COOKIE_NAME) or "").lower()
    if cookie in SUPPORTED:
        return cookie
    return order_language if order_language in SUPPORTED else settings.LANGUAGE_CODE


def _when(fulfillable_on: str) -> datetime | None:
    """An expectation's future date ("now" or empty means no date to show)."""
    if not fulfillable_on or fulfillable_on == "now":
        return None
    try:
        return datetime.fromisoformat(fulfillable_on.replace("Z", "+00:00"))
    except ValueError:
        return None


def _private(response: HttpResponse) -> HttpResponse:
    response["X-Robots-Tag"] = "noindex"
    response["Cache-Control"] = "private, no-store"
    # The token is the key to the page: never leak it to the carrier's tracking site (or an image CDN) through
    # Referer. "same-origin" does that; "no-referrer" also makes the browser send `Origin: null` with the page's
    # own POST forms (language switch, order lookup), which Django's CSRF check refuses with a 403.
    response["Referrer-Policy"] = "same-origin"
    return response


@require_GET
def order_permalink(request: HttpRequest, token: str) -> HttpResponse:
    order = order_for_permalink(token)
    if order is None:
        # Same plain answer for malformed and unknown tokens (no hint, even with DEBUG on).
        return _private(HttpResponseNotFound(render_to_string("orders/not_found.html", request=request)))
    asked = (request.GET.get("lang") or "").lower()
    if asked in SUPPORTED:
        # ?lang= (old links) becomes the site's language choice: one switch (the footer's) then rules the page.
        response = HttpResponseRedirect(request.path)
        response.set_cookie(
            settings.LANGUAGE_COOKIE_NAME,
            asked,
            max_age=settings.LANGUAGE_COOKIE_AGE,
            path=settings.LANGUAGE_COOKIE_PATH,
            domain=settings.LANGUAGE_COOKIE_DOMAIN,
            secure=settings.LANGUAGE_COOKIE_SECURE,
            httponly=settings.LANGUAGE_COOKIE_HTTPONLY,
            samesite=settings.LANGUAGE_COOKIE_SAMESITE,
        )
        return _private(response)
    return _page(request, order)


def _page(
    request: HttpRequest,
    order: Order,
    *,
    status: int = 200,
    action_error: OrderError | None = None,
    asked: dict[str, Any] | None = None,
    address: AddressTyped | None = None,
) -> HttpResponse:
    """The order page; `action_error`: why the buyer's cancel or return was refused (shown beside its form);
    `address`: the delivery address the buyer typed and what is wrong with it (shown again, each error beside its
    field)."""
    language = _language(request, order.language)
    lines = list(order.lines.all())
    titles = {line.public_id: line.title for line in lines}
    # Only what is still to be sent has an estimate: cancelled lines and a cancelled order have none.
    # "Still to come" = not handed over yet: shipped, delivered or picked up (a pickup never "ships").
    closed = is_closed(order)
    adjustments = list(order.adjustments.all())
    redone = redone_refunds(adjustments)
    events = list(order.fulfillment_events.all())
    ready = ready_for_pickup(order, events)
    came_back = came_back_lines(order, adjustments, events)  # the carrier brought the parcel back to the store
    returned, canceled = lines_gone(adjustments)
    with translation.override(language):
        for line in lines:
            back, gone = line.public_id in came_back, line.public_id in canceled
            line.buyer_status = line_words(  # type: ignore[attr-defined]
                line, order, ready=ready, came_back=back, canceled=gone, returned=line.public_id in returned
            )
        expectations = []
        # Ready for pickup: the estimate ("Pronto para retirada em 2 dias úteis") is past; the status says it all.
        # Each estimate lists what it still has to bring: not the cancelled units, nor those already shipped.
        planned = [] if closed or ready else sorted(order.expectations.all(), key=lambda e: (e.position, e.pk))
        progress = expectation_progress(planned, adjustments, lines)
        on_the_way = []
        for exp in planned:
            items = [
                (titles.get(line_id, line_id), units) for line_id, units in progress[exp.public_id].to_send.items()
            ]
            if items:
                when, promise = _when(exp.fulfillable_on), _promise(exp, order)
                expectations.append({"expectation": exp, "when": when, "items": items, "promise": promise})
            if exp.method_type == "shipping":
                on_the_way.extend(_on_the_way(exp, order, progress[exp.public_id], titles, events))
        refunds = [a for a in adjustments if a.type == AdjustmentType.REFUND and a.status != "failed"]
        # Corrections replace: the buyer sees each shipment once, with its latest code (and no correction rows).
        shown = [event for event in events if event.type != FulfillmentEventType.TRACKING_CORRECTED]
        one_parcel = sum(event.type == FulfillmentEventType.SHIPPED for event in events) == 1
        context = {
            "order": order,
            "order_words": order_words(order, ready=ready, came_back=bool(came_back)),
            "came_back": bool(came_back),
            "lines": lines,
            "closed": closed,
            "money_rows": money_rows(order, adjustments),
            "installments_text": installments_text(order),
            "refund_done": sum(-a.amount for a in refunds if a.status == "completed"),
            "refund_pending": sum(-a.amount for a in refunds if a.status == "pending"),
            "pickup_hours": pickup_hours(order),
            "expectations": expectations,
            "on_the_way": on_the_way,
            "events": [
                {
                    "event": event,
                    "items": [(titles.get(i["id"], i["id"]), i["quantity"]) for i in event.line_items],
                    "tracking": current_tracking(event, events),  # the shipment, or its latest correction
                    # One parcel: its scans need not repeat its items and code on every row of a phone's screen.
                    "brief": one_parcel and event.type in _SCANS,
                }
                for event in reversed(shown)
            ],
            "adjustments": [
                {
                    "adjustment": adj,
                    "money": -adj.amount if adj.amount < 0 else adj.amount,
                    "redone": adj.pk in redone,
                }
                for adj in adjustments
            ],
        }
        context["panels"] = render_panels("ORDERS_PERMALINK_PANELS", request, order)  # e.g. the NF-e (shop)
        context["lead_panels"] = render_panels("ORDERS_PERMALINK_LEAD_PANELS", request, order)  # e.g. a subscription
        context.update(_actions_context(order, lines, events, action_error=action_error, asked=asked or {}))
        context.update(_address_context(order, address))
        response = render(request, "orders/permalink.html", context, status=status)
    response["Content-Language"] = language
    return _private(response)


def _promise(expectation: FulfillmentExpectation, order: Order) -> str:
    """What an expectation still in the shop promises: "Chega entre 09/12 e 11/12" when its days count from the
    payment, else its words ("Chega em 3 a 5 dias úteis": the carrier's days start at a posting not known yet)."""
    window = arrival_window(expectation, order, shipped_at=None)
    return _("Chega %(when)s") % {"when": window_words(window)} if window else expectation_words(expectation)


def _on_the_way(
    expectation: FulfillmentExpectation,
    order: Order,
    progress: ExpectationProgress,
    titles: dict[str, str],
    events: list[FulfillmentEvent],
) -> list[dict[str, Any]]:
    """What of `expectation` left the shop and has not arrived, with its arrival estimate: the carrier quote's
    business days kept at checkout counted from the last shipment of those lines ("entre 09/12 e 11/12"); an
    order placed before the days were kept has only the words ("Chega em 3 a 5 dias úteis"), and no date is made
    up from them."""
    items = [
        (titles.get(line_id, line_id), sent - progress.to_send.get(line_id, 0) - progress.delivered.get(line_id, 0))
        for line_id, sent in progress.planned.items()
    ]
    items = [(title, units) for title, units in items if units > 0]
    if not items:
        return []
    since = last_shipment(progress.planned, events)
    window = arrival_window(expectation, order, shipped_at=since)
    return [
        {
            "estimate": expectation_words(expectation),
            "window": window_words(window) if window else "",
            "since": since,
            "items": items,
            "step": _last_step(progress.planned, events, since),
        }
    ]


# The carrier's scans of a parcel on its way, after its shipment.
_SCANS = (FulfillmentEventType.IN_TRANSIT, FulfillmentEventType.OUT_FOR_DELIVERY, FulfillmentEventType.FAILED_ATTEMPT)


def _last_step(line_ids: Iterable[str], events: list[FulfillmentEvent], since: datetime | None) -> str:
    """Where the parcel of these lines is, by the carrier's latest scan since the last shipment: "out_for_delivery",
    "failed_attempt" (not delivered, or waiting at the agency) or "" (on its way). A buyer whose parcel waited at the
    post office read "A caminho" and an arrival estimate (QA walk at 360 px)."""
    lines = set(line_ids)
    scans = [
        e
        for e in events
        if e.type in _SCANS
        and (since is None or e.occurred_at >= since)
        and any(str(i["id"]) in lines for i in e.line_items)
    ]
    latest = max(scans, key=lambda e: (e.occurred_at, e.pk), default=None)
    return latest.type if latest is not None and latest.type != FulfillmentEventType.IN_TRANSIT else ""


# --- cancel and return by the buyer (issue 35): the same services as the agents' order_actions extension -----


def _actions_context(
    order: Order, lines: list[Any], events: list[Any], *, action_error: OrderError | None, asked: dict[str, Any]
) -> dict[str, Any]:
    requests = return_requests_of(order)
    actions = order_actions(order, lines=lines, events=events, requests=requests, now=timezone.now())
    titles = {line.public_id: line.title for line in lines}
    returnable = [
        {"line": line, "max": actions.returnable.get(line.public_id, 0),
         "value": asked.get(f"qty_{line.public_id}", "")}
        for line in lines if actions.returnable.get(line.public_id, 0) > 0
    ]  # fmt: skip
    # Part of the order already left: the cancel takes only what is still in the shop, and says so by name.
    shipped = [(line.quantity_fulfilled, line.title) for line in lines if line.quantity_fulfilled > 0]
    cancellable = [
        (line.quantity_total - line.quantity_fulfilled, line.title)
        for line in lines
        if line.quantity_total > line.quantity_fulfilled
    ]
    return {
        "actions": actions,
        "cancel_shipped": units_text(shipped) if actions.cancel_available and shipped else "",
        "cancel_rest": units_text(cancellable),
        "returnable": returnable,
        "return_requests": [
            {"request": r, "items": [(titles.get(i["id"], i["id"]), i["quantity"]) for i in r.line_items]}
            for r in requests
        ],
        "reason_choices": ReturnReason.choices,
        "action_error": action_error,
        "asked": asked,
        "nonce": secrets.token_urlsafe(16),  # a double submit of the return form finds the first request
    }


def _buyer_order(token: str) -> Order | None:
    return order_for_permalink(token)


TOO_MANY_ATTEMPTS = gettext_noop("Muitas tentativas. Tente de novo em alguns minutos.")


def _action_allowed(request: HttpRequest, order: Order) -> bool:
    """The order page's writing forms are counted per client and per order, as the order lookup is."""
    return buyer_action_allowed(client=request.META.get("REMOTE_ADDR", ""), order_id=order.public_id)


@require_POST
def order_cancel_by_buyer(request: HttpRequest, token: str) -> HttpResponse:
    """POST from the order page: cancel what has not shipped (all paid comes back through the refund outbox while
    nothing shipped; once part shipped, what was paid for the rest)."""
    order = _buyer_order(token)
    if order is None:
        return _private(HttpResponseNotFound(render_to_string("orders/not_found.html", request=request)))
    with translation.override(_language(request, order.language)):
        if not _action_allowed(request, order):
            error = OrderError("confirm", _(TOO_MANY_ATTEMPTS), code="rate_limited")
            return _page(request, order, status=429, action_error=error)
        if request.POST.get("confirm") != "on":
            error = OrderError("confirm", _("Marque a confirmação para cancelar o pedido."), code="required")
            return _page(request, order, status=400, action_error=error)
        try:
            cancellation = order_cancel_requested(order_id=order.public_id, reason=request.POST.get("reason", ""))
        except OrderError as exc:
            if exc.code != "order_canceled":  # a second click after it went through: the page says it all
                return _page(request, order, status=400, action_error=exc)
            cancellation = None
        order.refresh_from_db(fields=["status"])
        if cancellation is not None and order.status != OrderStatus.CANCELED:
            # Part had shipped: only the rest was cancelled; name it, and the money that comes back is for it.
            titles = {line.public_id: line.title for line in order.lines.all()}
            items = cancellation.line_items
            rest = units_text([(abs(int(i["quantity"])), titles.get(i["id"], i["id"])) for i in items])
            if order.payment_type == PaymentType.BOLETO and order.paid_amount:
                text = _(
                    "Cancelado o que ainda não tinha sido enviado (%(items)s). A loja entrará em contato para "
                    "devolver o valor desses itens por Pix ou transferência."
                )
            else:
                text = _(
                    "Cancelado o que ainda não tinha sido enviado (%(items)s). O valor desses itens será devolvido "
                    "pelo mesmo meio de pagamento."
                )
            messages.success(request, text % {"items": rest})
        elif order.payment_type == PaymentType.BOLETO and order.paid_amount:
            # A boleto has no automatic refund: staff transfer the money back (payments' boleto refunds).
            messages.success(
                request,
                _("Pedido cancelado. A loja entrará em contato para devolver o valor pago por Pix ou transferência."),
            )
        else:
            messages.success(request, _("Pedido cancelado. O valor pago será devolvido pelo mesmo meio de pagamento."))
    return _private(HttpResponseRedirect(order.permalink_path))


@require_POST
def order_return_by_buyer(request: HttpRequest, token: str) -> HttpResponse:
    """POST from the order page: ask to return delivered items within the window; staff answer in the admin."""
    order = _buyer_order(token)
    if order is None:
        return _private(HttpResponseNotFound(render_to_string("orders/not_found.html", request=request)))
    asked = {key: value for key, value in request.POST.items() if key.startswith("qty_") or key.startswith("reason")}
    with translation.override(_language(request, order.language)):
        try:
            wanted = []
            for key, value in request.POST.items():
                if key.startswith("qty_") and value.strip() not in ("", "0"):
                    if not value.strip().isdigit():
                        raise OrderError(key, _("Informe uma quantidade inteira, a partir de 1."), code="bad_quantity")
                    wanted.append(LineQuantity(line_id=key.removeprefix("qty_"), quantity=int(value)))
            return_request_create(
                order_id=order.public_id, lines=wanted, reason_code=request.POST.get("reason_code", ""),
                reason=request.POST.get("reason", ""), requested_by="buyer",
                request_key=request.POST.get("nonce", "")[:64],
            )  # fmt: skip
        except OrderError as exc:
            return _page(request, order, status=400, action_error=exc, asked=asked)
        messages.success(request, _("Devolução solicitada. A loja vai responder por e-mail e nesta página."))
    return _private(HttpResponseRedirect(order.permalink_path))


# --- the buyer corrects the delivery address (staff's "Corrigir endereço de entrega", same service and rules) ----

# Each input of the buyer's address form: its name (the checkout's, so checkout.js's CEP lookup fills it), the key
# `Order.destination` keeps it under, its label and what the browser may fill it with (autocomplete, inputmode).
_ADDRESS_INPUTS = (
    ("cep", "postal_code", _("CEP"), "postal-code", "numeric"),
    ("street", "street", _("Rua"), "address-line1", ""),
    ("number", "number", _("Número"), "", ""),
    ("complement", "complement", _("Complemento"), "address-line2", ""),
    ("neighborhood", "neighborhood", _("Bairro"), "address-level3", ""),
    ("city", "city", _("Cidade"), "address-level2", ""),
    ("uf", "state", _("UF"), "address-level1", ""),
)

_LOOKED_UP = {"street", "neighborhood", "city"}  # what the CEP lookup fills (the UF always follows the CEP)


@dataclass(frozen=True)
class AddressTyped:
    """What the buyer typed (by `Order.destination` key), each refused field's message, and a refusal of the whole
    change (the order left the shop meanwhile)."""

    values: dict[str, str]
    errors: dict[str, str] = field(default_factory=dict)
    refusal: str = ""


def _address_context(order: Order, typed: AddressTyped | None) -> dict[str, Any]:
    """The address form while the order may still change it ("Pedido recebido", a delivery, no label bought:
    `destination_refusal`), filled with the order's address or what the buyer typed; open after an error."""
    refusal = typed.refusal if typed else ""
    if order.fulfillment_method != "shipping" or order.status != OrderStatus.PLACED or destination_refusal(order):
        return {"address_fields": [], "address_refusal": refusal}
    destination = order.destination or {}
    values = typed.values if typed else {key: str(destination.get(key, "") or "") for key in DESTINATION_FIELDS}
    errors = typed.errors if typed else {}
    # What still is the order's own street, bairro or city (not typed by the buyer) a new CEP's lookup replaces.
    fields = [
        {"name": name, "label": label, "value": values.get(key, ""), "error": errors.get(key, ""),
         "autocomplete": autocomplete, "inputmode": inputmode, "maxlength": DESTINATION_FIELDS[key][1],
         "replaceable": key in _LOOKED_UP and values.get(key, "") == str(destination.get(key, "") or "")}
        for name, key, label, autocomplete, inputmode in _ADDRESS_INPUTS
    ]  # fmt: skip
    return {"address_fields": fields, "address_open": bool(errors or refusal), "address_refusal": refusal}


@require_POST
def order_destination_by_buyer(request: HttpRequest, token: str) -> HttpResponse:
    """POST from the order page: the buyer corrects the delivery address while the order is "Pedido recebido"
    (the token is the key, as for cancel and return). Every bad field is named beside it and what was typed stays;
    the timeline says the buyer changed it, the platform's order webhook is sent (the service), and staff read
    on the timeline what the freight to the new CEP would cost (said to them after the save in the admin)."""
    order = _buyer_order(token)
    if order is None:
        return _private(HttpResponseNotFound(render_to_string("orders/not_found.html", request=request)))
    values = {key: request.POST.get(name, "")[:200] for name, key, *_rest in _ADDRESS_INPUTS}
    with translation.override(_language(request, order.language)):
        if not _action_allowed(request, order):
            return _page(request, order, status=429, address=AddressTyped(values, refusal=_(TOO_MANY_ATTEMPTS)))
        if refusal := destination_refusal(order):  # shipped meanwhile (another tab): said, whatever was typed
            return _page(request, order, status=400, address=AddressTyped(values, refusal=refusal))
        address, errors = destination_clean(values)
        if errors:
            return _page(request, order, status=400, address=AddressTyped(values, errors))
        before = dict(order.destination or {})
        try:
            changed = order_destination_set(order_id=order.public_id, **address, by_buyer=True)
        except OrderError as exc:
            wrong = {exc.field: exc.message} if exc.field in DESTINATION_FIELDS else {}
            return _page(request, order, status=400, address=AddressTyped(values, wrong, "" if wrong else exc.message))
        if not changed:
            messages.info(request, _("Nada mudou: o endereço de entrega já era esse."))
            return _private(HttpResponseRedirect(order.permalink_path))
        messages.success(request, _("Endereço de entrega atualizado. A loja vai enviar o pedido para ele."))
    order.refresh_from_db(fields=["destination"])
    with translation.override(settings.LANGUAGE_CODE):  # the timeline is the merchant's record, in Portuguese
        for note in destination_notes(order, before):  # outside the save's transaction: a carrier may be asked
            order_note_add(order_id=order.public_id, text=note)
    return _private(HttpResponseRedirect(order.permalink_path))


class LookupForm(forms.Form):
    # Each message names its field (QA walk: Django's "Este campo é obrigatório." and "Insira um endereço de email
    # válido." named none).
    email = forms.EmailField(
        label=_("E-mail usado na compra"),
        max_length=254,
        error_messages={
            "required": _("Informe o e-mail usado na compra."),
            "invalid": _("E-mail inválido: confira o endereço usado na compra."),
        },
    )
    number = forms.CharField(
        label=_("Número do pedido"),
        max_length=40,
        error_messages={"required": _("Informe o número do pedido, como 1005 ou #1005.")},
    )

    def clean_number(self) -> int:
        # As written in the e-mail subject ("#1005") or on the page ("Pedido nº 1005"), not only "1005".
        text = self.cleaned_data["number"].strip().lower()
        text = re.sub(r"^(pedido\s*)?(n[º°o.]\s*)?#?\s*", "", text)
        if not text.isdigit() or not 1 <= int(text) <= 10**12:
            raise forms.ValidationError(_("Informe o número do pedido, como 1005 ou #1005."))
        return int(text)


@require_http_methods(["GET", "POST"])
def order_lookup(request: HttpRequest) -> HttpResponse:
    """`/pedido`: the same answer whether or not the order exists; rate-limited per client and e-mail."""
    form = LookupForm(request.POST or None)
    status, sent = 200, False
    if request.method == "POST" and form.is_valid():
        email = form.cleaned_data["email"]
        client = request.META.get("REMOTE_ADDR", "")
        if lookup_allowed(client=client, email=email):
            order_lookup_request(number=form.cleaned_data["number"], email=email)
            sent = True
        else:
            status = 429
            form.add_error(None, _(TOO_MANY_ATTEMPTS))
    elif request.method == "POST":
        status = 400
    response = render(request, "orders/lookup.html", {"form": form, "sent": sent}, status=status)
    return _private(response)
