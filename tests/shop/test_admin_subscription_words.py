"""QA walk (a Brazilian merchant in the admin): a subscription's page reads in Portuguese and reais — its title and
cycles without "(cancelled)", events in words with readable details, the address as lines, prices in R$."""

from __future__ import annotations

import re
from datetime import date, timedelta

import pytest
from django.test import Client
from django.utils import timezone

from orders.services import order_place_from_checkout
from shop.demo.seed import seed_catalog
from shop.models import Subscription, SubscriptionCycle, SubscriptionEvent, SubscriptionPlan, Variant
from shop.subscriptions.services import subscription_cancel, subscription_create
from tests.orders.conftest import make_checkout
from tests.payments.fake_bacen import FakeBacenServer

pytestmark = pytest.mark.django_db

ADDRESS = {
    "postal_code": "01310-100", "street": "Avenida Paulista", "number": "1000", "complement": "Apto 45",
    "neighborhood": "Bela Vista", "city": "São Paulo", "state": "SP",
}  # fmt: skip


@pytest.fixture
def cancelled(bacen: FakeBacenServer) -> Subscription:
    seed_catalog()
    plan = SubscriptionPlan.objects.create(
        variant=Variant.objects.get(sku="SKU-CAFE-500G"), cycle="monthly", price=3990, first_cycle_discount=500
    )
    subscription = subscription_create(
        plan_id=plan.public_id, buyer_name="Ana Souza", buyer_tax_id="390.533.447-05",
        buyer_email="ana@example.com.br", starts_on=timezone.localdate() + timedelta(days=5), destination=ADDRESS,
    )  # fmt: skip
    # a cycle that was planned, then closed with the subscription (rows as the cycle services write them)
    cycle = SubscriptionCycle.objects.create(
        subscription=subscription, number=4, due_date=date(2026, 12, 10), amount=3990, status="cancelled"
    )
    SubscriptionEvent.objects.create(
        subscription=subscription, kind="cycle_planned",
        detail={"cycle": cycle.public_id, "number": 4, "due_date": "2026-12-10"},
    )  # fmt: skip
    return subscription_cancel(public_id=subscription.public_id, by="shop")


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def test_the_subscription_page_reads_in_portuguese_and_reais(admin_client: Client, cancelled: Subscription) -> None:
    html = admin_client.get(f"/admin/shop/subscription/{cancelled.pk}/change/").content.decode()
    text = _text(html)
    assert f"{cancelled.public_id} — Cancelada" in text and "(cancelled)" not in text
    assert "Ciclo 4 — Cancelado" in text and "#4 cancelled" not in text
    # prices in reais, never the centavos
    assert re.search(r"Preço por ciclo:? R\$ 39,90", text) and re.search(r"Preço do primeiro ciclo:? R\$ 34,90", text)
    assert "(centavos)" not in text and "3990" not in text
    # events in words, details readable
    assert "Assinatura criada" in text and "Ciclo agendado" in text and "Assinatura cancelada" in text
    assert not re.search(r">\s*(created|cycle_planned|status_cancelled)\s*<", html)
    assert "ciclo nº: 4; vencimento: 10/12/2026" in text
    assert "antes: Aguardando autorização" in text and "por: loja" in text
    assert '{"' not in text and "&quot;" not in html.split('id="subscriptionevent')[-1].split("</fieldset>")[0]
    # the address as an envelope reads it, one line each
    assert "Ana Souza<br>Avenida Paulista, 1000, Apto 45<br>Bela Vista<br>São Paulo/SP<br>CEP 01310-100" in html
    assert "postal_code" not in text
    assert re.search(r"Idioma:? Português \(Brasil\)", text) and "pt-br" not in text  # QA walk: it read "pt-br"


def test_the_cycles_list_names_the_subscription_in_portuguese(admin_client: Client, cancelled: Subscription) -> None:
    text = _text(admin_client.get("/admin/shop/subscriptioncycle/").content.decode())
    assert f"{cancelled.public_id} — Cancelada" in text and "(cancelled)" not in text
    assert "R$ 39,90" in text


def test_a_paid_cycle_names_its_order_by_number_and_a_subscription_cannot_be_deleted(
    admin_client: Client, cancelled: Subscription
) -> None:
    """Walk h44: the cycles named their order by its public id (order_…) and the superuser could delete a
    subscription — its cycles and timeline gone, its Pix Automático left authorized at the PSP."""
    order = order_place_from_checkout(checkout=make_checkout())
    SubscriptionCycle.objects.filter(subscription=cancelled, number=4).update(status="paid", order_id=order.public_id)
    admin_url = f"/admin/orders/order/{order.pk}/change/"

    for page in (f"/admin/shop/subscription/{cancelled.pk}/change/", "/admin/shop/subscriptioncycle/"):
        html = admin_client.get(page).content.decode()
        assert f'<a href="{admin_url}">Pedido #{order.number}</a>' in html, page
        assert order.public_id not in _text(html), page

    listing = admin_client.get("/admin/shop/subscription/").content.decode()
    assert 'value="delete_selected"' not in listing
    assert admin_client.get(f"/admin/shop/subscription/{cancelled.pk}/delete/").status_code == 403
    timeline = SubscriptionEvent.objects.filter(subscription=cancelled).count()
    admin_client.post(
        "/admin/shop/subscription/", {"action": "delete_selected", "_selected_action": [cancelled.pk], "post": "yes"}
    )
    assert Subscription.objects.filter(pk=cancelled.pk).exists()
    assert SubscriptionEvent.objects.filter(subscription=cancelled).count() == timeline


def test_the_withdrawal_and_the_psp_status_read_in_words(admin_client: Client, cancelled: Subscription) -> None:
    """Walk h44: a buyer who cancelled within 7 days left "withdrawal — order: order_…; outcome: refunded" on the
    timeline, and the PSP's recurrence status read "APPROVED"/"CANCELLED". (Rows as the services write them.)"""
    SubscriptionEvent.objects.create(
        subscription=cancelled, kind="withdrawal", detail={"order": "order_abc", "outcome": "refunded"}
    )
    SubscriptionEvent.objects.create(
        subscription=cancelled, kind="recurrence_cancelled", detail={"psp_status": "CANCELLED"}
    )
    SubscriptionEvent.objects.create(
        subscription=cancelled, kind="status_active", detail={"from": "pending_authorization", "recurrence": "APPROVED"}
    )

    text = _text(admin_client.get(f"/admin/shop/subscription/{cancelled.pk}/change/").content.decode())

    assert "Direito de arrependimento: primeiro pedido" in text
    assert "pedido: order_abc; resultado: pedido cancelado e valor devolvido" in text
    assert "situação no PSP: cancelada" in text and "situação no PSP: aprovada" in text
    for english in ("withdrawal", "outcome", "refunded", "CANCELLED", "APPROVED"):
        assert english not in text, english
