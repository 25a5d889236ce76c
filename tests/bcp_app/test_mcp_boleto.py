"""An agent pays with boleto over MCP (issue 37) against a live uvicorn with the official `mcp` client: its
profile lists `br.dev.bcp.boleto`, so the checkout offers it (BCP-PAY-02); `complete_checkout` with a "boleto"
instrument answers `complete_in_progress` with the boleto on the instrument (the same operation as REST); the
sandbox gateway's bank pays it and `get_checkout` shows the order (BCP-PAY-03)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from tests.bcp_app import test_mcp_helpers
from tests.bcp_app.test_mcp_checkout import SP, Shopper
from tests.bcp_app.test_rest_boleto import BOLETO, BOLETO_HANDLERS
from tests.shop.checkout_factories import make_shipping, make_variant

live_mcp = test_mcp_helpers.live_mcp

pytestmark = [pytest.mark.postgres, pytest.mark.e2e]


@pytest.fixture
def shopper(live_mcp, fake_platform, bcp_settings, transactional_db, settings) -> Iterator[Shopper]:
    from bcp_app.service.platforms import platform_create
    from config.celery import app as celery_app

    settings.BCP_PIX_SANDBOX = True  # the sandbox card gateway issues the boleto, as under `make run`
    handlers = {**fake_platform.profile()["ucp"]["payment_handlers"], **BOLETO_HANDLERS}
    profile_url = fake_platform.publish(handlers=handlers)
    created = platform_create(name="Agente MCP boleto", profile_url=profile_url)
    make_variant("SKU-CAFE-500G", price=4290, stock=10, title="Café especial 500 g")
    make_shipping()
    saved = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = True  # the sandbox's notice is processed in-process
    yield Shopper(live_mcp.mcp_url, profile_url, created.api_key)
    celery_app.conf.task_always_eager = saved


def _ready(shopper: Shopper) -> dict[str, Any]:
    created = shopper.tool(
        "create_checkout",
        checkout={"line_items": [{"item": {"id": "SKU-CAFE-500G"}, "quantity": 1}], "buyer": {"email": "a@b.com.br"}},
    )
    buyer = {"first_name": "Ana", "last_name": "Souza", "email": "ana@example.com.br", "tax_id": "52998224725"}
    state: dict[str, Any] = {
        "line_items": [{"id": created["line_items"][0]["id"], "item": {"id": "SKU-CAFE-500G"}, "quantity": 1}],
        "buyer": buyer,
        "fulfillment": {"methods": [{"type": "shipping", "destinations": [dict(SP)]}]},
    }
    updated = shopper.tool("update_checkout", id=created["id"], checkout=state)
    method = updated["fulfillment"]["methods"][0]
    state["fulfillment"]["methods"][0].update(
        {
            "id": method["id"],
            "selected_destination_id": method["destinations"][0]["id"],
            "groups": [
                {"id": method["groups"][0]["id"], "selected_option_id": method["groups"][0]["options"][0]["id"]}
            ],
        }
    )
    state["fulfillment"]["methods"][0]["destinations"][0]["id"] = method["destinations"][0]["id"]
    state["payment"] = {"instruments": [BOLETO]}
    return shopper.tool("update_checkout", id=created["id"], checkout=state)


def test_an_agent_pays_with_boleto_over_mcp(shopper: Shopper) -> None:
    from payments.card.sandbox import sandbox_boleto_pay
    from payments.card.webhook import card_webhook_store
    from payments.models import BoletoPayment

    checkout = _ready(shopper)
    assert checkout["status"] == "ready_for_complete", checkout["messages"]
    assert "br.dev.bcp.boleto" in checkout["ucp"]["payment_handlers"]

    completing = shopper.tool(
        "complete_checkout", key=str(uuid.uuid4()), id=checkout["id"], checkout={"payment": {"instruments": [BOLETO]}}
    )

    assert completing["status"] == "complete_in_progress", completing["messages"]
    boleto = completing["payment"]["instruments"][0]["boleto"]
    stored = BoletoPayment.objects.get(reference=checkout["id"])
    assert (boleto["id"], boleto["status"], len(boleto["line"]), len(boleto["barcode"])) == (
        stored.payment_id, "pending", 47, 44,
    )  # fmt: skip
    # the sandbox bank pays it; its notice goes through the card inbox as Pagar.me's would
    charge = sandbox_boleto_pay(stored.gateway_charge_id)
    card_webhook_store({"id": "hook_mcp_1", "type": "charge.paid", "data": {"id": charge.charge_id}}, b"{}")
    completed = shopper.tool("get_checkout", id=checkout["id"])
    assert completed["status"] == "completed"
    assert completed["payment"]["instruments"][0]["boleto"]["status"] == "paid"
    assert shopper.tool("get_order", id=completed["order"]["id"])["checkout_id"] == checkout["id"]
