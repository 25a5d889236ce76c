"""AP2 over A2A against a live uvicorn (seed 004 "AP2-based completion"; PIX.md §7; BCP-PAY-09).

Every checkout reply carries `ap2.merchant_authorization`, verified here with joserfc and the shop key
published in `/.well-known/bcp`; completion verifies the platform's checkout mandate before any payment.
"""

from __future__ import annotations

import base64
import copy
import json
from typing import Any

import httpx
import pytest
from joserfc import jws
from joserfc.errors import BadSignatureError
from joserfc.jwk import ECKey

from bcp_app.protocol import ap2
from tests.bcp_app.test_a2a_checkout import BUYER, PIX_INSTRUMENT, SEED_COMPLETE, SEED_CONTEXT, SEED_STRUCTURED
from tests.bcp_app.test_a2a_helpers import (
    EXTENSION,
    PIX_HANDLERS,
    SEED_PROFILE,
    LiveServer,
    build_checkout_mandate,
    cache_profile,
    checkout_of,
    data,
    ec_key,
    live_fixture,  # noqa: F401 (fixture "live")
    make_product,
    platform_profile,
    public_jwk,
    rpc,
    send_message,
    server_fixture,  # noqa: F401 (fixture "server")
)

pytestmark = [pytest.mark.postgres, pytest.mark.e2e]

PLATFORM_KID = "agent-2026"
SEED_AP2_COMPLETE = {
    "jsonrpc": "2.0",
    "id": 4,
    "method": "SendMessage",
    "params": {
        "message": {
            "role": "ROLE_USER",
            "parts": [
                {"data": {"action": "complete_checkout"}, "mediaType": "application/json"},
                {
                    "data": {
                        "a2a.bcp.checkout.payment": {
                            "instruments": [
                                {
                                    "id": "instr_1",
                                    "handler_id": "gpay",
                                    "type": "card",
                                    "selected": True,
                                    "billing_address": {
                                        "street_address": "Avenida Paulista, 1000",
                                        "address_locality": "São Paulo",
                                        "address_region": "SP",
                                        "address_country": "BR",
                                        "postal_code": "01310-100",
                                    },
                                    "credential": {"type": "PAYMENT_GATEWAY", "token": "examplePaymentMethodToken"},
                                }
                            ]
                        },
                        "ap2": {"checkout_mandate": "eyJhbGciOiJFUzI1NiIsInR5cCI6InZjK3NkLWp3dCJ9.e30.c2lnbmF0dXJl"},
                    },
                    "mediaType": "application/json",
                },
            ],
            "messageId": "18746922-563a-4c60-bc22-3c10a8629139",
            "contextId": SEED_CONTEXT,
            "extensions": [EXTENSION],
        }
    },
}


@pytest.fixture
def platform_keys() -> dict[str, ECKey]:
    return {"platform": ec_key(), "holder": ec_key()}


@pytest.fixture
def ap2_server(server: LiveServer, settings: Any, platform_keys: dict[str, ECKey]) -> LiveServer:
    settings.BCP_AP2_ENABLED = True
    cache_profile(
        SEED_PROFILE,
        platform_profile(ap2=True, handlers=PIX_HANDLERS, keys=[public_jwk(platform_keys["platform"], PLATFORM_KID)]),
    )
    make_product("Pixel 10 Pro", "PIXEL-10-PRO", 599900)
    return server


def shop_key(server: LiveServer) -> ECKey:
    """The shop's public key as a platform finds it: `keys[]` of `/.well-known/bcp`."""
    jwk = httpx.get(f"{server.base_url}/.well-known/bcp", timeout=10).json()["keys"][0]
    return ECKey.import_key({k: jwk[k] for k in ("kty", "crv", "x", "y")})


def ready_with_pix(server: LiveServer) -> dict[str, Any]:
    rpc(server.a2a_url, SEED_STRUCTURED)
    body = rpc(
        server.a2a_url,
        send_message(
            [
                data({"action": "update_checkout", "buyer": BUYER}),
                data({"a2a.bcp.checkout.payment": {"instruments": [PIX_INSTRUMENT]}}),
            ],
            context_id=SEED_CONTEXT,
        ),
    )
    return checkout_of(body)


def test_every_checkout_reply_is_signed_and_verifies_with_joserfc_bcp_pay_09(ap2_server: LiveServer):
    checkout = checkout_of(rpc(ap2_server.a2a_url, SEED_STRUCTURED))

    token = checkout["ap2"]["merchant_authorization"]
    header, payload, _signature = token.split(".")
    assert payload == ""
    assert json.loads(base64.urlsafe_b64decode(header + "==")) == {"alg": "ES256", "kid": "loja-2026-07"}
    assert "br.dev.bcp.shopping.ap2_mandate" in checkout["ucp"]["capabilities"]
    signed_payload = ap2.jcs({k: v for k, v in checkout.items() if k != "ap2"})
    assert jws.deserialize_compact(token, shop_key(ap2_server), payload=signed_payload).payload == signed_payload

    tampered = copy.deepcopy(checkout)
    tampered["totals"][-1]["amount"] = 1
    with pytest.raises(BadSignatureError):
        jws.deserialize_compact(token, shop_key(ap2_server), payload=ap2.checkout_payload(tampered))


def test_seed_ap2_complete_with_a_bad_mandate_fails_without_order(ap2_server: LiveServer):
    from orders.models import Order
    from payments.models import PixCharge

    ready = ready_with_pix(ap2_server)

    refused = checkout_of(rpc(ap2_server.a2a_url, SEED_AP2_COMPLETE))

    assert refused["status"] == "ready_for_complete"
    assert "order" not in refused
    assert refused["messages"][-1] == {
        "type": "error",
        "code": "mandate_invalid_signature",
        "severity": "recoverable",
        "path": "$.ap2.checkout_mandate",
        "content": "O mandato precisa ser um SD-JWT com KB-JWT ('~' final).",
    }
    shop_jwk = ap2.public_jwk(shop_key(ap2_server).public_key, kid="loja-2026-07")
    assert ap2.verify_merchant_authorization(refused, [shop_jwk])["kid"] == "loja-2026-07"
    assert Order.objects.count() == 0
    assert PixCharge.objects.get(txid=ready["payment"]["instruments"][0]["pix"]["txid"]).status == "active"


def test_complete_without_mandate_is_mandate_required(ap2_server: LiveServer):
    ready_with_pix(ap2_server)

    refused = checkout_of(rpc(ap2_server.a2a_url, SEED_COMPLETE))

    assert refused["status"] == "ready_for_complete"
    assert refused["messages"][-1]["code"] == "mandate_required"


def mandate(server: LiveServer, signed: dict[str, Any], keys: dict[str, ECKey]) -> str:
    return build_checkout_mandate(
        signed_checkout=signed,
        platform_key=keys["platform"],
        platform_kid=PLATFORM_KID,
        holder_key=keys["holder"],
        audience=f"{server.base_url}/.well-known/bcp",
    )


def complete_with(mandate_text: str) -> dict[str, Any]:
    request = copy.deepcopy(SEED_COMPLETE)
    request["params"]["message"]["messageId"] = f"complete-{hash(mandate_text)}"
    request["params"]["message"]["parts"][1]["data"]["ap2"] = {"checkout_mandate": mandate_text}
    return request


def test_valid_mandate_lets_the_pix_completion_proceed(ap2_server: LiveServer, platform_keys: dict[str, ECKey]):
    ready = ready_with_pix(ap2_server)

    completing = checkout_of(rpc(ap2_server.a2a_url, complete_with(mandate(ap2_server, ready, platform_keys))))

    assert completing["status"] == "complete_in_progress"
    assert not [m for m in completing.get("messages", []) if m["type"] == "error"]


def test_mandate_for_an_earlier_checkout_state_is_scope_mismatch(
    ap2_server: LiveServer, platform_keys: dict[str, ECKey]
):
    earlier = checkout_of(rpc(ap2_server.a2a_url, SEED_STRUCTURED))  # before the buyer and the Pix charge
    ready_with_pix(ap2_server)

    refused = checkout_of(rpc(ap2_server.a2a_url, complete_with(mandate(ap2_server, earlier, platform_keys))))

    assert refused["status"] == "ready_for_complete"
    assert refused["messages"][-1]["code"] == "mandate_scope_mismatch"


def test_agent_card_and_profile_advertise_ap2_when_enabled(ap2_server: LiveServer):
    card = httpx.get(f"{ap2_server.base_url}/.well-known/agent-card.json", timeout=10).json()
    profile = httpx.get(f"{ap2_server.base_url}/.well-known/bcp", timeout=10).json()

    capabilities = card["capabilities"]["extensions"][0]["params"]["capabilities"]
    assert capabilities["br.dev.bcp.shopping.ap2_mandate"] == [
        {"version": "2026-07-28", "extends": "br.dev.bcp.shopping.checkout"}
    ]
    assert "br.dev.bcp.shopping.ap2_mandate" in profile["ucp"]["capabilities"]
