"""Carrier labels for orders: request (a row and its outbox row, one transaction), purchase (the outbox's
receiver, at the carrier, no lock held), cancel, and the PDF to print.

Exactly once: a live label is unique per order (a double click or a second staff member finds the first), the
purchase runs from an outbox row unique by the label's id, and every step the carrier records is saved on the
label before the next one (carriers.LabelState), so a crashed or retried worker continues the same purchase
instead of buying again (Melhor Envio: the paid order is asked for before any second checkout).
"""

from __future__ import annotations

import logging
from dataclasses import asdict

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone, translation
from django.utils.translation import gettext, ngettext

import carriers
from carriers import (
    Address,
    CarrierRejected,
    CarrierUnavailable,
    LabelItem,
    LabelRequest,
    LabelState,
    Parcel,
)
from kernel.http import Deadline
from kernel.money import PT_BR, format_brl
from orders.models import Order
from orders.services import order_event_record
from orders.services.outbox import LABEL_PURCHASE, outbox_add
from shop.freight.parcels import FreightLine, parcels_for
from shop.models import Checkout, ShippingLabel, StoreSettings
from shop.models.store import STORE_ROW_ID

logger = logging.getLogger(__name__)

ACTOR = "transportadora"


class FreightError(Exception):
    """A request staff can fix, in Portuguese; nothing was changed."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def _digits(value: str) -> str:
    return "".join(c for c in value if c.isdigit())


def _lines_to_ship(order: Order) -> list[FreightLine]:
    return [
        FreightLine(line.sku, line.quantity_total - line.quantity_shipped, line.unit_price)
        for line in order.lines.all()
        if line.quantity_total > line.quantity_shipped
    ]


# Said to the merchant: what to do and whom to ask, never a setting's name or the README (QA walk).
NO_CARRIER = (
    "Nenhuma transportadora está configurada; peça a quem instalou a loja para configurar a integração com os"
    " Correios ou Melhor Envio. Até lá, registre o envio com o código de rastreio."
)


def label_request(*, order_id: str, service_code: str = "", actor: str = "") -> ShippingLabel:
    """Ask for a label: the row and its outbox row in one transaction. The order's live label when there is one
    (a double click buys nothing twice). FreightError (Portuguese) when the order cannot have one."""
    carrier = carriers.configured()
    if carrier is None:
        raise FreightError(NO_CARRIER)
    with transaction.atomic():
        order = Order.objects.select_for_update().filter(public_id=order_id).first()
        if order is None:
            raise FreightError("Pedido não encontrado.")
        live = ShippingLabel.objects.filter(order=order, status__in=ShippingLabel.LIVE).first()
        if live is not None:
            return live
        if order.fulfillment_method != "shipping":
            raise FreightError(f"O pedido #{order.number} não é para entrega: não precisa de etiqueta.")
        if order.status == "canceled":
            raise FreightError(f"O pedido #{order.number} está cancelado.")
        if len(_digits(str((order.destination or {}).get("postal_code", "")))) != 8:
            raise FreightError(f"O pedido #{order.number} não tem CEP de entrega válido.")
        store = StoreSettings.objects.filter(pk=STORE_ROW_ID).first()
        if store is None or len(_digits(store.postal_code)) != 8 or not store.street:
            raise FreightError("Preencha o endereço e o CEP da loja (Dados da loja): é o remetente da etiqueta.")
        lines = _lines_to_ship(order)
        parcels = parcels_for(lines)
        if not parcels:
            raise FreightError(f"Nada a enviar no pedido #{order.number}: tudo já foi enviado.")
        if not service_code:
            selected = Checkout.objects.filter(public_id=order.checkout_id).values_list("selected_option_id", flat=True)
            chosen = next(iter(selected), "")
            service_code = chosen if chosen.startswith(f"{carrier.name}:") else ""
        try:
            with transaction.atomic():
                label = ShippingLabel.objects.create(
                    order=order, carrier=carrier.name, service_code=service_code,
                    service_name=order.fulfillment_title, parcels=[asdict(p) for p in parcels],
                    requested_by=actor,
                )  # fmt: skip
        except IntegrityError:  # another request created it first (the order lock makes this rare)
            return ShippingLabel.objects.get(order=order, status__in=ShippingLabel.LIVE)
        outbox_add(
            fresh=True,  # the label is new, so is its key
            kind=LABEL_PURCHASE,
            key=f"label_purchase:{label.public_id}",
            payload={"order_id": order.public_id, "label_id": label.public_id},
        )
        with translation.override(settings.LANGUAGE_CODE):  # the timeline is stored text, in the shop's language
            requested = ngettext(
                "Etiqueta pedida (%(n)d volume) por %(actor)s.", "Etiqueta pedida (%(n)d volumes) por %(actor)s.",
                len(parcels),
            ) % {"n": len(parcels), "actor": actor or gettext("sistema")}  # fmt: skip
        order_event_record(
            order_id=order.public_id, kind="label_requested", message=requested, data={"label_id": label.public_id}
        )
    return label


def _address_of_store(store: StoreSettings) -> Address:
    return Address(
        name=store.trade_name, postal_code=_digits(store.postal_code), street=store.street, number=store.number,
        complement=store.complement, district=store.neighborhood, city=store.city, state=store.state,
        phone=_digits(store.phone), email=store.contact_email, document=_digits(store.cnpj),
    )  # fmt: skip


def _address_of_order(order: Order) -> Address:
    d = order.destination or {}
    name = " ".join(p for p in (d.get("first_name", ""), d.get("last_name", "")) if p) or order.buyer_first_name
    return Address(
        name=name, postal_code=_digits(str(d.get("postal_code", ""))), street=d.get("street", ""),
        number=d.get("number", ""), complement=d.get("complement", ""), district=d.get("neighborhood", ""),
        city=d.get("city", ""), state=d.get("state", ""), phone=_digits(order.buyer_phone),
        email=order.buyer_email, document=_digits(order.buyer_tax_id),
    )  # fmt: skip


def _state(label: ShippingLabel) -> LabelState:
    extra = dict(label.remote_state or {})
    status = extra.pop("_status", "pending")
    return LabelState(label.remote_id, status, label.tracking_code, label.cost, extra)


def _saver(label: ShippingLabel):  # type: ignore[no-untyped-def]
    def save(state: LabelState) -> None:
        # Autocommit, one UPDATE: what the carrier recorded survives a crash of this worker right after.
        ShippingLabel.objects.filter(pk=label.pk).update(
            remote_id=state.remote_id, tracking_code=state.tracking_code, cost=state.cost,
            remote_state={**state.extra, "_status": state.status},
        )  # fmt: skip

    return save


def _choose_service(carrier: carriers.Carrier, label: ShippingLabel, parcels: tuple[Parcel, ...],
                    origin: str, destination: str, deadline: Deadline) -> tuple[str, str, str, int]:  # fmt: skip
    """(code, name, carrier name, price): the label's service, else the one titled like the order's choice,
    else the cheapest."""
    services = carrier.quote(parcels=parcels, from_cep=origin, to_cep=destination, deadline=deadline)
    if not services:
        raise CarrierRejected("A transportadora não atende este CEP com estes volumes.")
    wanted = label.service_code
    title = label.service_name.casefold()
    match = (
        next((s for s in services if s.code == wanted), None)
        if wanted
        else next((s for s in services if s.name.casefold() == title or title.startswith(s.name.casefold())), None)
    )
    if wanted and match is None:
        raise CarrierRejected("O serviço escolhido não atende mais este CEP: cancele e compre outra etiqueta.")
    service = match or min(services, key=lambda s: (s.price, s.days_max))
    return service.code, service.name, service.carrier, service.price


def label_purchase_run(*, label_id: str) -> str:
    """The outbox receiver: buy the label at the carrier. "done", "skipped" (not requested any more) or
    "rejected" (the carrier refused: the label is failed, nothing charged). CarrierUnavailable propagates, so
    the outbox row stays pending and the sweep runs it again, from the saved state."""
    label = ShippingLabel.objects.select_related("order").filter(public_id=label_id).first()
    if label is None or label.status != ShippingLabel.Status.REQUESTED:
        return "skipped"
    order = label.order
    store = StoreSettings.objects.get(pk=STORE_ROW_ID)
    carrier = carriers.get_carrier(label.carrier)
    parcels = tuple(Parcel(**p) for p in label.parcels)
    sender, recipient = _address_of_store(store), _address_of_order(order)
    deadline = Deadline(settings.CARRIER_LABEL_DEADLINE_MS / 1000)
    try:
        if not label.remote_id and not label.quoted_price:
            code, name, company, price = _choose_service(
                carrier, label, parcels, sender.postal_code, recipient.postal_code, deadline
            )
            ShippingLabel.objects.filter(pk=label.pk).update(
                service_code=code, service_name=name, carrier_name=company, quoted_price=price
            )
            label.refresh_from_db()
        request = LabelRequest(
            reference=label.public_id, service_code=label.service_code, sender=sender, recipient=recipient,
            parcels=parcels, items=tuple(LabelItem(line.title[:60], line.quantity_total, line.unit_price)
                                         for line in order.lines.all() if line.quantity_total),
        )  # fmt: skip
        state = carrier.buy(request=request, state=_state(label), deadline=deadline, save=_saver(label))
    except CarrierRejected as exc:
        with transaction.atomic():
            ShippingLabel.objects.filter(pk=label.pk).update(status=ShippingLabel.Status.FAILED,
                                                             last_error=exc.message[:500])  # fmt: skip
            order_event_record(
                order_id=order.public_id, kind="label_failed", message=f"Etiqueta não comprada: {exc.message}",
                data={"label_id": label.public_id},
            )  # fmt: skip
        return "rejected"
    except CarrierUnavailable as exc:
        ShippingLabel.objects.filter(pk=label.pk).update(last_error=f"Transportadora indisponível: {exc}"[:500])
        raise
    cost = state.cost or label.quoted_price  # Correios bill the contract at posting: the quote is the cost
    with transaction.atomic():
        updated = ShippingLabel.objects.filter(pk=label.pk, status=ShippingLabel.Status.REQUESTED).update(
            status=ShippingLabel.Status.PURCHASED, purchased_at=timezone.now(), cost=cost, last_error="",
            tracking_code=state.tracking_code, remote_id=state.remote_id,
        )  # fmt: skip
        if updated:
            tracking = f", rastreio {state.tracking_code}" if state.tracking_code else ""
            order_event_record(
                order_id=order.public_id, kind="label_purchased",
                message=f"Etiqueta comprada: {label.service_name} ({label.carrier_name or label.carrier}), "
                f"custo {format_brl(cost, language=PT_BR)}{tracking}.",
                data={"label_id": label.public_id, "cost": cost},
            )  # fmt: skip
    return "done"


def label_cancel(*, label_id: str, actor: str = "") -> ShippingLabel:
    """Cancel at the carrier (within its window), then mark it. FreightError with the carrier's reason."""
    label = ShippingLabel.objects.filter(public_id=label_id).first()
    if label is None:
        raise FreightError("Etiqueta não encontrada.")
    if label.status != ShippingLabel.Status.PURCHASED:
        raise FreightError("Só uma etiqueta comprada pode ser cancelada.")
    if label.order.fulfillment_events.filter(tracking_number=label.tracking_code, type="shipped").exists() and (
        label.tracking_code
    ):
        raise FreightError("A etiqueta já foi postada: não pode mais ser cancelada.")
    carrier = carriers.get_carrier(label.carrier)
    try:
        carrier.cancel(state=_state(label), deadline=Deadline(settings.CARRIER_LABEL_DEADLINE_MS / 1000))
    except CarrierRejected as exc:
        raise FreightError(exc.message) from exc
    except CarrierUnavailable as exc:
        raise FreightError("A transportadora não respondeu: tente cancelar de novo em alguns minutos.") from exc
    with transaction.atomic():
        ShippingLabel.objects.filter(pk=label.pk).update(status=ShippingLabel.Status.CANCELED,
                                                         canceled_at=timezone.now())  # fmt: skip
        order_event_record(
            order_id=label.order.public_id, kind="label_canceled",
            message=f"Etiqueta {label.tracking_code or label.public_id} cancelada por {actor or 'sistema'}.",
            data={"label_id": label.public_id},
        )  # fmt: skip
    label.refresh_from_db()
    return label


def label_pdf(*, label_id: str) -> bytes:
    """The label to print, fetched from the carrier (FreightError when it cannot be had now)."""
    label = ShippingLabel.objects.filter(public_id=label_id, status=ShippingLabel.Status.PURCHASED).first()
    if label is None:
        raise FreightError("Etiqueta não encontrada ou ainda não comprada.")
    try:
        return carriers.get_carrier(label.carrier).label_pdf(
            state=_state(label), deadline=Deadline(settings.CARRIER_LABEL_DEADLINE_MS / 1000)
        )
    except (CarrierRejected, CarrierUnavailable) as exc:
        raise FreightError("A transportadora não entregou o PDF da etiqueta agora: tente de novo.") from exc
