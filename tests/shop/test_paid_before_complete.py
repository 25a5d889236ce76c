"""A Pix paid before complete (PIX.md §3.1, §10 D1): an agent checkout waits for the platform's complete.

PIX.md §3.1: "checkout `ready_for_complete` (buyer paid before complete was called) → keep the payment,
stay `ready_for_complete` with info `pix_payment_received`; the next complete returns `completed`
synchronously. If no complete arrives within `completion_grace_seconds` … without AP2: auto-complete".
A storefront checkout has no platform to call complete: its buyer's payment completes it at once.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest
from django.utils import timezone

from orders.models import Order
from payments.models import PixCharge, PixRefund
from payments.sandbox.services import PayOptions, pay
from payments.selectors import pix_charge_active_for_reference
from shop.checkout.selectors import creator_tier
from shop.checkout.services import (
    checkout_cancel,
    checkout_complete,
    checkout_create,
    checkout_expire_due,
    checkout_pix_lapse_due,
    checkout_update,
)
from shop.checkout.types import CompleteInput, InstrumentInput, LineInput, PaymentInput
from shop.models import Checkout, Variant
from shop.store.services import store_row
from tests.shop.checkout_factories import full_input, make_shipping, make_variant

pytestmark = pytest.mark.django_db

PIX = InstrumentInput(id="instr_1", handler_id="pix_recebedor_001", type="pix")
CARD = InstrumentInput(
    id="instr_c", handler_id="gpay", type="card", credential={"type": "PAYMENT_GATEWAY", "token": "success_token"}
)


def paid_checkout(
    capture, *, session_key: str = "", mandate_required: bool = False, creator_tier: str = ""
) -> Checkout:
    """A ready Pix checkout (agent unless `session_key`) whose buyer paid before anyone called complete."""
    make_variant(price=4290, stock=10)
    make_shipping()
    data = replace(full_input(LineInput("SKU-CAFE-500G", 2), option="pac"), payment=PaymentInput(instruments=(PIX,)))
    checkout = checkout_create(
        data=data, session_key=session_key, mandate_required=mandate_required, creator_tier=creator_tier
    ).checkout
    assert checkout.status == "ready_for_complete"
    with capture(execute=True):
        pay(txid=pix_charge_active_for_reference(checkout.public_id).txid, options=PayOptions())
    return Checkout.objects.get(pk=checkout.pk)


def stock() -> int:
    return Variant.objects.get(sku="SKU-CAFE-500G").stock


def complete(checkout: Checkout, instrument: InstrumentInput = PIX):
    return checkout_complete(
        checkout_id=checkout.public_id, data=CompleteInput(payment=PaymentInput(instruments=(instrument,)))
    )


def test_agent_checkout_paid_before_complete_waits_with_pix_payment_received_pix_3_1(
    django_capture_on_commit_callbacks,
):
    """PIX.md §3.1: stays `ready_for_complete` with info `pix_payment_received`; the stock is held for it."""
    checkout = paid_checkout(django_capture_on_commit_callbacks)
    assert checkout.status == "ready_for_complete"
    assert [(m["type"], m["code"], m["path"]) for m in checkout.messages] == [
        ("info", "pix_payment_received", "$.payment.instruments[0]")
    ]
    assert not Order.objects.exists()
    assert (checkout.stock_reserved, stock()) == (True, 8)
    assert checkout.expires_at >= checkout.paid_at + timedelta(minutes=15)


def test_complete_after_payment_finishes_synchronously_without_a_new_charge_pix_3_1(
    django_capture_on_commit_callbacks,
):
    """PIX.md §3.1: "the next complete returns `completed` synchronously"."""
    checkout = paid_checkout(django_capture_on_commit_callbacks)
    result = complete(checkout)
    assert result.checkout.status == "completed"
    assert [m.code for m in result.messages] == []
    order = Order.objects.get(checkout_id=checkout.public_id)
    assert result.checkout.order_id == order.public_id
    assert PixCharge.objects.filter(reference=checkout.public_id).count() == 1
    assert stock() == 8
    assert not PixRefund.objects.exists()


def test_complete_with_another_instrument_after_payment_is_refused_bcp_pay_03(django_capture_on_commit_callbacks):
    checkout = paid_checkout(django_capture_on_commit_callbacks)
    result = complete(checkout, CARD)
    assert result.checkout.status == "ready_for_complete"
    assert [(m.code, m.path) for m in result.messages][-1] == ("payment_failed", "$.payment.instruments[0]")
    assert not Order.objects.exists()


def test_update_after_payment_is_refused_recoverably(django_capture_on_commit_callbacks):
    """The paid total must not change: update is refused like during `complete_in_progress` (BCP-CHK-12)."""
    checkout = paid_checkout(django_capture_on_commit_callbacks)
    result = checkout_update(checkout_id=checkout.public_id, data=full_input(LineInput("SKU-CAFE-500G", 1)))
    assert result.checkout.status == "ready_for_complete"
    assert (result.messages[-1].code, result.messages[-1].severity) == ("invalid_checkout_status", "recoverable")
    assert Checkout.objects.get(pk=checkout.pk).lines.get().quantity == 2


def after_the_grace(capture, checkout: Checkout) -> Checkout:
    """The sweeps a second before and a second after a 900 s completion grace; nothing happens before it."""
    checkout_expire_due(now=timezone.now() + timedelta(seconds=899))
    assert Checkout.objects.get(pk=checkout.pk).status == "ready_for_complete"
    with capture(execute=True):
        checkout_expire_due(now=timezone.now() + timedelta(seconds=901))
    return Checkout.objects.get(pk=checkout.pk)


def refunded_in_full_without_an_order(done: Checkout, checkout: Checkout) -> list:
    """Canceled, no order, the stock back and the whole Pix in the refund outbox (PIX.md §3.2); its events."""
    assert done.status == "canceled"
    assert not Order.objects.filter(checkout_id=checkout.public_id).exists()
    assert stock() == 10
    refund = PixRefund.objects.get(reference=checkout.public_id)
    assert (refund.kind, refund.amount) == ("automatic", checkout.total_amount)
    return list(done.events.order_by("id"))


def refunded_once_after_a_later_sweep(capture, checkout: Checkout) -> None:
    with capture(execute=True):
        checkout_expire_due(now=timezone.now() + timedelta(days=1))
    assert PixRefund.objects.filter(reference=checkout.public_id).count() == 1


def test_the_shop_completes_only_after_the_grace_period_pix_10_d1(django_capture_on_commit_callbacks, settings):
    """PIX.md §10 D1: no complete within `completion_grace_seconds` → the shop completes it (no AP2)."""
    settings.PIX_COMPLETION_GRACE_SECONDS = 900
    checkout = paid_checkout(django_capture_on_commit_callbacks)
    done = after_the_grace(django_capture_on_commit_callbacks, checkout)
    assert done.status == "completed"
    assert done.messages == []
    assert Order.objects.get(checkout_id=checkout.public_id).public_id == done.order_id
    assert list(done.events.values_list("kind", flat=True).order_by("id"))[-2:] == [
        "completion_grace_elapsed",
        "completed",
    ]


def test_an_ap2_checkout_is_refunded_not_completed_after_the_grace_pix_10_d1(
    django_capture_on_commit_callbacks, settings
):
    """PIX.md §10 D1: "with AP2 active it refunds in full" (§3.1: "with AP2: a mandate is mandatory, so refund
    in full"): no verified mandate within the grace → canceled, stock back, the whole Pix in the refund outbox."""
    settings.PIX_COMPLETION_GRACE_SECONDS = 900
    checkout = paid_checkout(django_capture_on_commit_callbacks, mandate_required=True)
    done = after_the_grace(django_capture_on_commit_callbacks, checkout)
    events = refunded_in_full_without_an_order(done, checkout)
    assert [e.kind for e in events][-2:] == [
        "completion_grace_elapsed",
        "mandate_missing_refunded",
    ]


def test_agent_checkout_is_refunded_not_completed_when_agents_may_not_complete_pix_3_1(
    django_capture_on_commit_callbacks, settings
):
    """Store setting "agentes podem finalizar: nenhum agente": the agent's complete is refused (403), so the
    shop's own completion after the grace (PIX.md §3.1, §10 D1) must not place the order behind it either
    (QA walk: it did). The Pix goes back in full through the refund outbox, once (§3.2 "money must never be
    kept without an order"), and the checkout's events say why."""
    settings.PIX_COMPLETION_GRACE_SECONDS = 900
    checkout = paid_checkout(django_capture_on_commit_callbacks)
    row = store_row()
    row.agents_complete = "none"
    row.save()
    done = after_the_grace(django_capture_on_commit_callbacks, checkout)
    events = refunded_in_full_without_an_order(done, checkout)
    assert [e.kind for e in events][-2:] == ["completion_grace_elapsed", "agent_complete_forbidden_refunded"]
    assert "não permite que agentes finalizem" in events[-2].detail["reason"]
    refunded_once_after_a_later_sweep(django_capture_on_commit_callbacks, checkout)


def test_a_checkout_whose_creator_may_no_longer_complete_is_refunded_not_completed_pix_3_1(
    django_capture_on_commit_callbacks, settings
):
    """An anonymous agent's checkout got its Pix charge; the merchant then set "agentes: finalizar compras" to
    signing platforms only, and the buyer paid. That agent's complete is now refused (401), so the shop's own
    completion after the grace (PIX.md §3.1, §10 D1) must not place the order either (it did: the sweep only
    knew "nenhum agente"). Refunded in full, once (§3.2), the events naming the setting and the creator."""
    settings.PIX_COMPLETION_GRACE_SECONDS = 900
    checkout = paid_checkout(django_capture_on_commit_callbacks, session_key="profile:abc", creator_tier="anonymous")
    assert (checkout.status, checkout.creator_tier) == ("ready_for_complete", "anonymous")
    row = store_row()
    row.agents_complete = "signed"
    row.save()
    done = after_the_grace(django_capture_on_commit_callbacks, checkout)
    events = refunded_in_full_without_an_order(done, checkout)
    assert [e.kind for e in events][-2:] == ["completion_grace_elapsed", "agent_complete_forbidden_refunded"]
    assert events[-2].detail["creator_tier"] == "anonymous"
    assert "Somente plataformas que assinam" in events[-2].detail["reason"]
    assert "Agente anônimo" in events[-2].detail["reason"]
    refunded_once_after_a_later_sweep(django_capture_on_commit_callbacks, checkout)


def test_a_checkout_whose_creator_still_may_complete_is_completed_pix_10_d1(
    django_capture_on_commit_callbacks, settings
):
    """The same setting leaves a signing platform's checkout to the ordinary completion after the grace."""
    settings.PIX_COMPLETION_GRACE_SECONDS = 900
    checkout = paid_checkout(django_capture_on_commit_callbacks, creator_tier="signed")
    row = store_row()
    row.agents_complete = "signed"
    row.save()
    done = after_the_grace(django_capture_on_commit_callbacks, checkout)
    assert done.status == "completed"
    assert not PixRefund.objects.filter(reference=checkout.public_id).exists()


def test_a_checkout_from_before_the_tier_was_recorded_counts_as_the_least_trusted_tier_its_row_allows():
    """No recorded tier: no platform → anonymous; a signing platform's `sig_…` id → signed; another platform
    → registered; a buyer's or staff's checkout is no agent's (None)."""
    rows = [
        Checkout(session_key="profile:abc"),
        Checkout(platform_id="sig_0123"),
        Checkout(platform_id="plat_0123"),
        Checkout(platform_id="plat_0123", creator_tier="signed"),
        Checkout(session_key="sess-1"),
        Checkout(session_key="admin:1"),
    ]
    assert [creator_tier(row) for row in rows] == ["anonymous", "signed", "registered", "signed", None, None]


def test_an_accepted_completes_charge_paid_on_time_but_reported_after_its_lapse_places_the_order_pix_3_2(
    django_capture_on_commit_callbacks,
):
    """PIX.md §3.2: a payment made in time and reported after the charge lapsed "settles normally (re-open the
    checkout flow if it was moved to incomplete)". Its complete had been accepted, so the order is placed now.
    It used to wait as "paid before complete" for a second complete, and the sweep then refunded it when the
    checkout's agent may no longer complete: also when the buyer had completed it on the shop's page."""
    make_variant(price=4290, stock=10)
    make_shipping()
    data = replace(full_input(LineInput("SKU-CAFE-500G", 2), option="pac"), payment=PaymentInput(instruments=(PIX,)))
    checkout = checkout_create(data=data, session_key="profile:abc", creator_tier="anonymous").checkout
    assert complete(checkout).checkout.status == "complete_in_progress"
    charge = pix_charge_active_for_reference(checkout.public_id)
    assert checkout_pix_lapse_due(now=charge.expires_at + timedelta(minutes=5)) == 1
    assert Checkout.objects.get(pk=checkout.pk).status == "incomplete"
    row = store_row()
    row.agents_complete = "signed"  # the merchant changed the setting meanwhile
    row.save()
    with django_capture_on_commit_callbacks(execute=True):
        pay(txid=charge.txid, options=PayOptions())  # paid before the charge's expiry, reported after the lapse
    done = Checkout.objects.get(pk=checkout.pk)
    assert done.status == "completed"
    assert Order.objects.get(checkout_id=checkout.public_id).public_id == done.order_id
    checkout_expire_due(now=timezone.now() + timedelta(days=1))
    assert not PixRefund.objects.filter(reference=checkout.public_id).exists()
    assert stock() == 8


def test_cancel_after_payment_refunds_the_pix_in_full_pix_3_2(django_capture_on_commit_callbacks):
    """PIX.md §3.2: "Money must never be kept without an order"."""
    checkout = paid_checkout(django_capture_on_commit_callbacks)
    with django_capture_on_commit_callbacks(execute=True):
        canceled = checkout_cancel(checkout_id=checkout.public_id)
    assert canceled.checkout.status == "canceled"
    assert stock() == 10
    refund = PixRefund.objects.get(reference=checkout.public_id)
    assert (refund.kind, refund.amount) == ("automatic", checkout.total_amount)


def test_storefront_checkout_still_completes_on_payment(django_capture_on_commit_callbacks):
    """A human buyer's payment on the storefront's Pix page is the completion (no platform calls complete),
    whatever the store lets agents do."""
    row = store_row()
    row.agents_complete = "signed"
    row.save()
    checkout = paid_checkout(django_capture_on_commit_callbacks, session_key="sess-1")
    assert checkout.status == "completed"
    assert Order.objects.filter(checkout_id=checkout.public_id).count() == 1
