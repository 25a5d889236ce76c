"""Parcelamento over MCP (official `mcp` client, live uvicorn) and A2A (JSON-RPC, live server): the card
instrument carries `installments`, totals stay exact, the order keeps the plan (BCP-PAY-04)."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from orders.models import Order
from payments.models import CardPayment
from tests.bcp_app import test_mcp_checkout, test_mcp_helpers
from tests.bcp_app.bcp_fixtures import CARD_HANDLERS, FakePlatform
from tests.bcp_app.test_a2a_checkout import BUYER, SEED_CONTEXT, SEED_STRUCTURED
from tests.bcp_app.test_a2a_helpers import (
    PIX_HANDLERS,
    SEED_PROFILE,
    LiveServer,
    cache_profile,
    checkout_of,
    data,
    live_fixture,  # noqa: F401 (fixture "live")
    make_product,
    platform_profile,
    rpc,
    send_message,
    server_fixture,  # noqa: F401 (fixture "server")
)
from tests.bcp_app.test_mcp_checkout import Shopper, ready_checkout

# Shared fixtures (pytest finds them by name in this module).
shopper = test_mcp_checkout.shopper
live_mcp = test_mcp_helpers.live_mcp

pytestmark = [pytest.mark.postgres, pytest.mark.e2e]
CARD = {"id": "instr_card", "handler_id": "gpay", "type": "card", "selected": True}
TOKEN = {"type": "PAYMENT_GATEWAY", "token": "success_token"}


def test_mcp_card_purchase_in_3x(shopper: Shopper, fake_platform: FakePlatform) -> None:
    # The platform lists the card handler, or the checkout offers none to complete with (BCP-PAY-03).
    fake_platform.publish(handlers=fake_platform.with_card())
    checkout = ready_checkout(shopper)
    state = _card_state(checkout, 3)
    updated = shopper.tool("update_checkout", id=checkout["id"], checkout=state)
    assert updated["status"] == "ready_for_complete", updated["messages"]
    assert updated["payment"]["instruments"][0]["installments"] == 3
    assert updated["totals"][-1]["amount"] == sum(t["amount"] for t in updated["totals"][:-1])

    done = shopper.tool(
        "complete_checkout",
        key=str(uuid.uuid4()),
        id=checkout["id"],
        checkout={"payment": {"instruments": [{**CARD, "installments": 3, "credential": TOKEN}]}},
    )

    assert done["status"] == "completed", done["messages"]
    order = Order.objects.get(checkout_id=checkout["id"])
    assert (order.installments, order.paid_amount) == (3, updated["totals"][-1]["amount"])


def test_mcp_complete_without_the_installments_shown_is_refused_and_charges_nothing(
    shopper: Shopper, fake_platform: FakePlatform
) -> None:
    """QA walk: the checkout showed 3x (interest-free, the same total as 1x) and a complete that did not repeat the
    installments was charged à vista. README "checkout_changed"; BCP §4.3, BCP-CHK-20."""
    fake_platform.publish(handlers=fake_platform.with_card())
    checkout = ready_checkout(shopper)
    shown = shopper.tool("update_checkout", id=checkout["id"], checkout=_card_state(checkout, 3))
    assert shown["status"] == "ready_for_complete", shown["messages"]

    refused = shopper.tool(
        "complete_checkout",
        key=str(uuid.uuid4()),
        id=checkout["id"],
        checkout={"payment": {"instruments": [{**CARD, "credential": TOKEN}]}},  # installments omitted: 1
    )

    assert refused["status"] == "ready_for_complete"
    [changed] = [m for m in refused["messages"] if m["type"] == "error"]
    assert (changed["code"], changed["severity"], changed["path"]) == (
        "checkout_changed",
        "recoverable",
        "$.payment.instruments[0].installments",
    )
    assert changed["content"].startswith("O parcelamento pedido na conclusão (1x) não é o que o checkout mostra (3x)")
    now = shopper.tool("get_checkout", id=checkout["id"])
    assert (now["payment"], now["totals"]) == (shown["payment"], shown["totals"])
    assert not CardPayment.objects.exists() and not Order.objects.exists()


def _card_state(checkout: dict[str, Any], installments: int) -> dict[str, Any]:
    """The full writable state of a ready MCP checkout, paid by card in `installments`."""
    return {
        "line_items": [
            {"id": li["id"], "item": {"id": li["item"]["id"]}, "quantity": li["quantity"]}
            for li in checkout["line_items"]
        ],
        "buyer": checkout["buyer"],
        "fulfillment": {
            "methods": [
                {
                    "id": m["id"],
                    "type": m["type"],
                    "destinations": [{k: v for k, v in d.items() if k != "type"} for d in m["destinations"]],
                    "selected_destination_id": m["selected_destination_id"],
                    "groups": [{"id": g["id"], "selected_option_id": g["selected_option_id"]} for g in m["groups"]],
                }
                for m in checkout["fulfillment"]["methods"]
            ]
        },
        "payment": {"instruments": [{**CARD, "installments": installments}]},
    }


@pytest.fixture
def pixel() -> Any:
    return make_product("Pixel 10 Pro", "PIXEL-10-PRO", 599900)


def test_a2a_card_purchase_in_10x(server: LiveServer, pixel: Any, settings: Any) -> None:
    settings.BCP_PIX_SANDBOX = True
    # The platform lists the card handler, or the checkout offers none to complete with (BCP-PAY-03).
    cache_profile(SEED_PROFILE, platform_profile(handlers={**PIX_HANDLERS, **CARD_HANDLERS}))
    rpc(server.a2a_url, SEED_STRUCTURED)
    ready = checkout_of(
        rpc(
            server.a2a_url,
            send_message(
                [
                    data({"action": "update_checkout", "buyer": BUYER}),
                    data({"a2a.bcp.checkout.payment": {"instruments": [{**CARD, "installments": 10}]}}),
                ],
                context_id=SEED_CONTEXT,
            ),
        )
    )
    assert ready["status"] == "ready_for_complete", ready["messages"]
    assert ready["payment"]["instruments"][0]["installments"] == 10
    assert ready["totals"][-1] == {"type": "total", "amount": 599900}  # 10x without interest: R$ 599,90 each

    completed = checkout_of(
        rpc(
            server.a2a_url,
            send_message(
                [
                    data({"action": "complete_checkout"}),
                    data(
                        {
                            "a2a.bcp.checkout.payment": {
                                "instruments": [{**CARD, "installments": 10, "credential": TOKEN}]
                            }
                        }
                    ),
                ],
                context_id=SEED_CONTEXT,
            ),
        )
    )

    assert completed["status"] == "completed", completed["messages"]
    order = Order.objects.get(checkout_id=completed["id"])
    assert (order.installments, order.installment_amount, order.paid_amount) == (10, 59990, 599900)


def test_a2a_complete_in_other_installments_with_the_same_total_is_refused(
    server: LiveServer, pixel: Any, settings: Any
) -> None:
    """QA walk: 10x shown, 12x asked at complete (both interest-free, the same total) was charged in 12x. README
    "checkout_changed"; BCP §4.3, BCP-CHK-20, BCP-A2A-06."""
    settings.BCP_PIX_SANDBOX = True
    cache_profile(SEED_PROFILE, platform_profile(handlers={**PIX_HANDLERS, **CARD_HANDLERS}))
    rpc(server.a2a_url, SEED_STRUCTURED)
    update = [
        data({"action": "update_checkout", "buyer": BUYER}),
        data({"a2a.bcp.checkout.payment": {"instruments": [{**CARD, "installments": 10}]}}),
    ]
    shown = checkout_of(rpc(server.a2a_url, send_message(update, context_id=SEED_CONTEXT)))
    assert shown["status"] == "ready_for_complete", shown["messages"]

    complete = [
        data({"action": "complete_checkout"}),
        data({"a2a.bcp.checkout.payment": {"instruments": [{**CARD, "installments": 12, "credential": TOKEN}]}}),
    ]
    refused = checkout_of(rpc(server.a2a_url, send_message(complete, context_id=SEED_CONTEXT)))

    assert refused["status"] == "ready_for_complete"
    [changed] = [m for m in refused["messages"] if m["type"] == "error"]
    assert (changed["code"], changed["path"]) == ("checkout_changed", "$.payment.instruments[0].installments")
    assert "(12x)" in changed["content"] and "(10x)" in changed["content"]
    assert (refused["payment"], refused["totals"]) == (shown["payment"], shown["totals"])
    assert not CardPayment.objects.exists() and not Order.objects.exists()
