"""Agent trust tiers (issue 35; bcp_app/service/trust.py): per operation, per tier, per transport.

BCP §18 (4): "platforms authenticate with an API key or an HTTP Message Signature; anonymous agents may browse
and create checkouts when the shop allows it, but only the originating platform may read an order". BCP §14:
"the business MAY require signatures". Refusals are §5.4 protocol errors (BCP-ERR-03: status + `{code, content}`;
BCP-SIG-04: `signature_missing` 401; `unauthenticated` 401 with `WWW-Authenticate`; `forbidden` 403), and for
orders the §7 Error Response `unauthorized` (BCP-ORD-02), with Portuguese content. The store's defaults keep
what the shop did before the tiers existed (every other test runs with them).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from django.test import Client

from bcp_app.protocol.signatures import HttpMessage, content_digest, sign_message
from bcp_app.service import operations, trust
from bcp_app.service.platforms import platform_create
from shop.models import Checkout, StoreSettings
from shop.store.services import store_row
from tests.bcp_app.bcp_fixtures import PLATFORM_KID, FakePlatform
from tests.bcp_app.rest_helpers import PIX, catalog

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("bcp_settings")]

FIELD = {
    trust.BROWSE: "agents_browse",
    trust.CHECKOUT_CREATE: "agents_checkout",
    trust.CHECKOUT_COMPLETE: "agents_complete",
    trust.ORDERS_READ: "agents_orders_read",
    trust.ORDERS_ACT: "agents_orders_act",
}
MISSING = "checkout_naoexiste0000"
# REST operation → (permission, method, path, body); each answers a business outcome when allowed (nothing
# here exists), so a refusal is the only 401/403 it can give.
REST = {
    "search_catalog": (trust.BROWSE, "post", "/catalog/search", {"query": "café"}),
    "lookup_catalog": (trust.BROWSE, "post", "/catalog/lookup", {"ids": ["SKU-NADA"]}),
    "get_product": (trust.BROWSE, "post", "/catalog/product", {"id": "prod_nada"}),
    "create_checkout": (
        trust.CHECKOUT_CREATE,
        "post",
        "/checkout-sessions",
        {"line_items": [{"item": {"id": "SKU-NADA"}, "quantity": 1}]},
    ),
    "get_checkout": (trust.CHECKOUT_CREATE, "get", f"/checkout-sessions/{MISSING}", None),
    "update_checkout": (
        trust.CHECKOUT_CREATE,
        "put",
        f"/checkout-sessions/{MISSING}",
        {"line_items": [{"item": {"id": "SKU-NADA"}, "quantity": 1}]},
    ),
    "cancel_checkout": (trust.CHECKOUT_CREATE, "post", f"/checkout-sessions/{MISSING}/cancel", {}),
    "complete_checkout": (
        trust.CHECKOUT_COMPLETE,
        "post",
        f"/checkout-sessions/{MISSING}/complete",
        {"payment": {"instruments": [PIX]}},
    ),
    "get_order": (trust.ORDERS_READ, "get", "/orders/order_naoexiste0000", None),
}
CALLERS = ("anonymous", "registered", "signed")
RANK = {"anonymous": 0, "registered": 1, "signed": 2}


def set_tier(permission: str, tier: str) -> None:
    row = store_row()
    setattr(row, FIELD[permission], tier)
    row.save()


class Caller:
    """One BCP REST caller of a tier: anonymous (profile only), registered (API key), signed (RFC 9421)."""

    def __init__(self, client: Client, tier: str, platform: FakePlatform) -> None:
        self.client, self.tier, self.platform = client, tier, platform
        self.profile_url = platform.publish()
        self.api_key = (
            platform_create(name="Agente", profile_url=self.profile_url).api_key if tier == "registered" else ""
        )

    def __call__(self, method: str, path: str, body: Any = None, *, prefix: str = "/bcp/v1") -> Any:
        raw = json.dumps(body).encode() if body is not None else b""
        headers = {"BCP-Agent": f'profile="{self.profile_url}"', "Idempotency-Key": str(uuid.uuid4())}
        if body is not None:
            headers.update({"Content-Type": "application/json", "Content-Digest": content_digest(raw)})
        if self.tier == "registered":
            headers["Authorization"] = f"Bearer {self.api_key}"
        if self.tier == "signed":
            components = ["@method", "@authority", "@path", "bcp-agent", "idempotency-key"]
            if body is not None:
                components += ["content-digest", "content-type"]
            message = HttpMessage(
                method=method.upper(),
                authority="testserver",
                path=f"{prefix}{path}",
                headers={k.lower(): v for k, v in headers.items()},
            )
            headers.update(sign_message(message, components, key=self.platform.key, keyid=PLATFORM_KID))
        kwargs: dict[str, Any] = {"headers": headers}
        if body is not None:
            kwargs.update(data=raw, content_type="application/json")
        return getattr(self.client, method)(f"{prefix}{path}", **kwargs)


@pytest.fixture
def caller_of(client: Client, fake_platform: FakePlatform) -> Iterator[Any]:
    yield lambda tier: Caller(client, tier, fake_platform)


def expected_refusal(required: str, caller: str) -> str | None:
    """The §5.4 code a caller of tier `caller` gets where `required` is the least tier allowed."""
    if required == "none":
        return "forbidden"
    if RANK[caller] >= RANK[required]:
        return None
    return "signature_missing" if (required, caller) == ("signed", "registered") else "unauthenticated"


def test_every_transport_facing_operation_names_its_permission() -> None:
    """One table (bcp_app/service/operations/__init__.py) guards what REST, MCP, A2A and UCP call."""
    guarded = {
        name: getattr(operations, name).permission
        for name in (
            "search_catalog",
            "lookup_catalog",
            "get_product",
            "search_policies",
            "create_checkout",
            "get_checkout",
            "update_checkout",
            "cancel_checkout",
            "create_cart",
            "get_cart",
            "update_cart",
            "cancel_cart",
            "complete_checkout",
            "get_order",
        )
    }
    assert guarded == {
        "search_catalog": "catalog.browse",
        "lookup_catalog": "catalog.browse",
        "get_product": "catalog.browse",
        "search_policies": "catalog.browse",
        "create_checkout": "checkout.create",
        "get_checkout": "checkout.create",
        "update_checkout": "checkout.create",
        "cancel_checkout": "checkout.create",
        "create_cart": "checkout.create",
        "get_cart": "checkout.create",
        "update_cart": "checkout.create",
        "cancel_cart": "checkout.create",
        "complete_checkout": "checkout.complete",
        "get_order": "orders.read",
    }


def test_the_defaults_keep_what_the_shop_did_and_are_advertised(client: Client) -> None:
    """Defaults: anonymous agents browse, build and complete checkouts; orders need a platform (BCP §18 (4))."""
    assert trust.policy() == {
        "catalog.browse": "anonymous",
        "checkout.create": "anonymous",
        "checkout.complete": "anonymous",
        "orders.read": "registered",
        "orders.act": "registered",
    }
    services = client.get("/.well-known/bcp").json()["ucp"]["services"]["br.dev.bcp.shopping"]
    assert {json.dumps(s["config"]["access"]) for s in services} == {
        json.dumps(
            {
                "anonymous": ["catalog.browse", "checkout.create", "checkout.complete"],
                "registered": ["catalog.browse", "checkout.create", "checkout.complete", "orders.read", "orders.act"],
                "signed": ["catalog.browse", "checkout.create", "checkout.complete", "orders.read", "orders.act"],
            }
        )
    }


def test_the_advertised_access_validates_against_its_schema(client: Client) -> None:
    from pathlib import Path

    from jsonschema import Draft202012Validator

    import bcp_app

    schema = json.loads((Path(bcp_app.__file__).parent / "jsonschemas/shopping/agent_access.json").read_text())
    set_tier(trust.ORDERS_READ, "signed")
    services = client.get("/.well-known/bcp").json()["ucp"]["services"]["br.dev.bcp.shopping"]

    validator = Draft202012Validator({**schema, "$ref": "#/$defs/config"})
    for service in services:
        assert list(validator.iter_errors(service["config"]["access"])) == []


def test_a_changed_policy_is_advertised_at_once(client: Client) -> None:
    set_tier(trust.CHECKOUT_COMPLETE, "signed")
    set_tier(trust.ORDERS_ACT, "none")

    access = client.get("/.well-known/bcp").json()["ucp"]["services"]["br.dev.bcp.shopping"][0]["config"]["access"]

    assert access == {
        "anonymous": ["catalog.browse", "checkout.create"],
        "registered": ["catalog.browse", "checkout.create", "orders.read"],
        "signed": ["catalog.browse", "checkout.create", "checkout.complete", "orders.read"],
    }


@pytest.mark.parametrize("required", ["registered", "signed", "none"])
@pytest.mark.parametrize("tier", CALLERS)
@pytest.mark.parametrize("operation", list(REST))
def test_rest_operation_per_tier_bcp_err_03_sig_04(caller_of: Any, operation: str, tier: str, required: str) -> None:
    permission, method, path, body = REST[operation]
    set_tier(permission, required)
    call = caller_of(tier)

    response = call(method, path, body)

    refusal = expected_refusal(required, tier)
    if permission == trust.ORDERS_READ:  # BCP §7: not permitted → the Error Response `unauthorized`, HTTP 200
        assert response.status_code == 200
        messages = response.json()["messages"]
        if refusal is None:
            assert [m["code"] for m in messages] == ["not_found"]
        else:
            assert [m["code"] for m in messages] == ["unauthorized"]
            assert "pedido" in messages[0]["content"]  # Portuguese; the default's answer is get_order's own
        return
    if refusal is None:
        assert response.status_code in (200, 201), response.content
        return
    status = {"unauthenticated": 401, "signature_missing": 401, "forbidden": 403}[refusal]
    assert (response.status_code, response.json()["code"]) == (status, refusal), response.content
    content = response.json()["content"]
    assert content.startswith(("Esta loja", "Autentique-se")), content  # Portuguese, says what to do
    if refusal == "unauthenticated":
        assert response["WWW-Authenticate"] == 'Bearer realm="bcp"'


def test_order_refusals_speak_the_callers_language_bcp_ord_02(caller_of: Any) -> None:
    """An order refusal is a business outcome: `Accept-Language: en` gets English, like the order itself."""
    call = caller_of("registered")
    set_tier(trust.ORDERS_READ, "signed")

    english = call.client.get(
        "/bcp/v1/orders/order_naoexiste0000",
        headers={
            "BCP-Agent": f'profile="{call.profile_url}"',
            "Authorization": f"Bearer {call.api_key}",
            "Accept-Language": "en",
        },
    ).json()
    portuguese = call("get", "/orders/order_naoexiste0000").json()

    assert english["messages"][0]["content"] == "This store requires signed requests (RFC 9421) to read orders."
    assert (
        portuguese["messages"][0]["content"] == "Esta loja exige requisições assinadas (RFC 9421) para consultar "
        "pedidos."
    )


def test_an_allowed_anonymous_caller_still_never_reads_an_order_bcp_ord_02(caller_of: Any) -> None:
    """Granting `orders.read` to anonymous agents opens nothing: an order belongs to the platform that created it."""
    set_tier(trust.ORDERS_READ, "anonymous")

    body = caller_of("anonymous")("get", "/orders/order_naoexiste0000").json()

    assert [m["code"] for m in body["messages"]] == ["unauthorized"]


@pytest.mark.parametrize("tier", CALLERS)
def test_the_ucp_rest_face_refuses_alike(caller_of: Any, settings: Any, tier: str) -> None:
    """The UCP face (/ucp/v1) runs the same guarded operations."""
    set_tier(trust.CHECKOUT_CREATE, "signed")

    response = caller_of(tier)("get", f"/checkout-sessions/{MISSING}", prefix="/ucp/v1")

    refusal = expected_refusal("signed", tier)
    if refusal is None:
        # past the guard: the unknown checkout, 404 on UCP's face (checkout-rest.md "Status Codes", v2026-01-11)
        assert response.status_code == 404, response.content
        assert [m["code"] for m in response.json()["messages"]] == ["not_found"]
    else:
        assert response.status_code == 401
        assert refusal in response.content.decode()


def test_the_buyer_permalink_is_not_an_agent(client: Client, settings: Any) -> None:
    """Tiers govern agents; the buyer's own browser following a cart permalink (BCP §15) is not tiered."""
    from tests.shop.checkout_factories import make_shipping, make_variant

    make_variant("SKU-CAFE-500G", price=4290, stock=10, title="Café especial 500 g")
    make_shipping()
    set_tier(trust.CHECKOUT_CREATE, "none")

    response = client.get("/comprar/SKU-CAFE-500G:1")

    assert response.status_code == 303
    assert "/checkout" in response["Location"] or "checkout" in response["Location"]
    assert Checkout.objects.get().creator_tier == ""  # no agent created it: the store's agent settings skip it


CREATOR_LABELS = {
    "anonymous": "Agente anônimo",
    "registered": "Plataforma com chave de API",
    "signed": "Plataforma que assina as requisições (RFC 9421)",
}


@pytest.mark.parametrize("tier", CALLERS)
def test_a_checkout_records_the_tier_of_the_agent_that_created_it(caller_of: Any, admin_client: Client, tier: str):
    """The shop completes an agent's checkout paid before complete on its own (PIX.md §3.1, §10 D1), by the
    rule the complete is refused by (BCP-SIG-04) applied to the agent that created it: so creation records
    that agent's tier, in its INSERT, and the admin's checkout page shows it, read-only."""
    catalog()

    response = caller_of(tier)(
        "post", "/checkout-sessions", {"line_items": [{"item": {"id": "SKU-CAFE-500G"}, "quantity": 1}]}
    )

    assert response.status_code == 201, response.content
    checkout = Checkout.objects.get(public_id=response.json()["id"])
    assert checkout.creator_tier == tier
    page = admin_client.get(f"/admin/shop/checkout/{checkout.pk}/change/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "Criado por" in html and CREATOR_LABELS[tier] in html
    assert 'name="creator_tier"' not in html  # shown, not editable


def test_the_store_admin_saves_the_tiers(admin_client: Client) -> None:
    row = store_row()
    url = f"/admin/shop/storesettings/{row.pk}/change/"
    page = admin_client.get(url)
    assert "Agentes de compra (BCP)" in page.content.decode()
    assert StoreSettings._meta.get_field("agents_complete").default == "anonymous"
