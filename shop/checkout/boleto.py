"""Paying a checkout by boleto (issue 37): the instrument check, and complete's steps 2–3 for a boleto.

Complete runs as for any instrument (shop/checkout/complete.py): step 1 reserves stock and coupon uses and
records `complete_in_progress` with no payment attached. Step 2 issues the boleto at the card gateway with no
transaction open (`payments.services.boleto_issue`); step 3 (`_finish`), one short transaction, records it
and attaches it to the checkout (`payment_txid` = the boleto's payment id, message `boleto_awaiting_payment`),
or gives the stock back when the gateway could not issue it.

The checkout then waits, holding its stock, until the boleto is paid (the gateway webhook →
`checkout_settle_boleto` places the order, shop/checkout/settle.py) or expires unpaid (the payments sweep
cancels it at the gateway → the same receiver releases the stock and coupons, `boleto_expired`). Its
`expires_at` is set a day past the boleto's own expiry, so the checkout expiry never beats it.

Crash states: killed during step 2, the checkout stays `complete_in_progress` with no payment attached and
`checkout_pending_due` releases it (a boleto issued but never recorded was never shown: nobody can pay it,
and it lapses at the gateway on its due date).
"""

from __future__ import annotations

import logging
from datetime import datetime, time, timedelta

from django.conf import settings
from django.db import transaction
from django.utils.translation import gettext as _

from payments.boleto.service import brasilia_today, expiry_grace_days, min_amount
from payments.card.gateway import CardCustomer
from payments.due import BRASILIA
from payments.exceptions import PaymentInputError
from payments.services import BoletoUnavailable, IssuedBoleto, boleto_issue, boleto_record, business_days_after
from shop.checkout.boleto_mail import boleto_notice_issued
from shop.checkout.charge import INSTRUMENT_PATH, charge_description, err, save_status, unreserve
from shop.checkout.core import lock, reload, retried_on_deadlock, speak, stored_messages
from shop.checkout.types import STATUS_IN_PROGRESS, STATUS_READY, CheckoutMessage, CheckoutResult
from shop.models import Checkout
from shop.store.services import store_get

logger = logging.getLogger(__name__)


def boleto_handler_id() -> str:
    return getattr(settings, "BCP_BOLETO_HANDLER_ID", "br.dev.bcp.boleto")


def boleto_offered() -> bool:
    """The store gives a due date and a gateway answers (the card gateway issues boletos)."""
    gateway = bool(getattr(settings, "PAYMENTS_CARD_GATEWAY", "")) or bool(settings.BCP_PIX_SANDBOX)
    return bool(getattr(settings, "BCP_BOLETO_ENABLED", True)) and gateway and store_get().boleto_due_business_days > 0


def is_boleto(instrument: dict[str, object] | None) -> bool:
    return bool(instrument) and (instrument or {}).get("type") == "boleto"


def boleto_problem(checkout: Checkout) -> CheckoutMessage | None:
    """What stops this checkout from being paid by boleto before anything is reserved (a specific message
    naming the field), or None."""
    if not boleto_offered():
        return err("payment_failed", _("Esta loja não oferece boleto no momento."), f"{INSTRUMENT_PATH}.handler_id")
    if len("".join(ch for ch in checkout.buyer_tax_id if ch.isdigit())) not in (11, 14):
        return err("field_required", _("Informe o CPF ou CNPJ do comprador para pagar com boleto."), "$.buyer.tax_id")
    if checkout.total_amount < min_amount():
        return err("payment_failed", _("O boleto não está disponível para este valor."), INSTRUMENT_PATH)
    return None


def complete_boleto(begun: Checkout) -> CheckoutResult:
    """Steps 2 and 3 of complete for a boleto (`begun`: the checkout step 1 left `complete_in_progress`)."""
    due = business_days_after(brasilia_today(), store_get().boleto_due_business_days)
    buyer = " ".join(part for part in (begun.buyer_first_name, begun.buyer_last_name) if part)
    problem: CheckoutMessage | None = None
    issued: IssuedBoleto | None = None
    try:
        issued = boleto_issue(
            reference=begun.public_id,
            amount=begun.total_amount,
            due_date=due,
            customer=CardCustomer(name=buyer, email=begun.buyer_email, tax_id=begun.buyer_tax_id),
            handler_id=boleto_handler_id(),
            description=charge_description(begun),
        )
    except PaymentInputError as exc:
        logger.info("boleto refused for %s: %s", begun.public_id, exc)
        path = "$.buyer.tax_id" if exc.field == "tax_id" else INSTRUMENT_PATH
        problem = err("payment_failed", _("Não foi possível emitir o boleto com estes dados; revise o pedido."), path)
    except BoletoUnavailable:
        problem = None
    return _finish(begun.public_id, issued, problem)


@retried_on_deadlock
def _finish(checkout_id: str, issued: IssuedBoleto | None, problem: CheckoutMessage | None) -> CheckoutResult:
    with transaction.atomic():
        checkout = lock(checkout_id)
        speak(checkout.language)
        waiting = checkout.status == STATUS_IN_PROGRESS and checkout.stock_reserved and not checkout.payment_txid
        if not waiting:
            return _refreshed(checkout_id)  # the pending sweep finished it meanwhile: nobody was shown this boleto
        if issued is None or issued.amount != checkout.total_amount:
            unreserve(checkout, list(checkout.lines.all()))
            save_status(checkout, STATUS_READY, "boleto_unavailable")
            down = problem or err(
                "boleto_unavailable", _("Boleto indisponível no momento; tente novamente ou pague com Pix."),
                INSTRUMENT_PATH,
            )  # fmt: skip
            return CheckoutResult(checkout=reload(checkout_id), messages=[*stored_messages(checkout), down])
        payment = boleto_record(issued)
        due = payment.due_date.strftime("%d/%m/%Y")
        awaiting = CheckoutMessage(
            type="info",
            code="boleto_awaiting_payment",
            content=_("Boleto emitido: pague até %(due)s. O pedido é confirmado quando o banco avisar o pagamento.")
            % {"due": due},
            path=INSTRUMENT_PATH,
        )
        # A day past the boleto's own expiry (due + grace days, payments.boleto.service.boleto_expire_due).
        last_day = payment.due_date + timedelta(days=expiry_grace_days() + 1)
        checkout.expires_at = datetime.combine(last_day, time(23, 59, 59), tzinfo=BRASILIA)
        checkout.payment_txid = payment.payment_id
        checkout.status = STATUS_IN_PROGRESS
        save_status(checkout, STATUS_IN_PROGRESS, "boleto_issued", [awaiting])
        boleto_notice_issued(checkout, payment)  # the linha digitável by e-mail, sent after commit
    return _refreshed(checkout_id)


def _refreshed(checkout_id: str) -> CheckoutResult:
    fresh = reload(checkout_id)
    return CheckoutResult(checkout=fresh, messages=stored_messages(fresh))
