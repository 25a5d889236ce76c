"""Subscription writes (issue 38): create from a plan with the Pix Automático authorization request or a card
stored at the gateway (its first cycle charged at once), and the state machine's moves. Each write is one short
transaction with its timeline event; the PSP and the gateway are called between transactions, never inside one.
"""

from __future__ import annotations

import hashlib
import logging
from datetime import date, datetime, timedelta

from django.core.validators import validate_email
from django.db import transaction
from django.forms import ValidationError
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from kernel.br_validation import email_invalid, tax_id_invalid, tax_id_normalize, tax_id_valid
from kernel.rows import update_where
from orders.errors import OrderError
from orders.models import Order
from orders.services import order_cancel_requested
from payments.automatic.services import pix_recurrence_request
from payments.card.gateway import GatewayError, GatewayRejected, StoredCard
from payments.card.service import card_wallet_delete, card_wallet_store
from payments.exceptions import PaymentInputError
from payments.psp import PSPUnavailable
from payments.psp.recurring import PayerAccount
from shop.checkout.fulfillment import cep_format
from shop.models import Subscription, SubscriptionCycle, SubscriptionEvent, SubscriptionPlan
from shop.subscriptions.cycles import (
    card_delete_at_gateway,
    cycle_charge,
    cycle_create,
    cycle_plan,
    cycle_withdraw,
    cycles_close,
    recurrence_cancel_at_psp,
)
from shop.subscriptions.emails import subscription_event
from shop.subscriptions.selectors import withdrawal_until

logger = logging.getLogger(__name__)
# A status inside a sentence ("Uma assinatura ativa não pode…"): lower-case words, not the capitalized labels.
STATUS_WORDS = {
    Subscription.Status.PENDING_AUTHORIZATION: gettext_lazy("aguardando autorização"),
    Subscription.Status.ACTIVE: gettext_lazy("ativa"),
    Subscription.Status.PAUSED: gettext_lazy("pausada"),
    Subscription.Status.CANCELLED: gettext_lazy("cancelada"),
}


class SubscriptionInputError(ValueError):
    """Bad input, said in Portuguese on each field at fault (`errors`: field → message, in the form's order, so a
    buyer fixes them all in one go); `field`/`message` are the first of them. Nothing was written."""

    def __init__(self, field: str, message: str, *, errors: dict[str, str] | None = None) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message
        self.errors = errors or {field: message}

    @classmethod
    def of(cls, errors: dict[str, str]) -> SubscriptionInputError:
        field, message = next(iter(errors.items()))
        return cls(field, message, errors=errors)


class SubscriptionStateError(ValueError):
    """A move the state machine does not allow (e.g. resuming a cancelled subscription)."""


CARD = Subscription.Method.CARD
CARD_REFUSED = gettext_lazy("O cartão não foi aceito pela operadora. Confira os dados ou use outro cartão.")


def _validated(
    *, buyer_name: str, buyer_tax_id: str, buyer_email: str, starts_on: date
) -> tuple[str, str, str, dict[str, str]]:
    """The buyer's name, tax id and e-mail cleaned, and every field at fault with its message."""
    errors: dict[str, str] = {}
    name = buyer_name.strip()
    if not name:
        errors["buyer_name"] = _("Informe o nome de quem assina.")
    digits = tax_id_normalize(buyer_tax_id)
    if len(digits) not in (11, 14):
        errors["buyer_tax_id"] = _("Informe o CPF (11 dígitos) ou o CNPJ (14 dígitos) do pagador.")
    elif not tax_id_valid(digits):  # check digits, as the checkout does: each cycle's order and NF-e carry it
        errors["buyer_tax_id"] = tax_id_invalid()
    email = buyer_email.strip()
    try:
        validate_email(email)
    except ValidationError:
        errors["buyer_email"] = email_invalid()
    if starts_on < timezone.localdate():
        errors["starts_on"] = _("A primeira cobrança não pode ser numa data que já passou.")
    return name[:140], digits, email, errors


def subscription_input_problems(
    *,
    buyer_name: str,
    buyer_tax_id: str,
    buyer_email: str,
    starts_on: date | None,
    destination: dict[str, str] | None,
    card: bool,
) -> dict[str, str]:
    """Every field of a subscribe request at fault, with its message, as `subscription_create` would refuse them:
    for a caller that has problems of its own to name with them (an agent's card instrument). Reads nothing."""
    return _checked(
        buyer_name=buyer_name, buyer_tax_id=buyer_tax_id, buyer_email=buyer_email, starts_on=starts_on,
        destination=destination, card=card,
    )[-1]  # fmt: skip


def _checked(
    *,
    buyer_name: str,
    buyer_tax_id: str,
    buyer_email: str,
    starts_on: date | None,
    destination: dict[str, str] | None,
    card: bool,
) -> tuple[date, str, str, str, dict[str, str], dict[str, str]]:
    """(first due date, name, tax id, e-mail, address) cleaned, and every field at fault with its message."""
    errors: dict[str, str] = {}
    if card and starts_on is not None and starts_on != timezone.localdate():
        errors["starts_on"] = _("Com cartão, a primeira cobrança é feita hoje, ao assinar.")
    # Pix Automático: the first charge goes out at least 2 days before its due date; a card is charged now.
    starts_on = timezone.localdate() if card else starts_on or timezone.localdate() + timedelta(days=3)
    name, tax_id, email, buyer_errors = _validated(
        buyer_name=buyer_name, buyer_tax_id=buyer_tax_id, buyer_email=buyer_email, starts_on=starts_on
    )
    errors = {**buyer_errors, **errors}  # in the form's order (the buyer first); a card's due date said as such
    shipping_to: dict[str, str] = {}
    if destination is not None:
        shipping_to, address_errors = _address_checked(destination, name)
        errors.update(address_errors)
    return starts_on, name, tax_id, email, shipping_to, errors


def subscription_create(
    *,
    plan_id: str,
    buyer_name: str,
    buyer_tax_id: str,
    buyer_email: str,
    starts_on: date | None = None,
    payer_account: PayerAccount | None = None,
    destination: dict[str, str] | None = None,
    platform_id: str = "",
    destination_required: bool = False,
    card_token: str = "",
    language: str = "pt-br",
) -> Subscription:
    """A subscription to the active plan `plan_id` (`plan_…`), pending the payer's authorization, with its
    recurrence created at the PSP (`POST /rec`, and `POST /solicrec` when the payer's account is known).

    With `card_token` (the gateway's token of the buyer's card, made in their browser or by the agent's
    tokenizer) it is paid by card instead: the card is stored at the gateway and the first cycle charged now
    (`subscription_card_start`); no Pix Automático authorization is asked.

    Raises SubscriptionInputError for bad input (nothing written). A PSP failure (PSPUnavailable/PSPRejected)
    propagates after the subscription was recorded without `pix_id_rec`; `subscription_request_authorization`
    asks again."""
    starts_on, name, tax_id, email, shipping_to, errors = _checked(
        buyer_name=buyer_name, buyer_tax_id=buyer_tax_id, buyer_email=buyer_email, starts_on=starts_on,
        destination=destination, card=bool(card_token),
    )  # fmt: skip
    if errors:
        raise SubscriptionInputError.of(errors)
    plan = SubscriptionPlan.objects.select_related("variant__product").filter(public_id=plan_id, active=True).first()
    if plan is None:
        raise SubscriptionInputError("plan_id", _("Este plano de assinatura não existe ou não está mais à venda."))
    if destination_required and plan.ships_each_cycle and not shipping_to:
        raise SubscriptionInputError("destination", _("Informe o endereço de entrega de cada ciclo."))
    # By card: the card is stored at the gateway first (no transaction open), so a refused token writes nothing.
    stored = None
    if card_token:
        stored = _card_store(name=name, email=email, tax_id=tax_id, token=card_token, key=plan.public_id)
        # The same token again (a double submit, a retried request) stores the same card: its subscription answers.
        if (existing := Subscription.objects.filter(card_id=stored.card_id).first()) is not None:
            return existing
    with transaction.atomic():
        if (
            stored is None
            and not platform_id
            and (repeated := _repeated_pix_subscribe(plan, email, tax_id, shipping_to))
        ):
            return repeated
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
            destination=shipping_to,
            platform_id=platform_id,
            payment_method=CARD if stored else Subscription.Method.PIX_AUTOMATICO,
            language="en" if language.lower().startswith("en") else "pt-br",
        )
        # Its e-mail (the link to the subscription's page) goes out once, after commit; the event is its outbox row.
        subscription_event(subscription, "created", plan=plan.public_id)
        if stored is not None:
            first = _card_keep(subscription, stored)
    if stored is not None:
        cycle_charge(cycle_id=first.public_id)  # the first cycle, on the card just stored
        return Subscription.objects.get(pk=subscription.pk)
    return subscription_request_authorization(subscription=subscription, payer_account=payer_account)


# A storefront subscribe form sent again this soon with the same buyer, plan and address is the same subscription
# (a double click, a resubmitted page), not a second one: no second recurrence at the PSP, no second e-mail.
REPEATED_SUBSCRIBE_WINDOW = timedelta(minutes=10)


def _repeated_pix_subscribe(
    plan: SubscriptionPlan, email: str, tax_id: str, destination: dict[str, str]
) -> Subscription | None:
    """The storefront's Pix subscription this request repeats, if any (inside the create's transaction). The plan's
    row is locked first, so two clicks arriving together are serialized: the second one finds the first. Agents
    are not matched here: their requests carry an idempotency key (BCP), and a card token dedupes by the card."""
    # Its own statement before the lookup: a click that waited for this lock reads the first one's row (READ
    # COMMITTED takes a new snapshot per statement; a subquery of the locking statement would not see it).
    SubscriptionPlan.objects.select_for_update().filter(pk=plan.pk).values_list("pk", flat=True).first()
    return (
        Subscription.objects.filter(
            plan=plan,
            buyer_email=email,
            buyer_tax_id=tax_id,
            destination=destination,
            platform_id="",
            payment_method=Subscription.Method.PIX_AUTOMATICO,
            status=Subscription.Status.PENDING_AUTHORIZATION,
            created_at__gte=timezone.now() - REPEATED_SUBSCRIBE_WINDOW,
        )
        .order_by("-id")
        .first()
    )


def _card_store(*, name: str, email: str, tax_id: str, token: str, key: str) -> StoredCard:
    """The card of `token` in the gateway's wallet (no transaction open). One Idempotency-Key per token: a request
    repeated after a timeout stores the same card, a new card gets a new key. SubscriptionInputError("card_token")
    when the gateway refuses the token; GatewayError when it could not be asked."""
    digest = hashlib.sha256(f"{key}:{email}:{token}".encode()).hexdigest()[:24]
    try:
        return card_wallet_store(name=name, email=email, tax_id=tax_id, token=token, key=f"card-{digest}")
    except (GatewayRejected, PaymentInputError):
        raise SubscriptionInputError("card_token", str(CARD_REFUSED)) from None


def _card_record(subscription: Subscription, stored: StoredCard, kind: str) -> None:
    """The stored card's ids, brand and last digits on the subscription, with its event (the caller's transaction)."""
    subscription.card_customer_id, subscription.card_id = stored.customer_id, stored.card_id
    subscription.card_brand, subscription.card_last4 = stored.brand, stored.last4
    subscription.save(update_fields=["card_customer_id", "card_id", "card_brand", "card_last4", "updated_at"])
    subscription_event(subscription, kind, brand=stored.brand, last4=stored.last4)


def _card_keep(subscription: Subscription, stored: StoredCard) -> SubscriptionCycle:
    """Record the stored card on the subscription (inside the caller's transaction, the row new or locked) and
    return its first cycle (planned now, due today), still to be charged."""
    _card_record(subscription, stored, "card_stored")
    return _next_open(subscription) or cycle_create(subscription, number=1, due=subscription.starts_on)


def subscription_card_start(*, public_id: str, card_token: str) -> Subscription:
    """Another card for a card subscription whose first charge was declined: stored at the gateway (customer + card
    in its wallet; the shop keeps its ids, brand and last four digits) and the first cycle charged with it, each
    gateway call outside any transaction. Approved: the cycle's order is placed and the subscription is active.
    Declined: it stays waiting, the decline said on its page. Raises SubscriptionInputError("card_token") when the
    gateway refuses the token (nothing stored), SubscriptionStateError when it is not waiting for a card, and
    GatewayError when the gateway could not be asked (ask again: the same token stores the same card)."""
    subscription = Subscription.objects.filter(public_id=public_id).first()
    if subscription is None or subscription.payment_method != CARD:
        raise SubscriptionStateError(_("Assinatura não encontrada."))
    if subscription.status != Subscription.Status.PENDING_AUTHORIZATION:
        raise SubscriptionStateError(_("Esta assinatura já está paga com o cartão cadastrado."))
    stored = _card_store(
        name=subscription.buyer_name, email=subscription.buyer_email, tax_id=subscription.buyer_tax_id,
        token=card_token, key=public_id,
    )  # fmt: skip
    with transaction.atomic():
        locked = _locked(public_id)
        if locked.status != Subscription.Status.PENDING_AUTHORIZATION:
            raise SubscriptionStateError(_("Esta assinatura já está paga com o cartão cadastrado."))
        first = _card_keep(locked, stored)
    if first.status == "charged":
        raise SubscriptionStateError(_("A primeira cobrança já está em andamento; aguarde um instante."))
    cycle_charge(cycle_id=first.public_id)
    return Subscription.objects.get(pk=locked.pk)


def subscription_card_change(*, public_id: str, card_token: str) -> Subscription:
    """Another card for a running card subscription (active or paused): stored at the gateway first (no transaction
    open), then recorded under the subscription's lock; the next charge and any retry use it. The old card is then
    removed from the gateway's wallet (a failure there is logged: the new card is already the one charged). Raises
    SubscriptionInputError("card_token") for a refused token, SubscriptionStateError when the subscription is not a
    running card one, GatewayError when the gateway could not be asked."""
    running = (Subscription.Status.ACTIVE, Subscription.Status.PAUSED)
    subscription = Subscription.objects.filter(public_id=public_id).first()
    if subscription is None or subscription.payment_method != CARD or subscription.status not in running:
        raise SubscriptionStateError(_("Só dá para trocar o cartão de uma assinatura no cartão ativa ou pausada."))
    stored = _card_store(
        name=subscription.buyer_name, email=subscription.buyer_email, tax_id=subscription.buyer_tax_id,
        token=card_token, key=f"{public_id}-change",
    )  # fmt: skip
    with transaction.atomic():
        locked = _locked(public_id)
        if locked.status not in running:
            raise SubscriptionStateError(_("Só dá para trocar o cartão de uma assinatura no cartão ativa ou pausada."))
        old = Subscription(pk=locked.pk, card_customer_id=locked.card_customer_id, card_id=locked.card_id)
        if stored.card_id == locked.card_id:
            return locked  # the same card again (a repeated request): nothing changes
        _card_record(locked, stored, "card_changed")
    if old.card_id:
        try:
            card_wallet_delete(customer_id=old.card_customer_id, card_id=old.card_id)
        except GatewayError:
            logger.warning("old card of %s not removed from the gateway", public_id, exc_info=True)
    return locked


def subscription_request_authorization(
    *, subscription: Subscription, payer_account: PayerAccount | None = None
) -> Subscription:
    """Create the recurrence at the PSP (no transaction open), then record it with its event in one statement."""
    if subscription.pix_id_rec or subscription.status != Subscription.Status.PENDING_AUTHORIZATION:
        return subscription
    fixed, minimum = _recurrence_amount(subscription)
    requested = pix_recurrence_request(
        contract=subscription.public_id,
        payer_name=subscription.buyer_name,
        payer_tax_id=subscription.buyer_tax_id,
        # `objeto` (≤ 35 characters) is what the payer's bank app shows beside the authorization.
        description=subscription.plan.variant.product.title,
        periodicity=subscription.cycle,
        start=subscription.starts_on,
        # Bacen: a fixed recurrence (valorRec) is charged exactly that value each cycle, so a first cycle priced
        # differently needs a variable recurrence, charged at least the smaller of the two prices.
        amount_cents=fixed,
        minimum_cents=minimum,
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


def _recurrence_amount(subscription: Subscription) -> tuple[int | None, int | None]:
    """(fixed amount, minimum) of the subscription's recurrence: one of the two is None."""
    if subscription.first_cycle_price == subscription.price:
        return subscription.price, None
    return None, min(subscription.first_cycle_price, subscription.price)


def subscription_transition(*, public_id: str, to: str, reason: str = "") -> Subscription:
    """Move a subscription along its state machine (`Subscription.TRANSITIONS`), the event in the same statement.

    Raises SubscriptionStateError (in Portuguese) for a move it does not allow; nothing is written then."""
    subscription = Subscription.objects.filter(public_id=public_id).first()
    if subscription is None:
        raise SubscriptionStateError(_("Assinatura não encontrada."))
    current = subscription.status
    if to not in Subscription.TRANSITIONS.get(current, frozenset()):
        raise SubscriptionStateError(
            _("Uma assinatura %(now)s não pode passar a %(to)s.")
            % {"now": STATUS_WORDS[current], "to": STATUS_WORDS.get(to, to)}
        )
    subscription.status = to
    detail = {"from": current, "reason": reason}
    event = SubscriptionEvent(subscription=subscription, kind=f"status_{to}", detail=detail)
    if not update_where(subscription, ["status"], where={"status": current}, event=event):
        raise SubscriptionStateError(_("A assinatura mudou enquanto isso; confira a situação e tente de novo."))
    return subscription


# `encerramento.cancelamento.solicitante` when the payer revoked the authorization in their bank app (PSP_PAGADOR
# is the payer's bank ending it, e.g. a closed account: not the buyer's choice to withdraw).
PAYER_IN_BANK_APP = "USUARIO_PAGADOR"

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
    fields = ["status"]
    if move[0] == Subscription.Status.CANCELLED:
        subscription.cancelled_at = timezone.now()
        fields.append("cancelled_at")
    update_where(subscription, fields)
    subscription_event(
        subscription, f"status_{move[0]}", **{"from": current, "recurrence": status, "cancelled_by": cancelled_by}
    )
    if move[0] == Subscription.Status.ACTIVE:
        cycle_plan(subscription)  # the first cycle, charged by the sweep ahead of its due date
    else:
        cycles_close(subscription)  # charged ones are withdrawn by the sweep (PATCH /cobr) or end at the PSP
        if status == "CANCELLED":
            # Cancelled at the PSP already (by the payer or by us): nothing to PATCH.
            SubscriptionEvent.objects.create(subscription=subscription, kind="recurrence_cancelled", detail={})
        if status == "CANCELLED" and cancelled_by == PAYER_IN_BANK_APP:
            # Revoking in the bank app is the buyer cancelling (CDC art. 49 as on the shop's page): within the
            # withdrawal period the first order is cancelled and refunded in this same transaction. A replay finds
            # the subscription cancelled above and returns before, so it happens once.
            _withdraw_first_order(subscription)
    return subscription.status


# --- the buyer manages the subscription (their page, an agent over BCP) --------------------------------------


def _locked(public_id: str) -> Subscription:
    subscription = Subscription.objects.select_for_update().filter(public_id=public_id).first()
    if subscription is None:
        raise SubscriptionStateError(_("Assinatura não encontrada."))
    return subscription


def _next_open(subscription: Subscription) -> SubscriptionCycle | None:
    return (
        SubscriptionCycle.objects.select_for_update()
        .filter(subscription=subscription, status__in=["scheduled", "charged", "retrying"])
        .order_by("number")
        .first()
    )


def subscription_skip_next(*, public_id: str) -> SubscriptionCycle:
    """Skip the next cycle: not charged, not shipped; the following one is planned. A charge already sent is
    withdrawn at the PSP first (`PATCH /cobr/{txid}`, no transaction open); once its attempt date came, the PSP
    refuses and so do we, in Portuguese. Returns the skipped cycle."""
    with transaction.atomic():
        subscription = _locked(public_id)
        if subscription.status != Subscription.Status.ACTIVE:
            raise SubscriptionStateError(_("Só dá para pular um ciclo de uma assinatura ativa."))
        cycle = _next_open(subscription)
        if cycle is None:
            raise SubscriptionStateError(_("Não há próximo ciclo para pular."))
        if cycle.status == "retrying":
            raise SubscriptionStateError(_("Este ciclo já está sendo cobrado de novo; não dá mais para pulá-lo."))
        charged = cycle.status == "charged"
        if charged and subscription.payment_method == CARD:
            raise SubscriptionStateError(_("O cartão já está sendo cobrado por este ciclo; não dá mais para pulá-lo."))
    if charged and not cycle_withdraw(txid=cycle.txid):
        raise SubscriptionStateError(
            _("A cobrança deste ciclo já está em andamento no banco; não dá mais para pulá-lo.")
        )
    with transaction.atomic():
        subscription = _locked(public_id)
        cycle.refresh_from_db()
        if cycle.status in ("scheduled", "cancelled"):
            cycle.status = "skipped"
            cycle.save(update_fields=["status", "updated_at"])
            subscription_event(
                subscription, "cycle_skipped", cycle=cycle.public_id, due_date=cycle.due_date.isoformat()
            )
            cycle_plan(subscription)
    return cycle


def subscription_pause(*, public_id: str) -> Subscription:
    """Pause: no cycle is charged while paused (a charge already sent still runs: it was announced). A card cycle
    waiting for its retry is a charge not made yet: it is closed too, its unit given back."""
    with transaction.atomic():
        subscription = subscription_transition(public_id=public_id, to="paused", reason="pedido do assinante")
        if subscription.payment_method == CARD:
            cycles_close(subscription)
        else:
            SubscriptionCycle.objects.filter(subscription=subscription, status="scheduled").update(
                status="cancelled", updated_at=timezone.now()
            )
    return subscription


def subscription_resume(*, public_id: str) -> Subscription:
    """Resume a paused subscription: the next cycle is planned from today (cycles whose date passed are not
    charged)."""
    with transaction.atomic():
        subscription = subscription_transition(public_id=public_id, to="active", reason="pedido do assinante")
        cycle_plan(subscription)
    return subscription


# A card subscription whose first charge was declined waits for another card this long, then is closed (a Pix one
# ends when its authorization lapses at the PSP).
CARD_RETRY_WINDOW = timedelta(days=3)


def subscriptions_abandoned_close(*, now: datetime | None = None, limit: int = 200) -> int:
    """Beat: cancel card subscriptions still waiting for their first charge `CARD_RETRY_WINDOW` after they were
    made (declined, no other card came) and not being charged now; the buyer is told by the cancellation e-mail,
    the stored card is removed at the gateway. Returns how many."""
    cutoff = (now or timezone.now()) - CARD_RETRY_WINDOW
    waiting = (
        Subscription.objects.filter(
            status=Subscription.Status.PENDING_AUTHORIZATION, payment_method=CARD, created_at__lte=cutoff
        )
        .exclude(cycles__status=SubscriptionCycle.Status.CHARGED)
        .values_list("public_id", flat=True)[:limit]
    )
    closed = 0
    for public_id in waiting:
        try:
            subscription_cancel(public_id=public_id, by="shop")
        except SubscriptionStateError:  # moved meanwhile (another card paid): nothing to close
            continue
        closed += 1
    return closed


def subscription_cancel(*, public_id: str, by: str = "buyer", actor: str = "") -> Subscription:
    """Cancel (the buyer, any time, as easily as they subscribed — CDC art. 49 and Decreto 11.034/2022; the
    shop, staff): no further cycle is charged. The recurrence is cancelled at the PSP after commit
    (`PATCH /rec/{idRec}` CANCELADA), and charges already sent are withdrawn; both re-driven by the sweep.
    A card subscription has nothing at the PSP: its cycle waiting for a retry is closed, and its card is removed
    from the gateway's wallet (`DELETE /customers/{id}/cards/{card_id}`, re-driven by the sweep).
    `actor`: the staff member's username when the shop cancels from the admin (kept on the event)."""
    with transaction.atomic():
        subscription = _locked(public_id)
        if subscription.status == Subscription.Status.CANCELLED:
            return subscription
        reason = "pedido do assinante" if by == "buyer" else "cancelada pela loja"
        current = subscription.status
        if "cancelled" not in Subscription.TRANSITIONS.get(current, frozenset()):
            raise SubscriptionStateError(_("Esta assinatura não pode ser cancelada agora."))
        subscription.status = Subscription.Status.CANCELLED
        subscription.cancelled_at = timezone.now()
        subscription.save(update_fields=["status", "cancelled_at", "updated_at"])
        detail = {"from": current, "reason": reason, "by": by, **({"staff": actor[:150]} if actor else {})}
        subscription_event(subscription, "status_cancelled", **detail)
        charged = cycles_close(subscription)
        if by == "buyer":  # in the same transaction: a crash after the cancel cannot lose the first order's refund
            _withdraw_first_order(subscription)
    if subscription.pix_id_rec:
        recurrence_cancel_at_psp(subscription)
    if subscription.payment_method == CARD and subscription.card_id:
        card_delete_at_gateway(subscription)
    for txid in charged:
        try:
            cycle_withdraw(txid=txid)
        except PSPUnavailable:  # the sweep withdraws it later
            continue
    return subscription


def _withdraw_first_order(subscription: Subscription) -> None:
    """The buyer cancelled within the withdrawal period: the first cycle's order, not shipped yet, is cancelled
    and refunded in full (`order_cancel_requested`, whose refund is an outbox row); already shipped, the buyer is
    told to ask for a return. The outcome is the subscription's event the page reads. Inside the cancel's
    transaction, with the subscription locked (the order's lock is taken after it, no network call)."""
    first = (
        SubscriptionCycle.objects.filter(subscription=subscription, status="paid")
        .exclude(order_id="")
        .order_by("number")
        .values_list("order_id", flat=True)
        .first()
    )
    if first is None:
        return
    placed = Order.objects.filter(public_id=first).values_list("placed_at", flat=True).first()
    if placed is None or timezone.localdate() > withdrawal_until(subscription, timezone.localtime(placed).date()):
        return
    try:
        order_cancel_requested(
            order_id=first, reason="Direito de arrependimento (CDC art. 49): assinatura cancelada em até 7 dias"
        )
    except OrderError as exc:
        outcome = "shipped" if exc.code == "already_shipped" else "refused"
    else:
        outcome = "refunded"
    SubscriptionEvent.objects.create(
        subscription=subscription, kind="withdrawal", detail={"order": first, "outcome": outcome}
    )


ADDRESS_FIELDS = {
    "postal_code": gettext_lazy("Informe o CEP com 8 dígitos."),
    "street": gettext_lazy("Informe a rua."),
    "number": gettext_lazy("Informe o número."),
    "neighborhood": gettext_lazy("Informe o bairro."),
    "city": gettext_lazy("Informe a cidade."),
    "state": gettext_lazy("Informe a UF (duas letras)."),
}


def address_clean(address: dict[str, str], buyer_name: str) -> dict[str, str]:
    """A Brazilian address in the order's `destination` keys; SubscriptionInputError naming every field at fault."""
    clean, errors = _address_checked(address, buyer_name)
    if errors:
        raise SubscriptionInputError.of(errors)
    return clean


def _address_checked(address: dict[str, str], buyer_name: str) -> tuple[dict[str, str], dict[str, str]]:
    """The address cleaned, and each of its fields at fault with its message."""
    clean = {key: str(address.get(key, "") or "").strip()[:200] for key in (*ADDRESS_FIELDS, "complement")}
    clean["postal_code"] = "".join(ch for ch in clean["postal_code"] if ch.isdigit())
    clean["state"] = clean["state"].upper()
    errors: dict[str, str] = {}
    for key, message in ADDRESS_FIELDS.items():
        sized = {"postal_code": 8, "state": 2}.get(key)
        if not clean[key] or (sized is not None and len(clean[key]) != sized):
            errors[key] = str(message)
    if errors:
        return {}, errors
    clean["postal_code"] = cep_format(clean["postal_code"])  # "01310-100", as checkout orders keep it
    first, _, last = buyer_name.partition(" ")
    return {"first_name": first, "last_name": last, **clean, "country": "BR"}, errors


SUBSCRIBER_LANGUAGES = ("pt-br", "en")


def subscription_language_set(*, access_token: str, language: str) -> bool:
    """The subscriber switched the site's language on the subscription's page (shop.storefront.language): its next
    e-mails, and the orders of its next cycles, are written in it, as an order's follow the switch on the order's
    page. Whether it changed; an unknown language or token, or the same language, changes nothing. The
    subscription's timeline says it to staff."""
    language = (language or "").lower()
    if language not in SUBSCRIBER_LANGUAGES or not access_token:
        return False
    with transaction.atomic():
        subscription = Subscription.objects.select_for_update().filter(access_token=access_token).first()
        if subscription is None or subscription.language == language:
            return False
        subscription.language = language
        subscription.save(update_fields=["language", "updated_at"])
        SubscriptionEvent.objects.create(
            subscription=subscription, kind="language_changed", detail={"language": language}
        )
    return True


def subscription_address_change(*, public_id: str, address: dict[str, str]) -> Subscription:
    """Where the next cycles ship. Raises SubscriptionInputError naming the field (nothing written)."""
    with transaction.atomic():
        subscription = _locked(public_id)
        if subscription.status == Subscription.Status.CANCELLED:
            raise SubscriptionStateError(_("Esta assinatura foi cancelada."))
        subscription.destination = address_clean(address, subscription.buyer_name)
        subscription.save(update_fields=["destination", "updated_at"])
        SubscriptionEvent.objects.create(subscription=subscription, kind="address_changed", detail={})
    return subscription
