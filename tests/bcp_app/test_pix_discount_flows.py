"""The Pix discount over BCP (issue 17): REST, MCP (official `mcp` client, live uvicorn) and A2A (official
`a2a-sdk` client, live uvicorn), with exact totals, the automatic `discounts.applied` entry, the handler
config that shows the Pix price before choosing, and a charge/order for exactly the discounted total.

BCP §6 (totals), §10 (BCP-DSC-02, BCP-DSC-04, BCP-DSC-06), §11.1 (BCP-PAY-01); PIX.md §1.3, §2.3, §2.4.
"""

from __future__ import annotations

import uuid
from decimal import Decimal
from typing import Any

import pytest
from django.test import Client

from shop.models import StoreSettings
from tests.bcp_app import test_mcp_checkout, test_mcp_helpers
from tests.bcp_app.bcp_fixtures import FakePlatform, agent
from tests.bcp_app.rest_helpers import PIX, call, catalog, complete, create, full_update
from tests.bcp_app.schema_check import errors
from tests.bcp_app.test_a2a_helpers import (
    LiveServer,
    data,
    live_fixture,  # noqa: F401 (fixture "live")
    make_product,
    sdk_send,
    server_fixture,  # noqa: F401 (fixture "server")
)

live_mcp = test_mcp_helpers.live_mcp
shopper = test_mcp_checkout.shopper

CARD = {"id": "instr_card", "handler_id": "gpay", "type": "card", "selected": True}
PIX_LINE = {"type": "discount", "display_text": "Desconto Pix (5%)", "amount": -429}
# 2 × R$ 42,90 = 85,80; 5 % = 429 (exact); PAC R$ 18,90 → R$ 100,41 by Pix, R$ 104,70 otherwise.
TOTALS_PIX = [
    {"type": "subtotal", "amount": 8580},
    PIX_LINE,
    {"type": "fulfillment", "display_text": "PAC", "amount": 1890},
    {"type": "total", "amount": 10041},
]
APPLIED = [{"title": "Desconto Pix (5%)", "amount": 429, "automatic": True, "method": "across"}]
DISCOUNT_CONFIG = {
    "type": "percentage",
    "basis_points": 500,
    "applies_to": "items_after_discounts",
    "rounding": "half_even",
}


def five_percent() -> None:
    StoreSettings.objects.create(pix_discount_percent=Decimal("5.00"))


@pytest.fixture
def headers(fake_platform: FakePlatform, settings: Any) -> dict[str, str]:
    settings.BCP_PIX_SANDBOX = True
    settings.PIX_SANDBOX_WEBHOOK_URL = ""
    catalog()
    five_percent()
    return agent(fake_platform.publish())


@pytest.mark.django_db
@pytest.mark.usefixtures("bcp_settings")
def test_rest_pix_discount_line_applied_entry_and_charge_are_exact_bcp_dsc_02_04(
    client: Client, headers: dict[str, str], django_capture_on_commit_callbacks: Any
) -> None:
    from orders.models import Order
    from payments.sandbox import services as sandbox

    # given a checkout with the address and PAC chosen but no instrument yet
    created = create(client, headers).json()
    addressed = call(client, "put", f"/checkout-sessions/{created['id']}", headers, full_update(created, pix=False))
    chosen = call(
        client, "put", f"/checkout-sessions/{created['id']}", headers, full_update(addressed.json(), pix=False)
    )
    before = chosen.json()
    # then the full price is the total, and the Pix handler tells what Pix would cost (PIX.md §1.3)
    assert before["totals"][-1] == {"type": "total", "amount": 10470}
    assert before["discounts"] == {"codes": [], "applied": []}
    pix_config = before["ucp"]["payment_handlers"]["br.dev.bcp.pix"][0]["config"]
    assert pix_config["discount"] == {**DISCOUNT_CONFIG, "total_with_pix": 10041}
    # when the platform selects Pix
    body = full_update(before)
    ready = call(client, "put", f"/checkout-sessions/{created['id']}", headers, body).json()
    # then an automatic order-level discount (BCP §10: no code, negative `discount` total) and a charge for the total
    assert ready["status"] == "ready_for_complete"
    assert ready["totals"] == TOTALS_PIX
    assert ready["discounts"] == {"codes": [], "applied": APPLIED}
    pix = ready["payment"]["instruments"][0]["pix"]
    assert (pix["amount"], pix["status"]) == (10041, "active")
    assert errors(ready, "shopping/checkout.json") == []
    # when the platform switches to card, the discount goes and the Pix charge is revoked
    card_body = {**full_update(ready), "payment": {"instruments": [CARD]}}
    card = call(client, "put", f"/checkout-sessions/{created['id']}", headers, card_body).json()
    assert [t["type"] for t in card["totals"]] == ["subtotal", "fulfillment", "total"]
    assert card["totals"][-1]["amount"] == 10470 and card["discounts"]["applied"] == []
    # and back to Pix: a fresh charge, same discounted total
    again = call(client, "put", f"/checkout-sessions/{created['id']}", headers, full_update(ready)).json()
    new_pix = again["payment"]["instruments"][0]["pix"]
    assert (again["totals"], new_pix["amount"]) == (TOTALS_PIX, 10041)
    assert new_pix["txid"] != pix["txid"]
    # when completed and paid, the order carries the same totals
    assert complete(client, created["id"], headers).json()["status"] == "complete_in_progress"
    with django_capture_on_commit_callbacks(execute=True):
        sandbox.pay(txid=new_pix["txid"], options=sandbox.PayOptions())
    order = Order.objects.get(checkout_id=created["id"])
    assert (order.total_amount, order.paid_amount) == (10041, 10041)
    assert call(client, "get", f"/checkout-sessions/{created['id']}", headers).json()["totals"] == TOTALS_PIX


@pytest.mark.django_db
@pytest.mark.usefixtures("bcp_settings")
def test_rest_profile_advertises_the_pix_discount_bcp_pay_01(client: Client, headers: dict[str, str]) -> None:
    profile = client.get("/.well-known/bcp").json()
    assert profile["ucp"]["payment_handlers"]["br.dev.bcp.pix"][0]["config"]["discount"] == DISCOUNT_CONFIG


@pytest.mark.postgres
@pytest.mark.e2e
def test_mcp_purchase_with_the_pix_discount_has_exact_totals(shopper: Any) -> None:
    from orders.models import Order
    from payments.sandbox import services as sandbox
    from payments.selectors import pix_charge_active_for_reference

    five_percent()
    ready = test_mcp_checkout.ready_checkout(shopper)
    assert ready["status"] == "ready_for_complete"
    assert ready["totals"] == TOTALS_PIX
    assert ready["discounts"]["applied"] == APPLIED
    assert ready["payment"]["instruments"][0]["pix"]["amount"] == 10041
    completing = shopper.tool(
        "complete_checkout", key=str(uuid.uuid4()), id=ready["id"], checkout={"payment": {"instruments": [PIX]}}
    )
    assert completing["status"] == "complete_in_progress"
    charge = pix_charge_active_for_reference(ready["id"])
    assert charge.amount == 10041
    sandbox.pay(txid=charge.txid, options=sandbox.PayOptions())
    done = shopper.tool("get_checkout", id=ready["id"])
    assert (done["status"], done["totals"]) == ("completed", TOTALS_PIX)
    order = shopper.tool("get_order", id=done["order"]["id"])
    assert order["totals"][-1] == {"type": "total", "amount": 10041}
    assert Order.objects.get(public_id=done["order"]["id"]).paid_amount == 10041


@pytest.mark.postgres
@pytest.mark.e2e
def test_a2a_pix_discount_with_the_official_sdk_has_exact_totals(server: LiveServer) -> None:
    from google.protobuf.json_format import MessageToDict

    from bcp_app.transports.a2a.messages import intify
    from payments.sandbox.services import PayOptions, pay

    # given 5 % off by Pix and a digital product of R$ 49,90 × 2 = R$ 99,80 (5 % = 499)
    five_percent()
    make_product("Camiseta Básica", "CAM", 4990)
    pix = {"id": "instr_1", "handler_id": "pix_recebedor_001", "type": "pix", "selected": True}
    buyer = {"first_name": "Ana", "last_name": "Souza", "email": "ana@example.com.br"}
    added = sdk_send(server.base_url, [data({"action": "add_to_checkout", "product_id": "CAM", "quantity": 2})])

    def checkout(message: Any) -> dict[str, Any]:
        return intify(MessageToDict(message.parts[0].data))["a2a.bcp.checkout"]

    before = checkout(added)
    assert before["totals"][-1] == {"type": "total", "amount": 9980}
    handler = before["ucp"]["payment_handlers"]["br.dev.bcp.pix"][0]
    assert handler["config"]["discount"]["total_with_pix"] == 9481
    # when the agent selects Pix
    ready = checkout(
        sdk_send(
            server.base_url,
            [data({"action": "update_checkout", "buyer": buyer, "a2a.bcp.checkout.payment": {"instruments": [pix]}})],
            context_id=added.context_id,
        )
    )
    assert ready["status"] == "ready_for_complete"
    assert ready["totals"] == [
        {"type": "subtotal", "amount": 9980},
        {"type": "discount", "display_text": "Desconto Pix (5%)", "amount": -499},
        {"type": "total", "amount": 9481},
    ]
    assert [sorted(d.items()) for d in ready["discounts"]["applied"]] == [
        sorted({"title": "Desconto Pix (5%)", "amount": 499, "automatic": True, "method": "across"}.items())
    ]
    assert ready["payment"]["instruments"][0]["pix"]["amount"] == 9481
    # then the buyer pays that charge and completion carries the order
    pay(txid=ready["payment"]["instruments"][0]["pix"]["txid"], options=PayOptions())
    completed = sdk_send(
        server.base_url,
        [data({"action": "complete_checkout"}), data({"a2a.bcp.checkout.payment": {"instruments": [pix]}})],
        context_id=added.context_id,
    )
    done = checkout(completed)
    assert (done["status"], done["totals"][-1]) == ("completed", {"type": "total", "amount": 9481})


@pytest.mark.django_db
@pytest.mark.usefixtures("bcp_settings")
def test_rest_discount_titles_follow_accept_language(client: Client, headers: dict[str, str]) -> None:
    """QA walk: with `Accept-Language: en` the coupon's messages were English but its line in the totals
    ("Cupom BEMVINDO10") and the automatic Pix discount's title ("Desconto Pix (5%)") stayed Portuguese."""
    from tests.shop.checkout_factories import make_coupon

    # given a 10 % coupon; the merchant's own title is the merchant's words, shown as typed
    make_coupon("BEMVINDO10", title="10% de boas-vindas")
    english = {**headers, "Accept-Language": "en"}
    created = create(client, english).json()
    body = full_update(created)  # Pix selected
    body["discounts"] = {"codes": ["BEMVINDO10"]}
    addressed = call(client, "put", f"/checkout-sessions/{created['id']}", english, body).json()
    body = full_update(addressed)
    body["discounts"] = {"codes": ["BEMVINDO10"]}
    # when the agent reads it in English
    checkout = call(client, "put", f"/checkout-sessions/{created['id']}", english, body).json()
    # then the engine's own words are English (the coupon's applied message already was)
    assert checkout["status"] == "ready_for_complete", checkout["messages"]
    assert [t.get("display_text") for t in checkout["totals"] if t["type"] == "discount"] == [
        "Coupon BEMVINDO10",
        "Pix discount (5%)",
    ]
    assert [(d["title"], d.get("code")) for d in checkout["discounts"]["applied"]] == [
        ("10% de boas-vindas", "BEMVINDO10"),
        ("Pix discount (5%)", None),
    ]
    assert [m["content"] for m in checkout["messages"] if m.get("code") == "discount_code_applied"] == [
        "Coupon BEMVINDO10 applied: -R$8.58."  # the English way of writing reais (CLDR); amounts stay centavos
    ]
