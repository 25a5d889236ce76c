"""Subscriptions in "Minha conta" (issue 38, step 4: the buyer manages them from "Minha conta"): a subscriber
signs in even before a first order, finds each subscription with the link that manages it, exports it (LGPD
art. 18, II), and erasing the account cancels the running ones at the PSP (fake Bacen on 127.0.0.1) and strips
their e-mail and address."""

from __future__ import annotations

import csv
import io
from datetime import timedelta
from typing import Any

import pytest
from django.core import mail
from django.core.cache import cache
from django.test import Client
from django.utils import timezone

from shop.demo.seed import seed_catalog
from shop.models import Subscription, SubscriptionPlan, Variant
from shop.subscriptions.services import subscription_create
from tests.payments.fake_bacen import FakeBacenServer
from tests.shop.test_account import EMAIL, link_from_mail

pytestmark = pytest.mark.django_db

ADDRESS = {
    "postal_code": "01310-100", "street": "Avenida Paulista", "number": "1000", "complement": "",
    "neighborhood": "Bela Vista", "city": "São Paulo", "state": "SP",
}  # fmt: skip


@pytest.fixture(autouse=True)
def _fresh_limits() -> None:
    cache.clear()  # the sign-in request counters live in the cache


@pytest.fixture
def subscription(bacen: FakeBacenServer) -> Subscription:
    seed_catalog()
    plan = SubscriptionPlan.objects.create(
        variant=Variant.objects.get(sku="SKU-CAFE-500G"), cycle="monthly", price=3990
    )
    return subscription_create(
        plan_id=plan.public_id, buyer_name="Ana Souza", buyer_tax_id="390.533.447-05", buyer_email=EMAIL,
        starts_on=timezone.localdate() + timedelta(days=5), destination=ADDRESS,
    )  # fmt: skip


def _signed_in(client: Client, django_capture_on_commit_callbacks: Any) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        assert client.post("/conta/", {"email": EMAIL}).status_code == 200
    assert client.post(link_from_mail()).status_code == 302


def test_a_subscriber_without_orders_signs_in_and_finds_the_link_that_manages_it(
    client: Client, subscription: Subscription, django_capture_on_commit_callbacks: Any
) -> None:
    _signed_in(client, django_capture_on_commit_callbacks)

    page = client.get("/conta/").content.decode()

    assert 'data-testid="account-subscriptions"' in page
    assert f"/assinaturas/{subscription.access_token}/" in page
    assert "Café especial 500 g" in page and "Aguardando autorização" in page
    managed = client.get(f"/assinaturas/{subscription.access_token}/")
    assert managed.status_code == 200


def test_no_link_for_an_address_with_neither_order_nor_subscription(
    client: Client, subscription: Subscription, django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        client.post("/conta/", {"email": "outra@example.com.br"})
    assert mail.outbox == []


def test_the_export_carries_the_subscription(
    client: Client, subscription: Subscription, django_capture_on_commit_callbacks: Any
) -> None:
    _signed_in(client, django_capture_on_commit_callbacks)

    exported = client.get("/conta/meus-dados.json").json()
    rows = list(csv.reader(io.StringIO(client.get("/conta/meus-dados.csv").content.decode("utf-8-sig")), delimiter=";"))

    (item,) = exported["subscriptions"]
    assert (item["id"], item["status"], item["price_centavos"], item["address"]["city"]) == (
        subscription.public_id, "pending_authorization", 3990, "São Paulo",
    )  # fmt: skip
    assert item["buyer"] == {"name": "Ana Souza", "cpf": "39053344705"}
    row = ["assinatura", item["created_at"], subscription.public_id, "pending_authorization", "endereco.city"]
    assert [*row, "São Paulo"] in rows


def test_erasing_the_account_cancels_the_running_subscription_at_the_psp_and_strips_its_contact(
    client: Client, subscription: Subscription, bacen: FakeBacenServer, django_capture_on_commit_callbacks: Any
) -> None:
    _signed_in(client, django_capture_on_commit_callbacks)
    assert "suas assinaturas" in client.get("/conta/excluir").content.decode()

    with django_capture_on_commit_callbacks(execute=True):
        done = client.post("/conta/excluir", {"confirm": "on"})

    assert done.status_code == 200
    assert "Sua assinatura foi cancelada: nenhum ciclo novo será cobrado." in done.content.decode()
    subscription.refresh_from_db()
    assert subscription.status == "cancelled"
    assert subscription.buyer_email.endswith("@apagado.invalid") and subscription.destination == {}
    patches = [(path, body) for method, path, body in bacen.state.requests if method == "PATCH"]
    assert patches == [(f"/rec/{subscription.pix_id_rec}", {"status": "CANCELADA"})]
    # the cancellation notice found only the erased placeholder (….invalid): nothing was sent to it
    assert [m.subject for m in mail.outbox] == ["Loja Exemplo: seu link para entrar em Minha conta"]
    sent = len(mail.outbox)
    # erased: the address no longer signs in to anything
    with django_capture_on_commit_callbacks(execute=True):
        Client().post("/conta/", {"email": EMAIL})
    assert len(mail.outbox) == sent
