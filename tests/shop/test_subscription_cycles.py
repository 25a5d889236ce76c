"""Each cycle of a subscription is one order (issue 38), over the fake Bacen API Pix (`PUT /cobr/{txid}`, the
`/cobr` webhook `{"cobsr": [...]}`, `POST /cobr/{txid}/retentativa/{data}`, `GET /rec/{idRec}`, `PATCH /rec`):
three cycles each placed exactly once under a crash, a lost charge record and a replayed or lost webhook; a
failed cycle retried within the rules; stock missing said before charging; cancel in the bank app and by the
shop; a lost authorization notice recovered."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

import pytest
from django.core import mail
from django.test import Client
from django.utils import timezone
from django.utils.formats import date_format

from orders.errors import OrderError
from orders.models import EmailDelivery, Order
from orders.services import order_ship
from payments.automatic.services import pix_recurring_charge_event_process, pix_recurring_charges_reconcile
from payments.med.models import PixInfraction
from payments.models import PixRecurringCharge, PixRecurringChargeWebhookEvent
from payments.signals import recurring_charge_settled
from shop.demo.seed import seed_catalog
from shop.models import (
    ShippingMethod,
    ShippingRate,
    Subscription,
    SubscriptionCycle,
    SubscriptionEvent,
    SubscriptionPlan,
    Variant,
)
from shop.subscriptions.cycles import cycle_charge, subscription_cycles_sweep
from shop.subscriptions.services import subscription_address_change, subscription_cancel, subscription_create
from tests.payments.fake_bacen import PROXY_VERIFIED, FakeBacenServer, med_notice

pytestmark = pytest.mark.django_db
# Measured: charging is 11 statements, settling into an order 19 (the order placement itself is most of it; +1: the
# Pix received recorded, so a refund of the cycle's order finds the endToEndId to send back).
BUDGET_CHARGE, BUDGET_SETTLE = 11, 19

ADDRESS = {
    "postal_code": "01310-100",
    "street": "Avenida Paulista",
    "number": "1000",
    "complement": "Apto 45",
    "neighborhood": "Bela Vista",
    "city": "São Paulo",
    "state": "sp",
}


@pytest.fixture
def plan() -> SubscriptionPlan:
    seed_catalog()
    variant = Variant.objects.get(sku="SKU-CAFE-500G")
    Variant.objects.filter(pk=variant.pk).update(stock=10)
    return SubscriptionPlan.objects.create(variant=variant, cycle="monthly", price=3990, first_cycle_discount=500)


def _deliver(client: Client, resource: str, body: dict[str, Any]) -> dict[str, Any]:
    response = client.post(
        f"/payments/pix/webhook/{resource}", data=body, content_type="application/json", headers=PROXY_VERIFIED
    )
    assert response.status_code == 200
    return response.json()


def _active(bacen: FakeBacenServer, plan: SubscriptionPlan, client: Client, capture: Any) -> Subscription:
    subscription = subscription_create(
        plan_id=plan.public_id,
        buyer_name="Fulana de Tal",
        buyer_tax_id="123.456.789-09",
        buyer_email="fulana@example.com.br",
        starts_on=timezone.localdate() + timedelta(days=5),
    )
    subscription_address_change(public_id=subscription.public_id, address=ADDRESS)
    with capture(execute=True):
        _deliver(client, "rec", bacen.approve_rec(subscription.pix_id_rec))
    subscription.refresh_from_db()
    assert subscription.status == "active"
    return subscription


def _open_cycle(subscription: Subscription) -> SubscriptionCycle:
    return SubscriptionCycle.objects.get(subscription=subscription, status__in=["scheduled", "charged", "retrying"])


def _cobr_puts(bacen: FakeBacenServer) -> list[str]:
    return [path for method, path, _ in bacen.state.requests if method == "PUT" and path.startswith("/cobr/")]


def test_three_cycles_become_three_orders_once_under_a_crash_a_lost_record_and_replayed_or_lost_webhooks(
    bacen: FakeBacenServer, plan: SubscriptionPlan, client: Client, django_capture_on_commit_callbacks: Any
) -> None:
    stock_before = Variant.objects.get(pk=plan.variant_id).stock
    subscription = _active(bacen, plan, client, django_capture_on_commit_callbacks)

    # Cycle 1: inside the charging window when authorized, so charged right after (5 days ahead); the sweep has
    # nothing left to send. The worker settling it dies mid-transaction (a receiver raising stands for the
    # killed process: everything of that transaction rolls back), then the PSP replays the notice.
    first = _open_cycle(subscription)
    assert (first.status, first.due_date) == ("charged", timezone.localdate() + timedelta(days=5))
    assert subscription_cycles_sweep(today=first.due_date - timedelta(days=5)).get("charged", 0) == 0
    assert _cobr_puts(bacen) == [f"/cobr/{first.txid}"]
    paid = bacen.settle_cobr(first.txid, paid=True)

    def crash(**_: Any) -> None:
        raise RuntimeError("worker killed")

    recurring_charge_settled.connect(crash, dispatch_uid="test.crash")
    try:
        with django_capture_on_commit_callbacks(execute=True):
            assert _deliver(client, "cobr", paid) == {"received": 1, "duplicates": 0}
    finally:
        recurring_charge_settled.disconnect(dispatch_uid="test.crash")
    assert Order.objects.count() == 0
    assert PixRecurringChargeWebhookEvent.objects.filter(processed_at__isnull=True).count() == 1
    with django_capture_on_commit_callbacks(execute=True):
        assert _deliver(client, "cobr", paid) == {"received": 0, "duplicates": 1}  # the replay stores nothing
    with django_capture_on_commit_callbacks(execute=True):
        assert pix_recurring_charges_reconcile(older_than=timedelta(0)) == 1  # the sweep finishes it, once
        assert pix_recurring_charges_reconcile(older_than=timedelta(0)) == 0
    with django_capture_on_commit_callbacks(execute=True):
        _deliver(client, "cobr", paid)
    assert Order.objects.count() == 1

    # Cycle 2: the worker dies during the PSP call (3 × 503: the client gave up); the cycle stays `charged`
    # with no charge recorded, and the sweep re-sends the same PUT (same txid: the PSP answers the same charge).
    second = _open_cycle(subscription)
    assert second.number == 2 and (second.due_date - first.due_date).days in (28, 29, 30, 31)
    bacen.state.forced = [(503, None)] * 3
    assert subscription_cycles_sweep(today=second.due_date - timedelta(days=5)).get("charged", 0) == 0
    second.refresh_from_db()
    assert second.status == "charged" and not PixRecurringCharge.objects.filter(reference=second.public_id).exists()
    SubscriptionCycle.objects.filter(pk=second.pk).update(updated_at=timezone.now() - timedelta(minutes=5))
    assert subscription_cycles_sweep(today=second.due_date - timedelta(days=5))["charged"] == 1
    with django_capture_on_commit_callbacks(execute=True):
        _deliver(client, "cobr", bacen.settle_cobr(second.txid, paid=True))
    assert Order.objects.count() == 2

    # Cycle 3: the `/cobr` notice never comes; on the due date the reconcile reads `GET /cobr/{txid}`.
    third = _open_cycle(subscription)
    subscription_cycles_sweep(today=third.due_date - timedelta(days=3))
    bacen.settle_cobr(third.txid, paid=True)
    PixRecurringCharge.objects.filter(reference=third.public_id).update(updated_at=timezone.now() - timedelta(hours=1))
    with django_capture_on_commit_callbacks(execute=True):
        assert pix_recurring_charges_reconcile(today=third.due_date) == 1
        assert pix_recurring_charges_reconcile(today=third.due_date) == 0

    orders = list(Order.objects.order_by("number"))
    cycles = list(SubscriptionCycle.objects.filter(subscription=subscription, status="paid").order_by("number"))
    assert [(o.checkout_id, o.total_amount, o.payment_txid, o.payment_type) for o in orders] == [
        (c.public_id, c.amount, c.txid, "pix") for c in cycles
    ]
    assert [c.amount for c in cycles] == [3490, 3990, 3990]  # the first cycle's discount, then the plan price
    assert [c.order_id for c in cycles] == [o.public_id for o in orders]
    assert orders[0].destination["postal_code"] == "01310-100" and orders[0].destination["city"] == "São Paulo"
    assert all(o.payment_status == "paid" for o in orders)
    assert Variant.objects.get(pk=plan.variant_id).stock == stock_before - 3
    # Like any order: the confirmation e-mail of each, once.
    assert EmailDelivery.objects.filter(order__in=orders, kind="placed").count() == 3
    assert _open_cycle(subscription).number == 4  # the next one is planned


def test_a_failed_cycle_tells_the_buyer_is_retried_within_the_rules_then_paid(
    bacen: FakeBacenServer, plan: SubscriptionPlan, client: Client, admin_client: Client,
    django_capture_on_commit_callbacks: Any,
) -> None:  # fmt: skip
    subscription = _active(bacen, plan, client, django_capture_on_commit_callbacks)
    cycle = _open_cycle(subscription)
    subscription_cycles_sweep(today=cycle.due_date - timedelta(days=5))
    mail.outbox.clear()

    with django_capture_on_commit_callbacks(execute=True):
        refused = bacen.settle_cobr(cycle.txid, paid=False)
        _deliver(client, "cobr", refused)
        _deliver(client, "cobr", refused)  # replayed: told once, retried once

    cycle.refresh_from_db()
    assert cycle.status == "retrying"
    tomorrow = (cycle.due_date + timedelta(days=1)).isoformat()  # the day after the refused attempt
    retries = [path for method, path, _ in bacen.state.requests if method == "POST" and "retentativa" in path]
    assert retries == [f"/cobr/{cycle.txid}/retentativa/{tomorrow}"]
    assert [m.subject.split(": ", 1)[1] for m in mail.outbox] == [
        "O Pix Automático da sua assinatura não passou; vamos tentar de novo"
    ]
    # The day as the buyer reads it, never the ISO string the event keeps.
    retry_day = (cycle.due_date + timedelta(days=1)).strftime("%d/%m/%Y")
    assert "Vamos tentar de novo em " + retry_day + " (" in mail.outbox[0].body
    assert tomorrow not in mail.outbox[0].body
    assert f"/assinaturas/{subscription.access_token}/" in mail.outbox[0].body
    # QA walk: the buyer's page said "Nova tentativa" with no day, and (sandbox) had no button to pay the retry.
    page = client.get(f"/assinaturas/{subscription.access_token}/").content.decode()
    assert "Nova tentativa · pelo Pix Automático em " + retry_day + "<" in page
    assert "no cartão" not in page
    assert 'data-testid="skip"' not in page  # a cycle being retried cannot be skipped: no button only refused
    # and the merchant's page of the subscription shows the same day on the cycle
    admin_page = admin_client.get(f"/admin/shop/subscription/{subscription.pk}/change/").content.decode()
    assert "Nova tentativa em" in admin_page
    assert date_format(cycle.due_date + timedelta(days=1), "DATE_FORMAT") in admin_page

    with django_capture_on_commit_callbacks(execute=True):
        _deliver(client, "cobr", bacen.settle_cobr(cycle.txid, paid=True))
    cycle.refresh_from_db()
    assert cycle.status == "paid" and Order.objects.get().checkout_id == cycle.public_id


def test_a_cycle_failing_past_the_three_retries_gives_the_unit_back_and_plans_the_next(
    bacen: FakeBacenServer, plan: SubscriptionPlan, client: Client, django_capture_on_commit_callbacks: Any
) -> None:
    stock_before = Variant.objects.get(pk=plan.variant_id).stock
    subscription = _active(bacen, plan, client, django_capture_on_commit_callbacks)
    cycle = _open_cycle(subscription)
    assert Variant.objects.get(pk=plan.variant_id).stock == stock_before - 1  # reserved with the charge
    mail.outbox.clear()

    for _ in range(4):  # the scheduled attempt and the 3 retries PERMITE_3R_7D allows
        with django_capture_on_commit_callbacks(execute=True):
            _deliver(client, "cobr", bacen.settle_cobr(cycle.txid, paid=False))

    cycle.refresh_from_db()
    assert cycle.status == "failed"
    assert PixRecurringCharge.objects.get(txid=cycle.txid).retries == 3
    assert Variant.objects.get(pk=plan.variant_id).stock == stock_before
    assert Order.objects.count() == 0
    assert [m.subject.split(": ", 1)[1] for m in mail.outbox][-1] == "Não conseguimos cobrar sua assinatura"
    assert len(mail.outbox) == 4
    assert _open_cycle(subscription).number == 2


def test_stock_missing_is_said_before_charging_and_the_charge_goes_out_when_it_is_back(
    bacen: FakeBacenServer, plan: SubscriptionPlan, client: Client, django_capture_on_commit_callbacks: Any
) -> None:
    Variant.objects.filter(pk=plan.variant_id).update(stock=0)
    mail.outbox.clear()
    subscription = _active(bacen, plan, client, django_capture_on_commit_callbacks)  # its first charge is due
    cycle = _open_cycle(subscription)

    with django_capture_on_commit_callbacks(execute=True):
        again = subscription_cycles_sweep(today=cycle.due_date - timedelta(days=4))

    assert again["stock_short"] == 1
    assert _cobr_puts(bacen) == []  # nothing charged
    assert [m.subject.split(": ", 1)[1] for m in mail.outbox] == [
        "Falta estoque para o próximo ciclo da sua assinatura"
    ]  # said once
    assert "Nada foi cobrado" in mail.outbox[0].body

    Variant.objects.filter(pk=plan.variant_id).update(stock=2)
    assert subscription_cycles_sweep(today=cycle.due_date - timedelta(days=3))["charged"] == 1
    cycle.refresh_from_db()
    assert (cycle.status, cycle.stock_short) == ("charged", False)


def test_cancel_in_the_bank_app_ends_the_subscription_and_its_scheduled_cycle_and_tells_the_buyer(
    bacen: FakeBacenServer, plan: SubscriptionPlan, client: Client, django_capture_on_commit_callbacks: Any
) -> None:
    stock_before = Variant.objects.get(pk=plan.variant_id).stock
    subscription = _active(bacen, plan, client, django_capture_on_commit_callbacks)
    cycle = _open_cycle(subscription)  # its charge was sent when authorized
    mail.outbox.clear()

    with django_capture_on_commit_callbacks(execute=True):
        _deliver(client, "rec", bacen.payer_cancels_rec(subscription.pix_id_rec))

    subscription.refresh_from_db()
    assert subscription.status == "cancelled" and subscription.cancelled_at is not None
    assert [m.subject.split(": ", 1)[1] for m in mail.outbox] == ["Sua assinatura foi cancelada"]
    # nothing left to manage on a cancelled subscription (walk h44: it offered to skip, pause or cancel it)
    assert "pausar ou cancelar" not in mail.outbox[0].body and "feito pela loja" not in mail.outbox[0].body
    assert "Veja a assinatura e os ciclos já pagos:\nhttp" in mail.outbox[0].body
    # The charge already sent is withdrawn by the sweep (PATCH /cobr); the recurrence itself was cancelled at the
    # PSP by the payer, so the shop sends no PATCH /rec; nothing more is charged.
    SubscriptionCycle.objects.filter(pk=cycle.pk).update(updated_at=timezone.now() - timedelta(minutes=5))
    subscription_cycles_sweep(today=cycle.due_date - timedelta(days=5))
    cycle.refresh_from_db()
    assert cycle.status == "cancelled"
    assert [p for m, p, _ in bacen.state.requests if m == "PATCH"] == [f"/cobr/{cycle.txid}"]
    assert _cobr_puts(bacen) == [f"/cobr/{cycle.txid}"]
    assert Variant.objects.get(pk=plan.variant_id).stock == stock_before


def test_the_shop_cancels_with_patch_rec_and_withdraws_the_charge_already_sent(
    bacen: FakeBacenServer, plan: SubscriptionPlan, client: Client, django_capture_on_commit_callbacks: Any
) -> None:
    stock_before = Variant.objects.get(pk=plan.variant_id).stock
    subscription = _active(bacen, plan, client, django_capture_on_commit_callbacks)
    cycle = _open_cycle(subscription)
    assert cycle.status == "charged"

    subscription_cancel(public_id=subscription.public_id, by="shop")
    subscription_cancel(public_id=subscription.public_id, by="shop")  # twice: nothing more

    patches = [(p, body) for m, p, body in bacen.state.requests if m == "PATCH"]
    assert patches == [
        (f"/rec/{subscription.pix_id_rec}", {"status": "CANCELADA"}),
        (f"/cobr/{cycle.txid}", {"status": "CANCELADA"}),
    ]
    cycle.refresh_from_db()
    assert cycle.status == "cancelled"
    assert Variant.objects.get(pk=plan.variant_id).stock == stock_before
    kinds = list(SubscriptionEvent.objects.filter(subscription=subscription).values_list("kind", flat=True))
    assert kinds.count("status_cancelled") == 1 and kinds.count("recurrence_cancelled") == 1


def test_the_shop_cancelling_during_a_pix_retry_withdraws_the_charge_and_closes_the_cycle(
    bacen: FakeBacenServer, plan: SubscriptionPlan, client: Client, django_capture_on_commit_callbacks: Any
) -> None:
    """Walk h44: cancelled while its cycle waited for the PSP's retry, the charge was cancelled at the PSP but the
    cycle stayed "Nova tentativa" on the buyer's page and in the admin, holding its unit of stock forever."""
    stock_before = Variant.objects.get(pk=plan.variant_id).stock
    subscription = _active(bacen, plan, client, django_capture_on_commit_callbacks)
    cycle = _open_cycle(subscription)
    subscription_cycles_sweep(today=cycle.due_date - timedelta(days=5))
    with django_capture_on_commit_callbacks(execute=True):
        _deliver(client, "cobr", bacen.settle_cobr(cycle.txid, paid=False))
    cycle.refresh_from_db()
    assert (cycle.status, cycle.stock_reserved) == ("retrying", True)
    mail.outbox.clear()

    with django_capture_on_commit_callbacks(execute=True):
        subscription_cancel(public_id=subscription.public_id, by="shop", actor="rita")

    assert (f"/cobr/{cycle.txid}", {"status": "CANCELADA"}) in [
        (path, body) for method, path, body in bacen.state.requests if method == "PATCH"
    ]
    cycle.refresh_from_db()
    assert (cycle.status, cycle.stock_reserved) == ("cancelled", False)
    assert Variant.objects.get(pk=plan.variant_id).stock == stock_before
    page = client.get(f"/assinaturas/{subscription.access_token}/").content.decode()
    assert "Nova tentativa" not in page
    # the buyer is told the shop did it, and is not offered to manage what has ended
    assert [m.subject.split(": ", 1)[1] for m in mail.outbox] == ["Sua assinatura foi cancelada"]
    assert (
        "O cancelamento foi feito pela loja; se não foi você quem pediu, responda este e-mail." in mail.outbox[0].body
    )
    assert "pausar ou cancelar" not in mail.outbox[0].body


def test_a_lost_authorization_notice_is_recovered_with_get_rec(
    bacen: FakeBacenServer, plan: SubscriptionPlan, django_capture_on_commit_callbacks: Any
) -> None:
    subscription = subscription_create(
        plan_id=plan.public_id,
        buyer_name="Fulana de Tal",
        buyer_tax_id="12345678909",
        buyer_email="fulana@example.com.br",
        starts_on=timezone.localdate() + timedelta(days=5),
    )
    bacen.approve_rec(subscription.pix_id_rec)  # approved in the bank app; its `/rec` notice never arrives
    assert subscription_cycles_sweep()["recovered"] == 0  # too early to ask
    Subscription.objects.filter(pk=subscription.pk).update(updated_at=timezone.now() - timedelta(minutes=11))

    with django_capture_on_commit_callbacks(execute=True):
        assert subscription_cycles_sweep()["recovered"] == 1

    subscription.refresh_from_db()
    assert subscription.status == "active"
    assert ("GET", f"/rec/{subscription.pix_id_rec}") in [(m, p) for m, p, _ in bacen.state.requests]
    assert _open_cycle(subscription).due_date == date.fromordinal(timezone.localdate().toordinal() + 5)


def test_statement_budgets_of_charging_a_cycle_and_settling_it_into_an_order(
    bacen: FakeBacenServer,
    plan: SubscriptionPlan,
    client: Client,
    django_capture_on_commit_callbacks: Any,
    django_assert_max_num_queries: Any,
) -> None:
    subscription = _active(bacen, plan, client, django_capture_on_commit_callbacks)
    first = _open_cycle(subscription)
    with django_capture_on_commit_callbacks(execute=True):
        _deliver(client, "cobr", bacen.settle_cobr(first.txid, paid=True))
    second = _open_cycle(subscription)

    # lock + read the cycle, take the unit, mark charged with its event; the charge recorded (insert + read)
    with django_assert_max_num_queries(BUDGET_CHARGE):
        assert cycle_charge(cycle_id=second.public_id, today=second.due_date - timedelta(days=5)) == "charged"
    event_id = _store_only(client, bacen.settle_cobr(second.txid, paid=True))
    # the inbox row, the charge locked and settled, the cycle locked, the order placed (as any checkout's), the
    # cycle paid with its event, the next cycle planned, the row marked processed
    with django_assert_max_num_queries(BUDGET_SETTLE):
        assert pix_recurring_charge_event_process(event_id=event_id) == "paid"
    assert Order.objects.count() == 2


def _store_only(client: Client, body: dict[str, Any]) -> int:
    assert _deliver(client, "cobr", body)["received"] == 1  # its task is not run (no on-commit capture)
    return PixRecurringChargeWebhookEvent.objects.filter(processed_at__isnull=True).get().pk


def test_a_charge_the_psp_refuses_fails_the_cycle_once_and_gives_the_unit_back(
    bacen: FakeBacenServer, plan: SubscriptionPlan, client: Client, django_capture_on_commit_callbacks: Any
) -> None:
    stock_before = Variant.objects.get(pk=plan.variant_id).stock
    problem = {"type": "https://pix.bcb.gov.br/api/v2/error/CobROperacaoInvalida", "title": "Cobrança inválida.",
               "status": 400, "detail": "dataDeVencimento fora da janela"}  # fmt: skip
    subscription = subscription_create(
        plan_id=plan.public_id, buyer_name="Fulana de Tal", buyer_tax_id="12345678909",
        buyer_email="fulana@example.com.br", starts_on=timezone.localdate() + timedelta(days=5),
    )  # fmt: skip
    approved = bacen.approve_rec(subscription.pix_id_rec)
    # The GET /rec confirming the notice answers as usual; the PUT /cobr right after is refused.
    bacen.state.forced = [(200, bacen.state.recs[subscription.pix_id_rec]), (400, problem)]
    mail.outbox.clear()

    with django_capture_on_commit_callbacks(execute=True):
        _deliver(client, "rec", approved)

    first = SubscriptionCycle.objects.get(subscription=subscription, number=1)
    assert first.status == "failed"
    assert Variant.objects.get(pk=plan.variant_id).stock == stock_before
    assert [m.subject.split(": ", 1)[1] for m in mail.outbox] == ["Não conseguimos cobrar sua assinatura"]
    assert _open_cycle(subscription).number == 2  # the subscription goes on


def test_a_cycles_order_is_refunded_as_a_devolucao_of_the_pix_that_paid_it_and_never_beyond_it(
    bacen: FakeBacenServer, plan: SubscriptionPlan, client: Client, django_capture_on_commit_callbacks: Any
) -> None:
    from orders.errors import OrderError
    from orders.services import order_refund
    from payments.models import PixPayment, PixRefund

    # given a cycle paid by Pix Automático and its order
    subscription = _active(bacen, plan, client, django_capture_on_commit_callbacks)
    cycle = _open_cycle(subscription)
    with django_capture_on_commit_callbacks(execute=True):
        _deliver(client, "cobr", bacen.settle_cobr(cycle.txid, paid=True))
    order = Order.objects.get()
    charge = PixRecurringCharge.objects.get(txid=cycle.txid)
    paid = PixPayment.objects.get(end_to_end_id=charge.end_to_end_id)
    assert (paid.amount, paid.outcome, paid.source) == (order.paid_amount, "settled", "cobr")
    # when staff refund it
    with django_capture_on_commit_callbacks(execute=True):
        order_refund(order_id=order.public_id, amount=order.paid_amount, reason="Cliente desistiu")
    # then it is a devolução of the endToEndId that paid the cycle, sent to the PSP once
    refund = PixRefund.objects.get()
    assert (refund.end_to_end_id, refund.amount, refund.reference) == (
        charge.end_to_end_id, order.paid_amount, order.checkout_id
    )  # fmt: skip
    puts = [path for method, path, _ in bacen.state.requests if method == "PUT" and "/devolucao/" in path]
    assert puts == [f"/pix/{charge.end_to_end_id}/devolucao/{refund.psp_refund_id}"]
    # and nothing more than was paid can be refunded
    with pytest.raises(OrderError):
        order_refund(order_id=order.public_id, amount=1, reason="De novo")


def test_a_med_dispute_of_a_cycles_pix_automatico_holds_its_order_like_a_checkout_pix(
    bacen: FakeBacenServer, plan: SubscriptionPlan, client: Client, admin_client: Client,
    django_capture_on_commit_callbacks: Any,
) -> None:  # fmt: skip
    """QA: the dispute of a recurring (`cobr`) Pix had no reference, so its order was not held and shipped."""
    subscription = _active(bacen, plan, client, django_capture_on_commit_callbacks)
    cycle = _open_cycle(subscription)
    with django_capture_on_commit_callbacks(execute=True):
        _deliver(client, "cobr", bacen.settle_cobr(cycle.txid, paid=True))
    order = Order.objects.get()
    e2e = PixRecurringCharge.objects.get(txid=cycle.txid).end_to_end_id
    notice = med_notice(bacen, kind="infraction_report", infraction_key="ir-c1", e2eid=e2e, status="open",
                        event_key="evt-c1")  # fmt: skip
    with django_capture_on_commit_callbacks(execute=True):
        assert _deliver(client, "med", notice) == {"received": 1, "duplicates": 0}
    infraction = PixInfraction.objects.get()
    assert infraction.reference == cycle.public_id == order.checkout_id
    order.refresh_from_db()
    assert (order.payment_dispute, order.payment_dispute_id) == ("open", infraction.public_id)
    with pytest.raises(OrderError) as refused:
        order_ship(order_id=order.public_id, tracking_number="BR123456785BR")
    assert refused.value.code == "payment_disputed"
    listed = admin_client.get("/admin/orders/order/", {"payment_dispute__exact": "open"})
    assert listed.context["cl"].result_count == 1


def test_a_cycles_order_carries_the_stores_carrier_to_its_address_as_a_checkouts_order_does(
    bacen: FakeBacenServer, plan: SubscriptionPlan, client: Client, django_capture_on_commit_callbacks: Any
) -> None:
    """A cycle's order had no `fulfillment_carrier` (a checkout's order keeps its option's): shipped by the store's
    own courier it named no carrier, and by Correios it did not ask for the code. Now the store's cheapest method
    to the subscription's CEP names it (BCP-ORD-08 events carry `carrier`)."""
    pac = ShippingMethod.objects.create(code="pac", title="PAC", carrier="Correios", free_above=1000, position=1)
    ShippingRate.objects.create(method=pac, uf="SP", price=1890)
    ShippingRate.objects.create(method=pac, uf="RJ", price=2490)
    own = ShippingMethod.objects.create(code="motoboy", title="Motoboy", carrier="Motoboy da loja", position=2)
    ShippingRate.objects.create(method=own, cep_start=1_000_000, cep_end=5_999_999, price=1500)  # São Paulo city
    subscription = _active(bacen, plan, client, django_capture_on_commit_callbacks)
    first = _open_cycle(subscription)
    with django_capture_on_commit_callbacks(execute=True):
        _deliver(client, "cobr", bacen.settle_cobr(first.txid, paid=True))
    order = Order.objects.get(checkout_id=first.public_id)
    assert order.fulfillment_carrier == "Motoboy da loja"  # cheaper than PAC (free only from its R$ 10 floor)
    shipped = order_ship(order_id=order.public_id, tracking_number="")
    assert (shipped.carrier, shipped.tracking_number) == ("Motoboy da loja", "")

    rio = {**ADDRESS, "postal_code": "20040-020", "city": "Rio de Janeiro", "state": "rj", "neighborhood": "Centro"}
    subscription_address_change(public_id=subscription.public_id, address=rio)
    second = _open_cycle(subscription)
    assert subscription_cycles_sweep(today=second.due_date - timedelta(days=5))["charged"] == 1
    with django_capture_on_commit_callbacks(execute=True):
        _deliver(client, "cobr", bacen.settle_cobr(second.txid, paid=True))
    order = Order.objects.get(checkout_id=second.public_id)
    assert order.fulfillment_carrier == "Correios"
    with pytest.raises(OrderError) as refused:
        order_ship(order_id=order.public_id, tracking_number="")
    assert refused.value.code == "tracking_required"
