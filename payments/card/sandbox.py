"""The sandbox card gateway: a development and test stand-in answering Pagar.me v5's objects in-process.

Its charges are rows (`SandboxCardCharge`), so authorize → capture → refund → lookup by order code
behave as at the gateway, across processes. Tokens:

- `success_token` approves, `fail_token` is declined with return code 51 (the BCP test tokens);
- `tok_sbx_<outcome>_<last4>_<random>` come from the sandbox tokenizer in the buyer's browser
  (`static/shop/card_tokenizer.js`): outcome `ok` approves, a two-character ABECS code (`51`, `54`,
  `82`, `05`) is declined with it. The card number itself never leaves the browser.

Stored cards (subscriptions, issue 38) need no row: the sandbox's card id carries the token's outcome and last
four digits (`card_sbx_<outcome>_<last4>_<random>`), so charging it each cycle behaves as the card would.
"""

from __future__ import annotations

import hashlib
import re
import secrets

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.db.models import F
from django.urls import reverse
from django.utils import timezone

from kernel.rows import insert_once, new_row
from payments.boleto.codes import barcode_build, line_from_barcode
from payments.card.gateway import (
    AUTHORIZED,
    CANCELED,
    FAILED,
    PAID,
    PENDING,
    BoletoRequest,
    CardCustomer,
    GatewayCharge,
    GatewayNotFound,
    GatewayRejected,
    StoredCard,
    StoredCardCharge,
)
from payments.card.models import SandboxCardCharge

_BROWSER_TOKEN = re.compile(r"^tok_sbx_(?P<outcome>ok|[0-9A-Z]{2})_(?P<last4>\d{4})_[0-9a-f]{8,32}$")
UNKNOWN_TOKEN_CODE = "14"  # noqa: S105 - ABECS "invalid card", not a secret
_STORED_CARD = re.compile(r"^card_sbx_(?P<outcome>ok|[0-9A-Z]{2})_(?P<last4>\d{4})_[0-9a-f]{8,32}$")


def _outcome(token: str) -> tuple[str, str]:
    """(return code, last four digits): code "00" approves."""
    if token == "success_token":  # noqa: S105 - public test token
        return "00", "1111"
    if token == "fail_token":  # noqa: S105 - public test token
        return "51", "0002"
    match = _BROWSER_TOKEN.match(token)
    if match is None:
        return UNKNOWN_TOKEN_CODE, ""
    return ("00" if match["outcome"] == "ok" else match["outcome"]), match["last4"]


def _charge(row: SandboxCardCharge) -> GatewayCharge:
    if row.payment_method == "boleto":
        return _boleto_charge(row)
    return GatewayCharge(
        charge_id=row.charge_id,
        order_id=row.order_id,
        code=row.code,
        status=row.status,
        amount=row.amount,
        paid_amount=row.paid_amount,
        canceled_amount=row.canceled_amount,
        installments=row.installments,
        transaction_status=row.transaction_status,
        return_code=row.acquirer_return_code,
        return_message="Transação aprovada" if row.acquirer_return_code == "00" else "Transação não autorizada",
        card_brand=row.card_brand,
        card_last_digits=row.card_last_digits,
    )


def _boleto_charge(row: SandboxCardCharge) -> GatewayCharge:
    """A sandbox boleto as Pagar.me reports one: the PDF is the sandbox's own page of it."""
    return GatewayCharge(
        charge_id=row.charge_id,
        order_id=row.order_id,
        code=row.code,
        status=row.status,
        amount=row.amount,
        paid_amount=row.paid_amount,
        canceled_amount=row.canceled_amount,
        transaction_status=row.transaction_status,
        payment_method="boleto",
        boleto_line=row.boleto_line,
        boleto_pdf=settings.BCP_PUBLIC_URL + reverse("sandbox-gateway-boleto", args=[row.charge_id]),
        boleto_due_at=f"{row.due_date.isoformat()}T23:59:59-03:00" if row.due_date else "",
        boleto_nosso_numero=row.order_id[-10:],
        paid_at=row.paid_at.isoformat() if row.paid_at else "",
    )


def sandbox_boleto_pay(charge_id: str) -> GatewayCharge:
    """The bank reports the sandbox boleto paid (the "Pagar boleto no sandbox" button); once."""
    with transaction.atomic():
        row = SandboxCardCharge.objects.select_for_update().filter(charge_id=charge_id, payment_method="boleto").first()
        if row is None:
            raise GatewayNotFound(f"charge {charge_id}")
        if row.status == PENDING:
            row.status, row.transaction_status, row.paid_amount = PAID, "paid", row.amount
            row.paid_at = timezone.now()
            row.save(update_fields=["status", "transaction_status", "paid_amount", "paid_at"])
    return _charge(row)


def _captured(charge_id: str, amount: int) -> SandboxCardCharge | None:
    """Capture an authorized charge in one statement; the captured row, or None when none was authorized."""
    table = SandboxCardCharge._meta.db_table
    names = [field.attname for field in SandboxCardCharge._meta.concrete_fields]
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {table} SET status = %s, transaction_status = %s, paid_amount = LEAST(%s, amount)"  # noqa: S608
            f" WHERE charge_id = %s AND status = %s AND transaction_status = %s RETURNING {', '.join(names)}",
            [PAID, "captured", amount, charge_id, PENDING, AUTHORIZED],
        )
        found = cursor.fetchone()
    return None if found is None else SandboxCardCharge.from_db(connection.alias, names, found)


class SandboxCardGateway:
    name = "sandbox"

    def create_boleto_order(self, request: BoletoRequest) -> GatewayCharge:
        existing = SandboxCardCharge.objects.filter(idempotency_key=request.idempotency_key).first()
        if existing is not None:
            return _charge(existing)  # an Idempotency-Key replay answers the first result
        free = f"{secrets.randbelow(10**25):025d}"
        barcode = barcode_build(bank="237", amount=request.amount, due=request.due_date, free_field=free)
        line = line_from_barcode(barcode)
        try:
            row = SandboxCardCharge.objects.create(
                charge_id=f"ch_{secrets.token_hex(8)}",
                order_id=f"or_{secrets.token_hex(8)}",
                code=request.reference,
                idempotency_key=request.idempotency_key,
                amount=request.amount,
                status=PENDING,
                transaction_status="generated",
                payment_method="boleto",
                due_date=request.due_date,
                boleto_line=line,
            )
        except IntegrityError:
            row = SandboxCardCharge.objects.get(idempotency_key=request.idempotency_key)
        return _charge(row)

    def cancel(self, *, charge_id: str, idempotency_key: str) -> GatewayCharge:
        with transaction.atomic():
            row = SandboxCardCharge.objects.select_for_update().filter(charge_id=charge_id).first()
            if row is None:
                raise GatewayNotFound(f"charge {charge_id}")
            if row.status == PENDING:
                row.status, row.transaction_status = CANCELED, "canceled"
                row.save(update_fields=["status", "transaction_status"])
            elif row.status != CANCELED:
                raise GatewayRejected(412, f"charge {charge_id} is {row.status}: nothing to cancel")
        return _charge(row)

    def create_order(
        self,
        *,
        reference: str,
        amount: int,
        installments: int,
        token: str,
        idempotency_key: str,
        customer: CardCustomer | None,
        description: str,
    ) -> GatewayCharge:
        code, last4 = _outcome(token)
        row = new_row(
            SandboxCardCharge,
            charge_id=f"ch_{secrets.token_hex(8)}",
            order_id=f"or_{secrets.token_hex(8)}",
            code=reference,
            idempotency_key=idempotency_key,
            amount=amount,
            installments=installments,
            status=PENDING if code == "00" else FAILED,
            transaction_status=AUTHORIZED if code == "00" else "not_authorized",
            acquirer_return_code=code,
            card_brand="visa" if last4 else "",
            card_last_digits=last4,
        )
        # One statement (issue 34: the sandbox stands in for a network call, so it should cost the web process
        # little): the unique key decides, and a replay of the Idempotency-Key answers the first result.
        if insert_once(row, conflict=("idempotency_key",)):
            return _charge(row)
        return _charge(SandboxCardCharge.objects.get(idempotency_key=idempotency_key))

    def capture(self, *, charge_id: str, amount: int, idempotency_key: str) -> GatewayCharge:
        # The usual case is one conditional UPDATE (no transaction, no read first): it captures only an
        # authorized charge, so a concurrent capture or cancel leaves it nothing to match.
        captured = _captured(charge_id, amount)
        if captured is not None:
            return _charge(captured)
        row = SandboxCardCharge.objects.filter(charge_id=charge_id).first()
        if row is None:
            raise GatewayNotFound(f"charge {charge_id}")
        if row.status != PAID:
            raise GatewayRejected(412, f"charge {charge_id} is {row.status}: nothing to capture")
        return _charge(row)  # captured before: the gateway answers the capture again

    def refund(self, *, charge_id: str, amount: int, idempotency_key: str) -> GatewayCharge:
        with transaction.atomic():
            row = SandboxCardCharge.objects.select_for_update().filter(charge_id=charge_id).first()
            if row is None:
                raise GatewayNotFound(f"charge {charge_id}")
            if row.status not in (PAID, CANCELED) or row.canceled_amount + amount > row.paid_amount:
                raise GatewayRejected(412, f"charge {charge_id}: cannot refund {amount}")
            SandboxCardCharge.objects.filter(pk=row.pk).update(canceled_amount=F("canceled_amount") + amount)
            row.refresh_from_db()
            if row.canceled_amount >= row.paid_amount:
                row.status, row.transaction_status = CANCELED, "refunded"
            else:
                row.transaction_status = "partial_refunded"
            row.save(update_fields=["status", "transaction_status"])
        return _charge(row)

    def get_charge(self, charge_id: str) -> GatewayCharge:
        row = SandboxCardCharge.objects.filter(charge_id=charge_id).first()
        if row is None:
            raise GatewayNotFound(f"charge {charge_id}")
        return _charge(row)

    def find_charges(self, *, reference: str) -> list[GatewayCharge]:
        return [_charge(row) for row in SandboxCardCharge.objects.filter(code=reference).order_by("-created_at", "-id")]

    def store_card(self, *, customer: CardCustomer, token: str, idempotency_key: str) -> StoredCard:
        code, last4 = _outcome(token)
        if not last4:
            raise GatewayRejected(422, "card token invalid")  # as the gateway refuses an unknown token
        outcome = "ok" if code == "00" else code
        customer_id = "cus_sbx_" + hashlib.sha256(customer.email.lower().encode()).hexdigest()[:16]
        card_id = f"card_sbx_{outcome}_{last4}_{secrets.token_hex(6)}"
        return StoredCard(customer_id=customer_id, card_id=card_id, brand="visa", last4=last4)

    def charge_stored_card(self, request: StoredCardCharge) -> GatewayCharge:
        existing = SandboxCardCharge.objects.filter(idempotency_key=request.idempotency_key).first()
        if existing is not None:
            return _charge(existing)
        match = _STORED_CARD.match(request.card_id)
        if match is None:
            raise GatewayRejected(422, f"card {request.card_id} unknown")
        code = "00" if match["outcome"] == "ok" else match["outcome"]
        try:
            row = SandboxCardCharge.objects.create(
                charge_id=f"ch_{secrets.token_hex(8)}",
                order_id=f"or_{secrets.token_hex(8)}",
                code=request.reference,
                idempotency_key=request.idempotency_key,
                amount=request.amount,
                status=PAID if code == "00" else FAILED,
                transaction_status="captured" if code == "00" else "not_authorized",
                paid_amount=request.amount if code == "00" else 0,
                acquirer_return_code=code,
                card_brand="visa",
                card_last_digits=match["last4"],
            )
        except IntegrityError:
            row = SandboxCardCharge.objects.get(idempotency_key=request.idempotency_key)
        return _charge(row)

    def delete_card(self, *, customer_id: str, card_id: str) -> None:
        return  # nothing is kept for a sandbox card
