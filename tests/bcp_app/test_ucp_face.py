"""The UCP face (issue 35 item 1): `/.well-known/ucp` per version and UCP 2026-01-11 REST under `/ucp/v1`, answered by
BCP's operations through the name map of bcp_app/protocol/ucp.py. Responses are parsed with the official UCP SDK's
models (ucp-sdk 0.1.0, the 2026-01-11 models the conformance suite imports), so a shape UCP does not accept fails
here; the shop-decided values are exact."""

from __future__ import annotations

import base64
import json
from datetime import datetime
from typing import Any

import pytest
from celery.signals import task_prerun
from django.test import Client
from joserfc import jws
from joserfc.errors import BadSignatureError
from joserfc.jwk import ECKey
from ucp_sdk.models.discovery.profile_schema import UcpDiscoveryProfile
from ucp_sdk.models.schemas.shopping import fulfillment_resp
from ucp_sdk.models.schemas.shopping.discount_resp import Checkout as DiscountCheckout
from ucp_sdk.models.schemas.shopping.order import Order
from ucp_sdk.models.schemas.shopping.payment_resp import PaymentResponse

from bcp_app.models import IdempotencyRecord
from bcp_app.protocol import ucp
from bcp_app.service.platforms import platform_create
from bcp_app.service.webhooks import order_webhook_send
from orders.models import Order as OrderRow
from shop.models import Coupon
from tests.bcp_app.bcp_fixtures import FakePlatform
from tests.bcp_app.rest_helpers import SP, catalog

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("bcp_settings")]
fulfillment_resp.Checkout.model_rebuild(_types_namespace={"PaymentResponse": PaymentResponse})
V = "2026-01-11"


def ucp_profile(platform: FakePlatform, *, handlers: bool = True) -> dict[str, Any]:
    """A UCP 2026-01-11 platform profile as the spec's overview shows one (tag v2026-01-11, "Platform Profile")."""

    def cap(local: str, **extra: Any) -> dict[str, Any]:  # capability.json#/$defs/discovery: spec and schema required
        return {
            "name": f"dev.ucp.shopping.{local}",
            "version": V,
            "spec": f"https://ucp.dev/specification/{local}",
            "schema": f"https://ucp.dev/schemas/shopping/{local}.json",
            **extra,
        }

    caps = [
        cap("checkout"),
        cap("fulfillment", extends="dev.ucp.shopping.checkout"),
        cap("discount", extends="dev.ucp.shopping.checkout"),
        cap("order", config={"webhook_url": platform.url("/webhooks/ucp")}),
    ]
    profile: dict[str, Any] = {"ucp": {"version": V, "capabilities": caps}}
    if handlers:
        profile["payment"] = {
            "handlers": [
                {
                    "id": "gpay",
                    "name": "com.google.pay",
                    "version": V,
                    "spec": "https://pay.google.com/gp/p/ucp/2026-01-11/",
                    "config_schema": "https://pay.google.com/gp/p/ucp/2026-01-11/schemas/gpay_config.json",
                    "instrument_schemas": [],
                    "config": {},
                }
            ]
        }
    return profile


# UCP 2026-01-11's Complete body: one card instrument; the sandbox gateway approves success_token
CARD_COMPLETE = {
    "payment_data": {
        "id": "instr_1",
        "handler_id": "gpay",
        "type": "card",
        "brand": "Visa",
        "last_digits": "1234",
        "credential": {"type": "PAYMENT_GATEWAY", "token": "success_token"},
    },
    "risk_signals": {},
}


def pac_chosen(method: dict[str, Any], address: dict[str, Any]) -> dict[str, Any]:
    """The shipping method of a checkout answer, written back with its destination and the PAC option chosen."""
    return {
        "id": method["id"],
        "type": "shipping",
        "destinations": [{**address, "id": method["destinations"][0]["id"]}],
        "selected_destination_id": method["destinations"][0]["id"],
        "groups": [{"id": method["groups"][0]["id"], "selected_option_id": "pac"}],
    }


@pytest.fixture
def ucp_headers(fake_platform: FakePlatform, settings: Any) -> dict[str, str]:
    settings.BCP_PIX_SANDBOX = True
    settings.PIX_SANDBOX_WEBHOOK_URL = ""
    catalog()
    url = fake_platform.serve_json("/ucp-profile.json", ucp_profile(fake_platform))
    # a registered platform (API key): orders are shown only to the platform whose checkout made them (BCP §7)
    platform = platform_create(name="Plataforma UCP", profile_url=url)
    return {"UCP-Agent": f'profile="{url}"', "Authorization": f"Bearer {platform.api_key}"}


def post(client: Client, path: str, headers: dict[str, str], body: Any, key: str | None = None) -> Any:
    extra = {"Idempotency-Key": key} if key else {}
    return client.post(
        f"/ucp/v1{path}", data=json.dumps(body), content_type="application/json", headers={**headers, **extra}
    )


def put(client: Client, path: str, headers: dict[str, str], body: Any) -> Any:
    return client.put(f"/ucp/v1{path}", data=json.dumps(body), content_type="application/json", headers=headers)


def test_well_known_ucp_2026_01_11_parses_with_the_official_sdk(client: Client) -> None:
    response = client.get("/.well-known/ucp")
    assert response.status_code == 200
    profile = UcpDiscoveryProfile(**response.json())
    assert profile.ucp.version.root == V
    shopping = profile.ucp.services.root["dev.ucp.shopping"]
    assert str(shopping.rest.endpoint) == "https://loja.example.com.br/ucp/v1"
    names = [c.name for c in profile.ucp.capabilities]
    assert names == [
        "dev.ucp.shopping.checkout",
        "dev.ucp.shopping.fulfillment",
        "dev.ucp.shopping.discount",
        "dev.ucp.shopping.buyer_consent",
        "dev.ucp.shopping.order",
        "br.dev.bcp.shopping.fiscal_document",
        "br.dev.bcp.shopping.order_actions",
        "br.dev.bcp.shopping.subscription",
        "br.dev.bcp.shopping.catalog.feed",
        "br.dev.bcp.shopping.permalink",
    ]
    # the Pix handler keeps its BCP name on the UCP face; the card handler is Google Pay's
    assert [(h.id, h.name) for h in profile.payment.handlers] == [
        ("pix_recebedor_001", "br.dev.bcp.pix"),
        ("gpay", "com.google.pay"),
    ]
    assert response.json()["ucp"]["supported_versions"] == {
        "2026-08-25": "https://loja.example.com.br/.well-known/ucp/2026-08-25"
    }
    assert [k["kid"] for k in response.json()["signing_keys"]] == ["loja-2026-07"]


def test_well_known_ucp_2026_08_25_has_keys_and_map_order(client: Client) -> None:
    body = client.get("/.well-known/ucp/2026-08-25").json()
    assert body["ucp"]["version"] == "2026-08-25"
    assert body["ucp"]["map_order"]["capabilities"] == list(body["ucp"]["capabilities"])
    assert body["ucp"]["map_order"]["payment_handlers"] == ["br.dev.bcp.pix", "com.google.pay"]
    assert list(body["ucp"]["services"]) == ["dev.ucp.shopping"]
    assert body["ucp"]["capabilities"]["dev.ucp.shopping.fulfillment"][0]["extends"] == "dev.ucp.shopping.checkout"
    assert body["ucp"]["supported_versions"] == {"2026-01-11": "https://loja.example.com.br/.well-known/ucp/2026-01-11"}
    assert [k["kid"] for k in body["keys"]] == ["loja-2026-07"]
    assert "signing_keys" not in body
    assert client.get("/.well-known/ucp/2099-01-01").status_code == 404


def test_the_bcp_profile_is_unchanged_by_the_ucp_face(client: Client) -> None:
    body = client.get("/.well-known/bcp").json()
    assert body["ucp"]["version"] == "2026-07-28"
    assert "br.dev.bcp.shopping.checkout" in body["ucp"]["capabilities"]
    assert "supported_versions" not in body["ucp"]


def test_a_ucp_platform_buys_with_a_card_over_ucp_rest(
    client: Client, ucp_headers: dict[str, str], settings: Any, fake_platform: FakePlatform
) -> None:
    # create in UCP 2026-01-11's shape: request id, currency, titles and the platform's handlers are not ours to take
    created = post(
        client,
        "/checkout-sessions",
        ucp_headers,
        {
            "id": "platform-chosen-id",
            "currency": "BRL",
            "line_items": [{"item": {"id": "SKU-CAFE-500G", "title": "Cheap coffee"}, "quantity": 2}],
            "buyer": {"full_name": "Ana Souza", "email": "ana@example.com.br"},
            "payment": {"instruments": [], "handlers": []},
        },
        key="k-create",
    )
    assert created.status_code == 201
    checkout = fulfillment_resp.Checkout(**created.json())
    assert checkout.id != "platform-chosen-id"
    assert checkout.ucp.version.root == V
    assert [c.name for c in checkout.ucp.capabilities] == [
        "dev.ucp.shopping.checkout",
        "dev.ucp.shopping.fulfillment",
        "dev.ucp.shopping.discount",
    ]
    assert checkout.line_items[0].item.title == "Café especial 500 g"
    assert [(t.type, t.amount) for t in checkout.totals] == [("subtotal", 8580), ("total", 8580)]
    assert checkout.buyer.first_name == "Ana" and checkout.buyer.last_name == "Souza"
    assert [h.id for h in checkout.payment.handlers] == ["gpay"]  # the handlers this platform and we share
    # address, then the option, then a coupon: full replacements, as in UCP
    line = {"id": checkout.line_items[0].id, "item": {"id": "SKU-CAFE-500G"}, "quantity": 2}
    state: dict[str, Any] = {
        "line_items": [line],
        "buyer": {"email": "ana@example.com.br", "first_name": "Ana", "last_name": "Souza"},
        "fulfillment": {"methods": [{"type": "shipping", "destinations": [SP]}]},
    }
    body = put(client, f"/checkout-sessions/{checkout.id}", ucp_headers, state).json()
    method = body["fulfillment"]["methods"][0]
    state["fulfillment"]["methods"][0] = pac_chosen(method, SP)
    Coupon.objects.create(code="UCP10", title="10 %", kind="percent", percent=10)
    state["discounts"] = {"codes": ["UCP10"]}
    body = put(client, f"/checkout-sessions/{checkout.id}", ucp_headers, state).json()
    ready = DiscountCheckout(**body)
    assert ready.status == "ready_for_complete", body.get("messages")
    # 2026-01-11 totals are never negative: the discount is its size
    assert [(t.type, t.amount) for t in ready.totals] == [
        ("subtotal", 8580),
        ("discount", 858),
        ("fulfillment", 1890),
        ("total", 9612),
    ]
    assert [(d.code, d.amount) for d in ready.discounts.applied] == [("UCP10", 858)]
    option = fulfillment_resp.Checkout(**body).fulfillment.root.methods[0].groups[0].options[0]
    assert (option.id, option.title, option.description) == (
        "pac",
        "PAC",
        body["fulfillment"]["methods"][0]["groups"][0]["options"][0]["description"],
    )
    assert isinstance(option.description, str)
    # complete with UCP's payment_data (the sandbox gateway approves success_token)
    done = post(client, f"/checkout-sessions/{checkout.id}/complete", ucp_headers, CARD_COMPLETE, key="k-complete")
    assert done.status_code == 200, done.content
    completed = fulfillment_resp.Checkout(**done.json())
    assert completed.status == "completed"
    # a completed checkout is immutable: another complete or a cancel is refused with 409 on 2026-01-11
    # (ucp.refused_for_status), the unchanged checkout with its error; the first key still replays its 200
    again = post(client, f"/checkout-sessions/{checkout.id}/complete", ucp_headers, CARD_COMPLETE, key="k-complete-2")
    assert again.status_code == 409
    assert again.json()["status"] == "completed"
    assert [m["code"] for m in again.json()["messages"] if m["type"] == "error"] == ["invalid_checkout_status"]
    assert post(client, f"/checkout-sessions/{checkout.id}/cancel", ucp_headers, {}, key="k-cancel").status_code == 409
    replay = post(client, f"/checkout-sessions/{checkout.id}/complete", ucp_headers, CARD_COMPLETE, key="k-complete")
    assert (replay.status_code, replay.content) == (200, done.content)
    order = OrderRow.objects.get()
    assert completed.order.id == order.public_id
    # the order, in UCP's shape, to the platform that created the checkout
    got = client.get(f"/ucp/v1/orders/{order.public_id}", headers=ucp_headers)
    assert got.status_code == 200
    parsed = Order(**got.json())
    assert parsed.checkout_id == checkout.id
    assert parsed.ucp.version.root == V
    # its order webhook is UCP's order event (openapi.json webhooks.orderEvent), signed in Request-Signature
    assert order_webhook_send(order_id=order.public_id, event="order_placed") == "delivered"
    (hook,) = [r for r in fake_platform.received if r.path == "/webhooks/ucp"]
    event = json.loads(hook.body)
    event_order = Order(**event)
    assert (event_order.id, event_order.checkout_id) == (order.public_id, checkout.id)
    assert event["event_id"] == hook.headers["webhook-id"]
    assert datetime.fromisoformat(event["created_time"]).tzinfo is not None
    assert hook.headers["ucp-agent"] == 'profile="https://loja.example.com.br/.well-known/ucp/2026-01-11"'
    header_b64, empty, _ = hook.headers["request-signature"].split(".")
    assert empty == ""  # detached
    header = json.loads(base64.urlsafe_b64decode(header_b64 + "=" * (-len(header_b64) % 4)))
    assert (header["alg"], header["b64"], header["crit"]) == ("ES256", False, ["b64"])
    keys = {k["kid"]: k for k in client.get("/.well-known/ucp").json()["signing_keys"]}
    key = ECKey.import_key(keys[header["kid"]])
    verified = jws.deserialize_compact(hook.headers["request-signature"], key, payload=hook.body)
    assert verified.payload == hook.body
    forged = hook.body.replace(order.public_id.encode(), b"order_forged")
    with pytest.raises(BadSignatureError):
        jws.deserialize_compact(hook.headers["request-signature"], key, payload=forged)


def test_version_parameter_newer_than_ours_is_version_unsupported(client: Client, ucp_headers: dict[str, str]) -> None:
    headers = {**ucp_headers, "UCP-Agent": ucp_headers["UCP-Agent"] + '; version="2099-01-01"'}
    response = post(
        client, "/checkout-sessions", headers, {"line_items": [{"item": {"id": "SKU-CAFE-500G"}, "quantity": 1}]}
    )
    assert response.status_code == 400  # BCP's 422; 2026-01-11's status table has no 422 (checkout-rest.md)
    assert response.json()["code"] == "version_unsupported"
    same = {**ucp_headers, "UCP-Agent": ucp_headers["UCP-Agent"] + '; version="2026-01-11"'}
    assert (
        post(
            client, "/checkout-sessions", same, {"line_items": [{"item": {"id": "SKU-CAFE-500G"}, "quantity": 1}]}
        ).status_code
        == 201
    )


def only_order_profile(version: str) -> dict[str, Any]:
    """The conformance suite's own platform profile (`shopping-agent-test.json`): `dev.ucp.shopping.order` only."""
    order = {"spec": "https://ucp.dev/specification/order", "schema": "https://ucp.dev/schemas/shopping/order.json"}
    if version == V:
        return {"ucp": {"version": V, "capabilities": [{"name": "dev.ucp.shopping.order", "version": V, **order}]}}
    return {
        "ucp": {
            "version": version,
            "services": {},
            "payment_handlers": {},
            "capabilities": {"dev.ucp.shopping.order": [{"version": version, **order}]},
        }
    }


def test_a_2026_01_11_profile_naming_only_order_is_served_the_core_checkout_without_extensions(
    client: Client, fake_platform: FakePlatform, settings: Any
) -> None:
    # UCP 2026-01-11 conditions no operation on the intersection (overview.md "Version Negotiation": a platform
    # version ≤ ours MUST be processed); its extensions need their parent in the intersection, and checkout is not
    catalog()
    headers = {"UCP-Agent": f'profile="{fake_platform.serve_json("/only-order.json", only_order_profile(V))}"'}
    created = post(
        client,
        "/checkout-sessions",
        headers,
        {
            "line_items": [{"item": {"id": "SKU-CAFE-500G"}, "quantity": 1}],
            "fulfillment": {"methods": [{"type": "shipping", "destinations": [SP]}]},
            "discounts": {"codes": ["UCP10"]},
        },
    )
    assert created.status_code == 201, created.content
    checkout = fulfillment_resp.Checkout(**created.json())
    assert [(c.name, c.version.root) for c in checkout.ucp.capabilities] == [("dev.ucp.shopping.checkout", V)]
    assert [(t.type, t.amount) for t in checkout.totals] == [("subtotal", 4290), ("total", 4290)]
    assert "fulfillment" not in created.json() and "discounts" not in created.json()
    got = client.get(f"/ucp/v1/checkout-sessions/{checkout.id}", headers=headers)
    assert (got.status_code, got.json()["id"]) == (200, checkout.id)
    canceled = post(client, f"/checkout-sessions/{checkout.id}/cancel", headers, {}, key="cancel-1")
    assert (canceled.status_code, canceled.json()["status"]) == (200, "canceled")
    # BCP keeps BCP §3: the same profile over BCP REST negotiated no checkout
    bcp = client.post(
        "/bcp/v1/checkout-sessions",
        data=json.dumps({"line_items": [{"item": {"id": "SKU-CAFE-500G"}, "quantity": 1}]}),
        content_type="application/json",
        headers={"BCP-Agent": headers["UCP-Agent"]},
    ).json()
    assert bcp["messages"][0]["code"] == "capabilities_incompatible"


def test_a_2026_08_25_profile_naming_only_order_gets_no_checkout(client: Client, fake_platform: FakePlatform) -> None:
    # from UCP 2026-04-08 on, an operation whose capability was not negotiated is `capabilities_incompatible`
    # (overview.md "Request-Time Validation")
    catalog()
    headers = {"UCP-Agent": f'profile="{fake_platform.serve_json("/only-order-late.json", only_order_profile(LATE))}"'}
    body = post(
        client, "/checkout-sessions", headers, {"line_items": [{"item": {"id": "SKU-CAFE-500G"}, "quantity": 1}]}
    ).json()
    assert body["ucp"]["status"] == "error"
    assert body["messages"][0]["code"] == "capabilities_incompatible"


def test_simulation_endpoint_exists_only_with_its_secret(client: Client, settings: Any) -> None:
    settings.UCP_SIMULATION_SECRET = ""
    assert client.post("/testing/simulate-shipping/order_x").status_code == 404
    settings.UCP_SIMULATION_SECRET = "s3cret-value"
    assert client.post("/testing/simulate-shipping/order_x").status_code == 403
    assert client.post("/testing/simulate-shipping/order_x", headers={"Simulation-Secret": "wrong"}).status_code == 403
    missing = client.post("/testing/simulate-shipping/order_x", headers={"Simulation-Secret": "s3cret-value"})
    assert missing.status_code == 400


def test_name_map_both_ways() -> None:
    assert ucp.to_ucp_name("br.dev.bcp.shopping.checkout") == "dev.ucp.shopping.checkout"
    assert ucp.to_ucp_name("br.dev.bcp.shopping.catalog.search") == "dev.ucp.shopping.catalog.search"
    assert ucp.to_ucp_name("br.dev.bcp.shopping.fiscal_document") == "br.dev.bcp.shopping.fiscal_document"
    assert ucp.to_ucp_name("br.dev.bcp.pix") == "br.dev.bcp.pix"
    assert ucp.to_bcp_name("dev.ucp.shopping") == "br.dev.bcp.shopping"
    assert ucp.to_bcp_name("dev.ucp.shopping.buyer_consent") == "br.dev.bcp.shopping.buyer_consent"
    assert ucp.to_bcp_name("dev.ucp.shopping.unknown") == "dev.ucp.shopping.unknown"


LATE = "2026-08-25"


def ucp_profile_2026_08_25() -> dict[str, Any]:
    """A platform profile written in UCP 2026-08-25: registries are maps, as in BCP, with UCP's names."""

    def cap(local: str, **extra: Any) -> list[dict[str, Any]]:
        return [
            {
                "version": LATE,
                "spec": f"https://ucp.dev/specification/{local}",
                "schema": f"https://ucp.dev/schemas/shopping/{local}.json",
                **extra,
            }
        ]

    return {
        "ucp": {
            "version": LATE,
            "services": {},
            "payment_handlers": {},
            "capabilities": {
                "dev.ucp.shopping.checkout": cap("checkout"),
                "dev.ucp.shopping.discount": cap("discount", extends="dev.ucp.shopping.checkout"),
            },
        }
    }


def test_a_2026_08_25_platform_is_answered_in_2026_08_25_shapes(client: Client, fake_platform: FakePlatform) -> None:
    catalog()
    late = LATE
    headers = {"UCP-Agent": f'profile="{fake_platform.serve_json("/late.json", ucp_profile_2026_08_25())}"'}
    Coupon.objects.create(code="UCP10", title="10 %", kind="percent", percent=10)
    body = {"line_items": [{"item": {"id": "SKU-CAFE-500G"}, "quantity": 2}], "discounts": {"codes": ["UCP10"]}}
    created = post(client, "/checkout-sessions", headers, body)
    assert created.status_code == 201
    answer = created.json()
    assert answer["ucp"]["version"] == late
    assert answer["ucp"]["capabilities"] == {
        "dev.ucp.shopping.checkout": [{"version": late}],
        "dev.ucp.shopping.discount": [{"version": late}],
    }
    # 2026-08-25 totals are signed (common/types/total.json: discount amounts are negative), as BCP's
    assert answer["totals"] == [
        {"type": "subtotal", "amount": 8580},
        {"type": "discount", "display_text": "Cupom UCP10", "amount": -858},
        {"type": "total", "amount": 7722},
    ]
    # the body is BCP's otherwise: the same checkout read over BCP REST has the same members
    bcp = client.get(f"/bcp/v1/checkout-sessions/{answer['id']}", headers={"BCP-Agent": headers["UCP-Agent"]}).json()
    assert {k: v for k, v in bcp.items() if k != "ucp"} == {k: v for k, v in answer.items() if k != "ucp"}


def test_operations_on_a_canceled_checkout_are_409_on_2026_01_11_and_200_elsewhere(
    client: Client, ucp_headers: dict[str, str], fake_platform: FakePlatform
) -> None:
    # UCP 2026-01-11: "businesses SHOULD send back an error indicating the operation is not allowed" (checkout.md),
    # HTTP status codes tell success from failure (checkout-rest.md "Status Codes": 409 Conflict); UCP 2026-04-08 on
    # and BCP §4.3 answer such a business outcome with 200 and the unchanged checkout
    line = {"line_items": [{"item": {"id": "SKU-CAFE-500G"}, "quantity": 1}]}
    checkout_id = post(client, "/checkout-sessions", ucp_headers, line).json()["id"]
    assert post(client, f"/checkout-sessions/{checkout_id}/cancel", ucp_headers, {}, key="c-1").status_code == 200
    refused = [
        post(client, f"/checkout-sessions/{checkout_id}/cancel", ucp_headers, {}, key="c-2"),
        put(client, f"/checkout-sessions/{checkout_id}", {**ucp_headers, "Idempotency-Key": "u-1"}, line),
        post(client, f"/checkout-sessions/{checkout_id}/complete", ucp_headers, CARD_COMPLETE, key="p-1"),
    ]
    assert [r.status_code for r in refused] == [409, 409, 409]
    for response in refused:
        body = fulfillment_resp.Checkout(**response.json())
        assert body.status == "canceled"
        assert [m.root.code for m in body.messages or [] if m.root.type == "error"] == ["invalid_checkout_status"]
    assert client.get(f"/ucp/v1/checkout-sessions/{checkout_id}", headers=ucp_headers).status_code == 200
    bcp = {"BCP-Agent": ucp_headers["UCP-Agent"], "Authorization": ucp_headers["Authorization"]}
    again = client.post(
        f"/bcp/v1/checkout-sessions/{checkout_id}/cancel",
        data="{}",
        content_type="application/json",
        headers={**bcp, "Idempotency-Key": "b-1"},
    )
    assert again.status_code == 200
    assert again.json()["messages"][0]["code"] == "invalid_checkout_status"
    late = {"UCP-Agent": f'profile="{fake_platform.serve_json("/late-cancel.json", ucp_profile_2026_08_25())}"'}
    late_id = post(client, "/checkout-sessions", late, line).json()["id"]
    assert post(client, f"/checkout-sessions/{late_id}/cancel", late, {}, key="l-1").status_code == 200
    late_again = post(client, f"/checkout-sessions/{late_id}/cancel", late, {}, key="l-2")
    assert late_again.status_code == 200
    assert late_again.json()["messages"][0]["code"] == "invalid_checkout_status"


def test_a_ucp_platform_cancels_its_order_through_the_order_actions_extension(
    client: Client, fake_platform: FakePlatform, settings: Any
) -> None:
    # given a UCP platform (API key) whose profile also names our order_actions extension (BCP name on both faces)
    settings.BCP_PIX_SANDBOX = True
    settings.PIX_SANDBOX_WEBHOOK_URL = ""
    catalog()
    profile = ucp_profile(fake_platform)
    profile["ucp"]["capabilities"].append({
        "name": "br.dev.bcp.shopping.order_actions", "version": "2026-07-28",
        "spec": "https://bcp.dev.br/draft/specification/order-actions",
        "schema": "https://bcp.dev.br/draft/schemas/shopping/order_actions.json", "extends": "dev.ucp.shopping.order",
    })  # fmt: skip
    url = fake_platform.serve_json("/ucp-actions.json", profile)
    headers = {
        "UCP-Agent": f'profile="{url}"',
        "Authorization": f"Bearer {platform_create(name='UCP', profile_url=url).api_key}",
    }
    # and its order, bought by card over /ucp/v1
    line = {"item": {"id": "SKU-CAFE-500G"}, "quantity": 1}
    buyer = {"email": "ana@example.com.br", "first_name": "Ana", "last_name": "Souza"}
    created = post(client, "/checkout-sessions", headers, {"line_items": [line], "buyer": buyer}, key="c1").json()
    state = {"line_items": [{**line, "id": created["line_items"][0]["id"]}], "buyer": buyer,
             "fulfillment": {"methods": [{"type": "shipping", "destinations": [SP]}]}}  # fmt: skip
    method = put(client, f"/checkout-sessions/{created['id']}", headers, state).json()["fulfillment"]["methods"][0]
    state["fulfillment"]["methods"][0] = pac_chosen(method, SP)
    put(client, f"/checkout-sessions/{created['id']}", headers, state)
    card = {"id": "i1", "handler_id": "gpay", "type": "card", "brand": "Visa", "last_digits": "1234",
            "credential": {"type": "PAYMENT_GATEWAY", "token": "success_token"}}  # fmt: skip
    done = post(client, f"/checkout-sessions/{created['id']}/complete", headers, {"payment_data": card}, key="c2")
    order_id = done.json()["order"]["id"]
    # when it cancels the order before shipping (and sends the same request again)
    first = post(client, f"/orders/{order_id}/cancel", headers, {"reason": "Cliente desistiu"}, key="cancel-1")
    again = post(client, f"/orders/{order_id}/cancel", headers, {"reason": "Cliente desistiu"}, key="cancel-1")
    # then the order comes back canceled in UCP's shape, once
    assert first.status_code == 200 and again.content == first.content
    canceled = Order(**first.json())
    assert canceled.id == order_id
    # 2026-01-11 derives a line's status from its quantities (0 of 0: "fulfilled"); the cancellation is the adjustment
    assert [(li.quantity.total, li.status) for li in canceled.line_items] == [(0, "fulfilled")]
    assert {a.type for a in canceled.adjustments} >= {"cancellation"}
    assert first.json()["order_actions"]["cancel"]["available"] is False
    # and a return of a canceled order is refused with the extension's error, in Portuguese
    refused = post(client, f"/orders/{order_id}/returns", headers,
                   {"reason_code": "defective", "line_items": [{"id": canceled.line_items[0].id, "quantity": 1}]},
                   key="return-1").json()  # fmt: skip
    assert refused["ucp"]["status"] == "error"
    assert refused["messages"][0]["content"]


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_ucp_card_complete_keeps_its_key_for_the_ucp_answer(client: Client, ucp_headers: dict[str, str]) -> None:
    """Issue 34: BCP REST's complete stores its answer in the order's transaction; UCP's face reshapes the answer
    after the operation, so its key must not hold the BCP body meanwhile (a duplicate then would get BCP's shape).
    Read when the order's commit runs its outbox task: still in progress, never another body than the one sent."""
    created = post(
        client,
        "/checkout-sessions",
        ucp_headers,
        {
            "currency": "BRL",
            "line_items": [{"item": {"id": "SKU-CAFE-500G"}, "quantity": 1}],
            "buyer": {"email": "ana@example.com.br", "first_name": "Ana", "last_name": "Souza"},
        },
    ).json()
    line = {"id": created["line_items"][0]["id"], "item": {"id": "SKU-CAFE-500G"}, "quantity": 1}
    state: dict[str, Any] = {
        "line_items": [line],
        "buyer": {"email": "ana@example.com.br", "first_name": "Ana", "last_name": "Souza"},
        "fulfillment": {"methods": [{"type": "shipping", "destinations": [SP]}]},
    }
    body = put(client, f"/checkout-sessions/{created['id']}", ucp_headers, state).json()
    state["fulfillment"]["methods"][0] = pac_chosen(body["fulfillment"]["methods"][0], SP)
    ready = put(client, f"/checkout-sessions/{created['id']}", ucp_headers, state).json()
    assert ready["status"] == "ready_for_complete", ready.get("messages")
    seen: list[tuple[str, str | None]] = []

    def at_commit(**_: Any) -> None:  # the placed order's outbox task, run eagerly on the order's commit
        if not seen:
            seen.extend(IdempotencyRecord.objects.filter(key="k-ucp-card").values_list("state", "response_text"))

    task_prerun.connect(at_commit, weak=False)
    try:
        card = {"id": "i1", "handler_id": "gpay", "type": "card", "brand": "Visa", "last_digits": "1234",
                "credential": {"type": "PAYMENT_GATEWAY", "token": "success_token"}}  # fmt: skip
        done = post(
            client, f"/checkout-sessions/{created['id']}/complete", ucp_headers, {"payment_data": card}, "k-ucp-card"
        )
    finally:
        task_prerun.disconnect(at_commit)
    assert done.status_code == 200 and done.json()["status"] == "completed", done.content
    ((state_then, text_then),) = seen
    assert state_then == IdempotencyRecord.State.IN_PROGRESS or text_then == done.content.decode()
    replay = post(
        client, f"/checkout-sessions/{created['id']}/complete", ucp_headers, {"payment_data": card}, "k-ucp-card"
    )
    assert replay.content == done.content
