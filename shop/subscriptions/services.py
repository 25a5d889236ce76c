"""Subscription writes (issue 38): create from a plan with the Pix Automático authorization request, and the
state machine's moves. Each write is one short transaction with its timeline event; the PSP is called between
transactions, never inside one.
"""

from __future__ import annotations

from datetime import date

from django.core.validators import validate_email
from django.db import transaction
from django.forms import ValidationError
from django.utils import timezone

from kernel.rows import update_where
from payments.automatic.services import pix_recurrence_request
from payments.psp.recurring import PayerAccount
from shop.models import Subscription, SubscriptionEvent, SubscriptionPlan

STATUS_WORDS = dict(Subscription.Status.choices)


class SubscriptionInputError(ValueError):
    """Bad input, said in Portuguese on the field at fault; nothing was written."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


class SubscriptionStateError(ValueError):
    """A move the state machine does not allow (e.g. resuming a cancelled subscription)."""


def _validated(*, buyer_name: str, buyer_tax_id: str, buyer_email: str, starts_on: date) -> tuple[str, str, str]:
    name = buyer_name.strip()
    if not name:
        raise SubscriptionInputError("buyer_name", "Informe o nome de quem assina.")
    digits = "".join(ch for ch in buyer_tax_id if ch.isdigit())
    if len(digits) not in (11, 14):
        raise SubscriptionInputError("buyer_tax_id", "Informe o CPF (11 dígitos) ou o CNPJ (14 dígitos) do pagador.")
    email = buyer_email.strip()
    try:
        validate_email(email)
    except ValidationError:
        raise SubscriptionInputError("buyer_email", "Informe um e-mail válido, como nome@exemplo.com.br.") from None
    if starts_on < timezone.localdate():
        raise SubscriptionInputError("starts_on", "A primeira cobrança não pode ser numa data que já passou.")
    return name[:140], digits, email


def subscription_create(
    *,
    plan_id: str,
    buyer_name: str,
    buyer_tax_id: str,
    buyer_email: str,
    starts_on: date,
    payer_account: PayerAccount | None = None,
) -> Subscription:
    """A subscription to the active plan `plan_id` (`plan_…`), pending the payer's authorization, with its
    recurrence created at the PSP (`POST /rec`, and `POST /solicrec` when the payer's account is known).

    Raises SubscriptionInputError for bad input (nothing written). A PSP failure (PSPUnavailable/PSPRejected)
    propagates after the subscription was recorded without `pix_id_rec`; `subscription_request_authorization`
    asks again."""
    name, tax_id, email = _validated(
        buyer_name=buyer_name, buyer_tax_id=buyer_tax_id, buyer_email=buyer_email, starts_on=starts_on
    )
    plan = SubscriptionPlan.objects.select_related("variant__product").filter(public_id=plan_id, active=True).first()
    if plan is None:
        raise SubscriptionInputError("plan_id", "Este plano de assinatura não existe ou não está mais à venda.")
    with transaction.atomic():
        subscription = Subscription.objects.create(
            plan=plan,
            buyer_name=name,
            buyer_tax_id=tax_id,
            buyer_email=email,
            cycle=plan.cycle,
            price=plan.price,
            first_cycle_price=plan.first_cycle_price,
            min_cycles=plan.min_cycles,
            starts_on=starts_on,
        )
        SubscriptionEvent.objects.create(subscription=subscription, kind="created", detail={"plan": plan.public_id})
    return subscription_request_authorization(subscription=subscription, payer_account=payer_account)


def subscription_request_authorization(
    *, subscription: Subscription, payer_account: PayerAccount | None = None
) -> Subscription:
    """Create the recurrence at the PSP (no transaction open), then record it with its event in one statement."""
    if subscription.pix_id_rec or subscription.status != Subscription.Status.PENDING_AUTHORIZATION:
        return subscription
    requested = pix_recurrence_request(
        contract=subscription.public_id,
        payer_name=subscription.buyer_name,
        payer_tax_id=subscription.buyer_tax_id,
        # `objeto` (≤ 35 characters) is what the payer's bank app shows beside the authorization.
        description=subscription.plan.variant.product.title,
        periodicity=subscription.cycle,
        start=subscription.starts_on,
        # Pix Automático's fixed amount is the recurring price; the first cycle's discount goes in its own cobr.
        amount_cents=subscription.price,
        payer_account=payer_account,
    )
    subscription.pix_id_rec = requested.id_rec
    subscription.pix_id_solic_rec = requested.id_solic_rec
    subscription.pix_authorization_location = requested.location[:200]
    event = SubscriptionEvent(
        subscription=subscription,
        kind="authorization_requested",
        detail={"id_rec": requested.id_rec, "id_solic_rec": requested.id_solic_rec},
    )
    # Only a subscription still without a recurrence takes this one (a concurrent request lost the race).
    update_where(
        subscription,
        ["pix_id_rec", "pix_id_solic_rec", "pix_authorization_location"],
        where={"pix_id_rec": ""},
        event=event,
    )
    return subscription


def subscription_transition(*, public_id: str, to: str, reason: str = "") -> Subscription:
    """Move a subscription along its state machine (`Subscription.TRANSITIONS`), the event in the same statement.

    Raises SubscriptionStateError (in Portuguese) for a move it does not allow; nothing is written then."""
    subscription = Subscription.objects.filter(public_id=public_id).first()
    if subscription is None:
        raise SubscriptionStateError("Assinatura não encontrada.")
    current = subscription.status
    if to not in Subscription.TRANSITIONS.get(current, frozenset()):
        raise SubscriptionStateError(
            f"Uma assinatura {STATUS_WORDS[current]} não pode passar a {STATUS_WORDS.get(to, to)}."
        )
    subscription.status = to
    detail = {"from": current, "reason": reason}
    event = SubscriptionEvent(subscription=subscription, kind=f"status_{to}", detail=detail)
    if not update_where(subscription, ["status"], where={"status": current}, event=event):
        raise SubscriptionStateError("A assinatura mudou enquanto isso; confira a situação e tente de novo.")
    return subscription


# The PSP's recurrence state → the subscription state it leads to (from the states it may leave).
_FROM_RECURRENCE = {
    "APPROVED": ("active", {"pending_authorization"}),
    "REJECTED": ("cancelled", {"pending_authorization"}),
    "EXPIRED": ("cancelled", {"pending_authorization"}),
    "CANCELLED": ("cancelled", {"pending_authorization", "active", "paused"}),
}


def subscription_apply_recurrence(*, id_rec: str, status: str, cancelled_by: str) -> str | None:
    """Follow the Pix Automático recurrence (confirmed at the PSP): authorized → active; cancelled (by the payer
    in the bank app or anyone), rejected or expired → cancelled. Runs inside the caller's transaction (the
    payments inbox row is locked); returns the new status, or None when nothing changes (a replay)."""
    move = _FROM_RECURRENCE.get(status)
    subscription = Subscription.objects.select_for_update().filter(pix_id_rec=id_rec).first()
    if move is None or subscription is None or subscription.status not in move[1]:
        return None
    current, subscription.status = subscription.status, move[0]
    detail = {"from": current, "recurrence": status, "cancelled_by": cancelled_by}
    event = SubscriptionEvent(subscription=subscription, kind=f"status_{move[0]}", detail=detail)
    update_where(subscription, ["status"], event=event)
    return subscription.status
