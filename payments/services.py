"""Payments writes other apps call (contracts.md). Settlement lives in `settlement.py`, refunds in `refunds.py`.

PSP network calls are made outside row locks where possible: a charge is created at the PSP first
and inserted afterwards; a revoked charge is cancelled at the PSP by a task after commit.
"""

from __future__ import annotations

import logging
import re
from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from kernel.tasks import enqueue, enqueue_on_commit
from payments.boleto.service import (
    BoletoUnavailable,
    IssuedBoleto,
    boleto_issue,
    boleto_record,
    boleto_refund_mark_transferred,
    business_days_after,
)
from payments.brcode import BRCodeError, validate_psp_br_code
from payments.card.service import (
    CardCharge,
    CardPaymentBrief,
    card_payment_authorize,
    card_payment_brief,
    card_payment_brief_sql,
    card_payment_charge,
    card_payment_record,
)
from payments.card.settle import card_payment_reconcile, card_payment_record_unclaimed
from payments.due import DueTerms
from payments.exceptions import PaymentInputError
from payments.ids import new_txid
from payments.models import PixCharge
from payments.psp import PixPayer, PSPCharge, PSPInvalidResponse, get_psp
from payments.refunds import refund_request, refund_unplaced
from payments.settlement import pix_charge_expire, pix_charge_withdraw
from payments.timeline import record_event

__all__ = [
    "BoletoUnavailable",
    "CardCharge",
    "CardPaymentBrief",
    "IssuedBoleto",
    "boleto_issue",
    "boleto_record",
    "boleto_refund_mark_transferred",
    "business_days_after",
    "card_payment_authorize",
    "card_payment_brief",
    "card_payment_brief_sql",
    "card_payment_charge",
    "card_payment_reconcile",
    "card_payment_record",
    "card_payment_record_unclaimed",
    "pix_charge_ensure",
    "pix_charge_expire",
    "pix_charge_revoke_for_reference",
    "pix_charge_withdraw",
    "pix_due_charge_ensure",
    "refund_request",
    "refund_unplaced",
]

logger = logging.getLogger(__name__)
_REFERENCE = re.compile(r"^[A-Za-z0-9_\-]{1,64}$")


def _check_reference(reference: str) -> None:
    if not isinstance(reference, str) or not _REFERENCE.match(reference):
        raise PaymentInputError("reference", "must be 1..64 characters [A-Za-z0-9_-]")


def _check_amount(amount: int) -> None:
    if isinstance(amount, bool) or not isinstance(amount, int) or amount <= 0:
        raise PaymentInputError("amount", "must be a positive integer of centavos")


def _revoke_locked(charge: PixCharge, *, reason: str) -> None:
    """Mark an active (locked) charge revoked and cancel it at the PSP after commit."""
    charge.status = PixCharge.Status.REVOKED
    charge.status_reason = reason
    charge.save(update_fields=["status", "status_reason", "updated_at"])
    record_event(reference=charge.reference, kind="charge_revoked", txid=charge.txid, reason=reason)
    enqueue_on_commit("payments.tasks.revoke_pix_charge_at_psp", charge.txid)


def _tax_digits(payer_tax_id: str) -> str:
    # CPF: 11 digits; CNPJ: 14 characters, the first 12 may be letters (alphanumeric CNPJ, July 2026).
    digits = re.sub(r"[^0-9A-Z]", "", (payer_tax_id or "").upper())
    if payer_tax_id and not (re.fullmatch(r"\d{11}", digits) or re.fullmatch(r"[0-9A-Z]{12}\d{2}", digits)):
        raise PaymentInputError(
            "payer_tax_id", "must be a CPF (11 digits) or CNPJ (14 characters, alphanumeric allowed)"
        )
    return digits


def pix_charge_ensure(
    *, reference: str, amount: int, description: str = "", payer_name: str = "", payer_tax_id: str = ""
) -> PixCharge:
    """Return the active charge of `reference` when it has this amount; otherwise replace it.

    Raises PaymentInputError for bad arguments and `payments.psp.PSPUnavailable` (incl.
    PSPInvalidResponse for an invalid BR Code) / `PSPRejected` when the PSP cannot issue the charge:
    the caller answers `pix_psp_unavailable`.
    """
    _check_reference(reference)
    _check_amount(amount)
    if not settings.PIX_MIN_AMOUNT <= amount <= settings.PIX_MAX_AMOUNT:
        raise PaymentInputError("amount", f"must be between {settings.PIX_MIN_AMOUNT} and {settings.PIX_MAX_AMOUNT}")
    digits = _tax_digits(payer_tax_id)
    with transaction.atomic():
        active = PixCharge.objects.select_for_update().filter(reference=reference, status="active").first()
        if active is not None:
            if active.amount == amount and active.kind == PixCharge.Kind.COB and active.expires_at > timezone.now():
                return active
            _revoke_locked(active, reason="replaced" if active.amount != amount else "expired_locally")

    txid = new_txid()
    payer = PixPayer(name=payer_name[:200], tax_id=digits) if payer_name and digits else None
    message = (description or f"Pedido {reference}")[:140]
    psp_charge: PSPCharge = get_psp().create_charge(
        txid=txid,
        amount_cents=amount,
        expires_in=settings.PIX_EXPIRATION_SECONDS,
        payer=payer,
        message=message,
        extra=[("checkout", reference)],
    )
    return _record_charge(psp_charge, txid=txid, reference=reference, amount=amount, message=message)


def _record_charge(
    psp_charge: PSPCharge, *, txid: str, reference: str, amount: int, message: str, terms: DueTerms | None = None
) -> PixCharge:
    """Check what the PSP issued and insert it (the one-active-charge race is settled by the unique constraint)."""
    try:
        validate_psp_br_code(psp_charge.br_code, amount_cents=amount)
    except BRCodeError as exc:
        logger.error("PSP returned an invalid BR Code for txid %s: %s", txid, exc.reason)
        raise PSPInvalidResponse(f"invalid pixCopiaECola: {exc.reason}") from exc
    if psp_charge.amount_cents != amount or psp_charge.txid != txid:
        raise PSPInvalidResponse("PSP answered a cob with another txid or amount")
    try:
        with transaction.atomic():
            charge = PixCharge.objects.create(
                txid=txid,
                reference=reference,
                amount=amount,
                description=message,
                br_code=psp_charge.br_code,
                location=psp_charge.location,
                psp_created_at=psp_charge.created_at,
                expires_at=psp_charge.created_at + timedelta(seconds=psp_charge.expires_in),
                psp_payload=psp_charge.raw,
                kind=psp_charge.kind,
                due_date=terms.due_date if terms else None,
                due_terms=terms.as_json() if terms else {},
            )
            record_event(reference=reference, kind="charge_created", txid=txid, amount=amount, charge_kind=charge.kind)
    except IntegrityError:
        # A concurrent ensure won the race: drop ours at the PSP and return theirs.
        enqueue("payments.tasks.revoke_pix_charge_at_psp", txid)
        winner = PixCharge.objects.filter(reference=reference, status="active").first()
        if winner is None or winner.amount != amount:
            raise
        return winner
    return charge


def pix_due_charge_ensure(
    *,
    reference: str,
    amount: int,
    terms: DueTerms,
    payer_name: str,
    payer_tax_id: str,
    description: str = "",
) -> PixCharge:
    """The active Pix com vencimento (`cobv`) of `reference` for `amount` and `terms`, issued if needed.

    A cobv requires the debtor (CPF or CNPJ + name). Same contract as `pix_charge_ensure`: one active charge per
    reference (a different one is revoked and replaced), PaymentInputError for bad input, PSPUnavailable /
    PSPRejected when the PSP cannot issue it. May call the PSP: never inside a transaction holding a lock.
    """
    _check_reference(reference)
    _check_amount(amount)
    if not settings.PIX_MIN_AMOUNT <= amount <= settings.PIX_MAX_AMOUNT:
        raise PaymentInputError("amount", f"must be between {settings.PIX_MIN_AMOUNT} and {settings.PIX_MAX_AMOUNT}")
    digits = _tax_digits(payer_tax_id)
    if not digits or not (payer_name or "").strip():
        raise PaymentInputError("payer_tax_id", "a Pix com vencimento needs the debtor's CPF or CNPJ and name")
    for name, problem in terms.problems():
        raise PaymentInputError(name, problem)
    with transaction.atomic():
        active = PixCharge.objects.select_for_update().filter(reference=reference, status="active").first()
        if active is not None:
            same = active.kind == PixCharge.Kind.COBV and active.amount == amount and active.terms == terms
            if same and active.expires_at > timezone.now():
                return active
            _revoke_locked(active, reason="replaced")
    txid = new_txid()
    message = (description or f"Pedido {reference}")[:140]
    psp_charge = get_psp().create_due_charge(
        txid=txid,
        amount_cents=amount,
        terms=terms,
        payer=PixPayer(name=payer_name.strip()[:200], tax_id=digits),
        message=message,
        extra=[("checkout", reference)],
    )
    if psp_charge.kind != "cobv" or psp_charge.due != terms:
        raise PSPInvalidResponse("PSP answered a cobv with other terms")
    return _record_charge(psp_charge, txid=txid, reference=reference, amount=amount, message=message, terms=terms)


def pix_charge_revoke_for_reference(*, reference: str) -> None:
    """Revoke the active charge of `reference` (instrument switched away, checkout canceled). Idempotent."""
    with transaction.atomic():
        active = PixCharge.objects.select_for_update().filter(reference=reference, status="active").first()
        if active is not None:
            _revoke_locked(active, reason="canceled")
