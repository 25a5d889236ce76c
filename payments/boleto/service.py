"""Boleto through the card gateway: issue, settle exactly once, reconcile, expire, refund by bank transfer.

The gateway shape is Pagar.me API v5 (`POST /orders` with `payment_method: "boleto"`,
https://docs.pagar.me/reference/boleto-1; webhooks such as `charge.paid`,
https://docs.pagar.me/reference/exemplo-de-webhook-1). Every gateway call runs with no transaction open:

- `boleto_issue` calls the gateway (Idempotency-Key `<reference>-boleto-<attempt>`, so a retry after a timeout
  answers the same boleto) and returns what it said, unrecorded; the caller records it with `boleto_record` in
  the transaction that acts on it (the shop attaches it to the checkout in the same commit). A process killed in
  between leaves a boleto nobody was shown: nobody can pay it, and it lapses at the gateway on its due date.
- `boleto_settle_confirmed` is where every path that learns a charge's state ends (the card webhook inbox, the
  reconcile sweep, the expiry's last look): the boleto row is locked and only moves forward, and the
  `boleto_settled` signal is sent inside that transaction, so the shop's order is placed in the same commit
  as the row turns `paid`, once, however many times and in whatever order the gateway reports it.
- `boleto_expire_due`: unpaid past the due date + `BOLETO_EXPIRY_GRACE_DAYS` (a boleto paid on its due date
  is reported by the bank the next business days) → a last look, then canceled at the gateway and announced
  `expired` (the shop gives back the stock and coupon uses).
- Refunds: a boleto has no card to reverse to, and for gateway clients Pagar.me's cancel of a paid boleto
  moves no money (https://docs.pagar.me/reference/cancelar-cobrança). So a refund is recorded
  `awaiting_transfer` and staff complete it after transferring to the buyer (`boleto_refund_mark_transferred`);
  `refund_finished` follows once.
"""

from __future__ import annotations

import functools
import logging
from dataclasses import dataclass
from datetime import date, datetime, timedelta

import holidays
from django.conf import settings
from django.db import transaction
from django.db.models import Q, Sum
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from kernel.business_days import add_business_days
from kernel.ids import new_public_id
from kernel.rows import insert_once
from payments.boleto.codes import barcode_from_line, digits
from payments.boleto.models import BoletoPayment, BoletoRefund
from payments.card.gateway import PAID, BoletoRequest, CardCustomer, GatewayCharge, GatewayError, GatewayNotFound
from payments.card.service import get_card_gateway
from payments.due import local_date
from payments.exceptions import PaymentInputError, refund_fits, refund_replayed
from payments.signals import boleto_settled, refund_finished_on_commit
from payments.timeline import new_event, record_event

logger = logging.getLogger(__name__)
Status = BoletoPayment.Status
PAID_STATES = frozenset({PAID, "overpaid"})  # Pagar.me: more than the amount arrived, still a paid boleto
DEAD_STATES = frozenset({"canceled", "failed"})
MIN_AMOUNT = 500  # R$ 5,00: below it the bank's fee eats the sale (BOLETO_MIN_AMOUNT overrides)


class BoletoUnavailable(Exception):
    """The gateway could not issue the boleto (down, refused, or answered without a usable line)."""


@dataclass(frozen=True)
class IssuedBoleto:
    """What the gateway answered to `boleto_issue`, not recorded yet (`boleto_record` writes it)."""

    reference: str
    handler_id: str
    amount: int
    due_date: date
    attempt: int
    gateway: str
    charge: GatewayCharge
    existing: BoletoPayment | None = None  # already recorded for this reference and amount: nothing to write


def brasilia_today(now: datetime | None = None) -> date:
    return local_date(now or timezone.now())


@functools.lru_cache(maxsize=8)
def _banking_holidays(year: int) -> frozenset[date]:
    # B3's calendar ("BVMF"): the national holidays plus Carnival Monday and Tuesday and Corpus Christi, the days
    # without banking nationwide (FEBRABAN's calendar), and Dec 24 and 31 (half a banking day, none to the
    # public): counting them as holidays only ever gives the buyer a day more.
    return frozenset(holidays.financial_holidays("BVMF", years=year))


def business_days_after(start: date, days: int) -> date:
    """`days` business days after `start`: weekends and banking holidays skipped, so the buyer has the days the
    store promises to pay at a bank (a boleto due on a holiday is payable the next business day anyway)."""
    return add_business_days(start, days, _banking_holidays)


def min_amount() -> int:
    return int(getattr(settings, "BOLETO_MIN_AMOUNT", MIN_AMOUNT))


def expiry_grace_days() -> int:
    return int(getattr(settings, "BOLETO_EXPIRY_GRACE_DAYS", 3))


def boleto_live_for_reference(reference: str) -> BoletoPayment | None:
    """The reference's boleto waiting for payment or paid (at most one, by constraint), else None."""
    return BoletoPayment.objects.filter(reference=reference).exclude(status=Status.EXPIRED).first()


def boleto_latest_for_reference(reference: str) -> BoletoPayment | None:
    return BoletoPayment.objects.filter(reference=reference).order_by("-attempt").first()


def boleto_issue(
    *,
    reference: str,
    amount: int,
    due_date: date,
    customer: CardCustomer,
    handler_id: str,
    description: str = "",
    instructions: str = "",
) -> IssuedBoleto:
    """Issue a boleto at the gateway (no transaction may be open). Raises PaymentInputError naming the field
    (amount, the payer's tax_id, a past due date) or BoletoUnavailable."""
    if isinstance(amount, bool) or not isinstance(amount, int) or amount <= 0:
        raise PaymentInputError("amount", "must be a positive integer of centavos")
    if amount < min_amount():
        raise PaymentInputError("amount", f"below the boleto minimum ({min_amount()} centavos)")
    if len(digits(customer.tax_id)) not in (11, 14):
        raise PaymentInputError("tax_id", "a registered boleto needs the payer's CPF or CNPJ")
    if due_date < brasilia_today():
        raise PaymentInputError("due_date", "is in the past")
    known = list(BoletoPayment.objects.filter(reference=reference))  # one read: the live one and the attempts
    live = next((row for row in known if row.status != Status.EXPIRED), None)
    if live is not None and live.status == Status.PAID:
        # Paid for a checkout that no longer waited (its refund by transfer is recorded): never a second wait.
        raise BoletoUnavailable(f"{reference} already has a paid boleto")
    if live is not None:
        if live.amount == amount:
            return IssuedBoleto(reference, handler_id, amount, live.due_date, live.attempt, live.gateway,
                                GatewayCharge(live.gateway_charge_id, live.gateway_order_id, reference, "", amount),
                                existing=live)  # fmt: skip
        raise PaymentInputError("amount", "an open boleto of another amount exists for this reference")
    gateway = get_card_gateway()
    if gateway is None:
        raise BoletoUnavailable("no card gateway is configured")
    attempt = len(known) + 1
    request = BoletoRequest(
        reference=reference,
        amount=amount,
        due_date=due_date,
        instructions=instructions or getattr(settings, "BOLETO_INSTRUCTIONS", "") or _default_instructions(),
        customer=customer,
        description=description or f"Pedido {reference}",
        idempotency_key=f"{reference}-boleto-{attempt}",
    )
    try:
        charge = gateway.create_boleto_order(request)
        barcode_from_line(charge.boleto_line)  # a line whose check digits fail is no boleto to show a buyer
    except (GatewayError, ValueError) as exc:
        logger.warning("boleto could not be issued for %s: %s", reference, exc)
        raise BoletoUnavailable(str(exc)) from exc
    if charge.amount != amount or charge.status in DEAD_STATES:
        raise BoletoUnavailable(f"gateway answered {charge.status} for {charge.amount}")
    return IssuedBoleto(reference, handler_id, amount, due_date, attempt, gateway.name, charge)


def _default_instructions() -> str:
    return "Não receber após o vencimento. Pagamento confirmado em até 3 dias úteis."


def boleto_record(issued: IssuedBoleto) -> BoletoPayment:
    """Write the issued boleto (inside the caller's transaction); the same boleto recorded twice is one row."""
    if issued.existing is not None:
        return issued.existing
    charge = issued.charge
    payment = BoletoPayment(
        payment_id=new_public_id("bolpay"),
        reference=issued.reference,
        attempt=issued.attempt,
        handler_id=issued.handler_id,
        amount=issued.amount,
        status=Status.ISSUED,
        due_date=issued.due_date,
        gateway=issued.gateway,
        gateway_charge_id=charge.charge_id,
        gateway_order_id=charge.order_id,
        gateway_status=f"{charge.status}/{charge.transaction_status}"[:40],
        line=digits(charge.boleto_line),
        pdf_url=charge.boleto_pdf,
        qr_code=charge.boleto_qr_code,
        nosso_numero=charge.boleto_nosso_numero,
    )
    event = new_event(reference=issued.reference, kind="boleto_issued", amount=issued.amount,
                      charge=charge.charge_id, due_date=issued.due_date.isoformat())  # fmt: skip
    # The row and its event in one statement; the same gateway charge recorded before is that row.
    if not insert_once(payment, conflict=("gateway_charge_id",), event=event):
        return BoletoPayment.objects.get(gateway_charge_id=charge.charge_id)
    return payment


def _announce(payment: BoletoPayment, status: str) -> str:
    """Inside the settling transaction: tell the shop; "rejected" when a receiver refused a payment."""
    answers = boleto_settled.send(
        sender=BoletoPayment, reference=payment.reference, payment_id=payment.payment_id, status=status,
        amount=payment.amount, paid_amount=payment.paid_amount,
    )  # fmt: skip
    if status == Status.PAID and any(answer == "rejected" for _, answer in answers):
        boleto_refund_automatic(payment=payment, reason="Pedido não pôde ser concluído")
        return "rejected"
    return "accepted"


def boleto_settle_confirmed(*, charge: GatewayCharge, source: str) -> str:
    """Record a boleto charge as the gateway reports it (read back by us, never a webhook body); once.

    "paid" (announced now), "duplicate" (paid before), "expired" (canceled/failed at the gateway: announced),
    "underpaid" (less than the amount arrived: staff look, nothing placed), "pending", or "unknown".
    """
    with transaction.atomic():
        payment = BoletoPayment.objects.select_for_update().filter(gateway_charge_id=charge.charge_id).first()
        if payment is None:
            return "unknown"
        if payment.status == Status.PAID:
            return "duplicate"
        payment.gateway_status = f"{charge.status}/{charge.transaction_status}"[:40]
        if charge.status in PAID_STATES and (charge.paid_amount or charge.amount) >= payment.amount:
            payment.status = Status.PAID
            payment.paid_amount = charge.paid_amount or charge.amount
            payment.paid_at = parse_datetime(charge.paid_at) if charge.paid_at else None
            payment.paid_at = payment.paid_at or timezone.now()
            payment.save()
            record_event(reference=payment.reference, kind="boleto_paid", amount=payment.paid_amount,
                         charge=charge.charge_id, source=source)  # fmt: skip
            return "paid" if _announce(payment, Status.PAID) == "accepted" else "rejected"
        if charge.status == "underpaid":
            payment.save(update_fields=["gateway_status", "updated_at"])
            record_event(reference=payment.reference, kind="boleto_underpaid", amount=charge.paid_amount,
                         charge=charge.charge_id, source=source)  # fmt: skip
            return "underpaid"
        if charge.status in DEAD_STATES and payment.status == Status.ISSUED:
            payment.status = Status.EXPIRED
            payment.save()
            record_event(reference=payment.reference, kind="boleto_expired", charge=charge.charge_id, source=source)
            _announce(payment, Status.EXPIRED)
            return "expired"
        payment.save(update_fields=["gateway_status", "updated_at"])
        return "pending" if payment.status == Status.ISSUED else str(payment.status)


def boleto_reconcile(*, payment_id: str) -> str | None:
    """Ask the gateway what became of one boleto and record it; None when it cannot be asked."""
    payment = BoletoPayment.objects.filter(payment_id=payment_id).first()
    gateway = get_card_gateway()
    if payment is None or gateway is None:
        return None
    try:
        charge = gateway.get_charge(payment.gateway_charge_id)
    except GatewayError as exc:
        logger.warning("boleto reconcile: gateway unavailable for %s: %s", payment_id, exc)
        return None
    return boleto_settle_confirmed(charge=charge, source="reconcile")


def boleto_reconcile_due(*, now: datetime | None = None, limit: int = 100) -> int:
    """Beat: boletos waiting asked at the gateway (a lost `charge.paid` webhook): every 10 minutes in their first
    hour (a buyer paying by Pix on the boleto at once), then hourly (banks report boletos in batches, for days)."""
    now = now or timezone.now()
    fresh = Q(created_at__gte=now - timedelta(hours=1), updated_at__lte=now - timedelta(minutes=10))
    due = fresh | Q(updated_at__lte=now - timedelta(hours=1))
    ids = BoletoPayment.objects.filter(due, status=Status.ISSUED)
    settled = 0
    for payment_id in list(ids.order_by("updated_at").values_list("payment_id", flat=True)[:limit]):
        settled += int(boleto_reconcile(payment_id=payment_id) in ("paid", "rejected", "expired"))
    return settled


def boleto_expire_due(*, now: datetime | None = None, limit: int = 100) -> int:
    """Beat: boletos unpaid after their due date + `BOLETO_EXPIRY_GRACE_DAYS` (Brasília calendar): a last look
    at the gateway (paid → settled), else canceled there (no longer payable) and announced `expired`."""
    today = brasilia_today(now)
    last_due = today - timedelta(days=expiry_grace_days() + 1)  # due + grace days have fully passed
    ids = BoletoPayment.objects.filter(status=Status.ISSUED, due_date__lte=last_due).order_by("due_date")
    expired = 0
    for payment in list(ids[:limit]):
        expired += int(boleto_expire(payment_id=payment.payment_id) == "expired")
    return expired


def boleto_expire(*, payment_id: str) -> str | None:
    """One boleto of `boleto_expire_due`; None when the gateway cannot be asked (tried again next run)."""
    payment = BoletoPayment.objects.filter(payment_id=payment_id, status=Status.ISSUED).first()
    gateway = get_card_gateway()
    if payment is None or gateway is None:
        return None
    try:
        charge = gateway.get_charge(payment.gateway_charge_id)
        if charge.status not in PAID_STATES and charge.status not in DEAD_STATES:
            charge = gateway.cancel(charge_id=payment.gateway_charge_id, idempotency_key=f"{payment_id}-cancel")
    except GatewayNotFound:
        charge = GatewayCharge(payment.gateway_charge_id, payment.gateway_order_id, payment.reference, "canceled",
                               payment.amount)  # fmt: skip
    except GatewayError as exc:
        logger.warning("boleto expiry: gateway unavailable for %s: %s", payment_id, exc)
        return None
    return boleto_settle_confirmed(charge=charge, source="expiry")


# --- refunds (by bank transfer, by staff) ---------------------------------------------------------------------


def boleto_refund_request(*, reference: str, amount: int, refund_id: str, reason: str) -> BoletoRefund | None:
    """Inside the caller's transaction: a refund of the paid boleto of `reference`, waiting for staff's bank
    transfer; idempotent on `refund_id`. None when the reference has no paid boleto (not ours to refund)."""
    existing = refund_replayed(BoletoRefund, refund_id=refund_id, reference=reference, amount=amount)
    if existing is not None:
        return existing
    payment = BoletoPayment.objects.select_for_update().filter(reference=reference, status=Status.PAID).first()
    if payment is None:
        return None
    asked = payment.refunds.exclude(status=BoletoRefund.Status.FAILED).aggregate(total=Sum("amount"))["total"] or 0
    available = payment.paid_amount - int(asked)
    refund_fits(amount, available)
    refund = BoletoRefund.objects.create(
        refund_id=refund_id, payment=payment, reference=reference, amount=amount, reason=(reason or "Devolução")[:140]
    )
    record_event(reference=reference, kind="boleto_refund_requested", refund_id=refund_id, amount=amount)
    return refund


def boleto_refund_automatic(*, payment: BoletoPayment, reason: str) -> BoletoRefund:
    """A boleto paid for a checkout that no longer waits for it: all of it goes back by transfer (staff)."""
    refund, created = BoletoRefund.objects.get_or_create(
        refund_id=f"auto_{payment.payment_id}",
        defaults={
            "payment": payment,
            "reference": payment.reference,
            "amount": payment.paid_amount,
            "kind": BoletoRefund.Kind.AUTOMATIC,
            "reason": reason[:140],
        },
    )
    if created:
        record_event(reference=payment.reference, kind="boleto_refund_automatic", amount=refund.amount, why=reason)
    return refund


def boleto_refund_mark_transferred(*, refund_id: str, note: str, actor: str) -> BoletoRefund:
    """Staff transferred the money back to the buyer: the refund is completed, once (a second call changes
    nothing). `note` identifies the transfer (bank, date, the Pix's id); PaymentInputError names the field."""
    note = (note or "").strip()
    if not 4 <= len(note) <= 200:
        raise PaymentInputError("transfer_note", "describe the transfer in 4 to 200 characters")
    with transaction.atomic():
        refund = BoletoRefund.objects.select_for_update().filter(refund_id=refund_id).first()
        if refund is None:
            raise PaymentInputError("refund_id", "unknown refund")
        if refund.status != BoletoRefund.Status.AWAITING_TRANSFER:
            return refund
        payment = BoletoPayment.objects.select_for_update().get(pk=refund.payment_id)
        refund.status = BoletoRefund.Status.COMPLETED
        refund.transfer_note, refund.finished_by, refund.finished_at = note, actor[:150], timezone.now()
        refund.save()
        payment.refunded_amount = min(payment.paid_amount, payment.refunded_amount + refund.amount)
        payment.save(update_fields=["refunded_amount", "updated_at"])
        record_event(reference=refund.reference, kind="boleto_refund_completed", refund_id=refund.refund_id,
                     amount=refund.amount, actor=actor)  # fmt: skip
        refund_finished_on_commit(refund, "completed")
    return refund
