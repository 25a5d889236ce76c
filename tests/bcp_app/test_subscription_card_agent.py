"""An agent subscribes its buyer by card over BCP REST (issue 38, extension br.dev.bcp.shopping.subscription):
`payment.instruments[0]` is the card handler's instrument with the gateway's token (BCP §11: credentials go
platform → business only, never echoed — BCP-CHK ids do not cover subscriptions; the extension's own rules are in
the README and `bcp_app/jsonschemas/shopping/subscription.json`). The card is stored at the fake Pagar.me, the first
cycle is charged and is the platform's order (readable with the order capability, BCP-ORD-02 ownership), the answer
validates against the extension's schema, a bad instrument names its path, and the agent cancels it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from orders.models import Order
from shop.models import Subscription, SubscriptionPlan, Variant
from tests.bcp_app.bcp_fixtures import FakePlatform
from tests.bcp_app.rest_helpers import call, catalog
from tests.bcp_app.test_subscription_extension import BODY, _schema_errors, _setup
from tests.payments.fake_pagarme import FakePagarmeServer, use_fake_pagarme

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("bcp_settings")]


@pytest.fixture
def pagarme(settings: Any) -> Iterator[FakePagarmeServer]:
    server = use_fake_pagarme(settings)
    yield server
    server.stop()


@pytest.fixture
def plan() -> SubscriptionPlan:
    catalog()
    variant = Variant.objects.get(sku="SKU-CAFE-500G")
    Variant.objects.filter(pk=variant.pk).update(stock=10)
    return SubscriptionPlan.objects.create(variant=variant, cycle="monthly", price=3990, first_cycle_discount=500)


def _card(settings: Any, token: str = "tok_approved", **instrument: Any) -> dict[str, Any]:  # noqa: S107
    card = {"id": "instr_1", "handler_id": settings.BCP_CARD_HANDLER_ID, "type": "card",
            "credential": {"type": "PAYMENT_GATEWAY", "token": token}, **instrument}  # fmt: skip
    return {"instruments": [card]}


def test_an_agent_subscribes_by_card_the_first_cycle_is_its_order_and_it_cancels(
    client: Client, fake_platform: FakePlatform, settings: Any, plan: SubscriptionPlan, pagarme: FakePagarmeServer,
    django_capture_on_commit_callbacks: Any,
) -> None:  # fmt: skip
    platform, headers = _setup(fake_platform, settings)
    request = {"plan_id": plan.public_id, **BODY, "payment": _card(settings)}
    with django_capture_on_commit_callbacks(execute=True):
        created = call(client, "post", "/subscriptions", {**headers, "Idempotency-Key": "sub-card-1"}, request)
    with django_capture_on_commit_callbacks(execute=True):
        replay = call(client, "post", "/subscriptions", {**headers, "Idempotency-Key": "sub-card-1"}, request)

    assert created.status_code == 201, created.content
    body = created.json()
    assert replay.json()["id"] == body["id"] and Subscription.objects.count() == 1 and len(pagarme.state.cards) == 1
    assert "tok_approved" not in created.content.decode()  # the credential is never echoed
    assert body["status"] == "active"
    assert body["authorization"] == {"method": "card", "status": "approved",
                                     "card": {"brand": "Mastercard", "last_digits": "4242"}}  # fmt: skip
    order = Order.objects.get()
    today = timezone.localdate().isoformat()
    assert body["cycles"][0] == {
        "number": 1, "due_date": today, "amount": 3490, "status": "paid", "order_id": order.public_id
    }  # fmt: skip
    assert body["next_charge"]["cycle"] == 2 and body["next_charge"]["amount"] == 3990
    assert _schema_errors({k: v for k, v in body.items() if k != "ucp"}) == []
    # The cycle's order is the platform's, paid by card (BCP-ORD-02: only its platform reads it).
    assert (order.platform_id, order.payment_type) == (platform.platform.public_id, "card")
    assert call(client, "get", f"/orders/{order.public_id}", headers).json()["id"] == order.public_id
    stored = pagarme.stored_charges()
    assert [(code, cycle) for code, _card_id, cycle, _key in stored] == [(order.checkout_id, "first")]

    cancelled = call(client, "post", f"/subscriptions/{body['id']}/cancel", {**headers, "Idempotency-Key": "c-1"})
    assert cancelled.json()["status"] == "cancelled" and cancelled.json()["authorization"]["status"] == "cancelled"
    assert [card["status"] for card in pagarme.state.cards.values()] == ["deleted"]
    assert [c["status"] for c in cancelled.json()["cycles"]] == ["paid", "cancelled"]


def test_a_bad_card_instrument_names_its_path_and_a_refused_token_is_said_in_portuguese(
    client: Client, fake_platform: FakePlatform, settings: Any, plan: SubscriptionPlan, pagarme: FakePagarmeServer
) -> None:
    _platform, headers = _setup(fake_platform, settings)
    base = {"plan_id": plan.public_id, **BODY}

    pix_handler = call(client, "post", "/subscriptions", headers,
                       {**base, "payment": _card(settings, type="pix")}).json()  # fmt: skip
    no_token = call(client, "post", "/subscriptions", headers,
                    {**base, "payment": _card(settings, token="")}).json()  # fmt: skip
    refused = call(client, "post", "/subscriptions", headers,
                   {**base, "payment": _card(settings, token="not-a-token")}).json()  # fmt: skip
    wrong_type = call(client, "post", "/subscriptions", headers, {**base, "payment": {"instruments": "x"}})

    assert pix_handler["messages"][0]["path"] == "$.payment.instruments[0].type"
    assert no_token["messages"][0]["path"] == "$.payment.instruments[0].credential.token"
    assert refused["messages"][0]["path"] == "$.payment.instruments[0].credential.token"
    assert "O cartão não foi aceito" in refused["messages"][0]["content"]
    assert wrong_type.status_code == 400 and "instruments" in json.dumps(wrong_type.json())
    assert Order.objects.count() == 0 and not pagarme.stored_charges()
    assert Subscription.objects.count() == 0  # nothing written for a refused card
