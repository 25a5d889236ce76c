"""Internal notes, the buyer's contact, CPF/CNPJ and delivery address corrected by staff, buyer e-mail (re)sending."""

from __future__ import annotations

import logging
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.module_loading import import_string
from django.utils.translation import gettext_lazy as _

from kernel.br_validation import (
    email_valid,
    phone_display,
    phone_normalize,
    phone_valid,
    tax_id_invalid,
    tax_id_normalize,
    tax_id_valid,
)
from kernel.cep import cep_digits, cep_format, cep_invalid, cep_missing, cep_uf, uf_invalid, uf_not_of_cep
from kernel.rows import insert_once, insert_together, update_where
from orders.emails import build_order_email, send_email
from orders.errors import OrderError
from orders.models import EmailDelivery, EmailKind, FulfillmentExpectation, Order, OrderEvent, OrderStatus
from orders.services._common import (
    clean_text,
    clean_type,
    lock_order,
    notify_changed,
    schedule_email,
    staff_words,
    timeline,
)

logger = logging.getLogger(__name__)


@transaction.atomic
def order_note_add(*, order_id: str, text: str, actor: str = "", internal: bool = True) -> OrderEvent:
    """Add a note to the timeline. Internal notes are never shown to the buyer."""
    text = clean_text(text, field="text", max_length=4000, required=True)
    order = lock_order(order_id)
    return timeline(order, "note", text, actor=actor, internal=internal)


# The timeline is the merchant's record, kept in Portuguese like its other events.
_STAFF_WORDS = {
    "buyer_first_name": "nome",
    "buyer_last_name": "sobrenome",
    "buyer_email": "e-mail",
    "buyer_phone": "celular",
}


@transaction.atomic
def order_buyer_contact_set(
    *, order_id: str, first_name: str, last_name: str, email: str, phone: str = "", actor: str = ""
) -> list[str]:
    """Staff correct the buyer's name, e-mail or phone (a typo at checkout: the e-mails went nowhere, the courier
    could not call). Returns the fields that changed (`first_name`, `last_name`, `email`, `phone`); none changes
    nothing. A change is on the timeline (internal, with the values before: staff may need the old address) and
    announced as `buyer_updated` (the platform's order webhook); the next e-mails go to the new address. Each bad
    field is named, and nothing is saved."""
    wanted = {
        "buyer_first_name": clean_text(first_name, field="first_name", max_length=120, required=True),
        "buyer_last_name": clean_text(last_name, field="last_name", max_length=120, required=True),
        "buyer_email": clean_text(email, field="email", max_length=254, required=True).lower(),
        "buyer_phone": phone_normalize(clean_text(phone, field="phone", max_length=32)),
    }
    if not email_valid(wanted["buyer_email"]):
        raise OrderError("email", _("E-mail inválido: confira o endereço (nome@dominio.com.br)."), code="bad_email")
    if wanted["buyer_phone"] and not phone_valid(wanted["buyer_phone"]):
        raise OrderError("phone", _("Celular inválido: informe DDD e número, como (11) 98765-4321."), code="bad_phone")
    order = lock_order(order_id)
    changed = [field for field, value in wanted.items() if getattr(order, field) != value]
    if not changed:
        return []
    before = {
        field: phone_display(getattr(order, field)) if field == "buyer_phone" else getattr(order, field)
        for field in changed
    }
    for field in changed:
        setattr(order, field, wanted[field])
    order.save(update_fields=[*changed, "updated_at"])
    said = "; ".join(f"{_STAFF_WORDS[field]} (antes: {before[field] or '—'})" for field in changed)
    timeline(
        order, "buyer_updated", f"Dados do comprador corrigidos: {said}.", actor=actor, internal=True,
        data={"fields": [field.removeprefix("buyer_") for field in changed]},
    )  # fmt: skip
    notify_changed(order, "buyer_updated")
    return [field.removeprefix("buyer_") for field in changed]


@transaction.atomic
def order_buyer_tax_id_set(*, order_id: str, tax_id: str, actor: str = "") -> Order:
    """Staff correct or fill in the buyer's CPF/CNPJ (e.g. an agent's order, needed for the NF-e). An unchanged
    value changes nothing; a change is on the timeline (internal) and announced as `buyer_updated`, which retries
    an NF-e blocked for the missing CPF."""
    value = tax_id_normalize(clean_text(tax_id, field="tax_id", max_length=32, required=True))
    if not tax_id_valid(value):
        raise OrderError("tax_id", tax_id_invalid(), code="bad_tax_id")
    order = lock_order(order_id)
    if order.buyer_tax_id == value:
        return order
    previous = order.buyer_tax_id
    order.buyer_tax_id = value
    order.save(update_fields=["buyer_tax_id", "updated_at"])
    label = "CPF" if len(value) == 11 else "CNPJ"
    message = f"{label} do comprador {'corrigido' if previous else 'informado'}."
    timeline(order, "buyer_updated", message, actor=actor, internal=True, data={"field": "tax_id"})
    notify_changed(order, "buyer_updated")
    return order


# The delivery address as `Order.destination` keeps it, in the order the form asks for it, with each key's word on
# the (Portuguese) timeline and its longest value.
DESTINATION_FIELDS = {
    "postal_code": ("CEP", 9),
    "street": ("rua", 200),
    "number": ("número", 20),
    "complement": ("complemento", 100),
    "neighborhood": ("bairro", 100),
    "city": ("cidade", 100),
    "state": ("UF", 2),
}
_DESTINATION_REQUIRED = {
    "postal_code": _("Informe o CEP."),
    "street": _("Informe a rua."),
    "number": _("Informe o número (ou S/N)."),
    "neighborhood": _("Informe o bairro."),
    "city": _("Informe a cidade."),
}


def destination_clean(values: dict[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """(the address as the order keeps it, {field: what is wrong with it}) for a delivery address typed by staff:
    the checkout's CEP rules (kernel.cep: 8 digits, a CEP the Correios table knows, the UF its own; an empty UF is
    the CEP's) and what a carrier needs (street, number, bairro, city). Every bad field is named at once."""
    clean = {key: " ".join(str(values.get(key, "") or "").split()) for key in DESTINATION_FIELDS}
    errors: dict[str, str] = {}
    for key, message in _DESTINATION_REQUIRED.items():
        if not clean[key]:
            errors[key] = str(message)
    for key, (_word, limit) in DESTINATION_FIELDS.items():
        if key not in errors and key != "postal_code" and len(clean[key]) > limit:
            errors[key] = str(_("Use no máximo %(n)s caracteres.") % {"n": limit})
    clean["state"] = clean["state"].upper()
    digits = cep_digits(clean["postal_code"]) if clean["postal_code"] else None
    if clean["postal_code"] and digits is None:
        errors["postal_code"] = cep_invalid()
    elif digits is not None and (uf := cep_uf(digits)) is None:
        errors["postal_code"] = cep_missing(digits)
    elif digits is not None:
        clean["postal_code"] = cep_format(digits)  # "01310-100", as checkout orders keep it
        if not clean["state"]:
            clean["state"] = uf or ""
        elif len(clean["state"]) != 2 or not clean["state"].isalpha():
            errors["state"] = uf_invalid()
        elif clean["state"] != uf:
            errors["state"] = uf_not_of_cep(uf or "")
    return clean, errors


def destination_refusal(order: Order) -> str:
    """Why the order's delivery address cannot be corrected now ("" when it can): only a delivery (not a pickup),
    not cancelled, nothing of it handed to a carrier; and no other part of the shop holding the old address
    (`settings.ORDERS_DESTINATION_GUARDS`: dotted paths of `(order) -> str`, e.g. a carrier label bought for it).
    The order page's form asks it before staff type; the service asks it again under the order's lock."""
    if order.fulfillment_method != "shipping":
        return str(_("O pedido #%(n)s não é para entrega (é retirada ou digital): não tem endereço de entrega.")) % {
            "n": order.number
        }
    if order.status == OrderStatus.CANCELED:
        return str(_("O pedido #%(n)s está cancelado.")) % {"n": order.number}
    if order.status != OrderStatus.PLACED:
        return str(
            _(
                "O pedido #%(n)s já foi enviado (no todo ou em parte): o endereço não muda mais aqui. Peça à "
                "transportadora para redirecionar a entrega."
            )
        ) % {"n": order.number}
    for path in getattr(settings, "ORDERS_DESTINATION_GUARDS", ()):
        if refusal := import_string(path)(order):
            return str(refusal)
    return ""


@transaction.atomic
def order_destination_set(
    *, order_id: str, postal_code: str, street: str, number: str, neighborhood: str, city: str, state: str = "",
    complement: str = "", actor: str = "", by_buyer: bool = False,
) -> list[str]:  # fmt: skip
    """Staff correct the buyer's delivery address (a typo at checkout; the buyer moved before the order left), or
    the buyer does on the order page (`by_buyer`: the timeline says so). Either way the buyer gets an e-mail with
    the new address (`address_updated`), saying who changed it.
    Returns the keys of `Order.destination` that changed (`postal_code`, `street`, …); none changes nothing.
    Refused (OrderError, nothing saved) for a bad field (the first; the form names them all, `destination_clean`)
    and whenever `destination_refusal` says so. A change is written on the order and its delivery expectations
    (what the order page, the e-mails, the NF-e and the platform read), on the timeline (internal, with the values
    before) and announced as `buyer_updated` (the platform's order webhook). Nothing is charged or refunded: a
    freight that would differ for the new CEP is the shop's."""
    wanted, errors = destination_clean(
        {"postal_code": postal_code, "street": street, "number": number, "complement": complement,
         "neighborhood": neighborhood, "city": city, "state": state}
    )  # fmt: skip
    if errors:
        field, message = next(iter(errors.items()))
        raise OrderError(field, message, code="bad_address")
    order = lock_order(order_id)
    if refusal := destination_refusal(order):
        raise OrderError("destination", refusal, code="destination_locked")
    current = order.destination or {}
    changed = [key for key, value in wanted.items() if str(current.get(key, "") or "") != value]
    if not changed:
        return []
    order.destination = {**current, **wanted, "country": "BR"}
    order.save(update_fields=["destination", "updated_at"])
    FulfillmentExpectation.objects.filter(order=order, method_type="shipping").update(destination=order.destination)
    said = "; ".join(f"{DESTINATION_FIELDS[key][0]} (antes: {current.get(key) or '—'})" for key in changed)
    who = "Endereço de entrega corrigido"
    data: dict[str, object] = {"fields": changed, "before": {key: str(current.get(key, "") or "") for key in changed}}
    if by_buyer:
        who, data["by"] = "O comprador corrigiu o endereço de entrega na página do pedido", "buyer"
    event = timeline(order, "destination_updated", f"{who}: {said}.", actor=actor, internal=True, data=data)
    # The buyer's confirmation (and word of it, if someone else holding the link changed it), or word that the shop
    # changed where the order goes (":shop": the e-mail says who changed it).
    ref = f"destination:{event.pk}" if by_buyer else f"destination:{event.pk}:shop"
    schedule_email(order, EmailKind.ADDRESS_UPDATED, ref=ref)
    notify_changed(order, "buyer_updated")
    return changed


# The languages the buyer's e-mails and page are written in, as the site's switch names them.
BUYER_LANGUAGES = {"pt-br": "português", "en": "inglês"}


@transaction.atomic
def order_language_set(*, order_id: str, language: str) -> bool:
    """The buyer switched the site's language on the order's page (or the checkout's): the order's next e-mails
    are written in it. Whether it changed; an unknown language or the same one changes nothing. The timeline
    says it to staff (internal), who would otherwise wonder why the e-mails went out in English."""
    language = (language or "").lower()
    if language not in BUYER_LANGUAGES:
        return False
    order = lock_order(order_id)
    if order.language == language:
        return False
    order.language = language
    order.save(update_fields=["language", "updated_at"])
    timeline(
        order,
        "buyer_updated",
        f"O comprador trocou o idioma do site para {BUYER_LANGUAGES[language]}: os próximos e-mails saem nele.",
        internal=True,
        data={"field": "language", "language": language},
    )
    return True


def order_event_row(
    *, order: Order, kind: str, message: str, internal: bool = True, data: dict[str, object] | None = None
) -> OrderEvent:
    """The timeline event `order_event_record` writes for a plain event (no `notify`, `email` or `once`), checked
    the same way and not written: for a caller that writes it in the statement of the change it tells of."""
    kind = clean_type(kind, field="kind")
    message = clean_text(message, field="message", max_length=4000, required=True)
    return OrderEvent(order=order, kind=kind, message=message, internal=internal, data=data or {})


def order_event_record(
    *,
    order_id: str,
    kind: str,
    message: str,
    internal: bool = True,
    data: dict[str, object] | None = None,
    notify: bool = False,
    email: str = "",
    email_ref: str = "",
    once: bool = False,
    locked: Order | None = None,
    actor: str = "",
) -> OrderEvent:
    """A timeline event told by another part of the shop (e.g. NF-e steps), in the caller's transaction.
    `notify`: also send `order_changed` (after commit) with `kind` as the event, e.g. for order webhooks.
    `email`: also e-mail the buyer (an `EmailKind`), once per (`email`, `email_ref`).
    `once`: an order has at most one event of this kind (a task run again adds nothing); checked under
    the order's lock, so two runs at once still write one. `locked`: the order, already row-locked by the caller
    in this transaction (it is not locked and read again). `actor`: the staff member who asked for it (a username)."""
    kind = clean_type(kind, field="kind")
    message = clean_text(message, field="message", max_length=4000, required=True)
    if email and email not in EmailKind.values:
        raise OrderError("email", _("Escolha um dos e-mails da lista."), code="bad_email_kind")
    if (
        locked is not None and locked.public_id == order_id and not (once or email or notify)
        and transaction.get_connection().in_atomic_block
    ):  # fmt: skip
        # Just the event, one INSERT in the caller's transaction that holds the order (an NF-e step): no savepoint
        # around it (issue 34) — nothing here can fail and be caught, a failed INSERT fails the caller's transaction.
        event = OrderEvent(order=locked, kind=kind, message=message, actor=actor, internal=internal, data=data or {})
        insert_together(event)  # as timeline() writes it, without compiling the ORM's INSERT
        return event
    with transaction.atomic():
        order = locked if locked is not None and locked.public_id == order_id else lock_order(order_id)
        if once and (earlier := order.timeline.filter(kind=kind).first()) is not None:
            return earlier
        event = timeline(order, kind, message, actor=actor, internal=internal, data=data or {})
        if email:
            schedule_email(order, email, ref=email_ref[:64])
        if notify:
            notify_changed(order, kind)
        return event


def email_kinds_sent(order: Order) -> set[str]:
    """The buyer e-mails this order has had (re-sends aside): only these may be sent again."""
    sent = EmailDelivery.objects.filter(order=order).exclude(ref__startswith="resend:")
    return set(sent.values_list("kind", flat=True).distinct())


@transaction.atomic
def order_email_resend(*, order_id: str, kind: str, actor: str = "") -> EmailDelivery:
    """Send a buyer e-mail again on request (a new delivery row: the once-rule guards replays, not staff)."""
    if kind not in EmailKind.values:
        raise OrderError("kind", _("Escolha um dos e-mails da lista."), code="bad_email_kind")
    order = lock_order(order_id)
    if not order.buyer_email:
        raise OrderError(
            "kind", _("O pedido #%(number)s não tem e-mail do comprador."), code="no_buyer_email", number=order.number
        )
    if kind not in email_kinds_sent(order):
        # QA walk: "Pedido entregue" re-sent for an order never shipped told the buyer it had arrived
        raise OrderError(
            "kind",
            _("Este pedido nunca recebeu o e-mail “%(email)s”: só é possível reenviar um e-mail já enviado."),
            code="email_never_sent",
            email=EmailKind(kind).label,
        )
    count = EmailDelivery.objects.filter(order=order, kind=kind, ref__startswith="resend:").count()
    delivery = schedule_email(order, kind, ref=f"resend:{count + 1}")
    assert delivery is not None
    timeline(
        order,
        "email_resend",
        f"E-mail “{staff_words(EmailKind(kind).label)}” reenviado.",
        actor=actor,
        internal=True,
        data={"kind": kind},
    )
    return delivery


@transaction.atomic
def order_link_email_send(*, order_id: str) -> EmailDelivery | None:
    """The buyer asked for the order's link (/pedido): a short e-mail with it, each time (the lookup's rate limit
    bounds how often); an internal timeline line says so. None when the order has no buyer e-mail."""
    order = lock_order(order_id)
    count = EmailDelivery.objects.filter(order=order, kind=EmailKind.ORDER_LINK).count()
    delivery = schedule_email(order, EmailKind.ORDER_LINK, ref=f"lookup:{count + 1}")
    if delivery is not None:
        timeline(order, "email_resend", "Link do pedido enviado a pedido do comprador (/pedido).",
                 actor="buyer:order-lookup", internal=True, data={"kind": EmailKind.ORDER_LINK})  # fmt: skip
    return delivery


EMAIL_CLAIM = timedelta(minutes=5)  # longer than one SMTP conversation; a dead sender's claim lapses


def email_delivery_send(*, delivery_id: int) -> str:
    """Send one recorded e-mail unless already sent: claim it (short transaction), talk SMTP with no
    transaction or lock held, then record it sent. Concurrent runs: the claim lets one send. A process that
    dies after SMTP accepted and before the record re-sends once the claim lapses (at least once, never lost)."""
    now = timezone.now()
    with transaction.atomic():
        delivery = EmailDelivery.objects.select_for_update().filter(pk=delivery_id).first()
        if delivery is None:
            return "missing"
        if delivery.sent_at is not None:
            return "already_sent"
        if delivery.claimed_until is not None and delivery.claimed_until > now:
            return "in_flight"
        delivery.attempts += 1
        delivery.claimed_until = now + EMAIL_CLAIM
        delivery.save(update_fields=["attempts", "claimed_until"])
    return _send_claimed(delivery, Order.objects.get(pk=delivery.order_id))


def _send_claimed(delivery: EmailDelivery, order: Order) -> str:
    """Talk SMTP for a delivery this run holds the claim of (no transaction open), then record it sent."""
    message = build_order_email(order, delivery.kind, ref=delivery.ref, to=delivery.to_email)
    try:
        send_email(message)  # over the worker's open SMTP connection
    except Exception:
        # Let the task's retry (or the sweep) try again at once, not after the claim lapses.
        EmailDelivery.objects.filter(pk=delivery.pk, sent_at__isnull=True).update(claimed_until=None)
        raise
    delivery.sent_at = timezone.now()
    delivery.claimed_until = None
    label = staff_words(EmailKind(delivery.kind).label) if delivery.kind in EmailKind.values else delivery.kind
    # The row marked sent and its timeline line in one statement (no transaction of four statements: issue 34).
    sent = OrderEvent(
        order=order, kind="email_sent", message=f"E-mail “{label}” enviado para {delivery.to_email}.",
        internal=True, data={"kind": delivery.kind},
    )  # fmt: skip
    update_where(delivery, ("sent_at", "claimed_until"), event=sent)
    return "sent"


def order_placed_email_send(*, order_id: str, order: Order | None = None) -> str:
    """The "Pedido recebido" e-mail, from the placed order's outbox row (the one task per placed order), so the
    placement's transaction writes no e-mail row. Exactly once: the delivery is unique per (order, kind, ref);
    the first run inserts it already claimed and sends it, a re-run finds it and goes through
    `email_delivery_send` (sent: nothing; claimed: in flight). A run that dies before the insert leaves the
    outbox row pending for `sweep_outbox`; a failed SMTP send leaves the delivery unsent for
    `send_pending_emails`, and does not hold back the order's webhook. `order`: the order as the outbox task
    read it (orders.selectors.order_for_side_effects), so it is not read again."""
    if order is None or order.public_id != order_id:
        order = Order.objects.filter(public_id=order_id).first()
    if order is None or not order.buyer_email:
        return "skipped"
    try:
        delivery = EmailDelivery(
            order=order, kind=EmailKind.PLACED, ref="", to_email=order.buyer_email,
            attempts=1, claimed_until=timezone.now() + EMAIL_CLAIM,
        )  # fmt: skip
        # One statement, no transaction or savepoint around it: the unique (order, kind, ref) decides.
        if not insert_once(delivery, ("order", "kind", "ref")):  # a re-run of the outbox row: the first recorded it
            found = EmailDelivery.objects.get(order=order, kind=EmailKind.PLACED, ref="")
            return email_delivery_send(delivery_id=found.pk)
        return _send_claimed(delivery, order)
    except Exception:
        logger.warning("placed e-mail of %s not sent; send_pending_emails retries it", order_id, exc_info=True)
        return "failed"
