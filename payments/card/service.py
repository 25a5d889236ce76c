"""Card authorization (authorize + capture), recording what the gateway said, and the reconcile by order code.

Every gateway call runs outside any transaction; each local change is one short locked transaction on
the payment row. Whatever path learns a charge's outcome (the complete call, the webhook task, the
reconcile sweep) ends in `_record`, which never moves an approval back, so an outcome reported twice
or out of order changes nothing the second time.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils.module_loading import import_string

from kernel.ids import new_public_id
from kernel.rows import Then, insert_once, new_row
from payments.card.gateway import (
    NOT_PAID,
    CardCustomer,
    CardGateway,
    GatewayCharge,
    GatewayError,
    GatewayRejected,
    GatewayUnavailable,
    StoredCard,
    StoredCardCharge,
    decline_message,
)
from payments.card.models import CardPayment
from payments.card.sandbox import SandboxCardGateway
from payments.exceptions import PaymentInputError
from payments.timeline import new_event

logger = logging.getLogger(__name__)
Status = CardPayment.Status
MAX_INSTALLMENTS = 24  # Pagar.me's ceiling; the shop's own plan is usually lower
PENDING_MESSAGE = "Pagamento com cartão em análise; avisaremos assim que for confirmado."


@dataclass(frozen=True)
class CardPaymentResult:
    approved: bool
    code: str
    message: str
    payment_id: str
    pending: bool = False  # sent, outcome not known yet: the webhook or the reconcile sweep decides
    brand: str = ""  # the card charged, as the gateway told it (never the number)
    last_digits: str = ""


def card_gateway_configured() -> bool:
    """Whether a card gateway answers (without building its client): pages ask this on every render."""
    return bool(getattr(settings, "PAYMENTS_CARD_GATEWAY", "")) or bool(settings.BCP_PIX_SANDBOX)


def get_card_gateway() -> CardGateway | None:
    path = getattr(settings, "PAYMENTS_CARD_GATEWAY", "")
    if path:
        return import_string(path)()
    if settings.BCP_PIX_SANDBOX:
        return SandboxCardGateway()
    return None


def result_of(payment: CardPayment) -> CardPaymentResult:
    return CardPaymentResult(
        approved=payment.status == Status.APPROVED,
        code=payment.code,
        message=payment.message,
        payment_id=payment.payment_id,
        pending=payment.status == Status.PENDING,
        brand=payment.card_brand,
        last_digits=payment.card_last_digits,
    )


def _status_of(charge: GatewayCharge | None) -> str:
    if charge is None:
        return Status.PENDING
    if charge.paid:
        return Status.APPROVED
    if charge.status in NOT_PAID:
        return Status.DECLINED
    return Status.PENDING  # processing, or authorized and not captured yet


def _message_of(status: str, charge: GatewayCharge | None) -> tuple[str, str]:
    if status == Status.APPROVED:
        return "", "Pagamento aprovado"
    if status == Status.DECLINED:
        return "payment_failed", decline_message(charge.return_code if charge else "")
    return "payment_pending", PENDING_MESSAGE


def record(
    *,
    reference: str,
    charge: GatewayCharge | None,
    gateway: str,
    handler_id: str = "",
    amount: int = 0,
    installments: int = 1,
    fingerprint: str = "",
    attempt: int | None = None,
    source: str,
    absent: bool = False,
    then: Then | None = None,
) -> tuple[CardPayment, bool]:
    """Write what the gateway said about `reference`; returns (payment, became_final_now).

    An approved row is final: a later decline or an unknown outcome of another attempt never undoes it.
    `absent`: the caller saw no row for the reference before the gateway call; then the row is inserted
    with no read first, and the unique reference decides (a webhook that recorded it meanwhile wins, and
    this answer is weighed against its row as usual). `then`: a write that rides in that INSERT, made only when the
    row was inserted (`kernel.rows.Then`; not made when a webhook's row was there first).
    """
    status = _status_of(charge)
    # No savepoint when nested: both callers (the shop's placement, `settle_recorded`) let a failure fail
    # their whole transaction, and a savepoint is two statements on every complete.
    with transaction.atomic(savepoint=False):
        payment = None if absent else CardPayment.objects.select_for_update().filter(reference=reference).first()
        if payment is not None and payment.status == Status.APPROVED:
            if charge is not None and charge.charge_id == payment.gateway_reference:
                _track_refunds(payment, charge)
            return payment, False
        if payment is not None and status == Status.PENDING and payment.status == Status.DECLINED and attempt is None:
            return payment, False  # an old attempt still processing does not reopen a decline
        if payment is None:
            payment = new_row(CardPayment, payment_id=new_public_id("cardpay"), reference=reference, attempts=0)
            payment.handler_id = handler_id or getattr(settings, "BCP_CARD_HANDLER_ID", "gpay")
        was = payment.status
        if handler_id:
            payment.handler_id = handler_id
        if charge is not None:
            payment.amount = charge.paid_amount or charge.amount
            payment.installments = max(1, min(MAX_INSTALLMENTS, charge.installments))
            payment.gateway_reference = charge.charge_id
            payment.gateway_order_id = charge.order_id
            payment.gateway_status = f"{charge.status}/{charge.transaction_status}"[:40]
            payment.card_brand, payment.card_last_digits = charge.card_brand, charge.card_last_digits
        else:
            payment.amount = amount or payment.amount
            payment.installments = installments
        payment.status = status
        payment.code, payment.message = _message_of(status, charge)
        if charge is not None and status == Status.DECLINED:
            payment.code = "payment_failed"
            payment.gateway_status = f"{payment.gateway_status} {charge.return_code}".strip()[:40]
        payment.gateway = gateway
        if fingerprint:
            payment.token_fingerprint = fingerprint
        if attempt is not None:
            payment.attempts = attempt
        event = new_event(
            reference=reference,
            kind=f"card_{status}",
            amount=payment.amount,
            code=charge.return_code if charge else "",
            charge=payment.gateway_reference,
            source=source,
        )
        if not absent:
            payment.save()
            event.save()
        elif not insert_once(payment, conflict=("reference",), event=event, then=then):  # row and event, or nothing
            return record(
                reference=reference,
                charge=charge,
                gateway=gateway,
                handler_id=handler_id,
                amount=amount,
                installments=installments,
                fingerprint=fingerprint,
                attempt=attempt,
                source=source,
            )
    return payment, was != status and status != Status.PENDING


def _track_refunds(payment: CardPayment, charge: GatewayCharge) -> None:
    """What the gateway reports as refunded (a DELETE answer or a `charge.refunded` notice): a maximum, never a sum."""
    refunded = min(payment.amount, max(payment.refunded_amount, charge.canceled_amount))
    if refunded != payment.refunded_amount:
        payment.refunded_amount = refunded
        payment.save(update_fields=["refunded_amount", "updated_at"])


@dataclass(frozen=True)
class CardPaymentBrief:
    """What `card_payment_charge` must know of a reference's payment before charging (none, or declined
    after N attempts), read by the caller inside a statement it makes anyway (`card_payment_brief_sql`):
    then the charge needs no read of its own. Any other status is read again in full."""

    status: str = ""  # "" = no payment row for the reference
    attempts: int = 0


def card_payment_brief_sql() -> str:
    """A scalar subquery for a SELECT list, one parameter (the reference); `card_payment_brief` reads it."""
    table = CardPayment._meta.db_table
    return f"(SELECT status || ':' || attempts FROM {table} WHERE reference = %s)"  # noqa: S608 - constant


def card_payment_brief(value: str | None) -> CardPaymentBrief:
    status, _, attempts = (value or "").partition(":")
    return CardPaymentBrief(status=status, attempts=int(attempts or 0))


@dataclass(frozen=True)
class CardCharge:
    """One authorization attempt as the gateway answered it, not recorded yet (`card_payment_record` writes it).

    `answered`: the reference was decided without a charge (already approved or pending, the request
    refused, no gateway), so there is nothing to record.
    """

    reference: str
    answered: CardPaymentResult | None = None
    charge: GatewayCharge | None = None
    gateway: str = ""
    handler_id: str = ""
    amount: int = 0
    installments: int = 1
    fingerprint: str = ""
    attempt: int = 1
    absent: bool = False  # no payment row for the reference when the caller last looked (the brief)


def card_payment_authorize(**request: Any) -> CardPaymentResult:
    """Authorize and capture through the configured gateway, outside any transaction; idempotent per reference.
    Takes `card_payment_charge`'s arguments and records the answer at once (`card_payment_record`).

    An approved reference answers its approval again without charging; a pending one (a timeout) answers
    pending without a second charge; a declined one may be retried (e.g. with another card), as a new
    attempt with its own Idempotency-Key.
    """
    return card_payment_record(card_payment_charge(**request))


def card_payment_charge(
    *,
    reference: str,
    amount: int,
    handler_id: str,
    token: str,
    installments: int = 1,
    customer: CardCustomer | None = None,
    description: str = "",
    brief: CardPaymentBrief | None = None,
) -> CardCharge:
    """The gateway half of `card_payment_authorize` (no transaction may be open: it calls the gateway).

    The caller records the answer with `card_payment_record`, in the transaction that acts on it (the shop
    places the order in the same commit). A process that dies in between leaves no row: the charge is
    found at the gateway by its order code (`card_payment_reconcile`), as after a crash before recording.
    `brief`: the reference's payment as the caller read it (`card_payment_brief_sql`) after the last write
    to it it could race with; none or declined spares the read here.
    """
    if isinstance(amount, bool) or not isinstance(amount, int) or amount <= 0:
        raise PaymentInputError("amount", "must be a positive integer of centavos")
    if not handler_id:
        raise PaymentInputError("handler_id", "is required")
    if not isinstance(token, str) or not token:
        raise PaymentInputError("token", "is required")
    if isinstance(installments, bool) or not isinstance(installments, int) or not 1 <= installments <= MAX_INSTALLMENTS:
        raise PaymentInputError("installments", f"must be an integer from 1 to {MAX_INSTALLMENTS}")
    if brief is not None and brief.status in ("", Status.DECLINED):
        existing, attempts = None, brief.attempts  # nothing approved or waiting: charge (a new attempt)
    else:
        existing = CardPayment.objects.filter(reference=reference).first()
        attempts = existing.attempts if existing is not None else 0
    if existing is not None and existing.status == Status.APPROVED:
        if existing.amount != amount:
            answer = CardPaymentResult(False, "payment_failed", "reference already paid with another amount", "")
            return CardCharge(reference, answer)
        return CardCharge(reference, result_of(existing))
    if existing is not None and existing.status == Status.PENDING:
        return CardCharge(reference, result_of(existing))  # the first attempt's outcome is still coming
    gateway = get_card_gateway()
    if gateway is None:
        return CardCharge(reference, CardPaymentResult(False, "payment_failed", "no card gateway is configured", ""))
    attempt = attempts + 1
    key = f"{reference}-{attempt}"
    charge: GatewayCharge | None = None
    try:
        charge = gateway.create_order(
            reference=reference,
            amount=amount,
            installments=installments,
            token=token,
            idempotency_key=key,
            customer=customer,
            description=description or f"Pedido {reference}",
        )
        if charge.authorized:
            charge = gateway.capture(charge_id=charge.charge_id, amount=charge.amount, idempotency_key=f"{key}-capture")
    except GatewayRejected as exc:
        # The gateway refused the request itself (a malformed or expired token): nothing was charged.
        logger.warning("card gateway refused %s: %s", reference, exc)
        return CardCharge(reference, CardPaymentResult(False, "payment_failed", decline_message(""), ""))
    except GatewayUnavailable as exc:
        # Outcome unknown (timeout): recorded as pending; the webhook or the reconcile sweep decides.
        logger.warning("card gateway unavailable for %s: %s", reference, exc)
    except GatewayError as exc:
        logger.warning("card gateway error for %s: %s", reference, exc)
    return CardCharge(
        reference,
        None,
        charge,
        gateway.name,
        handler_id,
        amount,
        installments,
        hashlib.sha256(token.encode()).hexdigest(),
        attempt,
        absent=brief is not None and brief.status == "",
    )


def card_payment_record(charged: CardCharge, *, then: Then | None = None) -> CardPaymentResult:
    """Write what `card_payment_charge` learned; inside the caller's transaction when one is open (no
    savepoint: a failure here fails the caller's transaction, which then acts on nothing). `then`: the caller's
    write made in the payment row's INSERT when that row is new (`record`); `then.value` says whether it ran."""
    if charged.answered is not None:
        return charged.answered
    payment, _ = record_charged(charged, absent=charged.absent, then=then)
    return result_of(payment)


def record_charged(charged: CardCharge, *, absent: bool, then: Then | None = None) -> tuple[CardPayment, bool]:
    """`record` of what `card_payment_charge` learned from the gateway (its authorize answer)."""
    return record(
        reference=charged.reference,
        charge=charged.charge,
        gateway=charged.gateway,
        handler_id=charged.handler_id,
        amount=charged.amount,
        installments=charged.installments,
        fingerprint=charged.fingerprint,
        attempt=charged.attempt,
        source="authorize",
        absent=absent,
        then=then,
    )


# --- stored cards (subscriptions, issue 38) ----------------------------------------------------------------------


def card_wallet_store(*, name: str, email: str, tax_id: str, token: str, key: str) -> StoredCard:
    """Keep the card of `token` in the gateway's wallet of this customer (no transaction may be open: it calls the
    gateway). Raises GatewayRejected (the token was refused: nothing kept) or GatewayUnavailable / GatewayError
    (unknown: the caller asks again with the same `key`, which the gateway answers with its first result)."""
    if not isinstance(token, str) or not token or len(token) > 200:
        raise PaymentInputError("card_token", "is required")
    gateway = get_card_gateway()
    if gateway is None:
        raise GatewayUnavailable("no card gateway is configured")
    customer = CardCustomer(name=name, email=email, tax_id=tax_id)
    return gateway.store_card(customer=customer, token=token, idempotency_key=key)


def card_stored_charge(
    *, reference: str, amount: int, customer_id: str, card_id: str, attempt: int, description: str, first: bool
) -> CardCharge:
    """Charge a stored card once for `reference` (a subscription cycle), outside any transaction. Attempt `attempt`
    is sent with the Idempotency-Key `<reference>-<attempt>`: sending it again after a crash or a timeout gets the
    gateway's first answer, never a second charge. The caller records it (`settle.card_payment_record_unclaimed`:
    a final outcome is announced with `card_payment_settled`, as a webhook's would be).

    `answered` is set when the gateway refused the request itself (the card is gone or was never valid): nothing
    was charged and there is nothing to record."""
    gateway = get_card_gateway()
    if gateway is None:
        return CardCharge(reference, CardPaymentResult(False, "payment_failed", "no card gateway is configured", ""))
    handler_id = getattr(settings, "BCP_CARD_HANDLER_ID", "gpay")
    request = StoredCardCharge(
        reference=reference, amount=amount, customer_id=customer_id, card_id=card_id,
        idempotency_key=f"{reference}-{attempt}", description=description, first=first,
    )  # fmt: skip
    charge: GatewayCharge | None = None
    try:
        charge = gateway.charge_stored_card(request)
    except GatewayRejected as exc:
        logger.warning("card gateway refused the stored card charge %s: %s", reference, exc)
        return CardCharge(reference, CardPaymentResult(False, "payment_failed", decline_message(""), ""))
    except GatewayError as exc:  # unknown outcome: recorded pending; the webhook or the re-sent attempt decides
        logger.warning("card gateway unavailable for %s: %s", reference, exc)
    return CardCharge(reference, None, charge, gateway.name, handler_id, amount, 1, "", attempt)


def card_wallet_delete(*, customer_id: str, card_id: str) -> None:
    """Remove a stored card from the gateway's wallet (no transaction open). Raises GatewayError to retry later."""
    gateway = get_card_gateway()
    if gateway is None:
        return
    gateway.delete_card(customer_id=customer_id, card_id=card_id)


def card_payment_reached_gateway(payment_id: str) -> bool:
    """Whether the gateway ever answered a charge for this payment (False: the reconcile found nothing there, so
    nothing was charged; the caller may send the same attempt again instead of treating it as a decline)."""
    return CardPayment.objects.filter(payment_id=payment_id).exclude(gateway_reference="").exists()


def card_payment_message(reference: str) -> str:
    """What the buyer reads about the last outcome of `reference` (a decline's next step), or ""."""
    return CardPayment.objects.filter(reference=reference).values_list("message", flat=True).first() or ""
