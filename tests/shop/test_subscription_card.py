"""Subscriptions paid by card (issue 38), against the fake Pagar.me v5 (`tests/payments/fake_pagarme.py`: customer
wallet, `card_id` orders, webhooks): the buyer subscribes on the storefront with a card token, the card is stored at
the gateway (the shop keeps its ids, brand and last four only) and the first cycle is charged and becomes an order;
each later cycle is charged on its due date by the sweep, one order per cycle under a replayed webhook, a re-run sweep
and a gateway call lost mid-way; a declined cycle tells the buyer and is retried (Pix Automático's PERMITE_3R_7D
shape) until it passes; a declined first charge waits for another card; the buyer cancels (no PSP, card removed)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from django.core import mail
from django.test import Client
from django.utils import timezone

from orders.models import Order
from payments.card.models import CardPayment
from shop.demo.seed import seed_catalog
from shop.models import Subscription, SubscriptionCycle, SubscriptionEvent, SubscriptionPlan, Variant
from shop.subscriptions.cycles import cycle_charge, subscription_cycles_sweep
from shop.tasks import sweep_subscription_cycles
from tests.payments.fake_pagarme import FakePagarmeServer, use_fake_pagarme, webhook_authorization
from tests.shop.test_subscription_pages import FORM

pytestmark = pytest.mark.django_db
# Measured: a card cycle charged and settled into its order in one go, 26 statements with the test's savepoints
# (the Pix path: 11 to charge + 19 to settle, tests/shop/test_subscription_cycles.py).
BUDGET_CARD_CYCLE = 26


@pytest.fixture
def pagarme(settings: Any) -> Iterator[FakePagarmeServer]:
    settings.BCP_PIX_SANDBOX = False  # no PSP at all: a card subscription must never call one
    server = use_fake_pagarme(settings)
    yield server
    server.stop()


@pytest.fixture
def plan() -> SubscriptionPlan:
    seed_catalog()
    variant = Variant.objects.get(sku="SKU-CAFE-500G")
    Variant.objects.filter(pk=variant.pk).update(stock=10)
    return SubscriptionPlan.objects.create(variant=variant, cycle="monthly", price=3990, first_cycle_discount=500)


def _subscribe(
    client: Client,
    plan: SubscriptionPlan,
    capture: Any,
    token: str = "tok_approved",  # noqa: S107 - a test token
) -> Subscription:
    with capture(execute=True):
        response = client.post(f"/assinar/{plan.public_id}/", {**FORM, "action": "pay_card", "card_token": token})
    assert response.status_code == 302, response.content.decode()[:2000]
    subscription = Subscription.objects.get()
    assert response["Location"] == f"/assinaturas/{subscription.access_token}/"
    return subscription


def _webhook(client: Client, pagarme: FakePagarmeServer, charge_id: str, hook_id: str) -> dict[str, Any]:
    body = pagarme.webhook("charge.paid", charge_id, hook_id=hook_id)
    response = client.post(
        "/payments/card/webhook", data=json.dumps(body), content_type="application/json",
        HTTP_AUTHORIZATION=webhook_authorization(),
    )  # fmt: skip
    assert response.status_code == 200
    return response.json()


def _open(subscription: Subscription) -> SubscriptionCycle:
    return SubscriptionCycle.objects.get(subscription=subscription, status__in=["scheduled", "charged", "retrying"])


def _declined_once(
    client: Client, plan: SubscriptionPlan, capture: Any, pagarme: FakePagarmeServer
) -> tuple[Subscription, SubscriptionCycle]:
    """A card subscription whose second cycle was declined on its due date: waiting for its retry, the unit held."""
    subscription = _subscribe(client, plan, capture)
    cycle = _open(subscription)
    pagarme.card_outcome(subscription.card_id, "51")  # no limit this month
    with capture(execute=True):
        assert subscription_cycles_sweep(today=cycle.due_date)["declined"] == 1
    return subscription, cycle


def _stale(cycle: SubscriptionCycle) -> None:
    SubscriptionCycle.objects.filter(pk=cycle.pk).update(updated_at=timezone.now() - timedelta(minutes=5))


def test_a_buyer_subscribes_by_card_the_card_is_stored_at_the_gateway_and_the_first_cycle_is_an_order(
    pagarme: FakePagarmeServer, plan: SubscriptionPlan, client: Client, django_capture_on_commit_callbacks: Any
) -> None:
    stock_before = Variant.objects.get(pk=plan.variant_id).stock
    page = client.get(f"/assinar/{plan.public_id}/").content.decode()
    assert 'data-testid="subscribe-card"' in page and "Assinar com cartão" in page

    subscription = _subscribe(client, plan, django_capture_on_commit_callbacks)

    # Stored in the gateway's wallet: a customer, then the card from the token; the shop keeps ids, brand, last 4.
    (customer_id, customer), = pagarme.state.customers.items()  # fmt: skip
    (card_id, _card), = pagarme.state.cards.items()  # fmt: skip
    assert (customer["email"], customer["document"]) == ("fulana@example.com.br", "52998224725")
    assert (subscription.payment_method, subscription.card_customer_id, subscription.card_id) == (
        "card", customer_id, card_id
    )  # fmt: skip
    assert (subscription.card_brand, subscription.card_last4) == ("Mastercard", "4242")
    assert "tok_approved" not in json.dumps(list(Subscription.objects.values()), default=str)
    # The first cycle charged on the stored card (recurrence_cycle "first"), captured: its order, paid by card.
    cycle = SubscriptionCycle.objects.get(subscription=subscription, number=1)
    assert pagarme.stored_charges() == [(cycle.public_id, card_id, "first", f"{cycle.public_id}-1")]
    order = Order.objects.get()
    assert (order.checkout_id, order.payment_type, order.total_amount, order.payment_status) == (
        cycle.public_id, "card", 3490, "paid"
    )  # fmt: skip
    assert (cycle.status, cycle.order_id, cycle.due_date) == ("paid", order.public_id, timezone.localdate())
    assert CardPayment.objects.get(reference=cycle.public_id).payment_id == order.payment_txid
    subscription.refresh_from_db()
    assert subscription.status == "active" and subscription.pix_id_rec == ""
    assert Variant.objects.get(pk=plan.variant_id).stock == stock_before - 1
    html = client.get(f"/assinaturas/{subscription.access_token}/").content.decode()
    assert "final 4242" in html and "Autorizar no sandbox" not in html
    assert _open(subscription).number == 2  # planned for next month, charged on its day

    # The subscription's e-mail, once: by card there is no Pix Automático to authorize. A double submit (the same
    # token) answers the same subscription and sends nothing more.
    assert _subscribe(client, plan, django_capture_on_commit_callbacks) == subscription
    welcome = [m for m in mail.outbox if m.subject.startswith("Sua assinatura de ")]
    assert len(welcome) == 1 and "Você assinou Café especial 500 g: R$ 39,90 por mês." in welcome[0].body
    assert "O primeiro ciclo sai por R$ 34,90." in welcome[0].body
    assert "A primeira cobrança, de R$ 34,90, é feita no cartão ao assinar" in welcome[0].body
    assert "Pix Automático" not in welcome[0].body and subscription.access_token in welcome[0].body


def test_three_card_cycles_become_three_orders_under_replayed_webhooks_a_rerun_sweep_and_a_lost_answer(
    pagarme: FakePagarmeServer, plan: SubscriptionPlan, client: Client, django_capture_on_commit_callbacks: Any
) -> None:
    capture = django_capture_on_commit_callbacks
    subscription = _subscribe(client, plan, capture)
    first = SubscriptionCycle.objects.get(subscription=subscription, number=1)
    charge_1 = pagarme.charge_of(first.public_id)["id"]
    with capture(execute=True):  # the gateway's charge.paid of the first cycle, delivered twice
        assert _webhook(client, pagarme, charge_1, "hook_1") == {"received": 1, "duplicates": 0}
        assert _webhook(client, pagarme, charge_1, "hook_1") == {"received": 0, "duplicates": 1}
        _webhook(client, pagarme, charge_1, "hook_1b")  # the same event again under another hook id
    assert Order.objects.count() == 1

    # Cycle 2: nothing before its due date; on the day the sweep charges it; the sweep run again and the webhook
    # (twice) change nothing.
    second = _open(subscription)
    assert subscription_cycles_sweep(today=second.due_date - timedelta(days=1)).get("charged", 0) == 0
    with capture(execute=True):
        assert subscription_cycles_sweep(today=second.due_date)["charged"] == 1
        assert subscription_cycles_sweep(today=second.due_date).get("charged", 0) == 0
    charge_2 = pagarme.charge_of(second.public_id)["id"]
    with capture(execute=True):
        _webhook(client, pagarme, charge_2, "hook_2")
        _webhook(client, pagarme, charge_2, "hook_2")
    assert Order.objects.count() == 2

    # Cycle 3: the gateway charges it but every answer is lost (the connection drops 3 times): the cycle stays
    # `charged` with the payment pending; the sweep re-sends the same attempt (same Idempotency-Key), the gateway
    # answers its first result, and the order is placed once; a late webhook adds nothing.
    third = _open(subscription)
    pagarme.state.die_after_create = 3
    with capture(execute=True):
        assert subscription_cycles_sweep(today=third.due_date).get("charged", 0) == 0
    third.refresh_from_db()
    assert third.status == "charged" and CardPayment.objects.get(reference=third.public_id).status == "pending"
    assert Order.objects.count() == 2
    _stale(third)
    with capture(execute=True):
        assert subscription_cycles_sweep(today=third.due_date)["charged"] == 1
        _webhook(client, pagarme, pagarme.charge_of(third.public_id)["id"], "hook_3")
    assert len([o for o in pagarme.state.orders.values() if o["code"] == third.public_id]) == 1  # charged once

    orders = list(Order.objects.order_by("number"))
    cycles = list(SubscriptionCycle.objects.filter(subscription=subscription, status="paid").order_by("number"))
    assert [(o.checkout_id, o.total_amount, o.payment_type) for o in orders] == [
        (c.public_id, c.amount, "card") for c in cycles
    ]
    assert [c.amount for c in cycles] == [3490, 3990, 3990]
    assert [c.order_id for c in cycles] == [o.public_id for o in orders]
    keys = [key for _code, _card, _cycle, key in pagarme.stored_charges()]
    assert keys == [f"{first.public_id}-1", f"{second.public_id}-1", *[f"{third.public_id}-1"] * 4]
    assert [cycle for _code, _card, cycle, _key in pagarme.stored_charges()][:2] == ["first", "subsequent"]
    assert _open(subscription).number == 4


def test_a_declined_card_cycle_tells_the_buyer_and_is_retried_the_next_day_until_it_passes(
    pagarme: FakePagarmeServer, plan: SubscriptionPlan, client: Client, django_capture_on_commit_callbacks: Any
) -> None:
    capture = django_capture_on_commit_callbacks
    subscription = _subscribe(client, plan, capture)
    cycle = _open(subscription)
    stock_before = Variant.objects.get(pk=plan.variant_id).stock
    mail.outbox.clear()
    pagarme.card_outcome(subscription.card_id, "51")  # no limit this month

    with capture(execute=True):
        assert subscription_cycles_sweep(today=cycle.due_date)["declined"] == 1
        subscription_cycles_sweep(today=cycle.due_date)  # run again the same day: no second attempt
    cycle.refresh_from_db()
    retry_on = cycle.due_date + timedelta(days=1)
    assert (cycle.status, cycle.retries, cycle.retry_on) == ("retrying", 1, retry_on)
    assert Variant.objects.get(pk=plan.variant_id).stock == stock_before - 1  # the unit stays held for the retry
    assert [m.subject.split(": ", 1)[1] for m in mail.outbox] == [
        "O cartão da sua assinatura foi recusado; vamos tentar de novo"
    ]
    assert (
        "Saldo ou limite insuficiente" in mail.outbox[0].body
        and f"Vamos tentar de novo em {retry_on:%d/%m/%Y} (" in mail.outbox[0].body
    )
    html = client.get(f"/assinaturas/{subscription.access_token}/").content.decode()
    assert "Nova tentativa · no cartão em " + retry_on.strftime("%d/%m/%Y") in html

    pagarme.card_outcome(subscription.card_id, "00")
    with capture(execute=True):
        assert subscription_cycles_sweep(today=retry_on)["charged"] == 1
    cycle.refresh_from_db()
    order = Order.objects.get(checkout_id=cycle.public_id)
    assert (cycle.status, cycle.order_id, order.total_amount) == ("paid", order.public_id, 3990)
    assert [key for *_rest, key in pagarme.stored_charges()][1:] == [f"{cycle.public_id}-1", f"{cycle.public_id}-2"]
    assert Order.objects.count() == 2


def test_a_card_cycle_declined_past_the_three_retries_fails_gives_the_unit_back_and_the_next_goes_on(
    pagarme: FakePagarmeServer, plan: SubscriptionPlan, client: Client, django_capture_on_commit_callbacks: Any
) -> None:
    capture = django_capture_on_commit_callbacks
    subscription = _subscribe(client, plan, capture)
    cycle = _open(subscription)
    stock_before = Variant.objects.get(pk=plan.variant_id).stock
    pagarme.card_outcome(subscription.card_id, "51")
    mail.outbox.clear()
    for day in range(4):  # the due date and the 3 retries allowed
        with capture(execute=True):
            subscription_cycles_sweep(today=cycle.due_date + timedelta(days=day))
    cycle.refresh_from_db()
    assert (cycle.status, cycle.retries) == ("failed", 3)
    assert Variant.objects.get(pk=plan.variant_id).stock == stock_before
    assert [m.subject.split(": ", 1)[1] for m in mail.outbox][-1] == "Não conseguimos cobrar sua assinatura"
    assert len(mail.outbox) == 4 and Order.objects.count() == 1
    assert _open(subscription).number == 3


def test_a_declined_first_charge_waits_for_another_card_on_the_subscription_page(
    pagarme: FakePagarmeServer, plan: SubscriptionPlan, client: Client, django_capture_on_commit_callbacks: Any
) -> None:
    capture = django_capture_on_commit_callbacks
    stock_before = Variant.objects.get(pk=plan.variant_id).stock
    subscription = _subscribe(client, plan, capture, token="tok_declined_51")
    page = f"/assinaturas/{subscription.access_token}/"
    html = client.get(page).content.decode()
    assert subscription.status == "pending_authorization" and Order.objects.count() == 0
    assert "Saldo ou limite insuficiente" in html and 'data-testid="card-retry-form"' in html
    assert Variant.objects.get(pk=plan.variant_id).stock == stock_before
    # QA: the page said "Pago com o cartão … final 0002" above the decline, and offered Pix it does not have
    assert 'data-testid="subscription-card-on-file"' not in html and "Pago com o cartão" not in html
    declined = html.split('data-testid="card-declined">')[1].split("</div>")[0]
    assert declined.startswith("A primeira cobrança no cartão ")
    assert declined.endswith("foi recusada: Saldo ou limite insuficiente. Use outro cartão.")
    assert "pague com Pix" not in html

    bad = client.post(page, {"action": "pay_card", "card_token": ""})
    assert bad.status_code == 400 and "Informe os dados do cartão." in bad.content.decode()
    with capture(execute=True):
        assert client.post(page, {"action": "pay_card", "card_token": "tok_approved"}).status_code == 302
    subscription.refresh_from_db()
    assert subscription.status == "active" and Order.objects.get().total_amount == 3490
    assert len(pagarme.state.cards) == 2 and subscription.card_id != ""
    assert [key for *_rest, key in pagarme.stored_charges()] == [f"{_cycle_id(subscription)}-{n}" for n in (1, 2)]


def test_a_card_subscription_declined_and_left_is_closed_after_three_days_and_the_buyer_told(
    pagarme: FakePagarmeServer, plan: SubscriptionPlan, client: Client, django_capture_on_commit_callbacks: Any
) -> None:
    capture = django_capture_on_commit_callbacks
    left = _subscribe(client, plan, capture, token="tok_declined_51")
    mail.outbox.clear()
    with capture(execute=True):
        assert sweep_subscription_cycles()["abandoned"] == 0  # still inside its window for another card
    Subscription.objects.filter(pk=left.pk).update(created_at=timezone.now() - timedelta(days=3, minutes=1))

    with capture(execute=True):
        assert sweep_subscription_cycles()["abandoned"] == 1
        assert sweep_subscription_cycles()["abandoned"] == 0  # once

    left.refresh_from_db()
    assert left.status == "cancelled"
    assert [m.subject.split(": ", 1)[1] for m in mail.outbox] == ["Sua assinatura foi cancelada"]
    assert Order.objects.count() == 0
    assert client.get(f"/assinaturas/{left.access_token}/").status_code == 200  # the page says it ended


def test_the_buyer_changes_the_card_of_a_running_subscription_and_the_next_cycle_is_charged_on_it(
    pagarme: FakePagarmeServer, plan: SubscriptionPlan, client: Client, django_capture_on_commit_callbacks: Any
) -> None:
    capture = django_capture_on_commit_callbacks
    subscription = _subscribe(client, plan, capture)
    old_card = subscription.card_id
    page = f"/assinaturas/{subscription.access_token}/"
    assert 'data-testid="card-change-form"' in client.get(page).content.decode()

    refused = client.post(page, {"action": "change_card", "card_token": "nope"})
    assert refused.status_code == 400 and "O cartão não foi aceito pela operadora." in refused.content.decode()
    with capture(execute=True):
        changed = client.post(page, {"action": "change_card", "card_token": "tok_new_00"}, follow=True)

    assert "Cartão trocado: as próximas cobranças vão para ele." in changed.content.decode()
    subscription.refresh_from_db()
    assert subscription.card_id not in ("", old_card)
    assert pagarme.state.cards[old_card]["status"] == "deleted"  # the old card leaves the gateway's wallet
    assert subscription.events.filter(kind="card_changed").count() == 1
    pagarme.card_outcome(old_card, "51")  # were the old card charged, the cycle would be declined
    cycle = _open(subscription)
    with capture(execute=True):
        assert subscription_cycles_sweep(today=cycle.due_date)["charged"] == 1
    cycle.refresh_from_db()
    assert cycle.status == "paid" and Order.objects.count() == 2


def _cycle_id(subscription: Subscription) -> str:
    return SubscriptionCycle.objects.get(subscription=subscription, number=1).public_id


def test_the_buyer_cancels_a_card_subscription_without_any_psp_and_its_card_is_removed_from_the_gateway(
    pagarme: FakePagarmeServer, plan: SubscriptionPlan, client: Client, django_capture_on_commit_callbacks: Any
) -> None:
    capture = django_capture_on_commit_callbacks
    subscription, cycle = _declined_once(client, plan, capture, pagarme)
    # The second cycle's due date is a month on: the withdrawal period of the first order is over by then.
    month_ago = timezone.now() - timedelta(days=31)
    Subscription.objects.filter(pk=subscription.pk).update(created_at=month_ago)
    Order.objects.update(placed_at=month_ago)
    stock_held = Variant.objects.get(pk=plan.variant_id).stock
    mail.outbox.clear()

    asked = client.post(f"/assinaturas/{subscription.access_token}/", {"action": "cancel"})  # asks first
    assert "O que já foi pago não é devolvido" in asked.content.decode()  # past the withdrawal period
    with capture(execute=True):
        response = client.post(f"/assinaturas/{subscription.access_token}/", {"action": "cancel", "confirm": "1"})
    assert response.status_code == 302
    subscription.refresh_from_db()
    cycle.refresh_from_db()
    assert subscription.status == "cancelled" and cycle.status == "cancelled"
    assert Variant.objects.get(pk=plan.variant_id).stock == stock_held + 1
    assert pagarme.state.cards[subscription.card_id]["status"] == "deleted"
    deletes = [p for m, p, _b, _h in pagarme.state.requests if m == "DELETE"]
    assert deletes == [f"/core/v5/customers/{subscription.card_customer_id}/cards/{subscription.card_id}"]
    assert [m.subject.split(": ", 1)[1] for m in mail.outbox] == ["Sua assinatura foi cancelada"]
    assert "cartão dela foi removido" in mail.outbox[0].body

    pagarme.card_outcome(subscription.card_id, "00")
    with capture(execute=True):
        subscription_cycles_sweep(today=cycle.due_date + timedelta(days=1))  # the retry day: nothing is charged
    assert len(pagarme.stored_charges()) == 2 and Order.objects.count() == 1
    kinds = list(SubscriptionEvent.objects.filter(subscription=subscription).values_list("kind", flat=True))
    assert kinds.count("card_deleted") == 1 and "recurrence_cancelled" not in kinds


def test_skip_pause_and_resume_work_the_same_for_a_card_subscription(
    pagarme: FakePagarmeServer, plan: SubscriptionPlan, client: Client, django_capture_on_commit_callbacks: Any
) -> None:
    capture = django_capture_on_commit_callbacks
    subscription = _subscribe(client, plan, capture)
    page = f"/assinaturas/{subscription.access_token}/"
    second = _open(subscription)

    with capture(execute=True):
        assert client.post(page, {"action": "skip"}).status_code == 302
    second.refresh_from_db()
    third = _open(subscription)
    assert second.status == "skipped" and third.number == 3
    assert subscription_cycles_sweep(today=second.due_date).get("charged", 0) == 0  # the skipped date: nothing

    with capture(execute=True):
        assert client.post(page, {"action": "pause"}).status_code == 302
    third.refresh_from_db()
    assert third.status == "cancelled"
    assert subscription_cycles_sweep(today=third.due_date).get("charged", 0) == 0  # paused: nothing charged
    with capture(execute=True):
        assert client.post(page, {"action": "resume"}).status_code == 302
    resumed = _open(subscription)
    assert resumed.status == "scheduled" and resumed.number >= 2
    with capture(execute=True):
        assert subscription_cycles_sweep(today=resumed.due_date)["charged"] == 1
    assert len(pagarme.stored_charges()) == 2 and Order.objects.count() == 2
    assert not [p for m, p, _b, _h in pagarme.state.requests if m == "DELETE"]  # the card stays while it goes on


def test_a_card_cycles_order_is_refunded_as_an_estorno_of_the_charge_that_paid_it(
    pagarme: FakePagarmeServer, plan: SubscriptionPlan, client: Client, django_capture_on_commit_callbacks: Any
) -> None:
    from orders.services import order_refund

    capture = django_capture_on_commit_callbacks
    subscription = _subscribe(client, plan, capture)
    order = Order.objects.get()
    charge = pagarme.charge_of(_cycle_id(subscription))
    with capture(execute=True):
        order_refund(order_id=order.public_id, amount=1000, reason="Cliente desistiu de parte")
    refunds = [(p, b) for m, p, b, _h in pagarme.state.requests if m == "DELETE" and "/charges/" in p]
    assert refunds == [(f"/core/v5/charges/{charge['id']}", {"amount": 1000})]
    assert CardPayment.objects.get(reference=order.checkout_id).refunded_amount == 1000


def test_statement_budget_of_charging_a_card_cycle_into_its_order(
    pagarme: FakePagarmeServer,
    plan: SubscriptionPlan,
    client: Client,
    django_capture_on_commit_callbacks: Any,
    django_assert_max_num_queries: Any,
) -> None:
    subscription = _subscribe(client, plan, django_capture_on_commit_callbacks)
    second = _open(subscription)
    # lock + read the cycle, take the unit, mark it charged with its event; then (gateway call) the payment row
    # and its event, the announce: the cycle locked, the order placed as any checkout's, the cycle paid with its
    # event, the next cycle planned.
    with django_assert_max_num_queries(BUDGET_CARD_CYCLE):
        assert cycle_charge(cycle_id=second.public_id, today=second.due_date) == "charged"
    assert Order.objects.count() == 2


def test_an_attempt_that_never_reached_the_gateway_is_not_a_decline_and_is_sent_again(
    pagarme: FakePagarmeServer,
    plan: SubscriptionPlan,
    client: Client,
    settings: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    from payments.tasks import reconcile_card_payments

    capture = django_capture_on_commit_callbacks
    subscription = _subscribe(client, plan, capture)
    cycle = _open(subscription)
    mail.outbox.clear()
    settings.PAGARME_BASE_URL = "http://127.0.0.1:9/core/v5"  # the gateway unreachable during the charge
    with capture(execute=True):
        assert subscription_cycles_sweep(today=cycle.due_date)["pending"] == 1
    settings.PAGARME_BASE_URL = pagarme.base_url
    CardPayment.objects.filter(reference=cycle.public_id).update(updated_at=timezone.now() - timedelta(hours=1))
    with capture(execute=True):  # the payments sweep asks the gateway by order code: nothing there
        reconcile_card_payments()
    cycle.refresh_from_db()
    assert cycle.status == "charged" and mail.outbox == []  # not told of a decline that did not happen
    _stale(cycle)
    with capture(execute=True):
        assert subscription_cycles_sweep(today=cycle.due_date)["charged"] == 1  # the same attempt, sent again
    cycle.refresh_from_db()
    assert cycle.status == "paid" and Order.objects.count() == 2
    assert [key for *_rest, key in pagarme.stored_charges()][1:] == [f"{cycle.public_id}-1"]


def test_pausing_closes_a_card_cycle_waiting_for_its_retry_and_gives_its_unit_back(
    pagarme: FakePagarmeServer, plan: SubscriptionPlan, client: Client, django_capture_on_commit_callbacks: Any
) -> None:
    capture = django_capture_on_commit_callbacks
    subscription, cycle = _declined_once(client, plan, capture, pagarme)
    held = Variant.objects.get(pk=plan.variant_id).stock
    with capture(execute=True):
        assert client.post(f"/assinaturas/{subscription.access_token}/", {"action": "pause"}).status_code == 302
    cycle.refresh_from_db()
    assert cycle.status == "cancelled" and Variant.objects.get(pk=plan.variant_id).stock == held + 1
    pagarme.card_outcome(subscription.card_id, "00")
    with capture(execute=True):
        subscription_cycles_sweep(today=cycle.due_date + timedelta(days=1))  # its retry day, paused: nothing
    assert len(pagarme.stored_charges()) == 2 and Order.objects.count() == 1
