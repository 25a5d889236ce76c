"""An anonymous agent's checkout belongs to the profile that created it (issue 31): another anonymous caller
reading, updating, completing or cancelling it by id gets the very answer of an unknown id (BCP-CHK-13
`not_found`, so nothing tells the id exists), as another platform does for a platform's checkout. BCP §18 (4):
anonymous agents may create checkouts; the profile URL is the only identity they have.

REST here, MCP live below; A2A reaches the same operations (bcp_app/service/operations). An anonymous agent's checkout
paid before complete still waits for the agent (PIX.md §3.1: tests/bcp_app/test_paid_before_complete.py).
"""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from shop.models import Checkout
from tests.bcp_app import test_mcp_helpers
from tests.bcp_app.bcp_fixtures import FakePlatform, agent
from tests.bcp_app.rest_helpers import call, catalog, complete, create, full_update
from tests.bcp_app.test_cart import with_cart
from tests.bcp_app.test_mcp_helpers import bcp_meta, make_product

live_mcp = test_mcp_helpers.live_mcp
profile_host = test_mcp_helpers.profile_host
UNKNOWN = "checkout_00000000000000000000000000"


@pytest.fixture
def two_agents(fake_platform: FakePlatform, settings: Any) -> tuple[dict[str, str], dict[str, str]]:
    """Two anonymous agents (no API key, no signature), each with its own profile URL."""
    settings.BCP_PIX_SANDBOX = True
    settings.PIX_SANDBOX_WEBHOOK_URL = ""
    catalog()
    first = fake_platform.publish()
    second = fake_platform.publish("/outro-agente.json")
    return agent(first), agent(second)


@pytest.mark.django_db
@pytest.mark.usefixtures("bcp_settings")
def test_another_anonymous_agent_gets_not_found_for_every_operation_bcp_chk_13(
    client: Client, two_agents: tuple[dict[str, str], dict[str, str]]
) -> None:
    mine, theirs = two_agents
    # given an anonymous agent's checkout, ready to complete
    created = create(client, mine).json()
    path = f"/checkout-sessions/{created['id']}"
    ready = call(client, "put", path, mine, full_update(created)).json()
    ready = call(client, "put", path, mine, full_update(ready)).json()
    assert ready["status"] == "ready_for_complete"
    unknown = call(client, "get", f"/checkout-sessions/{UNKNOWN}", theirs).json()
    assert unknown["messages"][0]["code"] == "not_found"
    # when another anonymous agent gets, updates, completes and cancels it by id
    answers = [
        call(client, "get", path, theirs),
        call(client, "put", path, theirs, full_update(ready)),
        complete(client, created["id"], theirs, key="k-their-complete"),
        call(client, "post", f"{path}/cancel", {**theirs, "Idempotency-Key": "k-their-cancel"}, {}),
    ]
    # then each is the unknown id's answer, and the checkout is untouched
    assert [(a.status_code, a.json()) for a in answers] == [(200, unknown)] * 4
    checkout = Checkout.objects.get(public_id=created["id"])
    assert (checkout.status, checkout.buyer_email) == ("ready_for_complete", "ana@example.com.br")
    # and its creator still reads and completes it
    assert call(client, "get", path, mine).json()["id"] == created["id"]
    assert complete(client, created["id"], mine).json()["status"] == "complete_in_progress"


@pytest.mark.django_db
@pytest.mark.usefixtures("bcp_settings")
def test_another_anonymous_agent_gets_not_found_for_a_cart_and_its_checkout(
    client: Client, fake_platform: FakePlatform
) -> None:
    # given an anonymous agent's cart (UCP cart capability)
    catalog()
    mine, theirs = agent(with_cart(fake_platform)), agent(with_cart(fake_platform, path="/outro-agente.json"))
    cart = call(client, "post", "/carts", mine, {"line_items": [{"item": {"id": "SKU-CAFE-500G"}, "quantity": 1}]})
    path = f"/carts/{cart.json()['id']}"
    unknown = call(client, "get", "/carts/cart_00000000000000000000000000", theirs).json()
    # when another anonymous agent reads, replaces, cancels it or makes a checkout from it
    answers = [
        call(client, "get", path, theirs).json(),
        call(client, "put", path, theirs, {"line_items": [{"item": {"id": "SKU-CAFE-500G"}, "quantity": 9}]}).json(),
        call(client, "post", f"{path}/cancel", theirs, {}).json(),
    ]
    converted = create(client, theirs, {"cart_id": cart.json()["id"], "line_items": []}).json()
    # then each is the unknown id's answer and the cart is unchanged for its creator
    assert answers == [unknown] * 3
    assert converted["messages"][0]["code"] == "not_found"
    assert call(client, "get", path, mine).json()["line_items"][0]["quantity"] == 1


@pytest.mark.postgres
@pytest.mark.e2e
@pytest.mark.usefixtures("bcp_settings")
def test_over_mcp_another_anonymous_profile_gets_not_found(
    live_mcp: test_mcp_helpers.LiveServer, profile_host: str, settings: Any, transactional_db: None
) -> None:
    settings.BCP_OUTBOUND_ALLOWLIST = ["127.0.0.1"]
    make_product(variants=(("SKU-MCP-1", 2500, 10),))
    mine = bcp_meta(key="k-mine", profile=f"{profile_host}/.well-known/bcp")
    theirs = bcp_meta(profile=f"{profile_host}/other/.well-known/bcp")
    # given a checkout an anonymous agent created over MCP
    created = test_mcp_helpers.call(
        live_mcp.mcp_url,
        "create_checkout",
        {"meta": mine, "checkout": {"line_items": [{"item": {"id": "SKU-MCP-1"}, "quantity": 1}]}},
    )
    checkout_id = created.structured_content["id"]
    # when another anonymous profile asks for it, and for an unknown id
    other = test_mcp_helpers.call(live_mcp.mcp_url, "get_checkout", {"meta": theirs, "id": checkout_id})
    unknown = test_mcp_helpers.call(live_mcp.mcp_url, "get_checkout", {"meta": theirs, "id": UNKNOWN})
    # then the two answers are the same not_found; the creator still reads it
    assert other.structured_content == unknown.structured_content
    assert other.structured_content["messages"][0]["code"] == "not_found"
    mine_again = test_mcp_helpers.call(
        live_mcp.mcp_url, "get_checkout", {"meta": bcp_meta(profile=mine["ucp-agent"]["profile"]), "id": checkout_id}
    )
    assert mine_again.structured_content["id"] == checkout_id
