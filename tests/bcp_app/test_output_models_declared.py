"""The checkout, order and cart output models declare every member the bodies carry, on every transport.

Issue 14 "Done when": every BCP response body is produced from a pydantic model and validates against the
shared JSON Schemas, and the MCP `outputSchema` (generated from the same models) describes the full wire
format. Each REST body below is walked against its model's published schema (`tests/bcp_app/undeclared.py`):
a member a presenter adds that no model declares (an extra, or a value typed `Any`) fails the test. Here:
checkouts incomplete with buyer consent, with a pickup point, ready_for_complete with Pix and the Pix
discount, by card in 6x (ready and completed), completed by Pix; an order with the fiscal extension
negotiated and its webhook body; a cart with a coupon and consent (BCP-CHK-02, BCP-ORD-04). MCP and A2A
(AP2): tests/bcp_app/test_output_models_declared_agents.py.
"""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import pytest
from django.test import Client

from bcp_app.models import WebhookDelivery
from bcp_app.protocol.results import body_bytes
from bcp_app.protocol.schemas import CheckoutResponse, OrderResponse
from bcp_app.protocol.schemas.cart import CartResponse
from bcp_app.service.webhooks import order_webhook_send
from shop.models import StoreSettings
from tests.bcp_app import test_fiscal_extension
from tests.bcp_app.bcp_fixtures import VERSION, FakePlatform, agent
from tests.bcp_app.rest_helpers import call, catalog, create, full_update, ready_checkout
from tests.bcp_app.schema_check import errors
from tests.bcp_app.test_cart import with_cart
from tests.bcp_app.undeclared import undeclared
from tests.shop.checkout_factories import make_coupon, make_location

CARD = {"id": "instr_card", "handler_id": "gpay", "type": "card", "selected": True}
TOKEN = {"type": "PAYMENT_GATEWAY", "token": "success_token"}
FISCAL = "br.dev.bcp.shopping.fiscal_document"
SPEC, SCHEMA = "https://bcp.dev.br/draft/specification", "https://bcp.dev.br/draft/schemas"


def assert_declared(body: dict[str, Any], model: Any, ref: str) -> None:
    assert errors(body, ref) == []
    assert undeclared(body, model) == []
    assert body_bytes(model.validated(body)) == body_bytes(body)  # the wire bytes are the model's dump


@pytest.fixture
def headers(fake_platform: FakePlatform, settings: Any, bcp_settings: Any, db: None) -> dict[str, str]:
    """A registered platform negotiating everything the shop offers here: fulfillment, discount, cart, buyer
    consent, order + fiscal_document; Pix and card handlers; the shop gives 5 % off by Pix and 6x by card."""
    from bcp_app.service.platforms import platform_create

    settings.BCP_PIX_SANDBOX = True
    settings.PIX_SANDBOX_WEBHOOK_URL = ""
    StoreSettings.objects.create(
        pix_discount_percent=Decimal("5.00"), card_interest_free_installments=3, card_monthly_interest_bp=199
    )
    catalog()
    make_coupon("BEMVINDO", title="Boas-vindas", kind="percent", percent=10)
    with_cart(fake_platform)  # cart, discount and buyer consent extending checkout and cart
    capabilities = json.loads(fake_platform.routes["/perfil.json"][2])["ucp"]["capabilities"]
    capabilities[FISCAL] = [
        {
            "version": VERSION,
            "spec": f"{SPEC}/fiscal-document",
            "schema": f"{SCHEMA}/shopping/fiscal_document.json",
            "extends": "br.dev.bcp.shopping.order",
        }
    ]
    url = fake_platform.publish(capabilities=capabilities, handlers=fake_platform.with_card())
    return agent(url, Authorization=f"Bearer {platform_create(name='Agente', profile_url=url).api_key}")


def card_checkout(client: Client, headers: dict[str, str]) -> dict[str, Any]:
    checkout = create(client, headers).json()
    checkout = call(
        client, "put", f"/checkout-sessions/{checkout['id']}", headers, full_update(checkout, pix=False)
    ).json()
    body = full_update(checkout, pix=False)
    body["payment"] = {"instruments": [{**CARD, "installments": 6}]}
    return call(client, "put", f"/checkout-sessions/{checkout['id']}", headers, body).json()


def test_rest_checkout_order_and_cart_members_are_all_declared(
    client: Client, headers: dict[str, str], django_capture_on_commit_callbacks: Any
) -> None:
    incomplete = create(
        client,
        headers,
        {
            "line_items": [{"item": {"id": "SKU-CAFE-500G"}, "quantity": 1}],
            "buyer": {"email": "ana@example.com.br", "consent": {"marketing": True}},
            "context": {"postal_code": "01310-100"},
            "discounts": {"codes": ["bemvindo"]},
        },
    ).json()
    ready = ready_checkout(client, headers)
    location = make_location()
    pickup = create(
        client,
        headers,
        {
            "line_items": [{"item": {"id": "SKU-CAFE-500G"}, "quantity": 1}],
            "fulfillment": {
                "methods": [
                    {
                        "type": "pickup",
                        "selected_destination_id": location.public_id,
                        "groups": [{"selected_option_id": "retirada"}],
                    }
                ]
            },
        },
    ).json()
    card = card_checkout(client, headers)
    by_card = call(
        client,
        "post",
        f"/checkout-sessions/{card['id']}/complete",
        {**headers, "Idempotency-Key": "k-card-6x"},
        {"payment": {"instruments": [{**CARD, "installments": 6, "credential": TOKEN}]}},
    ).json()
    order = test_fiscal_extension._authorized_order(client, headers, django_capture_on_commit_callbacks)
    by_pix = call(client, "get", f"/checkout-sessions/{order.checkout_id}", headers).json()
    order_body = call(client, "get", f"/orders/{order.public_id}", headers).json()
    cart = call(
        client,
        "post",
        "/carts",
        headers,
        {
            "line_items": [{"item": {"id": "SKU-CAFE-500G"}, "quantity": 2}],
            "buyer": {"email": "ana@example.com.br", "consent": {"analytics": False}},
            "context": {"postal_code": "01310-100"},
            "discounts": {"codes": ["bemvindo"]},
        },
    ).json()
    assert order_webhook_send(order_id=order.public_id, event="order.updated") == "delivered"
    webhook = json.loads(WebhookDelivery.objects.get(event="order.updated").body)

    assert (incomplete["status"], ready["status"], card["status"], by_card["status"], by_pix["status"]) == (
        "incomplete",
        "ready_for_complete",
        "ready_for_complete",
        "completed",
        "completed",
    )
    assert pickup["fulfillment"]["methods"][0]["destinations"][0]["address"]["address_locality"] == "São Paulo"
    assert incomplete["buyer"]["consent"]["br.dev.bcp.consent.marketing"]["granted"] is True
    assert ready["ucp"]["payment_handlers"]["br.dev.bcp.pix"][0]["config"]["discount"]["total_with_pix"] > 0
    assert by_card["payment"]["instruments"][0]["installments"] == 6
    assert order_body["fiscal_documents"][0]["status"] == "authorized"
    for body in (incomplete, ready, pickup, card, by_card, by_pix):
        assert_declared(body, CheckoutResponse, "shopping/buyer_consent.json#/$defs/br.dev.bcp.shopping.checkout")
    for body in (order_body, webhook):
        assert_declared(body, OrderResponse, "shopping/order.json")
    assert_declared(cart, CartResponse, "shopping/buyer_consent.json#/$defs/br.dev.bcp.shopping.cart")
    # The check fails as soon as a presenter adds a member no model declares, at any depth.
    grown = json.loads(json.dumps(ready))
    grown["novo"] = 1
    grown["buyer"]["apelido"] = "Ana"
    grown["ucp"]["payment_handlers"]["br.dev.bcp.pix"][0]["config"]["cashback"] = 10
    assert undeclared(grown, CheckoutResponse) == [
        "$.ucp.payment_handlers.br.dev.bcp.pix[0].config.cashback",
        "$.buyer.apelido",
        "$.novo",
    ]
