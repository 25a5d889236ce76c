"""Each cycle of a subscription is one order (issue 38), placed exactly once.

The path of a cycle, each step one short transaction, the PSP always called between them:

1. planned: `cycle_plan` writes the next cycle (number, due date, amount) when the previous one ends;
2. charged: `cycle_charge` takes the unit from stock (said to the buyer before charging when it is missing:
   nothing is charged then), marks the cycle `charged`, then `PUT /cobr/{txid}` ahead of the due date (Pix
   Automático: from 10 to 2 days before; the txid is fixed when the cycle is planned, so a PUT repeated after a
   crash answers the same charge);
3. paid: the PSP's `/cobr` notice, confirmed with `GET /cobr/{txid}` (payments/automatic), sends
   `recurring_charge_settled` once per charge; `cycle_settle` places the order through the orders placement
   (`order_place_from_checkout` with the cycle's id as the checkout id, unique: one order ever) with its e-mails,
   NF-e, order webhooks and stock like any order;
4. failed: `recurring_charge_failed` → the buyer is told (e-mail) and, while the rules allow, the PSP retries
   (`retrying`); the last failure gives the unit back (`failed`) and the next cycle is planned.

`subscription_cycles_sweep` (beat) plans, charges ahead and re-drives whatever a crash left half done.

A subscription paid by card (its card stored at the gateway: customer and card ids) follows the same path, with the
gateway instead of the PSP: the cycle is charged on its due date (`charge_stored_card`, Idempotency-Key
`<cycle id>-<attempt>`, so a re-driven attempt gets the gateway's first answer), the outcome is recorded as any card
payment and announced with `card_payment_settled` (also by the card webhook or a re-sent attempt), and
`cycle_card_settled` places the order once or applies the retry rule.
"""

from __future__ import annotations

import logging
from datetime import date, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from kernel.tasks import enqueue_on_commit
from orders.services import order_place_from_checkout
from orders.types import PlacedCheckout, PlacedLine
from payments.automatic.services import (
    pix_recurrence_cancel,
    pix_recurrence_refresh,
    pix_recurring_charge_brief,
    pix_recurring_charge_cancel,
    pix_recurring_charge_issue,
)
from payments.card.gateway import GatewayError
from payments.card.service import (
    card_payment_message,
    card_payment_reached_gateway,
    card_stored_charge,
    card_wallet_delete,
)
from payments.card.settle import card_payment_record_unclaimed
from payments.psp import PSPNotFound, PSPRejected, PSPUnavailable
from payments.psp.recurring import CHARGE_LEAD_DAYS_MAX, MAX_RETRIES, RETRY_WINDOW_DAYS
from shop.checkout.fulfillment import cep_checked, cep_format, shipping_config_load, shipping_options
from shop.checkout.stock import StockUnavailable, stock_release, stock_reserve
from shop.models import Subscription, SubscriptionCycle
from shop.subscriptions.emails import subscription_event
from shop.subscriptions.schedule import chargeable_from, cycle_amount

logger = logging.getLogger(__name__)
Cycle = SubscriptionCycle.Status
CARD = Subscription.Method.CARD
OPEN = (Cycle.SCHEDULED, Cycle.CHARGED, Cycle.RETRYING)
# A cycle marked charged whose charge is not recorded after this long: the worker died around the PSP call.
CHARGE_GRACE = timedelta(minutes=2)
# A subscription waiting for the bank app this long is asked at the PSP (`GET /rec`): a lost `/rec` notice.
AUTHORIZATION_LOOKUP_AFTER = timedelta(minutes=10)


_event = subscription_event


def cycle_plan(subscription: Subscription) -> SubscriptionCycle | None:
    """The next cycle of an active subscription when none is open (inside the caller's transaction, the
    subscription locked or just moved). Unique (subscription, number): planned once. None: nothing to plan."""
    if subscription.status != Subscription.Status.ACTIVE:
        return None
    cycles = list(SubscriptionCycle.objects.filter(subscription=subscription).order_by("number"))
    if any(c.status in OPEN for c in cycles):
        return None
    # Counted from the last cycle that ran (paid, failed, skipped): a cycle a pause cancelled before it was charged
    # is not one — resumed before its date, it is planned again, not lost.
    ran = [c.number for c in cycles if c.status != Cycle.CANCELLED]
    card = subscription.payment_method == CARD
    cancelled = {c.number: c for c in cycles if c.status == Cycle.CANCELLED}
    # Authorized late or resumed after a pause: the cycles whose date passed are not charged (`chargeable_from`,
    # which the subscriber's e-mails follow too); nor is a period whose cancelled cycle was already sent for
    # charging (its id and txid belong to that withdrawn charge).
    number, due = chargeable_from(subscription, (ran[-1] if ran else 0) + 1, today=timezone.localdate())
    while number in cancelled and not _never_charged(cancelled[number]):
        number, due = chargeable_from(subscription, number + 1, today=timezone.localdate())
    if number in cancelled:
        cycle = cancelled[number]
        cycle.status, cycle.stock_short, cycle.retries, cycle.retry_on = Cycle.SCHEDULED, False, 0, None
        cycle.save(update_fields=["status", "stock_short", "retries", "retry_on", "updated_at"])
        _event(subscription, "cycle_planned", cycle=cycle.public_id, number=number, due_date=due.isoformat())
    else:
        cycle = cycle_create(subscription, number=number, due=due)
    if (due - timezone.localdate()).days <= (0 if card else CHARGE_LEAD_DAYS_MAX):
        # Already inside the charging window (a first cycle right after the authorization): charge after commit
        # instead of waiting for the sweep, which still re-drives it if this task is lost.
        enqueue_on_commit("shop.tasks.charge_subscription_cycle", cycle.public_id)
    return cycle


def _never_charged(cycle: SubscriptionCycle) -> bool:
    """Cancelled while only scheduled: no card attempt and no charge at the PSP under its id."""
    return cycle.charge_attempts == 0 and pix_recurring_charge_brief(cycle.public_id) is None


def cycle_create(subscription: Subscription, *, number: int, due: date) -> SubscriptionCycle:
    """Write cycle `number` (unique per subscription) with its event, inside the caller's transaction."""
    amount = cycle_amount(subscription, number)
    cycle = SubscriptionCycle.objects.create(subscription=subscription, number=number, due_date=due, amount=amount)
    _event(subscription, "cycle_planned", cycle=cycle.public_id, number=number, due_date=due.isoformat())
    return cycle


def _variant_items(subscription: Subscription) -> list[tuple[int, int]]:
    return [(subscription.plan.variant_id, 1)]


def cycle_charge(*, cycle_id: str, today: date | None = None) -> str:
    """Reserve the unit and send the cycle's charge: to the PSP ahead of its due date (Pix Automático), or to the
    card gateway on the due date (card; a retry on its `retry_on` day). Returns "charged", "stock_short",
    "not_due", "skipped" (nothing to do), "psp_refused", or for a card "declined" / "pending"; raises
    PSPUnavailable (the sweep re-drives a `charged` cycle with no charge recorded)."""
    today = today or timezone.localdate()
    with transaction.atomic():
        cycle = (
            SubscriptionCycle.objects.select_for_update(of=("self",))
            .select_related("subscription__plan__variant__product")
            .filter(public_id=cycle_id)
            .first()
        )
        card = cycle is not None and cycle.subscription.payment_method == CARD
        # A card cycle is retried by the shop (`retrying` until its `retry_on`); Pix retries happen at the PSP.
        waiting = (Cycle.SCHEDULED, Cycle.RETRYING) if card else (Cycle.SCHEDULED,)
        if cycle is None or cycle.status not in (*waiting, Cycle.CHARGED):
            return "skipped"
        subscription = cycle.subscription
        # A card subscription's first charge is made while it waits for it (pending): it activates it.
        first = card and subscription.status == Subscription.Status.PENDING_AUTHORIZATION
        if subscription.status != Subscription.Status.ACTIVE and not first and cycle.status in waiting:
            return "skipped"
        if cycle.status in waiting:
            due = cycle.retry_on if cycle.status == Cycle.RETRYING and cycle.retry_on else cycle.due_date
            if (due - today).days > (0 if card else CHARGE_LEAD_DAYS_MAX):
                return "not_due"
            if not cycle.stock_reserved:
                try:
                    stock_reserve(items=_variant_items(subscription))
                except StockUnavailable:
                    if not cycle.stock_short:
                        # Said before charging, once: nothing goes to the PSP while the unit is missing.
                        cycle.stock_short = True
                        cycle.save(update_fields=["stock_short", "updated_at"])
                        _event(
                            subscription, "cycle_stock_short", cycle=cycle.public_id,
                            due_date=cycle.due_date.isoformat(),
                        )  # fmt: skip
                    return "stock_short"
            cycle.status, cycle.stock_reserved, cycle.stock_short = Cycle.CHARGED, True, False
            cycle.charge_attempts += 1 if card else 0
            cycle.save(update_fields=["status", "stock_reserved", "stock_short", "charge_attempts", "updated_at"])
            _event(subscription, "cycle_charged", cycle=cycle.public_id, txid=cycle.txid, amount=cycle.amount)
    if card:
        return _card_charge_send(cycle, subscription, first=first)
    product = subscription.plan.variant.product.title
    try:
        pix_recurring_charge_issue(
            reference=cycle.public_id,
            txid=cycle.txid,
            id_rec=subscription.pix_id_rec,
            amount_cents=cycle.amount,
            due_date=cycle.due_date,
            info=f"{product} — ciclo {cycle.number}",
        )
    except PSPRejected:
        # The PSP refuses: most likely the payer cancelled the authorization and its notice was lost. Ask the
        # recurrence (GET /rec): a cancellation reaches the subscription, which gives this cycle's unit back.
        logger.warning("cobr of %s refused; reading the recurrence", cycle.public_id, exc_info=True)
        try:
            pix_recurrence_refresh(id_rec=subscription.pix_id_rec)
        except (PSPUnavailable, PSPRejected, PSPNotFound):
            logger.warning("recurrence %s could not be read", subscription.pix_id_rec, exc_info=True)
            return "psp_refused"
        # The recurrence is still authorized, so the PSP refused this charge itself (e.g. its window passed): the
        # cycle fails now, the buyer is told and its unit goes back, instead of being re-sent by every sweep.
        with transaction.atomic():
            cycle_fail(reference=cycle.public_id, final=True, retry_on=None, reason="cobrança recusada pelo PSP")
        return "psp_refused"
    return "charged"


def _destination(subscription: Subscription) -> dict[str, str]:
    """Where the cycle ships, the CEP as "01310-100" like a checkout order's (subscriptions made before kept digits)."""
    destination = dict(subscription.destination)
    digits = "".join(ch for ch in str(destination.get("postal_code", "")) if ch.isdigit())
    if len(digits) == 8:
        destination["postal_code"] = cep_format(digits)
    return destination


def _carrier(destination: dict[str, str]) -> str:
    """Who carries a cycle's parcel, as a checkout's order keeps its chosen option's carrier: a subscription has no
    chosen option (its price includes freight), so the store's cheapest way to that CEP by its own table (rates
    without free-shipping floors; ties in the store's order). From the cached table: no network, no statement
    when warm. "" when no method serves the CEP."""
    try:
        digits, uf = cep_checked(str(destination.get("postal_code", "")))
    except ValueError:
        return ""
    options = shipping_options(config=shipping_config_load(), cep=digits, uf=uf, subtotal_after_discounts=0)
    return min(options, key=lambda option: option.amount).carrier if options else ""


def _placed(cycle: SubscriptionCycle, *, txid: str, amount: int, card: bool = False) -> PlacedCheckout:
    subscription = cycle.subscription
    plan = subscription.plan
    variant = plan.variant
    first, _, last = subscription.buyer_name.partition(" ")
    ships = plan.ships_each_cycle and variant.product.requires_shipping
    destination = _destination(subscription) if ships else {}
    return PlacedCheckout(
        checkout_id=cycle.public_id,  # unique on the order: one cycle, one order, ever
        currency="BRL",
        buyer_first_name=first,
        buyer_last_name=last,
        buyer_email=subscription.buyer_email,
        buyer_phone="",
        buyer_tax_id=subscription.buyer_tax_id,
        lines=[
            PlacedLine(
                line_id=f"li_{cycle.public_id.removeprefix('cyc_')}",
                sku=variant.sku,
                title=f"{variant.display_title} (assinatura, ciclo {cycle.number})",
                unit_price=amount,
                quantity=1,
            )
        ],
        totals=[("subtotal", amount, ""), ("fulfillment", 0, "Frete incluso na assinatura"), ("total", amount, "")],
        fulfillment_method="shipping" if ships else "digital",
        fulfillment_title="Entrega da assinatura" if ships else "Entrega digital",
        fulfillment_description="",
        fulfillment_carrier=_carrier(destination) if ships else "",
        destination=destination,
        platform_id=subscription.platform_id or None,
        language=subscription.language or "pt-br",  # the subscriber's, as the switch on its page left it
        payment_handler_id=settings.BCP_CARD_HANDLER_ID if card else settings.PIX_HANDLER_ID,
        payment_type="card" if card else "pix",
        payment_reference=cycle.public_id,
        payment_txid=txid,
        paid_amount=amount,
    )


def cycle_settle(*, reference: str, txid: str, amount: int, end_to_end_id: str, card: bool = False) -> str:
    """`recurring_charge_settled` (inside payments' transaction, the charge row locked): the cycle's order is
    placed once — the cycle row locked and moved to `paid` with the order in the same transaction — and the
    next cycle is planned. Returns "accepted" (also for a replay), or "unknown" for a charge of no cycle.

    `card`: paid by the stored card (`txid` is then the card payment's id); a card subscription's first paid
    cycle makes it active."""
    cycle = (
        SubscriptionCycle.objects.select_for_update(of=("self",))
        .select_related("subscription__plan__variant__product")
        .filter(public_id=reference)
        .first()
    )
    if cycle is None:
        return "unknown"
    if cycle.status == Cycle.PAID:
        return "accepted"
    if not cycle.stock_reserved:
        # Paid after the cycle gave its unit back (a late payment of a retry): take it again if there is one;
        # the order is placed anyway (the money is in) and staff see the stock go short in the admin.
        try:
            stock_reserve(items=_variant_items(cycle.subscription))
        except StockUnavailable:
            logger.warning("cycle %s paid without stock", cycle.public_id)
    placed = _placed(cycle, txid=txid, amount=amount, card=card)
    order = order_place_from_checkout(checkout=placed, checkout_locked=True)
    cycle.status, cycle.order_id, cycle.stock_reserved = Cycle.PAID, order.public_id, False
    cycle.retry_on = None
    cycle.save(update_fields=["status", "order_id", "stock_reserved", "retry_on", "updated_at"])
    subscription = cycle.subscription
    paid_by = {"payment_id": txid} if card else {"e2e": end_to_end_id}
    _event(subscription, "cycle_paid", cycle=cycle.public_id, order_id=order.public_id, **paid_by)
    if card and subscription.status == Subscription.Status.PENDING_AUTHORIZATION:
        # The first charge of the stored card went through: the subscription starts (the card is its authorization).
        locked = Subscription.objects.select_for_update().get(pk=subscription.pk)
        if locked.status == Subscription.Status.PENDING_AUTHORIZATION:
            locked.status = Subscription.Status.ACTIVE
            locked.save(update_fields=["status", "updated_at"])
            started = {"from": "pending_authorization", "reason": "primeira cobrança no cartão"}
            _event(locked, "status_active", **started)
        subscription = locked
    cycle_plan(subscription)
    return "accepted"


def cycle_fail(*, reference: str, final: bool, retry_on: date | None, reason: str) -> None:
    """`recurring_charge_failed` (inside payments' transaction): the buyer is told (the event is the e-mail's
    outbox row); a final failure gives the unit back and plans the next cycle."""
    cycle = (
        SubscriptionCycle.objects.select_for_update(of=("self",))
        .select_related("subscription__plan")
        .filter(public_id=reference)
        .first()
    )
    if cycle is None or cycle.status in (Cycle.PAID, Cycle.FAILED, Cycle.SKIPPED, Cycle.CANCELLED):
        return
    if not final:
        # The retry's day on the cycle for a Pix retry too (the card path set it already): the buyer's page says
        # when (QA walk: it said "Nova tentativa" with no day while the e-mail named it).
        cycle.status, cycle.retry_on = Cycle.RETRYING, retry_on or cycle.retry_on
        cycle.save(update_fields=["status", "retry_on", "updated_at"])
        retry = retry_on.isoformat() if retry_on else ""
        _event(cycle.subscription, "cycle_retrying", cycle=cycle.public_id, retry_on=retry, reason=reason)
        return
    if cycle.stock_reserved:
        stock_release(items=_variant_items(cycle.subscription))
    cycle.status, cycle.stock_reserved = Cycle.FAILED, False
    cycle.save(update_fields=["status", "stock_reserved", "updated_at"])
    _event(cycle.subscription, "cycle_failed", cycle=cycle.public_id, reason=reason)
    cycle_plan(cycle.subscription)


def _card_charge_send(cycle: SubscriptionCycle, subscription: Subscription, *, first: bool) -> str:
    """The gateway half of a card cycle's charge (no transaction open), then its outcome recorded: a final one is
    announced (`card_payment_settled` → `cycle_card_settled`) in the recording transaction, exactly once."""
    product = subscription.plan.variant.product.title
    charged = card_stored_charge(
        reference=cycle.public_id, amount=cycle.amount, customer_id=subscription.card_customer_id,
        card_id=subscription.card_id, attempt=cycle.charge_attempts, description=f"{product} — ciclo {cycle.number}",
        first=first,
    )  # fmt: skip
    if charged.answered is not None:
        # The gateway refused the request itself (the stored card is gone or invalid): a decline for the buyer.
        with transaction.atomic():
            cycle_card_declined(reference=cycle.public_id, reason=charged.answered.message)
        return "declined"
    result = card_payment_record_unclaimed(charged)
    if not result.approved and not result.pending:
        # A decline is announced only when the payment row changes (a retry declined again does not): the cycle
        # is moved here too; once moved (by the announce, or a replay) this changes nothing.
        with transaction.atomic():
            cycle_card_declined(reference=cycle.public_id, reason=result.message)
    return "charged" if result.approved else ("pending" if result.pending else "declined")


def cycle_card_settled(*, reference: str, payment_id: str, status: str, amount: int) -> str:
    """`card_payment_settled` of a cycle's charge (inside payments' transaction, the payment row locked, once per
    final outcome — whichever of the charge call, the card webhook or a re-sent attempt learned it first): an
    approval places the cycle's order; a decline follows the retry rule. Returns "accepted"; "unknown" for a
    reference of no cycle (payments then refunds an approval)."""
    if status == "approved":
        return cycle_settle(reference=reference, txid=payment_id, amount=amount, end_to_end_id="", card=True)
    if not SubscriptionCycle.objects.filter(public_id=reference).exists():
        return "unknown"
    if not payment_id or not card_payment_reached_gateway(payment_id):
        # The reconcile found no charge at the gateway (the attempt never reached it): nothing was declined. The
        # cycle stays `charged` and the sweep sends the same attempt again (same Idempotency-Key).
        return "accepted"
    cycle_card_declined(reference=reference, reason=card_payment_message(reference))
    return "accepted"


def card_only(reason: str) -> str:
    """The gateway's decline words for a card subscription: it is paid by card only (its page offers another card,
    no Pix), so "Use outro cartão ou pague com Pix." says "Use outro cartão."."""
    return reason.replace(" ou pague com Pix.", ".")


def cycle_card_declined(*, reference: str, reason: str, today: date | None = None) -> None:
    """A card cycle's attempt was declined (inside the caller's transaction). The first charge of a subscription
    (the buyer is on the page) gives the unit back and waits for another card. A later cycle follows the retry
    rule of Pix Automático's `PERMITE_3R_7D` (the one its recurrences are created with): up to 3 retries, one a
    day, within the 7 days after the due date; the buyer is told each time (e-mail), the last failure closes the
    cycle and the next one is planned."""
    today = today or timezone.localdate()
    cycle = (
        SubscriptionCycle.objects.select_for_update(of=("self",))
        .select_related("subscription__plan")
        .filter(public_id=reference)
        .first()
    )
    if cycle is None or cycle.status != Cycle.CHARGED:
        return  # told already (a replayed outcome), or the cycle moved on
    subscription = cycle.subscription
    reason = card_only(reason) or "recusado pelo emissor do cartão"
    if subscription.status == Subscription.Status.PENDING_AUTHORIZATION:
        if cycle.stock_reserved:
            stock_release(items=_variant_items(subscription))
        cycle.status, cycle.stock_reserved = Cycle.SCHEDULED, False
        cycle.save(update_fields=["status", "stock_reserved", "updated_at"])
        _event(subscription, "card_declined", cycle=cycle.public_id, reason=reason)
        return
    # One attempt a day: the day after the later of today and the attempt that was just declined.
    retry_on = max(today, cycle.retry_on or cycle.due_date) + timedelta(days=1)
    if (
        subscription.status == Subscription.Status.ACTIVE
        and cycle.retries < MAX_RETRIES
        and retry_on <= cycle.due_date + timedelta(days=RETRY_WINDOW_DAYS)
    ):
        cycle.retries, cycle.retry_on = cycle.retries + 1, retry_on
        cycle.save(update_fields=["retries", "retry_on", "updated_at"])
        cycle_fail(reference=reference, final=False, retry_on=retry_on, reason=reason)
        return
    cycle_fail(reference=reference, final=True, retry_on=None, reason=reason)


def card_delete_at_gateway(subscription: Subscription) -> bool:
    """Remove an ended card subscription's card from the gateway's wallet (no transaction open); recorded once
    by its event, re-driven by the sweep until the gateway answers."""
    try:
        card_wallet_delete(customer_id=subscription.card_customer_id, card_id=subscription.card_id)
    except GatewayError:
        logger.warning("card of %s not deleted at the gateway yet", subscription.public_id, exc_info=True)
        return False
    with transaction.atomic():
        locked = Subscription.objects.select_for_update().get(pk=subscription.pk)
        if not locked.events.filter(kind="card_deleted").exists():
            _event(locked, "card_deleted", card_last4=locked.card_last4)
    return True


def cycles_close(subscription: Subscription) -> list[str]:
    """The subscription ended (inside the caller's transaction): scheduled cycles are cancelled and their units
    given back. Returns the txids of cycles already charged, for the caller to withdraw after commit."""
    withdrawn: list[str] = []
    card = subscription.payment_method == CARD
    for cycle in SubscriptionCycle.objects.select_for_update().filter(subscription=subscription, status__in=OPEN):
        if card and cycle.status == Cycle.CHARGED:
            continue  # a card charge in flight ends as any (paid: its order; declined: no retry, cycle closed)
        if cycle.status != Cycle.SCHEDULED and not card:
            withdrawn.append(cycle.txid)
            continue
        if cycle.stock_reserved:  # a card cycle waiting for its retry holds its unit
            stock_release(items=_variant_items(subscription))
        cycle.status, cycle.stock_reserved = Cycle.CANCELLED, False
        cycle.save(update_fields=["status", "stock_reserved", "updated_at"])
    return withdrawn


def cycle_withdraw(*, txid: str) -> bool:
    """Withdraw a charged cycle before its attempt (`PATCH /cobr/{txid}`, no transaction open), then cancel the
    cycle and give its unit back. False when the PSP refuses (its attempt date came): it is charged as planned."""
    if not pix_recurring_charge_cancel(txid=txid):
        return False
    with transaction.atomic():
        cycle = (
            SubscriptionCycle.objects.select_for_update(of=("self",))
            .select_related("subscription__plan")
            .get(txid=txid)
        )
        # A refused cycle waiting for its retry at the PSP (`retrying`) is withdrawn like one not attempted yet:
        # its charge is cancelled at the PSP above, so it must not stay open here holding its unit.
        if cycle.status not in (Cycle.CHARGED, Cycle.RETRYING):
            return cycle.status in (Cycle.CANCELLED, Cycle.SKIPPED)
        if cycle.stock_reserved:
            stock_release(items=_variant_items(cycle.subscription))
        cycle.status, cycle.stock_reserved = Cycle.CANCELLED, False
        cycle.save(update_fields=["status", "stock_reserved", "updated_at"])
    return True


def subscription_cycles_sweep(*, today: date | None = None, limit: int = 200) -> dict[str, int]:
    """Beat: plan the next cycle of active subscriptions, send the charges coming due (Pix: 10 days ahead; card:
    on the due date, and retries on their day), re-drive cycles charged whose charge was never recorded or
    answered (a crash around the PSP or gateway call), withdraw Pix charges of ended subscriptions, ask the PSP
    about authorizations whose notice never came (`GET /rec`) and remove ended subscriptions' stored cards."""
    today = today or timezone.localdate()
    counts = {"planned": 0, "charged": 0, "stock_short": 0, "recovered": 0}
    for subscription in Subscription.objects.filter(status=Subscription.Status.ACTIVE).exclude(cycles__status__in=OPEN)[
        :limit
    ]:
        with transaction.atomic():
            locked = Subscription.objects.select_for_update().get(pk=subscription.pk)
            counts["planned"] += cycle_plan(locked) is not None
    active = Q(subscription__status=Subscription.Status.ACTIVE)
    pix, card = ~Q(subscription__payment_method=CARD), Q(subscription__payment_method=CARD)
    horizon = today + timedelta(days=CHARGE_LEAD_DAYS_MAX)
    due = SubscriptionCycle.objects.filter(
        active
        & (
            (pix & Q(status=Cycle.SCHEDULED, due_date__lte=horizon))
            | (card & Q(status=Cycle.SCHEDULED, due_date__lte=today))
            | (card & Q(status=Cycle.RETRYING, retry_on__lte=today))
        )
    ).values_list("public_id", flat=True)[:limit]
    stale = timezone.now() - CHARGE_GRACE
    stuck = SubscriptionCycle.objects.filter(status=Cycle.CHARGED, updated_at__lte=stale).values_list(
        "public_id", "subscription__payment_method"
    )[:limit]
    # A card cycle still `charged` has no final answer recorded: its attempt is sent again (same Idempotency-Key).
    lost = [c for c, method in stuck if method == CARD or pix_recurring_charge_brief(c) is None]
    for cycle_id in [*due, *lost]:
        try:
            outcome = cycle_charge(cycle_id=cycle_id, today=today)
        except PSPUnavailable:
            logger.warning("cobr of %s not sent yet (PSP unavailable)", cycle_id)
            continue
        counts[outcome] = counts.get(outcome, 0) + 1
    for cycle in SubscriptionCycle.objects.filter(
        pix,
        status__in=(Cycle.CHARGED, Cycle.RETRYING),
        subscription__status=Subscription.Status.CANCELLED,
        updated_at__lte=stale,
    ).values_list("txid", flat=True)[:limit]:
        try:
            cycle_withdraw(txid=cycle)
        except PSPUnavailable:
            continue
    waiting = Subscription.objects.filter(
        status=Subscription.Status.PENDING_AUTHORIZATION,
        updated_at__lte=timezone.now() - AUTHORIZATION_LOOKUP_AFTER,
    ).exclude(pix_id_rec="")
    for id_rec in list(waiting.values_list("pix_id_rec", flat=True)[:limit]):
        try:
            pix_recurrence_refresh(id_rec=id_rec)
            counts["recovered"] += 1
        except (PSPUnavailable, PSPRejected, PSPNotFound):
            logger.warning("recurrence %s could not be read", id_rec)
    for subscription in (
        Subscription.objects.filter(status=Subscription.Status.CANCELLED, cancelled_at__isnull=False)
        .exclude(pix_id_rec="")
        .exclude(events__kind="recurrence_cancelled")[:limit]
    ):
        recurrence_cancel_at_psp(subscription)
    for subscription in (
        Subscription.objects.filter(status=Subscription.Status.CANCELLED, payment_method=CARD)
        .exclude(card_id="")
        .exclude(events__kind="card_deleted")[:limit]
    ):
        card_delete_at_gateway(subscription)
    return counts


def recurrence_cancel_at_psp(subscription: Subscription) -> bool:
    """`PATCH /rec/{idRec}` CANCELADA after the shop or the buyer cancelled (no transaction open); recorded once
    by its event, re-driven by the sweep until the PSP answers."""
    try:
        status = pix_recurrence_cancel(id_rec=subscription.pix_id_rec)
    except (PSPUnavailable, PSPNotFound):
        logger.warning("recurrence %s not cancelled at the PSP yet", subscription.pix_id_rec, exc_info=True)
        return False
    with transaction.atomic():
        locked = Subscription.objects.select_for_update().get(pk=subscription.pk)
        if not locked.events.filter(kind="recurrence_cancelled").exists():
            _event(locked, "recurrence_cancelled", psp_status=status)
    return True
