"""Complete with a handler this checkout does not offer (BCP §11.1–11.2, BCP-PAY-03), over REST and MCP
(A2A: tests/bcp_app/test_a2a_checkout.py::test_complete_with_a_handler_not_offered_is_payment_failed).

BCP §11.2: an instrument's `handler_id` is "a handler `id` of this checkout"; BCP-PAY-03: "Complete checks
one instrument, known `handler_id`, allowed `type`; else `payment_failed`, no order." The platform here
is Pix-only, so the checkout offers only the Pix handler; the shop's card handler (`gpay`) is configured
but not offered to it.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from django.test import Client

from bcp_app.service import presenters
from bcp_app.service.context import resolve_context
from orders.models import Order
from tests.bcp_app import test_mcp_checkout
from tests.bcp_app.bcp_fixtures import FakePlatform, agent
from tests.bcp_app.rest_helpers import call, ready_checkout
from tests.bcp_app.test_rest_boleto import BOLETO_HANDLERS

live_mcp = test_mcp_checkout.live_mcp
shopper = test_mcp_checkout.shopper

CARD = {
    "id": "instr_c",
    "handler_id": "gpay",
    "type": "card",
    "credential": {"type": "PAYMENT_GATEWAY", "token": "success_token"},
}
REFUSED = ("error", "payment_failed", "recoverable", "$.payment.instruments[0].handler_id")


def _last(body: dict[str, Any]) -> tuple[str, str, str, str]:
    m = body["messages"][-1]
    return (m["type"], m["code"], m["severity"], m["path"])


@pytest.mark.django_db
@pytest.mark.usefixtures("rest_shop")
def test_rest_complete_with_a_handler_not_offered_places_nothing_bcp_pay_03(
    client: Client, fake_platform: FakePlatform, settings: Any
) -> None:
    settings.BCP_CARD_ENABLED = True
    headers = agent(fake_platform.publish())
    checkout = ready_checkout(client, headers)
    assert list(checkout["ucp"]["payment_handlers"]) == ["br.dev.bcp.pix"]
    body = call(
        client,
        "post",
        f"/checkout-sessions/{checkout['id']}/complete",
        {**headers, "Idempotency-Key": str(uuid.uuid4())},
        {"payment": {"instruments": [CARD]}},
    ).json()
    assert body["status"] == "ready_for_complete"
    assert _last(body) == REFUSED
    assert "order" not in body
    assert not Order.objects.exists()


@pytest.mark.postgres
@pytest.mark.e2e
def test_mcp_complete_with_a_handler_not_offered_places_nothing_bcp_pay_03(
    shopper: test_mcp_checkout.Shopper,
) -> None:
    checkout = test_mcp_checkout.ready_checkout(shopper)
    body = shopper.tool(
        "complete_checkout", key=str(uuid.uuid4()), id=checkout["id"], checkout={"payment": {"instruments": [CARD]}}
    )
    assert body["status"] == "ready_for_complete"
    assert _last(body) == REFUSED
    assert not Order.objects.exists()


def _with_card_instrument(client: Client, headers: dict[str, str]) -> dict[str, Any]:
    from tests.bcp_app.rest_helpers import create, full_update

    checkout = create(client, headers).json()
    checkout = call(client, "put", f"/checkout-sessions/{checkout['id']}", headers, full_update(checkout)).json()
    body = full_update(checkout, pix=False)
    body["payment"] = {"instruments": [{"id": "c", "handler_id": "gpay", "type": "card", "installments": 3}]}
    return call(client, "put", f"/checkout-sessions/{checkout['id']}", headers, body).json()


@pytest.mark.django_db
@pytest.mark.usefixtures("rest_shop")
@pytest.mark.parametrize("listed", [False, True])
def test_rest_update_with_a_handler_not_offered_is_flagged_at_once_bcp_pay_03(
    client: Client, fake_platform: FakePlatform, settings: Any, listed: bool
) -> None:
    """BCP-PAY-03 / BCP §11.2 (a handler `id` of this checkout): a Pix-only platform choosing the card at
    update is told then, at the instrument's handler_id, why — not `ready_for_complete` until complete refuses.
    A platform whose profile lists the card handler gets the same update ready (BCP-PAY-02)."""
    settings.BCP_CARD_ENABLED = True
    profile = fake_platform.publish(handlers=fake_platform.with_card()) if listed else fake_platform.publish()
    body = _with_card_instrument(client, agent(profile))
    flagged = [m for m in body.get("messages", []) if m["path"] == "$.payment.instruments[0].handler_id"]
    if listed:
        assert (body["status"], flagged) == ("ready_for_complete", []), body.get("messages")
        return
    assert body["status"] == "incomplete"
    assert [(m["type"], m["code"], m["severity"]) for m in flagged] == [("error", "payment_failed", "recoverable")]
    assert "perfil da plataforma não lista" in flagged[0]["content"] and "gpay" in flagged[0]["content"]


@pytest.mark.django_db
@pytest.mark.usefixtures("rest_shop")
@pytest.mark.parametrize("card_enabled", [True, False])
@pytest.mark.parametrize("boleto_enabled", [True, False])
def test_the_handler_ids_a_complete_accepts_are_those_of_the_handlers_answered_bcp_pay_03(
    fake_platform: FakePlatform, settings: Any, card_enabled: bool, boleto_enabled: bool
) -> None:
    """BCP §11.2 / BCP-PAY-03: create, update and complete check an instrument's handler against the ids of the
    handlers this checkout offers the platform; those ids are read without building the handlers' entries
    (issue 34), and they are the ids of the entries every answer lists, whatever the shop enables."""
    settings.BCP_CARD_ENABLED = card_enabled
    settings.BCP_BOLETO_ENABLED = boleto_enabled
    settings.BCP_PIX_SANDBOX = True  # the sandbox gateway issues boletos
    handlers = {**fake_platform.with_card(), **BOLETO_HANDLERS}
    ctx = resolve_context(transport="rest", profile_url=fake_platform.publish(handlers=handlers))
    answered = [entry["id"] for entries in presenters.payment_handlers(None, ctx).values() for entry in entries]
    assert presenters.payment_handler_ids(ctx) == tuple(answered)
    expected = [
        settings.PIX_HANDLER_ID,
        *(["gpay"] if card_enabled else []),
        *(["br.dev.bcp.boleto"] if boleto_enabled else []),
    ]
    assert answered == expected
