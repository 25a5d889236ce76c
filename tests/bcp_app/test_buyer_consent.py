"""Buyer consent extension (`br.dev.bcp.shopping.buyer_consent`, UCP buyer consent): `buyer.consent` accepted in
both forms, stored with time and channel, returned in the schema's purpose-keyed form, honoured (no reminder
to a buyer who refused marketing), asked on the storefront (unchecked, LGPD) and shown on the admin order page.

Over REST (Django client), MCP (official `mcp` client) and A2A (official `a2a-sdk` client).
BCP-NEG-07 (capability listed in `ucp.capabilities`), BCP-NEG-08 (ignored and absent unless negotiated),
BCP-DISC-02/07.
"""

from __future__ import annotations

import uuid
from dataclasses import replace
from datetime import datetime
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from shop.models import Checkout, CheckoutEvent
from tests.bcp_app import test_mcp_helpers
from tests.bcp_app.bcp_fixtures import VERSION, agent
from tests.bcp_app.rest_helpers import call, catalog
from tests.bcp_app.schema_check import errors

CONSENT = "br.dev.bcp.shopping.buyer_consent"
CHECKOUT = "br.dev.bcp.shopping.checkout"
MARKETING = "br.dev.bcp.consent.marketing"
PURPOSES = [
    "br.dev.bcp.consent.marketing",
    "br.dev.bcp.consent.analytics",
    "br.dev.bcp.consent.preferences",
    "br.dev.bcp.consent.sale_or_sharing",
]
SPEC, SCHEMA = "https://bcp.dev.br/draft/specification", "https://bcp.dev.br/draft/schemas"
CONSENT_ENTRY = [
    {
        "version": VERSION,
        "spec": f"{SPEC}/buyer-consent",
        "schema": f"{SCHEMA}/shopping/buyer_consent.json",
        "extends": [CHECKOUT, "br.dev.bcp.shopping.cart"],
    }
]
LINES = [{"item": {"id": "SKU-CAFE-500G"}, "quantity": 1}]


def with_consent(fake_platform: Any) -> str:
    profile = fake_platform.profile()
    capabilities = {**profile["ucp"]["capabilities"], CONSENT: CONSENT_ENTRY}
    return fake_platform.publish(capabilities=capabilities)


@pytest.fixture
def rest(bcp_settings: Any, fake_platform: Any, db: None) -> dict[str, str]:
    catalog()
    return agent(with_consent(fake_platform))


def consent_of(body: dict[str, Any]) -> dict[str, Any]:
    return body["buyer"]["consent"]


# --- discovery and REST ------------------------------------------------------------------------------------


def test_profile_advertises_buyer_consent_extending_checkout_bcp_disc_02(
    client: Client, bcp_settings: Any, db: None
) -> None:
    capabilities = client.get("/.well-known/bcp").json()["ucp"]["capabilities"]
    assert capabilities[CONSENT] == CONSENT_ENTRY


def test_short_form_is_accepted_and_returned_purpose_keyed_bcp_neg_07(client: Client, rest: dict[str, str]) -> None:
    response = call(
        client,
        "post",
        "/checkout-sessions",
        rest,
        {
            "line_items": LINES,
            "buyer": {
                "email": "ana@example.com.br",
                "consent": {"marketing": True, "analytics": False, "sale_of_data": False},
            },
        },
    )

    body = response.json()
    assert response.status_code == 201
    assert body["ucp"]["capabilities"][CONSENT] == [{"version": VERSION}]
    consent = consent_of(body)
    assert list(consent) == PURPOSES
    assert consent[MARKETING]["granted"] is True and consent[MARKETING]["source"] == "platform"
    assert consent["br.dev.bcp.consent.analytics"] == {
        **consent["br.dev.bcp.consent.analytics"],
        "granted": False,
        "source": "platform",
    }
    # Never decided: the business default, not granted (LGPD).
    assert consent["br.dev.bcp.consent.preferences"]["granted"] is False
    assert consent["br.dev.bcp.consent.preferences"]["source"] == "business"
    assert consent[MARKETING]["description"]
    assert consent[MARKETING]["links"][0]["type"] == "privacy_policy"
    assert errors(consent, "shopping/buyer_consent.json#/$defs/consent") == []
    assert errors(body["buyer"], "shopping/buyer_consent.json#/$defs/buyer") == []


def test_consent_is_stored_with_time_and_channel_and_a_timeline_trail(client: Client, rest: dict[str, str]) -> None:
    created = call(
        client,
        "post",
        "/checkout-sessions",
        rest,
        {"line_items": LINES, "buyer": {"email": "ana@example.com.br", "consent": {MARKETING: {"granted": True}}}},
    ).json()
    checkout = Checkout.objects.get(public_id=created["id"])
    first = checkout.buyer_consent["marketing"]
    assert first["granted"] is True and first["captured_by"] == "platform:anonymous"
    assert first["at"].endswith("Z")

    # The response's own consent sent back (full replacement): same decision, same evidence; defaults ignored.
    state = {"line_items": [{"id": created["line_items"][0]["id"], **LINES[0]}], "buyer": created["buyer"]}
    call(client, "put", f"/checkout-sessions/{created['id']}", rest, state)
    checkout.refresh_from_db()
    assert checkout.buyer_consent == {"marketing": first}

    # A change: a new decision and one more timeline event.
    state["buyer"] = {"email": "ana@example.com.br", "consent": {"marketing": False}}
    body = call(client, "put", f"/checkout-sessions/{created['id']}", rest, state).json()
    checkout.refresh_from_db()
    assert consent_of(body)[MARKETING]["granted"] is False
    assert checkout.buyer_consent["marketing"]["granted"] is False
    events = CheckoutEvent.objects.filter(checkout=checkout, kind="consent_changed")
    assert [e.detail["consent"]["marketing"]["granted"] for e in events] == [True, False]


def test_consent_is_ignored_and_absent_when_not_negotiated_bcp_neg_08(
    client: Client, bcp_settings: Any, fake_platform: Any, db: None
) -> None:
    catalog()
    headers = agent(fake_platform.publish())  # the default profile does not list buyer_consent

    body = call(
        client,
        "post",
        "/checkout-sessions",
        headers,
        {"line_items": LINES, "buyer": {"email": "ana@example.com.br", "consent": {"marketing": True}}},
    ).json()

    assert CONSENT not in body["ucp"]["capabilities"]
    assert "consent" not in body["buyer"]
    assert Checkout.objects.get(public_id=body["id"]).buyer_consent is None


def test_bad_consent_values_are_invalid_requests(client: Client, rest: dict[str, str]) -> None:
    response = call(
        client, "post", "/checkout-sessions", rest, {"line_items": LINES, "buyer": {"consent": {"marketing": "sim"}}}
    )

    assert response.status_code == 400
    assert response.json()["code"] == "invalid_request"
    assert "buyer.consent" in response.json()["content"]
    assert Checkout.objects.count() == 0


# --- honoured ------------------------------------------------------------------------------------------------


def test_the_service_reminder_does_not_depend_on_marketing_consent(
    client: Client, rest: dict[str, str], settings: Any, django_capture_on_commit_callbacks: Any
) -> None:
    from datetime import timedelta

    from django.core import mail
    from django.utils import timezone

    from shop.checkout.reminders import reminders_queue_due
    from shop.models import CheckoutReminder

    settings.SHOP_CHECKOUT_REMINDER_MINUTES = 120
    for email, marketing in (("nao@example.com.br", False), ("sim@example.com.br", True)):
        call(
            client,
            "post",
            "/checkout-sessions",
            rest,
            {"line_items": LINES, "buyer": {"email": email, "first_name": "Ana", "consent": {"marketing": marketing}}},
        )
    Checkout.objects.update(updated_at=timezone.now() - timedelta(hours=3))

    with django_capture_on_commit_callbacks(execute=True):
        reminders_queue_due()

    # The reminder about the buyer's own checkout is a service message, not marketing (issue 33, major 5;
    # shop/checkout/reminders.py): refusing marketing does not stop it, the opt-out link does.
    assert sorted(m.to[0] for m in mail.outbox) == ["nao@example.com.br", "sim@example.com.br"]
    assert CheckoutReminder.objects.get(email="nao@example.com.br").skipped == ""


# --- storefront and admin --------------------------------------------------------------------------------------


def test_storefront_asks_unchecked_and_records_the_answer_shown_in_the_admin(
    client: Client, admin_client: Client, bcp_settings: Any, db: None
) -> None:
    from orders.models import Order
    from shop.checkout.services import checkout_complete
    from tests.shop.checkout_factories import make_shipping, make_variant
    from tests.shop.test_completion import CARD_OK

    make_variant("SKU-CAFE-500G", price=4290, stock=10, title="Café especial 500 g")
    make_shipping()
    client.post("/carrinho/adicionar", {"sku": "SKU-CAFE-500G", "quantity": "1"})
    page = client.get("/checkout/", follow=True)
    html = page.content.decode()
    assert 'data-testid="marketing-consent"' in html
    assert 'name="marketing_consent" value="on">' in html  # unchecked by default
    checkout = Checkout.objects.get()

    form = {
        "email": "ana@example.com.br",
        "first_name": "Ana",
        "last_name": "Souza",
        "phone": "(11) 98765-4321",
        "method": "shipping",
        "cep": "01310-100",
        "street": "Av. Paulista",
        "number": "1000",
        "neighborhood": "Bela Vista",
        "city": "São Paulo",
        "uf": "SP",
        "shipping_option": "pac",
        "marketing_consent": "on",
    }
    answer = client.post(f"/checkout/{checkout.public_id}", form)
    assert 'name="marketing_consent" value="on" checked>' in answer.content.decode()
    checkout.refresh_from_db()
    assert checkout.buyer_consent["marketing"]["granted"] is True
    assert checkout.buyer_consent["marketing"]["captured_by"] == "storefront"

    result = checkout_complete(
        checkout_id=checkout.public_id, data=replace(_complete_input(), payment=_payment(CARD_OK))
    )
    assert result.checkout.status == "completed", result.messages
    order = Order.objects.get(checkout_id=checkout.public_id)
    admin_page = admin_client.get(f"/admin/orders/order/{order.pk}/change/").content.decode()
    assert "Consentimento do comprador (LGPD)" in admin_page
    assert "na página de checkout da loja" in admin_page
    stamp = checkout.buyer_consent["marketing"]["at"]  # stored RFC 3339; staff read it local, as Brazilians write
    local = timezone.localtime(datetime.fromisoformat(stamp.replace("Z", "+00:00")))
    assert local.strftime("%d/%m/%Y %H:%M") in admin_page and stamp not in admin_page


def _complete_input() -> Any:
    from shop.checkout.types import CompleteInput, PaymentInput

    return CompleteInput(payment=PaymentInput())


def _payment(instrument: Any) -> Any:
    from shop.checkout.types import PaymentInput

    return PaymentInput(instruments=(instrument,))


# --- MCP (official client) -------------------------------------------------------------------------------------

live_mcp = test_mcp_helpers.live_mcp


@pytest.mark.postgres
@pytest.mark.e2e
def test_mcp_create_checkout_with_consent(
    live_mcp: Any, fake_platform: Any, bcp_settings: Any, transactional_db: None
) -> None:
    catalog()
    profile = with_consent(fake_platform)

    result = test_mcp_helpers.call(
        live_mcp.mcp_url,
        "create_checkout",
        {
            "meta": {"ucp-agent": {"profile": profile}},
            "checkout": {
                "line_items": LINES,
                "buyer": {"email": "ana@example.com.br", "consent": {"marketing": False, "analytics": True}},
            },
        },
    )

    consent = result.structured_content["buyer"]["consent"]
    assert consent[MARKETING]["granted"] is False and consent[MARKETING]["source"] == "platform"
    assert consent["br.dev.bcp.consent.analytics"]["granted"] is True
    assert errors(consent, "shopping/buyer_consent.json#/$defs/consent") == []


# --- A2A (official a2a-sdk client) -----------------------------------------------------------------------------


@pytest.mark.postgres
@pytest.mark.e2e
def test_a2a_update_checkout_with_consent_keeps_it_across_intents(bcp_settings: Any, transactional_db: None) -> None:
    from tests.bcp_app.test_a2a_helpers import (
        PIX_HANDLERS,
        SEED_PROFILE,
        LiveServer,
        cache_profile,
        data,
        make_product,
        platform_profile,
        sdk_send,
    )

    profile = platform_profile(handlers=PIX_HANDLERS)
    profile["ucp"]["capabilities"][CONSENT] = CONSENT_ENTRY
    cache_profile(SEED_PROFILE, profile)
    make_product("Pixel 10 Pro", "PIXEL-10-PRO", 599900)
    server = LiveServer().start()
    try:
        bcp_settings.BCP_PUBLIC_URL = server.base_url
        first = sdk_send(server.base_url, [data({"action": "add_to_checkout", "product_id": "PIXEL-10-PRO"})])
        context_id = first.context_id
        sdk_send(
            server.base_url,
            [
                data(
                    {
                        "action": "update_checkout",
                        "buyer": {"email": "ana@example.com.br", "consent": {"marketing": True}},
                    }
                )
            ],
            context_id=context_id,
        )
        # A later intent rebuilds the full state from the checkout: the consent stays.
        reply = sdk_send(
            server.base_url,
            [data({"action": "add_to_checkout", "product_id": "PIXEL-10-PRO"})],
            context_id=context_id,
            message_id=str(uuid.uuid4()),
        )
    finally:
        server.stop()
    from google.protobuf.json_format import MessageToDict

    parts = [MessageToDict(part) for part in reply.parts]
    checkout = next(p["data"]["a2a.bcp.checkout"] for p in parts if "a2a.bcp.checkout" in p.get("data", {}))
    assert checkout["line_items"][0]["quantity"] == 2
    assert checkout["buyer"]["consent"][MARKETING]["granted"] is True
    assert Checkout.objects.get().buyer_consent["marketing"]["captured_by"] == "platform:anonymous"
