"""Subscriptions (issue 38): created from a plan with the Pix Automático recurrence at the PSP (the fake Bacen
API Pix over HTTP), statement budget, state machine, Portuguese refusals."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from payments.automatic.services import pix_recurrence_events_reprocess
from payments.models import PixRecurrenceWebhookEvent
from payments.psp import PSPUnavailable
from payments.psp.recurring import PayerAccount
from shop.demo.seed import seed_catalog
from shop.models import Subscription, SubscriptionEvent, SubscriptionPlan, Variant
from shop.subscriptions.services import (
    SubscriptionInputError,
    SubscriptionStateError,
    subscription_create,
    subscription_request_authorization,
    subscription_transition,
)
from tests.payments.fake_bacen import PROXY_VERIFIED, FakeBacenServer

pytestmark = pytest.mark.django_db


@pytest.fixture
def plan() -> SubscriptionPlan:
    seed_catalog()
    variant = Variant.objects.get(sku="SKU-CAFE-500G")
    return SubscriptionPlan.objects.create(variant=variant, cycle="monthly", price=3990, first_cycle_discount=500)


def _start() -> date:
    return timezone.localdate() + timedelta(days=5)


def _create(plan: SubscriptionPlan, **kwargs: Any) -> Subscription:
    options: dict[str, Any] = {
        "plan_id": plan.public_id,
        "buyer_name": "Fulana de Tal",
        "buyer_tax_id": "123.456.789-09",
        "buyer_email": "fulana@example.com.br",
        "starts_on": _start(),
        **kwargs,
    }
    return subscription_create(**options)


def test_subscription_from_a_plan_creates_the_recurrence_and_asks_the_payers_bank(
    bacen: FakeBacenServer, plan: SubscriptionPlan, django_assert_max_num_queries: Any
) -> None:
    account = PayerAccount(tax_id="12345678909", ispb="91193552", branch="2569", account="550689")

    # plan read, then in one transaction the plan's lock and the look-up of a repeated storefront subscribe,
    # subscription + event inserts; the recurrence recorded with its event
    with django_assert_max_num_queries(8):
        subscription = _create(plan, payer_account=account)

    subscription.refresh_from_db()
    assert subscription.status == "pending_authorization"
    assert (subscription.price, subscription.first_cycle_price, subscription.cycle, subscription.min_cycles) == (
        3990,
        3490,
        "monthly",
        1,
    )
    assert (subscription.pix_id_rec, subscription.pix_id_solic_rec) == (
        "RR999999992026072800000000001",
        "SC999999992026072800000000001",
    )
    posted = [(method, path) for method, path, _ in bacen.state.requests if path != "/oauth/token"]
    assert posted == [("POST", "/rec"), ("POST", "/solicrec")]
    rec_body = next(body for method, path, body in bacen.state.requests if path == "/rec")
    assert rec_body["vinculo"] == {
        "contrato": subscription.public_id,
        "devedor": {"cpf": "12345678909", "nome": "Fulana de Tal"},
        "objeto": "Café especial 500 g",
    }
    # the first cycle costs 34.90, the next 39.90: a fixed valorRec would refuse the first cobr (Bacen), so the
    # recurrence is variable, charged at least the smaller price
    assert rec_body["valor"] == {"valorMinimoRecebedor": "34.90"}
    assert rec_body["calendario"] == {"dataInicial": _start().isoformat(), "periodicidade": "MENSAL"}
    kinds = list(SubscriptionEvent.objects.filter(subscription=subscription).values_list("kind", flat=True))
    assert kinds == ["created", "authorization_requested"]


def test_a_plan_without_a_first_cycle_discount_asks_for_a_fixed_recurrence(
    bacen: FakeBacenServer, plan: SubscriptionPlan
) -> None:
    SubscriptionPlan.objects.filter(pk=plan.pk).update(first_cycle_discount=0)
    plan.refresh_from_db()

    _create(plan)

    rec_body = next(body for method, path, body in bacen.state.requests if path == "/rec")
    assert rec_body["valor"] == {"valorRec": "39.90"}


def test_psp_down_keeps_the_subscription_pending_without_recurrence_and_asking_again_works(
    bacen: FakeBacenServer, plan: SubscriptionPlan
) -> None:
    bacen.state.forced = [(503, None)]  # POST /rec is not retried blindly

    with pytest.raises(PSPUnavailable):
        _create(plan)

    subscription = Subscription.objects.get()
    assert (subscription.status, subscription.pix_id_rec) == ("pending_authorization", "")

    subscription_request_authorization(subscription=subscription)

    subscription.refresh_from_db()
    assert subscription.pix_id_rec == "RR999999992026072800000000001"
    assert subscription.pix_id_solic_rec == ""


@pytest.mark.parametrize(
    ("changes", "field", "message"),
    [
        ({"buyer_tax_id": "123"}, "buyer_tax_id", "Informe o CPF (11 dígitos) ou o CNPJ (14 dígitos) do pagador."),
        ({"buyer_email": "fulana"}, "buyer_email", "Informe um e-mail válido, como nome@exemplo.com.br."),
        ({"buyer_name": "  "}, "buyer_name", "Informe o nome de quem assina."),
        ({"plan_id": "plan_000"}, "plan_id", "Este plano de assinatura não existe ou não está mais à venda."),
        (
            {"starts_on": date(2020, 1, 1)},
            "starts_on",
            "A primeira cobrança não pode ser numa data que já passou.",
        ),
    ],
)
def test_bad_input_is_refused_in_portuguese_and_nothing_is_written_or_sent(
    bacen: FakeBacenServer, plan: SubscriptionPlan, changes: dict[str, Any], field: str, message: str
) -> None:
    with pytest.raises(SubscriptionInputError) as refused:
        _create(plan, **changes)

    assert (refused.value.field, refused.value.message) == (field, message)
    assert Subscription.objects.count() == 0
    assert bacen.state.requests == []


def test_state_machine_moves_and_refusals(
    bacen: FakeBacenServer, plan: SubscriptionPlan, django_assert_max_num_queries: Any
) -> None:
    subscription = _create(plan)

    with pytest.raises(SubscriptionStateError) as early:
        subscription_transition(public_id=subscription.public_id, to="paused")
    with django_assert_max_num_queries(2):  # read, then the guarded update with its event in one statement
        subscription_transition(public_id=subscription.public_id, to="active", reason="rec APROVADA")
    subscription_transition(public_id=subscription.public_id, to="paused")
    subscription_transition(public_id=subscription.public_id, to="active")
    subscription_transition(public_id=subscription.public_id, to="cancelled", reason="cancelada no app do banco")
    with pytest.raises(SubscriptionStateError) as late:
        subscription_transition(public_id=subscription.public_id, to="active")

    assert str(early.value) == "Uma assinatura aguardando autorização não pode passar a pausada."
    assert str(late.value) == "Uma assinatura cancelada não pode passar a ativa."
    subscription.refresh_from_db()
    assert subscription.status == "cancelled"
    kinds = list(SubscriptionEvent.objects.filter(subscription=subscription).values_list("kind", flat=True))
    assert kinds == [
        "created",
        "authorization_requested",
        "status_active",
        "status_paused",
        "status_active",
        "status_cancelled",
    ]


def test_bank_app_authorization_and_cancellation_reach_the_subscription_once(
    bacen: FakeBacenServer, plan: SubscriptionPlan, client: Client, django_capture_on_commit_callbacks: Any
) -> None:
    """`/rec` webhook → inbox → task (GET /rec/{idRec} to confirm) → recurrence_changed → subscription."""
    subscription = _create(plan)

    def deliver(body: dict[str, Any]) -> Any:
        return client.post(
            "/payments/pix/webhook/rec", data=body, content_type="application/json", headers=PROXY_VERIFIED
        )

    approved = bacen.approve_rec(subscription.pix_id_rec)
    with django_capture_on_commit_callbacks(execute=True):
        first = deliver(approved)
    subscription.refresh_from_db()
    assert (first.json(), subscription.status) == ({"received": 1, "duplicates": 0}, "active")

    with django_capture_on_commit_callbacks(execute=True):
        replay = deliver(approved)
        cancelled = deliver(bacen.payer_cancels_rec(subscription.pix_id_rec))
    subscription.refresh_from_db()

    assert replay.json() == {"received": 0, "duplicates": 1}
    assert cancelled.json() == {"received": 1, "duplicates": 0}
    assert subscription.status == "cancelled"
    # The subscription asked for retries within the rules (PERMITE_3R_7D: an idRec starting RR).
    events = list(
        SubscriptionEvent.objects.filter(subscription=subscription, kind__startswith="status_").values_list(
            "kind", "detail"
        )
    )
    assert events == [
        ("status_active", {"from": "pending_authorization", "recurrence": "APPROVED", "cancelled_by": ""}),
        ("status_cancelled", {"from": "active", "recurrence": "CANCELLED", "cancelled_by": "USUARIO_PAGADOR"}),
    ]
    assert not PixRecurrenceWebhookEvent.objects.filter(processed_at__isnull=True).exists()


def test_a_notice_whose_task_was_lost_is_processed_by_the_beat_sweep_once(
    bacen: FakeBacenServer, plan: SubscriptionPlan, client: Client
) -> None:
    subscription = _create(plan)
    approved = bacen.approve_rec(subscription.pix_id_rec)
    # The notice is stored but its after-commit enqueue never runs (a dead broker): the row waits.
    response = client.post(
        "/payments/pix/webhook/rec", data=approved, content_type="application/json", headers=PROXY_VERIFIED
    )
    assert response.json() == {"received": 1, "duplicates": 0}
    subscription.refresh_from_db()
    assert subscription.status == "pending_authorization"

    assert pix_recurrence_events_reprocess(older_than=timedelta(0)) == 1
    assert pix_recurrence_events_reprocess(older_than=timedelta(0)) == 0

    subscription.refresh_from_db()
    assert subscription.status == "active"
    assert SubscriptionEvent.objects.filter(subscription=subscription, kind="status_active").count() == 1


def test_staff_see_a_subscription_and_its_timeline_read_only(
    bacen: FakeBacenServer, plan: SubscriptionPlan, admin_client: Client
) -> None:
    subscription = _create(plan)

    listing = admin_client.get("/admin/shop/subscription/").content.decode()
    page = admin_client.get(f"/admin/shop/subscription/{subscription.pk}/change/")

    assert subscription.public_id in listing and "Aguardando autorização" in listing and "R$ 39,90" in listing
    assert page.status_code == 200
    assert "Autorização do Pix Automático pedida ao banco do assinante" in page.content.decode()  # not the kind
    assert admin_client.get("/admin/shop/subscription/add/").status_code == 403
