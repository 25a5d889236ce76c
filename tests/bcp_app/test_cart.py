"""Cart capability (`br.dev.bcp.shopping.cart`, BCP §1, §4.1 `cart_id`, §13.1/§13.2 cart rows; UCP cart):
create/get/update/cancel over REST, MCP (official `mcp` client) and A2A (official `a2a-sdk` client), the
conversion to a checkout, and the storefront cart being the same model.

BCP-DISC-07 (every advertised capability on every transport), BCP-NEG-06 (inactive root → incompatible),
BCP-NEG-07, BCP-REST-01/04, BCP-MCP-02/06, BCP-CHK-01 (create with cart_id).
"""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from bcp_app.protocol.schemas.cart import CartResponse
from shop.cart import cart_items
from shop.models import Cart, Checkout
from tests.bcp_app import test_mcp_helpers
from tests.bcp_app.bcp_fixtures import VERSION, agent
from tests.bcp_app.rest_helpers import call, catalog
from tests.bcp_app.schema_check import errors
from tests.bcp_app.undeclared import undeclared
from tests.shop.checkout_factories import make_coupon, make_variant

CART = "br.dev.bcp.shopping.cart"
CHECKOUT = "br.dev.bcp.shopping.checkout"
SPEC, SCHEMA = "https://bcp.dev.br/draft/specification", "https://bcp.dev.br/draft/schemas"
CART_ENTRY = [{"version": VERSION, "spec": f"{SPEC}/cart", "schema": f"{SCHEMA}/shopping/cart.json"}]
CAFE = {"item": {"id": "SKU-CAFE-500G"}, "quantity": 2}


def with_cart(fake_platform: Any, **kwargs: Any) -> str:
    profile = fake_platform.profile()
    consent = [
        {
            "version": VERSION,
            "spec": f"{SPEC}/buyer-consent",
            "schema": f"{SCHEMA}/shopping/buyer_consent.json",
            "extends": [CHECKOUT, CART],
        }
    ]
    capabilities = {**profile["ucp"]["capabilities"], CART: CART_ENTRY, "br.dev.bcp.shopping.buyer_consent": consent}
    discount = capabilities["br.dev.bcp.shopping.discount"][0]
    capabilities["br.dev.bcp.shopping.discount"] = [{**discount, "extends": [CHECKOUT, CART]}]
    return fake_platform.publish(capabilities=capabilities, **kwargs)


@pytest.fixture
def rest(bcp_settings: Any, fake_platform: Any, db: None) -> dict[str, str]:
    catalog()
    make_variant("SKU-XICARA", price=2500, stock=3, title="Xícara")
    return agent(with_cart(fake_platform))


def test_profile_advertises_the_cart_and_its_extensions_bcp_disc_02(
    client: Client, bcp_settings: Any, db: None
) -> None:
    capabilities = client.get("/.well-known/bcp").json()["ucp"]["capabilities"]
    assert capabilities[CART] == CART_ENTRY
    assert capabilities["br.dev.bcp.shopping.discount"][0]["extends"] == [CHECKOUT, CART]
    assert capabilities["br.dev.bcp.shopping.buyer_consent"][0]["extends"] == [CHECKOUT, CART]


def test_cart_lifecycle_over_rest_bcp_rest_01(client: Client, rest: dict[str, str]) -> None:
    make_coupon("BEMVINDO", title="Boas-vindas", kind="percent", percent=10)
    created = call(
        client,
        "post",
        "/carts",
        rest,
        {
            "line_items": [CAFE],
            "buyer": {"email": "ana@example.com.br"},
            "context": {"postal_code": "01310-100"},
            "discounts": {"codes": ["bemvindo"]},
        },
    )

    assert created.status_code == 201
    cart = created.json()
    assert errors(cart, "shopping/cart.json") == []
    assert cart["ucp"]["capabilities"] == {
        CART: [{"version": VERSION}],
        "br.dev.bcp.shopping.discount": [{"version": VERSION}],
        "br.dev.bcp.shopping.buyer_consent": [{"version": VERSION}],
    }
    assert errors(cart, "shopping/buyer_consent.json#/$defs/br.dev.bcp.shopping.cart") == []
    assert cart["id"].startswith("cart_") and cart["currency"] == "BRL"
    assert cart["line_items"][0]["item"] == {"id": "SKU-CAFE-500G", "title": "Café especial 500 g", "price": 4290}
    assert cart["totals"] == [
        {"type": "subtotal", "amount": 8580},
        {"type": "discount", "display_text": "Cupom BEMVINDO", "amount": -858},
        {"type": "total", "amount": 7722},
    ]
    assert cart["continue_url"] == f"https://loja.example.com.br/carrinho/{cart['id']}"
    assert [p["type"] for p in cart["policies"]][2] == "br.dev.bcp.shopping.policy.return"
    assert cart["expires_at"].endswith("Z")

    line_id = cart["line_items"][0]["id"]
    got = call(client, "get", f"/carts/{cart['id']}", rest).json()
    assert got["line_items"] == cart["line_items"]

    # Full replacement: the listed line keeps its id, the new one gets one, omitted buyer/context are cleared.
    updated = call(
        client,
        "put",
        f"/carts/{cart['id']}",
        rest,
        {
            "line_items": [
                {"id": line_id, "item": {"id": "SKU-CAFE-500G"}, "quantity": 1},
                {"item": {"id": "SKU-XICARA"}, "quantity": 5},
            ]
        },
    ).json()
    assert [(li["item"]["id"], li["quantity"]) for li in updated["line_items"]] == [
        ("SKU-CAFE-500G", 1),
        ("SKU-XICARA", 3),
    ]
    assert updated["line_items"][0]["id"] == line_id
    assert "buyer" not in updated and "context" not in updated
    assert {
        "type": "warning",
        "code": "quantity_adjusted",
        "path": "$.line_items[1].quantity",
        "content": "Só temos 3 unidades de Xícara; a quantidade foi ajustada.",
    } in updated["messages"]

    canceled = call(client, "post", f"/carts/{cart['id']}/cancel", rest, {})
    assert canceled.status_code == 200 and canceled.json()["id"] == cart["id"]  # the cart as it was
    gone = call(client, "get", f"/carts/{cart['id']}", rest).json()
    assert gone["ucp"]["status"] == "error" and gone["messages"][0]["code"] == "not_found"


def test_unknown_lines_and_impossible_carts(client: Client, rest: dict[str, str]) -> None:
    impossible = call(client, "post", "/carts", rest, {"line_items": [{"item": {"id": "NAO-EXISTE"}, "quantity": 1}]})
    assert impossible.status_code == 200
    assert impossible.json()["ucp"]["status"] == "error"
    assert errors(impossible.json(), "common/types/error_response.json") == []
    assert Cart.objects.count() == 0

    cart = call(client, "post", "/carts", rest, {"line_items": [CAFE]}).json()
    bad = call(
        client,
        "put",
        f"/carts/{cart['id']}",
        rest,
        {"line_items": [{"id": "li_x", "item": {"id": "SKU-CAFE-500G"}, "quantity": 1}]},
    )
    assert bad.status_code == 400 and "Linha desconhecida" in bad.json()["content"]
    assert bad.json()["content"].startswith("$.line_items[0].id: ")  # REST's body is the cart (BCP-ERR-05)
    assert call(client, "post", "/carts", rest, {"line_items": []}).status_code == 400


def test_cart_converts_to_a_checkout_and_reuses_it_bcp_chk_01(client: Client, rest: dict[str, str]) -> None:
    cart = call(
        client,
        "post",
        "/carts",
        rest,
        {"line_items": [CAFE], "buyer": {"email": "ana@example.com.br", "consent": {"marketing": True}}},
    ).json()
    assert cart["buyer"]["consent"]["br.dev.bcp.consent.marketing"]["granted"] is True

    # The cart wins over overlapping fields of the payload (UCP cart).
    created = call(
        client,
        "post",
        "/checkout-sessions",
        rest,
        {
            "cart_id": cart["id"],
            "line_items": [{"item": {"id": "SKU-XICARA"}, "quantity": 1}],
            "buyer": {"email": "outro@example.com.br"},
        },
    )
    again = call(client, "post", "/checkout-sessions", rest, {"cart_id": cart["id"], "line_items": []})

    checkout = created.json()
    assert created.status_code == 201
    assert [(li["item"]["id"], li["quantity"]) for li in checkout["line_items"]] == [("SKU-CAFE-500G", 2)]
    assert checkout["buyer"]["email"] == "ana@example.com.br"
    assert again.status_code == 200 and again.json()["id"] == checkout["id"]  # one active checkout per cart
    assert Checkout.objects.count() == 1
    assert Cart.objects.get().checkout_id == checkout["id"]
    assert checkout["buyer"]["consent"]["br.dev.bcp.consent.marketing"] == {
        **checkout["buyer"]["consent"]["br.dev.bcp.consent.marketing"],
        "granted": True,
        "source": "platform",
    }
    assert Checkout.objects.get().buyer_consent["marketing"]["granted"] is True


def test_line_items_sent_with_cart_id_are_replaced_and_said_so_bcp_chk_20(client: Client, rest: dict[str, str]) -> None:
    """Closing note 45: `cart_id` with `line_items` of its own — the cart's lines win (BCP §4.3), and nothing told the
    platform its lines were not used. BCP-CHK-20: a warning at `$.line_items` (code `line_items_replaced`), in
    Portuguese, on the create and on the create that returns the cart's checkout again; none when the platform sent
    no lines or the cart's own."""
    cart = call(client, "post", "/carts", rest, {"line_items": [CAFE]}).json()
    other = {"cart_id": cart["id"], "line_items": [{"item": {"id": "SKU-XICARA"}, "quantity": 1}]}

    created = call(client, "post", "/checkout-sessions", rest, other).json()
    reused = call(client, "post", "/checkout-sessions", rest, other).json()
    same = call(client, "post", "/checkout-sessions", rest, {"cart_id": cart["id"], "line_items": [CAFE]}).json()
    none = call(client, "post", "/checkout-sessions", rest, {"cart_id": cart["id"], "line_items": []}).json()

    warning = {
        "type": "warning",
        "code": "line_items_replaced",
        "path": "$.line_items",
        "content": f"Os itens deste checkout são os do carrinho {cart['id']}: os line_items enviados junto com "
        "cart_id foram substituídos pelos itens do carrinho. Confira os itens antes de concluir.",
    }
    assert [(li["item"]["id"], li["quantity"]) for li in created["line_items"]] == [("SKU-CAFE-500G", 2)]
    assert [m for m in created.get("messages", []) if m["code"] == "line_items_replaced"] == [warning]
    assert reused["id"] == created["id"]
    assert [m for m in reused.get("messages", []) if m["code"] == "line_items_replaced"] == [warning]
    for answer in (same, none):
        assert answer["id"] == created["id"]
        assert [m for m in answer.get("messages", []) if m["code"] == "line_items_replaced"] == []


def test_other_platforms_do_not_see_a_cart(client: Client, rest: dict[str, str], fake_platform: Any) -> None:
    from bcp_app.service.platforms import platform_create

    owner = platform_create(name="Dona", profile_url=fake_platform.url("/perfil.json"))
    cart = call(client, "post", "/carts", {**rest, "X-API-Key": owner.api_key}, {"line_items": [CAFE]}).json()
    stranger = agent(with_cart(fake_platform, path="/outro.json"))

    seen = call(client, "get", f"/carts/{cart['id']}", stranger).json()
    converted = call(client, "post", "/checkout-sessions", stranger, {"cart_id": cart["id"]}).json()

    assert seen["messages"][0]["code"] == "not_found"
    assert converted["messages"][0]["code"] == "not_found"
    assert Checkout.objects.count() == 0


def test_cart_not_negotiated_is_incompatible_bcp_neg_06(
    client: Client, bcp_settings: Any, fake_platform: Any, db: None
) -> None:
    catalog()
    headers = agent(fake_platform.publish())

    body = call(client, "post", "/carts", headers, {"line_items": [CAFE]}).json()

    assert body["ucp"]["status"] == "error" and body["messages"][0]["code"] == "capabilities_incompatible"
    assert Cart.objects.count() == 0


# --- the storefront cart is the same model ------------------------------------------------------------------


def test_storefront_cart_is_a_cart_row_and_an_agent_cart_opens_in_the_browser(
    client: Client, rest: dict[str, str]
) -> None:
    client.post("/carrinho/adicionar", {"sku": "SKU-CAFE-500G", "quantity": "1"})
    row = Cart.objects.get()
    assert client.session["cart_id"] == row.public_id
    assert [(line.sku, line.quantity) for line in row.lines.all()] == [("SKU-CAFE-500G", 1)]

    agent_cart = call(
        client, "post", "/carts", rest, {"line_items": [{"item": {"id": "SKU-XICARA"}, "quantity": 2}]}
    ).json()
    response = client.get(f"/carrinho/{agent_cart['id']}")
    assert response.status_code == 302 and response["Location"] == "/carrinho/"
    assert cart_items(client.session) == {"SKU-XICARA": 2}
    # The buyer changes it on the storefront; the agent reads the same cart.
    client.post("/carrinho/alterar", {"sku": "SKU-XICARA", "quantity": "1"})
    assert call(client, "get", f"/carts/{agent_cart['id']}", rest).json()["line_items"][0]["quantity"] == 1
    assert "não existe mais" in client.get("/carrinho/cart_000000000000000000000000", follow=True).content.decode()


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)  # real WSGI requests: each one commits and closes like production
def test_schemathesis_finds_no_server_errors_on_the_cart_endpoints(fake_platform: Any, bcp_settings: Any) -> None:
    """The four /carts operations fuzzed (bounded examples) with a profile that negotiates the cart; no 5xx."""
    import schemathesis
    from django.core.wsgi import get_wsgi_application

    from tests.bcp_app.test_rest_bad_input import _fuzz

    catalog()
    agent_header = f'profile="{with_cart(fake_platform)}"'
    schema = schemathesis.openapi.from_wsgi("/bcp/v1/openapi.json", get_wsgi_application())
    operations = [result.ok() for result in schema.get_all_operations()]
    carts = [op for op in operations if "/carts" in op.path]
    assert sorted((op.method.upper(), op.path.removeprefix("/bcp/v1")) for op in carts) == [
        ("GET", "/carts/{cart_id}"),
        ("POST", "/carts"),
        ("POST", "/carts/{cart_id}/cancel"),
        ("PUT", "/carts/{cart_id}"),
    ]
    failures: list[str] = []
    for operation in carts:
        _fuzz(operation, agent_header, failures)
    assert failures == []


# --- MCP (official client) -----------------------------------------------------------------------------------

live_mcp = test_mcp_helpers.live_mcp


@pytest.mark.postgres
@pytest.mark.e2e
def test_cart_tools_over_mcp_bcp_mcp_06(
    live_mcp: Any, fake_platform: Any, bcp_settings: Any, transactional_db: None
) -> None:
    catalog()
    meta = {"ucp-agent": {"profile": with_cart(fake_platform)}}
    url = live_mcp.mcp_url

    created = test_mcp_helpers.call(url, "create_cart", {"meta": meta, "cart": {"line_items": [CAFE]}})
    cart = created.structured_content
    line = cart["line_items"][0]
    updated = test_mcp_helpers.call(
        url,
        "update_cart",
        {
            "meta": meta,
            "id": cart["id"],
            "cart": {"line_items": [{"id": line["id"], "item": {"id": "SKU-CAFE-500G"}, "quantity": 3}]},
        },
    ).structured_content
    got = test_mcp_helpers.call(url, "get_cart", {"meta": meta, "id": cart["id"]}).structured_content
    checkout = test_mcp_helpers.call(
        url, "create_checkout", {"meta": meta, "checkout": {"cart_id": cart["id"]}}
    ).structured_content
    canceled = test_mcp_helpers.call(url, "cancel_cart", {"meta": meta, "id": cart["id"]}).structured_content
    gone = test_mcp_helpers.call(url, "get_cart", {"meta": meta, "id": cart["id"]}).structured_content

    assert errors(cart, "shopping/cart.json") == []
    assert updated["line_items"][0]["quantity"] == 3 == got["line_items"][0]["quantity"]
    assert [(li["item"]["id"], li["quantity"]) for li in checkout["line_items"]] == [("SKU-CAFE-500G", 3)]
    assert canceled["id"] == cart["id"]
    assert gone["messages"][0]["code"] == "not_found" and created.is_error is not True


# --- A2A (official a2a-sdk client) ---------------------------------------------------------------------------


def _a2a_cart_agent_and_product() -> None:
    """The seed agent's profile offering carts (Pix handlers) and a product to put in them."""
    from tests.bcp_app.test_a2a_helpers import PIX_HANDLERS, SEED_PROFILE, cache_profile, make_product, platform_profile

    profile = platform_profile(handlers=PIX_HANDLERS)
    profile["ucp"]["capabilities"][CART] = CART_ENTRY
    cache_profile(SEED_PROFILE, profile)
    make_product("Pixel 10 Pro", "PIXEL-10-PRO", 599900)


@pytest.mark.postgres
@pytest.mark.e2e
def test_cart_intents_over_a2a_and_conversion(bcp_settings: Any, transactional_db: None) -> None:
    from google.protobuf.json_format import MessageToDict

    from tests.bcp_app.test_a2a_helpers import (
        LiveServer,
        data,
        sdk_send,
    )

    _a2a_cart_agent_and_product()

    def payload(message: Any, key: str) -> dict[str, Any]:
        parts = [MessageToDict(part) for part in message.parts]
        return next(p["data"][key] for p in parts if key in p.get("data", {}))

    server = LiveServer().start()
    try:
        bcp_settings.BCP_PUBLIC_URL = server.base_url
        first = sdk_send(
            server.base_url,
            [
                data(
                    {"action": "create_cart", "cart": {"line_items": [{"item": {"id": "PIXEL-10-PRO"}, "quantity": 1}]}}
                )
            ],
        )
        context_id = first.context_id
        cart = payload(first, "a2a.bcp.cart")
        updated = sdk_send(
            server.base_url,
            [
                data(
                    {
                        "action": "update_cart",
                        "cart": {
                            "line_items": [
                                {"id": cart["line_items"][0]["id"], "item": {"id": "PIXEL-10-PRO"}, "quantity": 2}
                            ]
                        },
                    }
                )
            ],
            context_id=context_id,
        )
        converted = sdk_send(server.base_url, [data({"action": "create_checkout"})], context_id=context_id)
        # The conversation goes on with the checkout made from the cart.
        shown = sdk_send(server.base_url, [data({"action": "get_checkout"})], context_id=context_id)
        canceled = sdk_send(server.base_url, [data({"action": "cancel_cart"})], context_id=context_id)
    finally:
        server.stop()
    assert cart["id"].startswith("cart_") and cart["line_items"][0]["quantity"] == 1
    assert undeclared(cart, CartResponse) == []  # issue 14: the cart part declares every member it carries
    assert payload(updated, "a2a.bcp.cart")["line_items"][0]["quantity"] == 2
    checkout = payload(converted, "a2a.bcp.checkout")
    assert checkout["line_items"][0]["item"]["id"] == "PIXEL-10-PRO" and checkout["line_items"][0]["quantity"] == 2
    assert payload(shown, "a2a.bcp.checkout")["id"] == checkout["id"]
    assert payload(canceled, "a2a.bcp.cart")["id"] == cart["id"]
    assert Cart.objects.get().status == "canceled"


def _a2a_cart_update_refused(
    bcp_settings: Any, update: dict[str, Any], *, refused_create: dict[str, Any] | None = None
) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    """Over A2A, the cart agent (`_a2a_cart_agent_and_product`) sends `refused_create` as a create_cart (when
    given), creates a one-line cart, then sends `update` as its update_cart: the raw JSON-RPC answers of the first
    and the last."""
    from tests.bcp_app.test_a2a_helpers import LiveServer, data, rpc, sdk_send, send_message

    _a2a_cart_agent_and_product()
    server = LiveServer().start()
    try:
        bcp_settings.BCP_PUBLIC_URL = server.base_url
        created = None
        if refused_create is not None:
            created = rpc(server.a2a_url, send_message([data({"action": "create_cart", "cart": refused_create})]))
        one_line = {"line_items": [{"item": {"id": "PIXEL-10-PRO"}, "quantity": 1}]}
        first = sdk_send(server.base_url, [data({"action": "create_cart", "cart": one_line})])
        updated = rpc(
            server.a2a_url,
            send_message([data({"action": "update_cart", "cart": update})], context_id=first.context_id, request_id=2),
        )
    finally:
        server.stop()
    return created, updated


@pytest.mark.postgres
@pytest.mark.e2e
def test_bad_cart_input_over_a2a_names_the_field_from_the_cart_member_bcp_err_05(
    bcp_settings: Any, transactional_db: None
) -> None:
    """A wrong type in the cart of an A2A create_cart / update_cart was named `$.line_items[0].quantity`: the path
    starts from the data part's root, `$.cart.line_items[0].quantity`, as MCP names it from its arguments."""

    def fields(body: dict[str, Any]) -> dict[str, str]:
        assert body["error"]["code"] == -32602
        found = next(d["fieldViolations"] for d in body["error"]["data"] if d["@type"].endswith("BadRequest"))
        return {v["field"]: v["description"] for v in found}

    wrong = {"line_items": [{"item": {"id": "PIXEL-10-PRO"}, "quantity": "dois"}]}
    created, updated = _a2a_cart_update_refused(bcp_settings, wrong, refused_create=wrong)
    assert list(fields(created)) == ["$.cart.line_items[0].quantity"]
    assert list(fields(updated)) == ["$.cart.line_items[0].quantity"]
    assert Cart.objects.count() == 1  # the refused create made no cart (and the update changed nothing)


UNKNOWN_LINE = {"line_items": [{"id": "li_x", "item": {"id": "PIXEL-10-PRO"}, "quantity": 1}]}


@pytest.mark.postgres
@pytest.mark.e2e
def test_cart_service_errors_over_a2a_name_the_field_from_the_cart_member_bcp_err_05(
    bcp_settings: Any, transactional_db: None
) -> None:
    """A line the cart service refuses (unknown line id) was named `$.line_items[0].id` over A2A while the schema's
    errors say `$.cart.line_items[…]`: one request, one path for each member."""
    _created, updated = _a2a_cart_update_refused(bcp_settings, UNKNOWN_LINE)
    assert "$.cart.line_items[0].id: Linha desconhecida" in str(updated["error"])
    assert "$.line_items" not in str(updated["error"]).replace("$.cart.line_items", "")


@pytest.mark.postgres
@pytest.mark.e2e
def test_cart_service_errors_over_mcp_name_the_field_from_the_tool_arguments_bcp_err_05(
    live_mcp: Any, fake_platform: Any, bcp_settings: Any, transactional_db: None
) -> None:
    """As over A2A: MCP names a wrong type `$.cart.line_items[…]` from its arguments, and now the line the cart
    service refuses too (it said `$.line_items[0].id`)."""
    catalog()
    meta = {"ucp-agent": {"profile": with_cart(fake_platform)}}
    url = live_mcp.mcp_url
    cart = test_mcp_helpers.call(url, "create_cart", {"meta": meta, "cart": {"line_items": [CAFE]}}).structured_content
    unknown = {"line_items": [{"id": "li_x", "item": {"id": "SKU-CAFE-500G"}, "quantity": 1}]}
    refused = test_mcp_helpers.call_error(url, "update_cart", {"meta": meta, "id": cart["id"], "cart": unknown})
    assert refused.message == "$.cart.line_items[0].id: Linha desconhecida neste carrinho."
