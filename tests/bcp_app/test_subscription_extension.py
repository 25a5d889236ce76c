"""The br.dev.bcp.shopping.subscription extension over REST (issue 38): advertised in /.well-known/bcp, an agent
creates a subscription for its buyer (Pix Automático in the sandbox), reads it, its cycle becomes an order with a
signed order webhook to the platform, and the agent cancels it; valid against the extension's schema. Another
platform cannot see it; bad input names the field; without the extension negotiated, capabilities_incompatible."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.test import Client
from jsonschema import Draft202012Validator
from referencing import Registry, Resource

from bcp_app.models import WebhookDelivery
from bcp_app.service.platforms import NewPlatform, platform_create
from orders.models import Order
from payments.sandbox import recurring as sandbox_recurring
from shop.models import Subscription, SubscriptionCycle, SubscriptionPlan, Variant
from shop.subscriptions.cycles import subscription_cycles_sweep
from tests.bcp_app.bcp_fixtures import VERSION, FakePlatform, agent
from tests.bcp_app.rest_helpers import call, catalog

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("bcp_settings")]
SUBSCRIPTION = "br.dev.bcp.shopping.subscription"
CHECKOUT, ORDER = "br.dev.bcp.shopping.checkout", "br.dev.bcp.shopping.order"
SCHEMAS = Path(__file__).resolve().parents[2] / "bcp_app" / "jsonschemas"
SPEC, SCHEMA = "https://bcp.dev.br/draft/specification", "https://bcp.dev.br/draft/schemas"
ENTRY = {"version": VERSION, "spec": f"{SPEC}/subscription", "schema": f"{SCHEMA}/shopping/subscription.json",
         "extends": [CHECKOUT, ORDER]}  # fmt: skip
BODY = {
    "buyer": {"first_name": "Ana", "last_name": "Souza", "email": "ana@example.com.br", "tax_id": "52998224725"},
    "destination": {"postal_code": "01310-100", "street": "Avenida Paulista", "number": "1000",
                    "neighborhood": "Bela Vista", "city": "São Paulo", "state": "SP"},
}  # fmt: skip


def _schema_errors(document: Any) -> list[str]:
    resources = [
        (d["$id"], Resource.from_contents(d)) for d in (json.loads(p.read_text()) for p in SCHEMAS.rglob("*.json"))
    ]
    ref = {"$ref": f"{SCHEMA}/shopping/subscription.json#/$defs/subscription"}
    validator = Draft202012Validator(ref, registry=Registry().with_resources(resources))
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(document)]


def _setup(fake_platform: FakePlatform, settings: Any, *, subscription: bool = True, path: str = "/perfil.json"
           ) -> tuple[NewPlatform, dict[str, str]]:  # fmt: skip
    settings.BCP_PIX_SANDBOX = True
    settings.PIX_SANDBOX_WEBHOOK_URL = ""
    caps = fake_platform.profile()["ucp"]["capabilities"]
    if subscription:
        caps[SUBSCRIPTION] = [ENTRY]
    url = fake_platform.publish(path, capabilities=caps)
    platform = platform_create(name=f"Agente {path}", profile_url=url)
    return platform, agent(url, Authorization=f"Bearer {platform.api_key}")


@pytest.fixture
def plan() -> SubscriptionPlan:
    catalog()
    variant = Variant.objects.get(sku="SKU-CAFE-500G")
    Variant.objects.filter(pk=variant.pk).update(stock=10)
    return SubscriptionPlan.objects.create(variant=variant, cycle="monthly", price=3990, first_cycle_discount=500)


def test_profile_advertises_the_subscription_extension(client: Client) -> None:
    capabilities = client.get("/.well-known/bcp").json()["ucp"]["capabilities"]
    assert capabilities[SUBSCRIPTION] == [ENTRY]


def test_an_agent_creates_a_subscription_its_cycle_becomes_an_order_with_a_webhook_and_it_cancels_it(
    client: Client,
    fake_platform: FakePlatform,
    settings: Any,
    plan: SubscriptionPlan,
    django_capture_on_commit_callbacks: Any,
) -> None:
    _platform, headers = _setup(fake_platform, settings)

    created = call(client, "post", "/subscriptions", {**headers, "Idempotency-Key": "sub-1"},
                   {"plan_id": plan.public_id, **BODY})  # fmt: skip
    replay = call(client, "post", "/subscriptions", {**headers, "Idempotency-Key": "sub-1"},
                  {"plan_id": plan.public_id, **BODY})  # fmt: skip

    assert created.status_code == 201, created.content
    body = created.json()
    assert replay.json()["id"] == body["id"] and Subscription.objects.count() == 1
    assert body["ucp"]["capabilities"] == {SUBSCRIPTION: [{"version": VERSION}], ORDER: [{"version": VERSION}]}
    assert (body["status"], body["authorization"]["status"], body["next_charge"]) == (
        "pending_authorization", "pending", None
    )  # fmt: skip
    assert body["plan"]["price"] == 3990 and body["plan"]["first_cycle_price"] == 3490
    assert body["destination"]["postal_code"] == "01310-100"  # formatted like a checkout order's CEP
    assert _schema_errors({k: v for k, v in body.items() if k != "ucp"}) == []

    # The buyer authorizes in the bank app (sandbox); the beat charges the first cycle; the bank pays it.
    with django_capture_on_commit_callbacks(execute=True):
        sandbox_recurring.authorize(body["authorization"]["id_rec"])
    subscription_cycles_sweep()
    cycle = SubscriptionCycle.objects.get()
    with django_capture_on_commit_callbacks(execute=True):
        sandbox_recurring.cobr_settle(cycle.txid, paid=True)

    order = Order.objects.get()
    read = call(client, "get", f"/subscriptions/{body['id']}", headers).json()
    assert read["status"] == "active" and read["cycles"][0] == {
        "number": 1, "due_date": cycle.due_date.isoformat(), "amount": 3490, "status": "paid",
        "order_id": order.public_id,
    }  # fmt: skip
    assert read["next_charge"]["cycle"] == 2
    assert _schema_errors({k: v for k, v in read.items() if k != "ucp"}) == []
    # The cycle's order is the platform's: readable with the order capability, and its webhook is signed.
    assert order.platform_id == _platform.platform.public_id
    got = call(client, "get", f"/orders/{order.public_id}", headers).json()
    assert got["id"] == order.public_id and got["totals"][-1] == {"type": "total", "amount": 3490}
    delivery = WebhookDelivery.objects.get(order_id=order.public_id)
    assert delivery.status == "delivered"
    posted = [r for r in fake_platform.received if r.method == "POST"]
    assert posted and "signature" in posted[-1].headers and json.loads(posted[-1].body)["id"] == order.public_id

    cancelled = call(client, "post", f"/subscriptions/{body['id']}/cancel", {**headers, "Idempotency-Key": "c-1"})
    again = call(client, "post", f"/subscriptions/{body['id']}/cancel", {**headers, "Idempotency-Key": "c-2"})
    assert cancelled.json()["status"] == "cancelled" and cancelled.json()["next_charge"] is None
    assert again.json()["status"] == "cancelled"
    assert [c["status"] for c in again.json()["cycles"]] == ["paid", "cancelled"]


def test_another_platform_cannot_see_it_bad_input_names_the_field_and_no_extension_is_incompatible(
    client: Client, fake_platform: FakePlatform, settings: Any, plan: SubscriptionPlan
) -> None:
    _owner, headers = _setup(fake_platform, settings)
    _other, other_headers = _setup(fake_platform, settings, path="/outro.json")
    _plain, plain_headers = _setup(fake_platform, settings, subscription=False, path="/simples.json")
    body = call(client, "post", "/subscriptions", headers, {"plan_id": plan.public_id, **BODY}).json()

    hidden = call(client, "get", f"/subscriptions/{body['id']}", other_headers).json()
    refused = call(client, "post", f"/subscriptions/{body['id']}/cancel", other_headers).json()
    assert hidden["messages"][0]["code"] == "not_found" and refused["messages"][0]["code"] == "not_found"
    assert Subscription.objects.get().status == "pending_authorization"

    short_cep = {"plan_id": plan.public_id, **BODY, "destination": {**BODY["destination"], "postal_code": "1"}}
    bad_cep = call(client, "post", "/subscriptions", headers, short_cep)
    assert bad_cep.json()["messages"][0] == {
        "type": "error", "code": "invalid_subscription", "content": "Informe o CEP com 8 dígitos.",
        "severity": "recoverable", "path": "$.destination.postal_code",
    }  # fmt: skip
    wrong_type = call(client, "post", "/subscriptions", headers, {**BODY, "plan_id": 7})
    assert wrong_type.status_code == 400 and "plan_id" in wrong_type.json()["content"]
    nul = call(client, "post", "/subscriptions", headers,
               {"plan_id": plan.public_id, **BODY, "buyer": {**BODY["buyer"], "first_name": "An\u0000a"}})  # fmt: skip
    assert nul.status_code == 400 and "buyer.first_name" in nul.json()["content"]
    no_address = call(client, "post", "/subscriptions", headers, {"plan_id": plan.public_id, "buyer": BODY["buyer"]})
    assert no_address.json()["messages"][0]["content"] == "Informe o endereço de entrega de cada ciclo."
    unknown = call(client, "post", "/subscriptions", headers, {"plan_id": "plan_000", **BODY}).json()
    assert unknown["messages"][0]["content"] == "Este plano de assinatura não existe ou não está mais à venda."
    assert Subscription.objects.count() == 1

    plain = call(client, "post", "/subscriptions", plain_headers, {"plan_id": plan.public_id, **BODY}).json()
    assert plain["messages"][0]["code"] == "capabilities_incompatible"


def test_bad_input_names_every_field_at_fault_not_only_the_first_bcp_err_05(
    client: Client, fake_platform: FakePlatform, settings: Any, plan: SubscriptionPlan
) -> None:
    """A subscribe with a bad e-mail, a short CEP and a one-letter UF named only the e-mail: each field at fault is
    now a message of its own with its path, in the form's order; a card instrument without its token is named with
    them.
    A due date that is not a date is `invalid_request` with every other member of the wrong type (`fields`)."""
    _platform, headers = _setup(fake_platform, settings)
    buyer = {**BODY["buyer"], "email": "ana@"}
    destination = {**BODY["destination"], "postal_code": "1", "state": "S"}

    refused = call(client, "post", "/subscriptions", headers,
                   {"plan_id": plan.public_id, "buyer": buyer, "destination": destination}).json()  # fmt: skip
    no_token = {"instruments": [{"id": "i1", "handler_id": "gpay", "type": "card", "credential": {"type": "x"}}]}
    card = call(client, "post", "/subscriptions", headers,
                {"plan_id": plan.public_id, "buyer": buyer, "destination": BODY["destination"],
                 "payment": no_token}).json()  # fmt: skip
    not_dates = call(client, "post", "/subscriptions", headers,
                     {"plan_id": 7, **BODY, "starts_on": "amanhã"})  # fmt: skip

    email = ("$.buyer.email", "Informe um e-mail válido, como nome@exemplo.com.br.")
    assert [(m["code"], m["path"], m["content"]) for m in refused["messages"]] == [
        ("invalid_subscription", *email),
        ("invalid_subscription", "$.destination.postal_code", "Informe o CEP com 8 dígitos."),
        ("invalid_subscription", "$.destination.state", "Informe a UF (duas letras)."),
    ]  # fmt: skip
    assert [(m["path"], m["content"]) for m in card["messages"]] == [
        email, ("$.payment.instruments[0].credential.token", "Informe o token do cartão.")
    ]  # fmt: skip
    assert (not_dates.status_code, not_dates.json()["fields"]) == (
        400, {"$.plan_id": "deve ser um texto", "$.starts_on": "use AAAA-MM-DD"}
    )  # fmt: skip
    assert Subscription.objects.count() == 0
