"""After complete: Pix settlement, the sweeps that finish what complete left waiting, and the lazy Pix expiry.

## Settlement and sweeps

After complete (PIX.md §3, §10): Pix settlement, and the sweeps that finish what complete left waiting.

Which task finishes which state (`shop.tasks.expire_checkouts`, beat every minute → `checkout_expire_due`):

- `complete_in_progress`, stock reserved, no payment attached yet (the worker died during the PSP or
  gateway call of checkout_complete, step 2) → `checkout_pending_due`, once `PAYMENT_PENDING_GRACE` has
  passed since step 1: a card checkout is asked at the gateway by order code (paid → the order; not
  paid → stock back; unreachable → later); a Pix one gives the stock and coupon uses back
  (`incomplete` + `pix_psp_unavailable`) and revokes a Pix charge issued meanwhile.
- `complete_in_progress` with a card payment pending (gateway timeout) → the card webhook or
  `payments.tasks.reconcile_card_payments` → `checkout_settle_card` (order, or stock back).
- `complete_in_progress` with a Pix charge attached, unpaid past its expiry → `checkout_pix_lapse_due`
  → `incomplete` + `pix_charge_expired`, stock released.
- `ready_for_complete` holding the stock and coupon uses reserved with its Pix charge (create/update,
  shop/checkout/charge.py), unpaid past the charge's expiry, or with no charge once `PAYMENT_PENDING_GRACE`
  has passed (the worker died during the PSP call of pix_charge_issue) → `checkout_pix_lapse_due`
  releases them; it stays ready, and the next write or complete charges and reserves again.
- Any non-terminal checkout past `expires_at` → `checkout_expire_due` cancels it, releasing what it holds.
- A Pix paid but its notice lost → `payments.tasks.reconcile_pix_charges` re-reads the PSP and settles it
  (`checkout_settle_pix`), also while the checkout still waits in step 2.
- A charge issued at the PSP but never recorded here holds nothing: it expires at the PSP unpaid.
- `ready_for_complete` with `paid_at` (an agent checkout paid before complete, PIX.md §3.1) →
  `checkout_paid_complete_due` places the order once `PIX_COMPLETION_GRACE_SECONDS` has passed, or, for a
  checkout locked to AP2 mandates, or an agent's one whose creator's trust tier (`Checkout.creator_tier`)
  the store no longer lets complete (`agents_complete`: none, or a higher tier), cancels it and refunds the
  Pix in full (PIX.md §10 D1, §3.2).

## Lazy expiry

Time-driven Pix work that must not wait for Celery beat (a bare `make run` has none).

`checkout_pix_withdraw` is the buyer's "Mudar forma de pagamento" on a pending Pix: the charge is removed at the
PSP first (no lock held; paid meanwhile → settled, the order follows), then one locked transaction gives the
stock and coupon uses back and re-evaluates the checkout with no instrument (`ready_for_complete` when nothing
else is missing), so the buyer pays again through the ordinary update/complete, by card or a fresh Pix.

`checkout_pix_refresh` is the lazy expiry run when a buyer reads the checkout or Pix page: a charge past
its `expires_at` gets its last look at the PSP (paid at the last moment → settled, else removed there and
expired), and the checkout lapses back to `incomplete`, releasing what it held. The Pix page's "Gerar novo
Pix" (`checkout_pix_regenerate`) is in shop/checkout/services.py: it re-runs update and complete.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone, translation
from django.utils.translation import gettext as _

from payments.selectors import pix_charge_latest_for_reference
from payments.services import (
    card_payment_reconcile,
    pix_charge_expire,
    pix_charge_revoke_for_reference,
    pix_charge_withdraw,
)
from shop.checkout.boleto import is_boleto
from shop.checkout.boleto_mail import boleto_notice_expired
from shop.checkout.charge import INSTRUMENT_PATH, err, is_pix, lines_of, reserve, save_status, unreserve
from shop.checkout.complete import place_order
from shop.checkout.core import (
    PIX_SETTLEMENT_GRACE,
    apply,
    cancel,
    event,
    in_checkout_language,
    input_from_checkout,
    lock,
    lock_if_free,
    speak,
    with_status,
)
from shop.checkout.evaluate import evaluate
from shop.checkout.selectors import CheckoutNotFound, checkout_by_public_id, creator_tier, made_on_the_shop
from shop.checkout.types import (
    STATUS_COMPLETED,
    STATUS_IN_PROGRESS,
    STATUS_INCOMPLETE,
    STATUS_READY,
    CheckoutMessage,
)
from shop.models import Checkout
from shop.models.checkout import CREATOR_TIER_CHOICES
from shop.models.store import AGENT_TIERS
from shop.store.services import AGENT_COMPLETE, AGENT_NOBODY, agent_access, agents_may_complete

# Longer than any PSP or gateway call of checkout_complete can take (the Bacen client: 3 tries × 10 s).
PAYMENT_PENDING_GRACE = timedelta(minutes=2)


@in_checkout_language
def checkout_settle_pix(
    *, reference: str, amount: int, txid: str, end_to_end_id: str, paid_at: datetime | None = None
) -> str:
    """A Pix for `reference` settled (inside payments' transaction): "accepted" or "rejected"."""
    try:
        checkout = lock(reference)
    except CheckoutNotFound:
        return "rejected"
    speak(checkout.language)
    if checkout.status == STATUS_COMPLETED:
        # The same charge reported again is fine; any other payment of a completed checkout is refunded.
        return "accepted" if checkout.payment_txid == txid else "rejected"
    if checkout.status == STATUS_IN_PROGRESS:
        if amount != checkout.total_amount or (checkout.payment_txid and checkout.payment_txid != txid):
            return "rejected"
        checkout.payment_txid = checkout.payment_txid or txid  # paid while complete was still issuing the charge
        place_order(checkout, payment_type="pix", paid_amount=amount)
        return "accepted"
    if checkout.paid_at is not None:
        return "rejected"  # already paid, waiting for complete: another payment is refunded
    reopened = checkout.status == STATUS_INCOMPLETE and bool(checkout.payment_txid) and checkout.payment_txid == txid
    if (
        (checkout.status == STATUS_READY or reopened)
        and is_pix(checkout.payment_instrument)
        and amount == checkout.total_amount
    ):
        # Paid before complete (PIX.md §3.1): hold the payment and the stock for the platform's complete.
        # Also an on-time payment of a charge whose checkout was moved back to incomplete at expiry (§3.2).
        lines = lines_of(checkout)
        existing = list(lines)
        ev = evaluate(
            checkout=checkout, existing_lines=existing, data=input_from_checkout(checkout, existing), now=timezone.now()
        )
        if ev.total_amount != amount or with_status(ev, [])[0] != STATUS_READY:
            return "rejected"
        blocking = reserve(checkout, lines, ev)
        if blocking:
            save_status(checkout, STATUS_INCOMPLETE, "payment_rejected", blocking)
            return "rejected"
        checkout.payment_txid = txid
        if made_on_the_shop(checkout) or reopened:
            # A storefront buyer paid on the Pix page: no platform will call complete, so complete now. Or this
            # is the charge of a complete already accepted (it lapsed, was paid on time, reported late): "settle
            # normally" (PIX.md §3.2), as the complete would have, not wait for a second complete that the
            # buyer on the shop's page, or an agent the store no longer lets complete, would never send.
            place_order(checkout, payment_type="pix", paid_amount=amount, lines=lines)
        else:
            _hold_payment(checkout)
        return "accepted"
    return "rejected"


def _hold_payment(checkout: Checkout) -> None:
    """PIX.md §3.1: an agent checkout paid before complete keeps the payment (and its stock, reserved above)
    and stays `ready_for_complete` with `pix_payment_received`; the platform's complete then finishes at
    once (shop/checkout/complete.py), or `checkout_paid_complete_due` after the completion grace."""
    now = timezone.now()
    checkout.paid_at = now
    # The checkout must outlive the grace, or the expiry sweep would cancel (and refund) it first.
    checkout.expires_at = max(checkout.expires_at or now, now + completion_grace() + PIX_SETTLEMENT_GRACE)
    checkout.messages = [m for m in checkout.messages if m.get("code") != "pix_charge_expired"]
    received = CheckoutMessage(
        type="info",
        code="pix_payment_received",
        content=_("Pix recebido; conclua o checkout para criar o pedido."),
        path=INSTRUMENT_PATH,
    )
    save_status(checkout, STATUS_READY, "pix_paid_before_complete", [received])


def completion_grace() -> timedelta:
    return timedelta(seconds=settings.PIX_COMPLETION_GRACE_SECONDS)


@in_checkout_language
def checkout_paid_complete_due(*, now: datetime | None = None, limit: int = 200) -> int:
    """Agent checkouts paid before complete whose platform never completed within the grace (PIX.md §10 D1):
    without AP2 the shop completes them (the Pix itself is the buyer's authorisation); a checkout locked to
    AP2 mandates (`mandate_required`) has no verified mandate, so it is canceled and the Pix refunded in full
    through the refund outbox (§3.1 "with AP2: a mandate is mandatory, so refund in full"); so is an agent's
    checkout whose creator's tier the store does not let complete (that agent's complete would be refused, so
    no order may be made for it)."""
    now = now or timezone.now()
    candidates = list(
        Checkout.objects.filter(status=STATUS_READY, paid_at__lte=now - completion_grace())
        .order_by("paid_at")
        .values_list("public_id", flat=True)[:limit]
    )
    finished = 0
    for public_id in candidates:
        with transaction.atomic():
            checkout = lock_if_free(public_id)
            if checkout is None or checkout.status != STATUS_READY or checkout.paid_at is None:
                continue
            speak(checkout.language)
            detail = {"paid_at": checkout.paid_at.isoformat()}
            # The store does not let the agent that created it complete (`agents_complete`: nobody, or a tier
            # above the creator's, maybe set after its Pix was charged): it must not become an order behind the
            # complete that agent would be refused, so the Pix goes back in full (PIX.md §3.2 "money must never
            # be kept without an order"), as under AP2. The rule is the one the complete itself is refused by.
            tier = creator_tier(checkout)
            forbidden = tier is not None and not agents_may_complete(tier)
            if forbidden:
                detail["creator_tier"] = tier
                detail["reason"] = _forbidden_reason(tier)
            event(checkout, "completion_grace_elapsed", checkout.status, detail)
            if forbidden:
                cancel(
                    checkout,
                    kind="agent_complete_forbidden_refunded",
                    refund_reason="Loja não permite compras finalizadas por agentes",
                )
            elif checkout.mandate_required:
                cancel(checkout, kind="mandate_missing_refunded", refund_reason="Sem mandato AP2 válido no prazo")
            else:
                place_order(checkout, payment_type="pix", paid_amount=checkout.total_amount)
            finished += 1
    return finished


def _forbidden_reason(tier: str) -> str:
    """Why the sweep refunded an agent's paid checkout, for the merchant's event timeline (in Portuguese, like
    the other reasons there, whatever the checkout's language)."""
    needed = agent_access()[AGENT_COMPLETE]
    if needed == AGENT_NOBODY:
        return "A loja não permite que agentes finalizem compras: o Pix foi devolvido."
    with translation.override("pt-br"):
        allowed = str(dict(AGENT_TIERS).get(needed, needed))
        creator = str(dict(CREATOR_TIER_CHOICES).get(tier, tier))
    return (
        f"Agentes que podem finalizar compras: {allowed}; este checkout foi criado por: {creator}. O Pix foi devolvido."
    )


@in_checkout_language
def checkout_pix_lapse_due(*, now: datetime | None = None, limit: int = 200) -> int:
    """`complete_in_progress` checkouts whose Pix charge expired unpaid → `incomplete` (PIX.md §3 table);
    `ready_for_complete` ones holding the stock their charge reserved give it back and stay ready.

    Stock and coupon uses are released and `pix_charge_expired` tells the platform to select Pix again
    for a fresh charge. A payment made in time but reported late still completes (checkout_settle_pix).
    """
    now = now or timezone.now()
    held = Q(status=STATUS_READY, stock_reserved=True, paid_at__isnull=True)  # reserved with a Pix charge
    candidates = list(
        Checkout.objects.filter(Q(status=STATUS_IN_PROGRESS) | held)
        .exclude(payment_instrument__type="boleto")  # a boleto waits for days: its own sweep (payments) decides
        .order_by("updated_at")
        .values_list("public_id", flat=True)[:limit]
    )
    return sum(checkout_pix_lapse(checkout_id=public_id, now=now) for public_id in candidates)


@in_checkout_language
def checkout_pix_lapse(*, checkout_id: str, now: datetime | None = None) -> bool:
    """One checkout of `checkout_pix_lapse_due` (also run lazily when its Pix page is read); True if it lapsed."""
    now = now or timezone.now()
    with transaction.atomic():
        checkout = lock_if_free(checkout_id)
        if checkout is None or not is_pix(checkout.payment_instrument):
            return False
        # Ready, unpaid, holding what its Pix charge reserved (shop.checkout.charge.hold_for_charge).
        held = checkout.status == STATUS_READY and checkout.stock_reserved and checkout.paid_at is None
        if checkout.status != STATUS_IN_PROGRESS and not held:
            return False
        if not held and not checkout.payment_txid:
            return False  # still waiting for the PSP in checkout_complete: checkout_pending_due finishes it
        if held and checkout.updated_at > now - PAYMENT_PENDING_GRACE:
            return False  # its charge may still be on its way from the PSP (pix.pix_charge_issue, no lock held)
        charge = pix_charge_latest_for_reference(checkout_id)
        expired = (
            charge is None
            or charge.status in ("expired", "revoked")
            or (charge.status == "active" and charge.expires_at + PIX_SETTLEMENT_GRACE <= now)
        )
        if not expired:
            return False
        speak(checkout.language)
        unreserve(checkout, lines_of(checkout))
        if held:
            # Still ready: the next write or complete issues a new charge (and reserves again); a payment of
            # this one made in time but reported late takes the stock if there is any, else is refunded.
            save_status(checkout, STATUS_READY, "pix_expired")
            return True
        checkout.messages = [m for m in checkout.messages if m.get("code") != "pix_awaiting_payment"]
        message = err("pix_charge_expired", _("O Pix expirou sem pagamento; escolha o Pix de novo."), INSTRUMENT_PATH)
        save_status(checkout, STATUS_INCOMPLETE, "pix_expired", [message])
    return True


@in_checkout_language
def checkout_settle_card(*, reference: str, payment_id: str, status: str, amount: int) -> str:
    """A card outcome learned late (webhook, reconcile; inside payments' transaction): "accepted" or "rejected".

    An approval places the order of a checkout still waiting for it; a decline gives its stock back. An
    approval nobody waits for any more (the checkout expired or was canceled meanwhile) is "rejected", and
    payments refunds it in full.
    """
    try:
        checkout = lock(reference)
    except CheckoutNotFound:
        return "rejected"
    speak(checkout.language)
    waiting = checkout.status == STATUS_IN_PROGRESS and checkout.payment_txid in ("", payment_id)
    card = (checkout.payment_instrument or {}).get("type") == "card"
    if status != "approved":
        if waiting and card:
            unreserve(checkout, lines_of(checkout))
            checkout.messages = [m for m in checkout.messages if m.get("code") != "card_payment_pending"]
            down = err("payment_failed", _("Pagamento recusado."), INSTRUMENT_PATH)
            save_status(checkout, STATUS_INCOMPLETE, "payment_failed", [down])
        return "accepted"
    if checkout.status == STATUS_COMPLETED:
        return "accepted" if checkout.payment_txid == payment_id else "rejected"
    if not (waiting and card and checkout.stock_reserved) or amount != checkout.total_amount:
        return "rejected"
    checkout.payment_txid = payment_id
    place_order(checkout, payment_type="card", paid_amount=amount)
    return "accepted"


@in_checkout_language
def checkout_pending_due(*, now: datetime | None = None, limit: int = 200) -> int:
    """Finish completes whose worker died during the payment call (step 2 of checkout_complete).

    A card checkout is asked at the gateway first (by order code, outside any transaction): paid →
    the order is placed (through `checkout_settle_card`); not paid → the stock is released; the gateway
    unreachable → looked at again on the next run. Nothing is released on a guess.
    """
    now = now or timezone.now()
    finished = 0
    candidates = list(
        Checkout.objects.filter(status=STATUS_IN_PROGRESS, payment_txid="", updated_at__lte=now - PAYMENT_PENDING_GRACE)
        .order_by("updated_at")
        .values("public_id", "payment_instrument")[:limit]
    )
    for row in candidates:
        public_id = row["public_id"]
        if is_boleto(row["payment_instrument"]):
            finished += int(_boleto_never_issued(public_id))
            continue
        if not is_pix(row["payment_instrument"]):
            answer = card_payment_reconcile(reference=public_id)  # records and announces; the receiver acts
            finished += int(answer is not None)
            continue
        with transaction.atomic():
            checkout = lock_if_free(public_id)
            if checkout is None or checkout.status != STATUS_IN_PROGRESS or checkout.payment_txid:
                continue
            speak(checkout.language)
            unreserve(checkout, lines_of(checkout))
            pix_charge_revoke_for_reference(reference=public_id)
            down = err("pix_psp_unavailable", _("Pix indisponível no momento; tente novamente."), INSTRUMENT_PATH)
            save_status(checkout, STATUS_INCOMPLETE, "payment_failed", [down])
            finished += 1
    return finished


def _boleto_never_issued(public_id: str) -> bool:
    """A boleto complete whose worker died during the gateway call (no boleto recorded): nobody was shown a
    line to pay, so the stock goes back at once (a boleto issued at the gateway lapses there unpaid)."""
    with transaction.atomic():
        checkout = lock_if_free(public_id)
        if checkout is None or checkout.status != STATUS_IN_PROGRESS or checkout.payment_txid:
            return False
        speak(checkout.language)
        unreserve(checkout, lines_of(checkout))
        down = err("boleto_unavailable", _("Boleto indisponível no momento; tente novamente."), INSTRUMENT_PATH)
        save_status(checkout, STATUS_INCOMPLETE, "payment_failed", [down])
    return True


@in_checkout_language
def checkout_settle_boleto(*, reference: str, payment_id: str, status: str, amount: int) -> str:
    """A boleto paid or expired (inside payments' transaction, boleto row locked): "accepted" or "rejected".

    Paid: the order of the checkout waiting for this boleto is placed, once (a replay finds it completed with
    this payment). Expired: the stock and coupon uses it held go back and the checkout asks for another
    payment (`boleto_expired`), as an expired Pix does. A payment nobody waits for any more is "rejected" and
    payments records its refund by transfer.
    """
    try:
        checkout = lock(reference)
    except CheckoutNotFound:
        return "rejected"
    speak(checkout.language)
    waiting = checkout.status == STATUS_IN_PROGRESS and checkout.payment_txid == payment_id
    if status == "expired":
        if waiting:
            unreserve(checkout, lines_of(checkout))
            checkout.messages = [m for m in checkout.messages if m.get("code") != "boleto_awaiting_payment"]
            text = _("O boleto venceu sem pagamento; escolha a forma de pagamento de novo.")
            save_status(checkout, STATUS_INCOMPLETE, "boleto_expired", [err("boleto_expired", text, INSTRUMENT_PATH)])
            boleto_notice_expired(checkout, payment_id)  # the buyer learns it by e-mail, once
        return "accepted"
    if checkout.status == STATUS_COMPLETED:
        return "accepted" if checkout.payment_txid == payment_id else "rejected"
    if not (waiting and checkout.stock_reserved) or amount != checkout.total_amount:
        return "rejected"
    checkout.messages = [m for m in checkout.messages if m.get("code") != "boleto_awaiting_payment"]
    place_order(checkout, payment_type="boleto", paid_amount=amount)
    return "accepted"


def checkout_pix_refresh(*, checkout_id: str) -> bool:
    """Expire this checkout's Pix if it is past due and lapse the checkout; True when it lapsed.

    The PSP is called outside any transaction (payments.pix_charge_expire); the lapse is one locked
    transaction (checkout_pix_lapse), the same the beat sweep runs.
    """
    checkout = checkout_by_public_id(checkout_id)
    if checkout.status != STATUS_IN_PROGRESS:
        return False
    charge = pix_charge_latest_for_reference(checkout_id)
    if charge is not None and charge.status == "active":
        if charge.expires_at > timezone.now():
            return False
        if pix_charge_expire(txid=charge.txid) != "expired":
            return False  # paid at the last moment (now settling), or the PSP could not be asked
    return checkout_pix_lapse(checkout_id=checkout_id)


WITHDRAWN = "withdrawn"


@in_checkout_language
def checkout_pix_withdraw(*, checkout_id: str) -> str:
    """The buyer leaves a pending Pix to choose another payment method (issue 33).

    Returns "withdrawn" (the checkout can be paid again, the charge can no longer be paid), "settled" (it was
    paid meanwhile: the order is placed), "unavailable" (the PSP could not cancel it now: nothing changed) or
    "not_pending" (the checkout does not wait for a Pix).
    """
    checkout = checkout_by_public_id(checkout_id)
    if checkout.status != STATUS_IN_PROGRESS or not is_pix(checkout.payment_instrument) or not checkout.payment_txid:
        return "not_pending"
    outcome = pix_charge_withdraw(txid=checkout.payment_txid)  # PSP calls: no transaction open
    if outcome in ("settled", "paid"):
        return "settled"
    if outcome == "not_withdrawable":
        return "not_pending"
    if outcome not in ("revoked", "expired"):
        return "unavailable"
    return WITHDRAWN if _reopen(checkout_id, txid=checkout.payment_txid) else "not_pending"


def _reopen(checkout_id: str, *, txid: str) -> bool:
    with transaction.atomic():
        checkout = lock(checkout_id, lines=True)
        if checkout.status != STATUS_IN_PROGRESS or checkout.payment_txid != txid:
            return False  # settled or lapsed meanwhile
        speak(checkout.language)
        existing = list(checkout.lines.all())  # read with the lock, with their variants' live columns
        unreserve(checkout, existing)
        state = replace(input_from_checkout(checkout, existing), payment=None)
        ev = evaluate(checkout=checkout, existing_lines=existing, data=state, now=timezone.now())
        status, messages = with_status(ev, [])
        apply(checkout, ev, messages, existing, save=False)
        checkout.payment_txid = ""  # the withdrawn charge is gone at the PSP; a card complete starts clean
        save_status(checkout, status, "pix_withdrawn")
    return True
