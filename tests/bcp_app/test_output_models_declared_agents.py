"""MCP and A2A bodies of checkouts, orders and carts carry no member their output model leaves undeclared,
and the MCP tools publish those models as `outputSchema` (issue 14: one output schema set; REST and the
webhook body: tests/bcp_app/test_output_models_declared.py).

MCP (official `mcp` client): each body is walked against the `outputSchema` the client listed, so what is
checked is what an MCP client sees. A2A: AP2 checkouts (incomplete and ready, signed; refused for a mandate of an
earlier state; completing with the stored mandate; BCP-PAY-09, PIX.md §7.3) over the seed's JSON-RPC;
the A2A cart and order parts: tests/bcp_app/test_cart.py and test_a2a_order.py. An A2A data part is a
protobuf Struct, so objects are compared, not bytes.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest
from pydantic import TypeAdapter

from bcp_app.protocol.schemas import CheckoutResponse, ErrorResponse, OrderResponse
from bcp_app.protocol.schemas.cart import CartResponse
from payments.sandbox import services as sandbox
from shop.models import StoreSettings
from tests.bcp_app import test_mcp_checkout
from tests.bcp_app.bcp_fixtures import CARD_HANDLERS
from tests.bcp_app.rest_helpers import PIX
from tests.bcp_app.schema_check import errors
from tests.bcp_app.test_a2a_checkout import SEED_STRUCTURED
from tests.bcp_app.test_a2a_helpers import (  # noqa: F401 (fixtures "live", "server")
    checkout_of,
    live_fixture,
    rpc,
    server_fixture,
)
from tests.bcp_app.test_ap2_a2a import (  # noqa: F401 (fixtures)
    ap2_server,
    complete_with,
    mandate,
    platform_keys,
    ready_with_pix,
)
from tests.bcp_app.test_cart import with_cart
from tests.bcp_app.test_mcp_protocol import list_tools
from tests.bcp_app.undeclared import undeclared, undeclared_in

live_mcp = test_mcp_checkout.live_mcp
pytestmark = [pytest.mark.postgres, pytest.mark.e2e]
CONSENTED = "shopping/buyer_consent.json#/$defs/br.dev.bcp.shopping.checkout"
AP2 = "shopping/ap2_mandate.json#/$defs/br.dev.bcp.shopping.checkout"


@pytest.fixture
def consenting(live_mcp, fake_platform, bcp_settings, transactional_db) -> Iterator[test_mcp_checkout.Shopper]:
    """An MCP shopper negotiating cart, discount and buyer consent, paying by Pix (5 % off) or card."""
    from bcp_app.service.platforms import platform_create
    from config.celery import app as celery_app
    from tests.shop.checkout_factories import make_shipping, make_variant

    StoreSettings.objects.create(pix_discount_percent=Decimal("5.00"))
    profile_url = with_cart(fake_platform, handlers={**fake_platform.with_card(), **CARD_HANDLERS})
    created = platform_create(name="Agente MCP", profile_url=profile_url)
    make_variant("SKU-CAFE-500G", price=4290, stock=10, title="Café especial 500 g")
    make_shipping()
    saved = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = True
    yield test_mcp_checkout.Shopper(live_mcp.mcp_url, profile_url, created.api_key)
    celery_app.conf.task_always_eager = saved


def test_mcp_output_schemas_are_the_models_and_describe_every_member(
    consenting: test_mcp_checkout.Shopper,
) -> None:
    _, _, tools = list_tools(consenting.url, "auto")
    published = {tool.name: tool.output_schema for tool in tools}
    for name, model in (
        ("create_checkout", CheckoutResponse),
        ("complete_checkout", CheckoutResponse),
        ("get_order", OrderResponse),
        ("create_cart", CartResponse),
    ):
        expected = TypeAdapter(model | ErrorResponse).json_schema(mode="serialization")
        assert published[name] == {"type": "object", **expected}, name  # MCP clients see the models' schema
    checkout_props = published["create_checkout"]["$defs"]["CheckoutResponse"]["properties"]
    assert {"policies", "ap2", "buyer", "payment"} <= set(checkout_props)

    incomplete = consenting.tool(
        "create_checkout",
        checkout={
            "line_items": [{"item": {"id": "SKU-CAFE-500G"}, "quantity": 1}],
            "buyer": {"email": "ana@example.com.br", "consent": {"marketing": True}},
        },
    )
    ready = test_mcp_checkout.ready_checkout(consenting)
    sandbox.pay(txid=ready["payment"]["instruments"][0]["pix"]["txid"], options=sandbox.PayOptions())
    done = consenting.tool(
        "complete_checkout", key=str(uuid.uuid4()), id=ready["id"], checkout={"payment": {"instruments": [PIX]}}
    )
    order = consenting.tool("get_order", id=done["order"]["id"])
    cart = consenting.tool(
        "create_cart",
        cart={
            "line_items": [{"item": {"id": "SKU-CAFE-500G"}, "quantity": 2}],
            "buyer": {"email": "ana@example.com.br"},
        },
    )

    assert (incomplete["status"], ready["status"], done["status"]) == ("incomplete", "ready_for_complete", "completed")
    assert incomplete["buyer"]["consent"]["br.dev.bcp.consent.marketing"]["granted"] is True
    assert ready["ucp"]["payment_handlers"]["br.dev.bcp.pix"][0]["config"]["discount"]["total_with_pix"] > 0
    for body, tool, ref in (
        (incomplete, "create_checkout", CONSENTED),
        (ready, "update_checkout", CONSENTED),
        (done, "complete_checkout", CONSENTED),
        (order, "get_order", "shopping/order.json"),
        (cart, "create_cart", "shopping/buyer_consent.json#/$defs/br.dev.bcp.shopping.cart"),
    ):
        assert errors(body, ref) == [], tool
        assert undeclared_in(body, published[tool]) == [], tool


def test_a2a_ap2_checkouts_have_no_undeclared_member_bcp_pay_09(
    ap2_server: Any,  # noqa: F811
    platform_keys: Any,  # noqa: F811
) -> None:
    earlier = checkout_of(rpc(ap2_server.a2a_url, SEED_STRUCTURED))  # incomplete: no buyer, no Pix charge yet
    ready = ready_with_pix(ap2_server)
    refused = checkout_of(rpc(ap2_server.a2a_url, complete_with(mandate(ap2_server, earlier, platform_keys))))
    completing = checkout_of(rpc(ap2_server.a2a_url, complete_with(mandate(ap2_server, ready, platform_keys))))

    assert (earlier["status"], ready["status"], completing["status"]) == (
        "incomplete",
        "ready_for_complete",
        "complete_in_progress",
    )
    assert refused["messages"][-1]["code"] == "mandate_scope_mismatch"
    assert completing["ap2"]["checkout_mandate"].count("~") >= 2 and completing["ap2"]["merchant_authorization"]
    for body in (earlier, ready, refused, completing):
        # The shared pattern of `checkout_mandate` matches no SD-JWT+kb (the KB-JWT has dots): checked apart.
        assert errors({**body, "ap2": {"merchant_authorization": body["ap2"]["merchant_authorization"]}}, AP2) == []
        assert undeclared(body, CheckoutResponse) == []
        assert CheckoutResponse.validated(body) == body
