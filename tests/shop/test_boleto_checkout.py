"""Boleto through the card gateway (issue 37) against a fake Pagar.me v5 on 127.0.0.1: complete issues the
boleto (due date from the store setting, in business days), the `charge.paid` webhook places exactly one order
(replayed, and with a crash inside the settling transaction), an unpaid boleto past due + grace is canceled at
the gateway and its stock and coupon given back, a refund waits for staff's bank transfer and completes once."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import date, timedelta
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from orders.models import Adjustment, Order
from orders.services import order_refund
from payments.boleto.codes import barcode_from_line
from payments.boleto.service import boleto_expire_due, boleto_settle_confirmed, business_days_after
from payments.card.pagarme import PagarmeGateway
from payments.models import BoletoPayment, BoletoRefund, CardWebhookEvent, PixCharge
from payments.selectors import pix_charge_active_for_reference
from payments.services import boleto_refund_mark_transferred
from payments.signals import boleto_settled
from payments.tasks import reconcile_card_payments, sweep_boletos
from shop.checkout.complete import _begin
from shop.checkout.core import ANY_OWNER
from shop.checkout.services import (
    checkout_complete,
    checkout_create,
    checkout_expire_due,
    checkout_pending_due,
    checkout_pix_lapse_due,
)
from shop.checkout.types import BuyerInput, CompleteInput, InstrumentInput, LineInput, PaymentInput
from shop.models import Checkout, CouponRedemption, StoreSettings, Variant
from tests.payments.fake_pagarme import FakePagarmeServer, webhook_authorization
from tests.shop.checkout_factories import full_input, make_coupon, make_shipping, make_variant

pytestmark = pytest.mark.django_db

# Statements of a boleto complete (step 1 as for any instrument; step 2's one read of the reference's boletos;
# step 3: lock, the boleto with its event in one INSERT, the checkout with its event), savepoints of the test's
# transaction included, and of the settlement that places the order (the boleto row, the checkout, the order).
BOLETO_COMPLETE_BUDGET = 14  # + the "boleto emitido" e-mail row (shop/checkout/boleto_mail.py)
BOLETO_SETTLE_BUDGET = 14  # + the order number drawn from its counter at placement (issue 33: no gaps)
BOLETO = InstrumentInput(id="instr_b", handler_id="br.dev.bcp.boleto", type="boleto")


def _ready(*, tax_id: str = "529.982.247-25", coupon: str = "") -> Checkout:
    make_variant(price=10000, stock=5)
    make_shipping()
    data = full_input(LineInput("SKU-CAFE-500G", 1), option="pac")
    if coupon:
        data = replace(data, discount_codes=(coupon,))
    data = replace(data, buyer=replace(data.buyer, tax_id=tax_id) if data.buyer else BuyerInput(tax_id=tax_id))
    return checkout_create(data=replace(data, payment=PaymentInput(instruments=(BOLETO,)))).checkout


def _complete(checkout: Checkout):
    return checkout_complete(checkout_id=checkout.public_id, data=CompleteInput(payment=PaymentInput((BOLETO,))))


def _stock() -> int:
    return Variant.objects.get(sku="SKU-CAFE-500G").stock


def _post_hook(pagarme: FakePagarmeServer, charge_id: str, *, hook_id: str = "hook_boleto_1"):
    body = pagarme.webhook("charge.paid", charge_id, hook_id=hook_id)
    return Client().post(
        "/payments/card/webhook", data=json.dumps(body), content_type="application/json",
        HTTP_AUTHORIZATION=webhook_authorization(),
    )  # fmt: skip


def test_a_boleto_complete_on_a_checkout_with_a_pix_charge_revokes_that_charge_bcp_pay_05(
    pagarme: FakePagarmeServer,
) -> None:
    """BCP-PAY-05 (QA walk, as for the card): a boleto complete moved the checkout off Pix and left its Pix charge
    active at the PSP, its QR payable beside the boleto. Revoked when the complete leaves Pix."""
    make_variant(price=10000, stock=5)
    make_shipping()
    data = full_input(LineInput("SKU-CAFE-500G", 1), option="pac")
    data = replace(data, buyer=replace(data.buyer, tax_id="529.982.247-25") if data.buyer else None)
    pix = InstrumentInput(id="instr_1", handler_id="pix_recebedor_001", type="pix")
    checkout = checkout_create(data=replace(data, payment=PaymentInput(instruments=(pix,)))).checkout
    assert PixCharge.objects.get(reference=checkout.public_id).status == "active"

    result = _complete(checkout)

    assert result.checkout.status == "complete_in_progress"
    assert BoletoPayment.objects.get().reference == checkout.public_id
    assert pix_charge_active_for_reference(checkout.public_id) is None
    assert PixCharge.objects.get(reference=checkout.public_id).status == "revoked"


def test_complete_with_boleto_issues_it_due_in_the_store_business_days_and_holds_the_stock(
    pagarme: FakePagarmeServer,
) -> None:
    StoreSettings.objects.update_or_create(pk=1, defaults={"boleto_due_business_days": 3})
    checkout = _ready()

    result = _complete(checkout)

    boleto = BoletoPayment.objects.get()
    assert result.checkout.status == "complete_in_progress"
    assert result.checkout.payment_txid == boleto.payment_id
    assert [m.code for m in result.messages] == ["boleto_awaiting_payment"]
    assert (boleto.status, boleto.amount, boleto.reference) == ("issued", checkout.total_amount, checkout.public_id)
    assert len(barcode_from_line(boleto.line)) == 44  # a line whose check digits hold
    assert boleto.pdf_url.endswith("/pdf")
    assert _stock() == 4
    create = next(r for r in pagarme.state.requests if r[0] == "POST")
    sent = create[2]["payments"][0]
    assert sent["payment_method"] == "boleto"
    due = date.fromisoformat(sent["boleto"]["due_at"][:10])
    assert boleto.due_date == due
    assert due.weekday() < 5 and (due - date.today()).days >= 3
    assert create[2]["customer"]["document"] == "52998224725"
    assert create[3]["idempotency-key"] == f"{checkout.public_id}-boleto-1"
    # the Pix and checkout sweeps leave it waiting: its expiry is a day past the boleto's own
    assert (checkout_pix_lapse_due(), checkout_expire_due()) == (0, 0)
    assert Checkout.objects.get(pk=checkout.pk).status == "complete_in_progress"
    assert result.checkout.expires_at.date() > boleto.due_date


def test_business_days_skip_the_weekend_and_banking_holidays() -> None:
    friday = date(2026, 12, 4)
    assert business_days_after(friday, 3) == date(2026, 12, 9)  # Mon, Tue, Wed
    assert business_days_after(friday, 0) == friday
    # Christmas Eve (half a banking day: not counted), Christmas (Fri 25) and the weekend: Wed 23 + 3 business
    # days is Mon 28, Tue 29, Wed 30; New Year's Eve has no banking to the public either
    assert business_days_after(date(2026, 12, 23), 3) == date(2026, 12, 30)
    assert business_days_after(date(2026, 12, 30), 1) == date(2027, 1, 4)
    # Carnival Monday and Tuesday 2027 (Feb 8, 9) have no banking: Fri 5 + 2 is Wed 10 (Ash Wednesday), Thu 11
    assert business_days_after(date(2027, 2, 5), 2) == date(2027, 2, 11)
    # Corpus Christi 2027 (Thu May 27) and Tiradentes (Tue Apr 21)
    assert business_days_after(date(2027, 5, 26), 1) == date(2027, 5, 28)
    assert business_days_after(date(2027, 4, 20), 1) == date(2027, 4, 22)


def test_boleto_without_the_buyers_cpf_is_refused_naming_the_field_and_nothing_is_reserved(
    pagarme: FakePagarmeServer,
) -> None:
    checkout = _ready(tax_id="")

    result = _complete(checkout)

    assert result.checkout.status == "ready_for_complete"
    refused = [m for m in result.messages if m.type == "error"]
    assert [(m.code, m.path) for m in refused] == [("field_required", "$.buyer.tax_id")]
    assert refused[0].content == "Informe o CPF ou CNPJ do comprador para pagar com boleto."
    assert _stock() == 5
    assert BoletoPayment.objects.count() == 0
    assert pagarme.state.requests == []


def test_paid_webhook_places_exactly_one_order_even_when_replayed(
    pagarme: FakePagarmeServer, django_capture_on_commit_callbacks
) -> None:
    checkout = _ready()
    _complete(checkout)
    boleto = BoletoPayment.objects.get()
    pagarme.pay_boleto(boleto.gateway_charge_id)

    with django_capture_on_commit_callbacks(execute=True):
        first = _post_hook(pagarme, boleto.gateway_charge_id)
    with django_capture_on_commit_callbacks(execute=True):
        replay = _post_hook(pagarme, boleto.gateway_charge_id)  # the same hook id again
    with django_capture_on_commit_callbacks(execute=True):
        other = _post_hook(pagarme, boleto.gateway_charge_id, hook_id="hook_boleto_2")  # order.paid-like twin

    assert (first.json(), replay.json(), other.json()) == (
        {"received": 1, "duplicates": 0},
        {"received": 0, "duplicates": 1},
        {"received": 1, "duplicates": 0},
    )
    order = Order.objects.get()
    assert (order.checkout_id, order.payment_type, order.paid_amount) == (
        checkout.public_id, "boleto", checkout.total_amount,
    )  # fmt: skip
    assert list(CardWebhookEvent.objects.order_by("id").values_list("outcome", flat=True)) == ["paid", "duplicate"]
    boleto.refresh_from_db()
    assert boleto.status == "paid"
    assert Checkout.objects.get(pk=checkout.pk).status == "completed"
    assert (order.payment_txid, order.payment_status) == (boleto.payment_id, "paid")
    confirmed = order.timeline.get(kind="payment_confirmed")  # once, in the placement's INSERT
    assert confirmed.message == f"Pagamento do boleto confirmado: R$ 118,90 (boleto {boleto.payment_id})."
    assert _stock() == 4  # taken once, at complete


def test_a_crash_inside_the_settling_transaction_leaves_nothing_and_the_sweep_places_one_order(
    pagarme: FakePagarmeServer, django_capture_on_commit_callbacks
) -> None:
    checkout = _ready()
    _complete(checkout)
    boleto = BoletoPayment.objects.get()
    pagarme.pay_boleto(boleto.gateway_charge_id)

    def crash(**_: Any) -> str:
        raise RuntimeError("worker killed after the order was written, before commit")

    boleto_settled.connect(crash, dispatch_uid="test.crash")  # runs after the shop's receiver placed the order
    try:
        with django_capture_on_commit_callbacks(execute=True):
            stored = _post_hook(pagarme, boleto.gateway_charge_id)  # the task dies; the 200 was already given
    finally:
        boleto_settled.disconnect(dispatch_uid="test.crash")

    assert stored.json() == {"received": 1, "duplicates": 0}
    assert Order.objects.count() == 0  # rolled back with the boleto row
    boleto.refresh_from_db()
    assert boleto.status == "issued"
    event = CardWebhookEvent.objects.get()
    assert event.processed_at is None
    CardWebhookEvent.objects.filter(pk=event.pk).update(received_at=event.received_at - timedelta(minutes=5))

    reconcile_card_payments()  # the beat sweep re-drives the unprocessed inbox row
    reconcile_card_payments()

    assert Order.objects.count() == 1
    assert CardWebhookEvent.objects.get().outcome == "paid"


def test_unpaid_boleto_past_due_and_grace_is_canceled_and_gives_back_stock_and_coupon(
    pagarme: FakePagarmeServer, settings
) -> None:
    settings.BOLETO_EXPIRY_GRACE_DAYS = 2
    make_coupon("UMAVEZ", usage_limit=1)
    checkout = _ready(coupon="UMAVEZ")
    _complete(checkout)
    boleto = BoletoPayment.objects.get()
    assert _stock() == 4
    assert CouponRedemption.objects.filter(checkout=checkout).count() == 1  # the coupon's one use is held

    assert boleto_expire_due() == 0  # not due yet
    BoletoPayment.objects.filter(pk=boleto.pk).update(due_date=date.today() - timedelta(days=3))
    assert boleto_expire_due() == 1
    assert boleto_expire_due() == 0  # once

    boleto.refresh_from_db()
    assert boleto.status == "expired"
    assert pagarme.state.charges[boleto.gateway_charge_id]["status"] == "canceled"
    fresh = Checkout.objects.get(pk=checkout.pk)
    assert fresh.status == "incomplete"
    assert [m["code"] for m in fresh.messages if m["type"] == "error"] == ["boleto_expired"]
    assert _stock() == 5
    assert CouponRedemption.objects.count() == 0  # and given back with the stock


def test_a_boleto_paid_at_the_last_moment_is_settled_by_the_expiry_look_not_canceled(
    pagarme: FakePagarmeServer,
) -> None:
    checkout = _ready()
    _complete(checkout)
    boleto = BoletoPayment.objects.get()
    pagarme.pay_boleto(boleto.gateway_charge_id)  # its webhook was lost
    BoletoPayment.objects.filter(pk=boleto.pk).update(due_date=date.today() - timedelta(days=10))

    assert boleto_expire_due() == 0

    assert Order.objects.get().checkout_id == checkout.public_id
    assert pagarme.state.charges[boleto.gateway_charge_id]["status"] == "paid"


def test_refund_of_a_paid_boleto_waits_for_the_transfer_and_completes_once(
    pagarme: FakePagarmeServer, django_capture_on_commit_callbacks
) -> None:
    checkout = _ready()
    _complete(checkout)
    boleto = BoletoPayment.objects.get()
    pagarme.pay_boleto(boleto.gateway_charge_id)
    with django_capture_on_commit_callbacks(execute=True):
        _post_hook(pagarme, boleto.gateway_charge_id)
    order = Order.objects.get()

    with django_capture_on_commit_callbacks(execute=True):
        adjustment = order_refund(order_id=order.public_id, amount=2500, reason="Item avariado")

    refund = BoletoRefund.objects.get()
    assert (refund.refund_id, refund.amount, refund.status) == (adjustment.public_id, 2500, "awaiting_transfer")
    assert Adjustment.objects.get(public_id=adjustment.public_id).status == "pending"
    assert not [r for r in pagarme.state.requests if r[0] == "DELETE"]  # no money moves at the gateway

    with django_capture_on_commit_callbacks(execute=True):
        boleto_refund_mark_transferred(refund_id=refund.refund_id, note="Pix enviado E1234 em 07/12", actor="ana")
    with django_capture_on_commit_callbacks(execute=True):
        boleto_refund_mark_transferred(refund_id=refund.refund_id, note="de novo, por engano", actor="ana")

    refund.refresh_from_db()
    boleto.refresh_from_db()
    assert (refund.status, refund.finished_by, boleto.refunded_amount) == ("completed", "ana", 2500)
    assert Adjustment.objects.get(public_id=adjustment.public_id).status == "completed"
    order.refresh_from_db()
    assert order.refunded_amount == 2500


def test_a_worker_killed_during_the_gateway_call_leaves_the_stock_to_the_pending_sweep(
    pagarme: FakePagarmeServer,
) -> None:
    # given a boleto complete that reserved the stock and died before recording the boleto (step 2)
    checkout = _ready()
    begun = _begin(checkout.public_id, CompleteInput(payment=PaymentInput((BOLETO,))), ANY_OWNER)
    assert begun.status == "complete_in_progress" and _stock() == 4
    Checkout.objects.filter(pk=checkout.pk).update(updated_at=timezone.now() - timedelta(minutes=5))

    assert checkout_pending_due() == 1
    assert checkout_pending_due() == 0

    fresh = Checkout.objects.get(pk=checkout.pk)
    assert fresh.status == "incomplete"
    assert [m["code"] for m in fresh.messages if m["type"] == "error"] == ["boleto_unavailable"]
    assert _stock() == 5
    assert BoletoPayment.objects.count() == 0


def test_statement_budgets_of_boleto_complete_and_settlement(
    pagarme: FakePagarmeServer, django_assert_max_num_queries, django_capture_on_commit_callbacks
) -> None:
    checkout = _ready()
    with django_assert_max_num_queries(BOLETO_COMPLETE_BUDGET):
        _complete(checkout)
    boleto = BoletoPayment.objects.get()
    pagarme.pay_boleto(boleto.gateway_charge_id)
    charge = PagarmeGateway().get_charge(boleto.gateway_charge_id)

    with django_assert_max_num_queries(BOLETO_SETTLE_BUDGET), django_capture_on_commit_callbacks(execute=False):
        assert boleto_settle_confirmed(charge=charge, source="webhook") == "paid"
    with django_assert_max_num_queries(3):  # a replay: one locked read (and the test transaction's savepoint pair)
        assert boleto_settle_confirmed(charge=charge, source="webhook") == "duplicate"


def test_a_lost_paid_webhook_is_found_by_the_boleto_sweep(pagarme: FakePagarmeServer) -> None:
    checkout = _ready()
    _complete(checkout)
    boleto = BoletoPayment.objects.get()
    pagarme.pay_boleto(boleto.gateway_charge_id)  # the bank paid; Pagar.me's webhook never arrived

    assert sweep_boletos() == 0  # asked only after 10 minutes of waiting
    BoletoPayment.objects.filter(pk=boleto.pk).update(updated_at=timezone.now() - timedelta(minutes=11))
    assert sweep_boletos() == 1
    assert sweep_boletos() == 0

    assert Order.objects.get().checkout_id == checkout.public_id
