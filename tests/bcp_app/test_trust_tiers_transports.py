"""Agent trust tiers over MCP and A2A, with the official `mcp` and `a2a-sdk` clients against a live uvicorn
(REST and the UCP face: tests/bcp_app/test_trust_tiers.py).

The tiers are enforced on the operations every transport calls, so a refusal is the same §5.4 error on each:
MCP `-32000` with `data.code` (BCP-ERR-04, BCP-SIG-04), A2A a JSON-RPC error whose `data` carries the BCP code
(BCP.md §18 (3)), Portuguese content.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from bcp_app.service import trust
from shop.store.services import store_row
from tests.bcp_app import test_mcp_helpers
from tests.bcp_app.bcp_fixtures import FakePlatform
from tests.bcp_app.test_a2a_helpers import EXTENSION, LiveServer, make_product
from tests.bcp_app.test_signed_platforms_transports import SignedShopper, a2a_send, part

live_mcp = test_mcp_helpers.live_mcp
pytestmark = [pytest.mark.postgres, pytest.mark.e2e, pytest.mark.usefixtures("bcp_settings")]
FIELD = {
    trust.BROWSE: "agents_browse",
    trust.CHECKOUT_CREATE: "agents_checkout",
    trust.CHECKOUT_COMPLETE: "agents_complete",
    trust.ORDERS_READ: "agents_orders_read",
}
PIX = {"id": "instr_1", "handler_id": "pix_recebedor_001", "type": "pix", "selected": True}


def set_tier(permission: str, tier: str) -> None:
    row = store_row()
    setattr(row, FIELD[permission], tier)
    row.save()


# tool → (permission, arguments besides meta)
MCP_TOOLS = {
    "search_catalog": (trust.BROWSE, {"catalog": {"query": "café"}}),
    "create_checkout": (
        trust.CHECKOUT_CREATE,
        {"checkout": {"line_items": [{"item": {"id": "SKU-X"}, "quantity": 1}]}},
    ),
    "get_checkout": (trust.CHECKOUT_CREATE, {"id": "checkout_naoexiste"}),
    "complete_checkout": (
        trust.CHECKOUT_COMPLETE,
        {"id": "checkout_naoexiste", "checkout": {"payment": {"instruments": [PIX]}}},
    ),
}


@pytest.mark.parametrize("tool", list(MCP_TOOLS))
def test_mcp_anonymous_caller_refused_where_a_platform_is_required_bcp_err_04(
    live_mcp: Any, fake_platform: FakePlatform, transactional_db: None, tool: str
) -> None:
    permission, arguments = MCP_TOOLS[tool]
    set_tier(permission, "registered")
    meta = test_mcp_helpers.bcp_meta(key=str(uuid.uuid4()), profile=fake_platform.publish())

    error = test_mcp_helpers.call_error(live_mcp.mcp_url, tool, {"meta": meta, **arguments})

    assert error.error.code == -32000
    assert error.error.data["code"] == "unauthenticated"
    assert error.error.data["content"].startswith("Autentique-se com uma chave de API")


def test_mcp_registered_platform_refused_where_signatures_are_required_bcp_sig_04(
    live_mcp: Any, fake_platform: FakePlatform, transactional_db: None
) -> None:
    from bcp_app.service.platforms import platform_create

    set_tier(trust.CHECKOUT_COMPLETE, "signed")
    profile_url = fake_platform.publish()
    api_key = platform_create(name="Registrada", profile_url=profile_url).api_key
    meta = test_mcp_helpers.bcp_meta(key=str(uuid.uuid4()), profile=profile_url)

    error = test_mcp_helpers.call_error(
        live_mcp.mcp_url,
        "complete_checkout",
        {"meta": meta, **MCP_TOOLS["complete_checkout"][1]},
        headers={"Authorization": f"Bearer {api_key}"},
    )

    assert (error.error.code, error.error.data["code"]) == (-32000, "signature_missing")
    assert "assinadas (RFC 9421)" in error.error.data["content"]


def test_mcp_signed_platform_passes_where_signatures_are_required(
    live_mcp: Any, fake_platform: FakePlatform, transactional_db: None
) -> None:
    set_tier(trust.CHECKOUT_CREATE, "signed")
    shopper = SignedShopper(live_mcp.mcp_url, fake_platform.publish(), fake_platform.key)

    body = shopper.tool("get_checkout", id="checkout_naoexiste")

    assert [m["code"] for m in body["messages"]] == ["not_found"]  # the operation ran: no refusal


def test_mcp_order_reads_closed_to_everyone_answer_unauthorized_bcp_ord_02(
    live_mcp: Any, fake_platform: FakePlatform, transactional_db: None
) -> None:
    set_tier(trust.ORDERS_READ, "none")
    shopper = SignedShopper(live_mcp.mcp_url, fake_platform.publish(), fake_platform.key)

    body = shopper.tool("get_order", id="order_naoexiste")

    assert [m["code"] for m in body["messages"]] == ["unauthorized"]
    assert body["messages"][0]["content"] == "Esta loja não permite que agentes possam consultar pedidos."


# --- A2A -------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def live_a2a(django_db_setup: None, django_db_blocker: Any) -> Any:
    with django_db_blocker.unblock():
        started = LiveServer().start()
    yield started
    started.stop()


def test_a2a_anonymous_agent_refused_where_a_platform_is_required(
    live_a2a: LiveServer, fake_platform: FakePlatform, transactional_db: None, settings: Any
) -> None:
    from a2a.client.errors import A2AClientError

    settings.BCP_PUBLIC_URL = live_a2a.base_url
    make_product("Pixel 10 Pro", "PIXEL-10-PRO", 599900)
    set_tier(trust.CHECKOUT_CREATE, "registered")

    with pytest.raises(A2AClientError) as caught:
        a2a_send(
            live_a2a.base_url,
            fake_platform.publish(),
            None,
            {"action": "add_to_checkout", "product_id": "PIXEL-10-PRO", "quantity": 1},
        )

    # BCP §5.4 `unauthenticated`: -32000 as on MCP (the SDK client has no type for it), not -32600
    assert str(caught.value).startswith("JSON-RPC Error -32000: ")
    assert "Autentique-se com uma chave de API" in str(caught.value)
    assert EXTENSION  # the BCP extension was requested (a2a_send's headers): the refusal is the tier's


def test_a2a_signed_agent_builds_a_checkout_where_signatures_are_required(
    live_a2a: LiveServer, fake_platform: FakePlatform, transactional_db: None, settings: Any
) -> None:
    settings.BCP_PUBLIC_URL = live_a2a.base_url
    make_product("Pixel 10 Pro", "PIXEL-10-PRO", 599900)
    set_tier(trust.CHECKOUT_CREATE, "signed")

    added = a2a_send(
        live_a2a.base_url,
        fake_platform.publish(),
        fake_platform.key,
        {"action": "add_to_checkout", "product_id": "PIXEL-10-PRO", "quantity": 1},
    )

    assert part(added, "a2a.bcp.checkout")["line_items"][0]["item"]["id"] == "PIXEL-10-PRO"


def mcp_caller(tier: str, live_mcp: Any, fake_platform: FakePlatform) -> Any:
    """A function calling one MCP tool as a caller of `tier`, returning the structured result or the MCPError."""
    from mcp.shared.exceptions import MCPError

    from bcp_app.service.platforms import platform_create

    profile_url = fake_platform.publish()
    if tier == "signed":
        shopper = SignedShopper(live_mcp.mcp_url, profile_url, fake_platform.key)

        def signed(tool: str, arguments: dict[str, Any]) -> Any:
            try:
                return shopper.tool(tool, key=str(uuid.uuid4()), **arguments)
            except MCPError as exc:
                return exc

        return signed
    headers = {}
    if tier == "registered":
        headers = {"Authorization": f"Bearer {platform_create(name='R', profile_url=profile_url).api_key}"}

    def plain(tool: str, arguments: dict[str, Any]) -> Any:
        meta = test_mcp_helpers.bcp_meta(key=str(uuid.uuid4()), profile=profile_url)
        try:
            return test_mcp_helpers.call(
                live_mcp.mcp_url, tool, {"meta": meta, **arguments}, headers=headers
            ).structured_content
        except MCPError as exc:
            return exc

    return plain


@pytest.mark.parametrize("required", ["registered", "signed"])
@pytest.mark.parametrize("tier", ["anonymous", "registered", "signed"])
@pytest.mark.parametrize("tool", ["get_checkout", "complete_checkout"])
def test_mcp_tool_per_tier_bcp_err_04(
    live_mcp: Any, fake_platform: FakePlatform, transactional_db: None, tool: str, tier: str, required: str
) -> None:
    from mcp.shared.exceptions import MCPError

    permission, arguments = MCP_TOOLS[tool]
    set_tier(permission, required)

    outcome = mcp_caller(tier, live_mcp, fake_platform)(tool, arguments)

    rank = {"anonymous": 0, "registered": 1, "signed": 2}
    if rank[tier] >= rank[required]:
        assert [m["code"] for m in outcome["messages"]] == ["not_found"]  # the operation ran
    else:
        assert isinstance(outcome, MCPError)
        expected = "signature_missing" if tier == "registered" else "unauthenticated"
        assert (outcome.error.code, outcome.error.data["code"]) == (-32000, expected)


# A2A intent → (permission, data part)
A2A_INTENTS = {
    "add_to_checkout": (trust.CHECKOUT_CREATE, {"action": "add_to_checkout", "product_id": "PIXEL-10-PRO"}),
    "get_order": (trust.ORDERS_READ, {"action": "get_order", "order_id": "order_naoexiste"}),
    "policies.search": (trust.BROWSE, {"action": "policies.search", "query": "trocas"}),
}


@pytest.mark.parametrize("tier", ["anonymous", "signed"])
@pytest.mark.parametrize("intent", list(A2A_INTENTS))
def test_a2a_intent_per_tier_where_signatures_are_required(
    live_a2a: LiveServer, fake_platform: FakePlatform, transactional_db: None, settings: Any, intent: str, tier: str
) -> None:
    from a2a.client.errors import A2AClientError

    settings.BCP_PUBLIC_URL = live_a2a.base_url
    make_product("Pixel 10 Pro", "PIXEL-10-PRO", 599900)
    permission, payload = A2A_INTENTS[intent]
    set_tier(permission, "signed")
    key = fake_platform.key if tier == "signed" else None

    if tier == "signed":
        reply = a2a_send(live_a2a.base_url, fake_platform.publish(), key, payload)
        assert reply["parts"]  # answered
        if intent == "get_order":
            assert [m["code"] for m in part(reply, "a2a.bcp.order")["messages"]] == ["not_found"]
    elif permission == trust.ORDERS_READ:  # BCP §7: the Error Response, inside the reply
        reply = a2a_send(live_a2a.base_url, fake_platform.publish(), key, payload)
        assert [m["code"] for m in part(reply, "a2a.bcp.order")["messages"]] == ["unauthorized"]
    else:
        with pytest.raises(A2AClientError) as caught:
            a2a_send(live_a2a.base_url, fake_platform.publish(), key, payload)
        assert str(caught.value).startswith("JSON-RPC Error -32000: ")  # BCP-SIG-04, as on MCP
        assert "assine as requisições (RFC 9421)" in str(caught.value)


def test_the_seed_002_catalogue_tools_browse_under_the_same_tier(
    live_mcp: Any, fake_platform: FakePlatform, transactional_db: None
) -> None:
    """The typed tools (`catalogue.list`, seed 002) are catalog browsing too: refused alike, allowed with a key."""
    from bcp_app.service.platforms import platform_create

    set_tier(trust.BROWSE, "registered")
    api_key = platform_create(name="Registrada", profile_url=fake_platform.publish()).api_key

    error = test_mcp_helpers.call_error(live_mcp.mcp_url, "catalogue.list", {"query": "café"})
    allowed = test_mcp_helpers.call(
        live_mcp.mcp_url, "catalogue.list", {"query": "café"}, headers={"Authorization": f"Bearer {api_key}"}
    )

    assert (error.error.code, error.error.data["code"]) == (-32000, "unauthenticated")
    assert allowed.structured_content["status"] == "ok"
