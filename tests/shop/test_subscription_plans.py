"""Subscription plans (issue 38): admin in reais and words, Portuguese validation, the product page offer."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from django.test import Client

from shop.demo.seed import seed_catalog
from shop.models import SubscriptionPlan, Variant
from shop.subscriptions.offers import plan_offer, plan_terms
from shop.subscriptions.selectors import subscription_plans_by_variant

pytestmark = pytest.mark.django_db
ADD = "/admin/shop/subscriptionplan/add/"


@pytest.fixture
def coffee() -> Variant:
    seed_catalog()
    return Variant.objects.get(sku="SKU-CAFE-500G")


def _post(variant: Variant, **changes: Any) -> dict[str, Any]:
    data = {
        "variant": variant.pk,
        "cycle": "monthly",
        "price": "89,90",
        "first_cycle_discount": "10,00",
        "min_cycles": "3",
        "ships_each_cycle": "on",
        "active": "on",
    }
    data.update(changes)
    return {key: value for key, value in data.items() if value is not None}


def test_admin_creates_a_plan_typed_in_reais_and_lists_it_in_words(admin_client: Client, coffee: Variant) -> None:
    response = admin_client.post(ADD, _post(coffee))

    assert response.status_code == 302
    plan = SubscriptionPlan.objects.get()
    assert (plan.variant_id, plan.cycle, plan.price, plan.first_cycle_discount, plan.min_cycles) == (
        coffee.pk,
        "monthly",
        8990,
        1000,
        3,
    )
    assert plan.public_id.startswith("plan_") and plan.ships_each_cycle and plan.first_cycle_price == 7990
    listing = admin_client.get("/admin/shop/subscriptionplan/").content.decode()
    assert "Assinar por R$ 89,90 por mês" in listing
    assert "Primeiro mês por R$ 79,90; Cancele quando quiser, sem multa; Entrega a cada ciclo" in listing


@pytest.mark.parametrize(
    ("changes", "field", "message"),
    [
        ({"price": "0,00"}, "price", "O preço por ciclo precisa ser maior que zero."),
        (
            {"first_cycle_discount": "89,90"},
            "first_cycle_discount",
            "O desconto do primeiro ciclo (R$ 89,90) precisa ser menor que o preço por ciclo (R$ 89,90).",
        ),
        ({"min_cycles": "0"}, "min_cycles", "O compromisso mínimo é de pelo menos 1 ciclo."),
    ],
)
def test_bad_plan_is_refused_in_portuguese_on_its_field_and_nothing_saved(
    admin_client: Client, coffee: Variant, changes: dict[str, str], field: str, message: str
) -> None:
    response = admin_client.post(ADD, _post(coffee, **changes))

    assert response.status_code == 200
    assert response.context["adminform"].form.errors[field] == [message]
    assert SubscriptionPlan.objects.count() == 0


def test_a_second_active_plan_of_the_same_cycle_is_refused(admin_client: Client, coffee: Variant) -> None:
    SubscriptionPlan.objects.create(variant=coffee, cycle="monthly", price=8990)

    response = admin_client.post(ADD, _post(coffee, price="79,90"))

    assert response.status_code == 200
    assert response.context["adminform"].form.errors["cycle"] == [
        "Esta variante já tem um plano mensal ativo; desative-o antes."
    ]
    assert SubscriptionPlan.objects.count() == 1


def test_words_of_a_weekly_plan_without_discount() -> None:
    plan = SubscriptionPlan(cycle="weekly", price=2990, first_cycle_discount=0, min_cycles=1, ships_each_cycle=False)

    assert plan_offer(plan) == "Assinar por R$ 29,90 por semana"
    assert plan_terms(plan) == ["Cancele quando quiser, sem multa", "Sem entrega"]


def test_product_page_shows_the_subscription_beside_the_one_off_price(client: Client, coffee: Variant) -> None:
    SubscriptionPlan.objects.create(variant=coffee, cycle="monthly", price=3990, first_cycle_discount=500)
    SubscriptionPlan.objects.create(variant=coffee, cycle="weekly", price=1190, active=False)  # not offered

    html = client.get("/produtos/cafe-especial-500g/").content.decode()

    assert '<span class="price-now" data-role="price">R$ 42,90</span>' in html
    offers = re.search(r'data-testid="subscription-offers">(.*?)</div>', html, re.S)
    assert offers is not None
    assert re.findall(r"<strong>(.*?)</strong>", offers.group(1)) == ["Assinar por R$ 39,90 por mês"]
    assert "Primeiro mês por R$ 34,90 · Cancele quando quiser, sem multa · Entrega a cada ciclo" in offers.group(1)
    data = json.loads(
        re.search(r'<script id="variant-data" type="application/json">(.*?)</script>', html, re.S).group(1)
    )
    assert {row["sku"]: row["subscriptions"] for row in data}["SKU-CAFE-500G"] == ["Assinar por R$ 39,90 por mês"]


def test_product_page_without_plans_hides_the_offer(client: Client, coffee: Variant) -> None:
    html = client.get("/produtos/cafe-especial-500g/").content.decode()

    assert 'data-testid="subscription-offers" hidden>' in html


def test_plans_of_every_variant_of_a_page_in_one_query(coffee: Variant, django_assert_max_num_queries: Any) -> None:
    other = Variant.objects.exclude(pk=coffee.pk).first()
    assert other is not None
    monthly = SubscriptionPlan.objects.create(variant=coffee, cycle="monthly", price=3990)
    weekly = SubscriptionPlan.objects.create(variant=coffee, cycle="weekly", price=1190)
    theirs = SubscriptionPlan.objects.create(variant=other, cycle="monthly", price=5000)

    with django_assert_max_num_queries(1):
        plans = subscription_plans_by_variant([coffee.pk, other.pk])

    assert plans == {coffee.pk: [weekly, monthly], other.pk: [theirs]}
