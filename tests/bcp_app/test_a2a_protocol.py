"""A2A transport against a live uvicorn: Agent Card, headers, errors, contexts and messageId replays.

Seed 004; BCP.md §13.3; checklist BCP-A2A-01…08. Requests are the seed's, sent with raw httpx and with
the official a2a-sdk client.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

import httpx
import pytest
from a2a.client import A2ACardResolver
from a2a.types import Role

from tests.bcp_app.test_a2a_helpers import (
    EXTENSION,
    SEED_HEADERS,
    SEED_PROFILE,
    LiveServer,
    cache_profile,
    live_fixture,  # noqa: F401 (fixture "live")
    platform_profile,
    rpc,
    sdk_send,
    send_message,
    server_fixture,  # noqa: F401 (fixture "server")
)

pytestmark = [pytest.mark.postgres, pytest.mark.e2e]


def error_of(body: dict[str, Any]) -> tuple[int, str, dict[str, Any]]:
    error = body["error"]
    return error["code"], error["message"], error["data"][0]["metadata"]


def test_agent_card_is_the_seed_card_bcp_a2a_01(server: LiveServer):
    """The seed's card, "Example business agent" named as the store is in "Dados da loja" (not SHOP_NAME)."""
    from shop.models import StoreSettings

    StoreSettings.objects.create(trade_name="Torrefação da Serra")
    response = httpx.get(f"{server.base_url}/.well-known/agent-card.json", timeout=10)

    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    card = response.json()
    assert list(card) == [
        "name",
        "description",
        "version",
        "supportedInterfaces",
        "capabilities",
        "securitySchemes",
        "securityRequirements",
        "defaultInputModes",
        "defaultOutputModes",
        "skills",
    ]
    assert card == {
        "name": "Torrefação da Serra business agent",
        "description": "Business agent with BCP checkout",
        "version": "1.0.0",
        "supportedInterfaces": [
            {"url": f"{server.base_url}/bcp/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
        ],
        "capabilities": {
            # The seed card's members; a Pix complete answers a Task (issue 35): SubscribeToTask and pushes.
            "streaming": True,
            "pushNotifications": True,
            "extensions": [
                {
                    "uri": "https://bcp.dev.br/draft/specification/reference",
                    "description": "Brazilian Commerce Protocol structured types",
                    "required": False,
                    "params": {
                        "capabilities": {
                            "br.dev.bcp.shopping.checkout": [{"version": "2026-07-28"}],
                            "br.dev.bcp.shopping.fulfillment": [
                                {"version": "2026-07-28", "extends": "br.dev.bcp.shopping.checkout"}
                            ],
                            "br.dev.bcp.shopping.cart": [{"version": "2026-07-28"}],
                            "br.dev.bcp.shopping.discount": [
                                {
                                    "version": "2026-07-28",
                                    "extends": ["br.dev.bcp.shopping.checkout", "br.dev.bcp.shopping.cart"],
                                }
                            ],
                            "br.dev.bcp.shopping.buyer_consent": [
                                {
                                    "version": "2026-07-28",
                                    "extends": ["br.dev.bcp.shopping.checkout", "br.dev.bcp.shopping.cart"],
                                }
                            ],
                            # Get Order (fiscal documents) and the order actions are A2A intents too
                            "br.dev.bcp.shopping.order": [{"version": "2026-07-28"}],
                            "br.dev.bcp.shopping.fiscal_document": [
                                {"version": "2026-07-28", "extends": "br.dev.bcp.shopping.order"}
                            ],
                            "br.dev.bcp.shopping.order_actions": [
                                {"version": "2026-07-28", "extends": "br.dev.bcp.shopping.order"}
                            ],
                            "br.dev.bcp.shopping.subscription": [
                                {
                                    "version": "2026-07-28",
                                    "extends": ["br.dev.bcp.shopping.checkout", "br.dev.bcp.shopping.order"],
                                }
                            ],
                        }
                    },
                },
                {  # UCP's A2A binding (checkout-a2a.md at v2026-01-11): 2026-01-11's names and list form
                    "uri": "https://ucp.dev/specification/reference?v=2026-01-11",
                    "description": "Business agent supporting UCP (2026-01-11), on the same engine as BCP",
                    "required": False,
                    "params": {
                        "capabilities": [
                            {"name": "dev.ucp.shopping.checkout", "version": "2026-01-11"},
                            {
                                "name": "dev.ucp.shopping.fulfillment",
                                "version": "2026-01-11",
                                "extends": "dev.ucp.shopping.checkout",
                            },
                            {
                                "name": "dev.ucp.shopping.discount",
                                "version": "2026-01-11",
                                "extends": "dev.ucp.shopping.checkout",
                            },
                            {
                                "name": "dev.ucp.shopping.buyer_consent",
                                "version": "2026-01-11",
                                "extends": "dev.ucp.shopping.checkout",
                            },
                            {"name": "dev.ucp.shopping.order", "version": "2026-01-11"},
                            {
                                "name": "br.dev.bcp.shopping.fiscal_document",
                                "version": "2026-07-28",
                                "extends": "dev.ucp.shopping.order",
                            },
                            {
                                "name": "br.dev.bcp.shopping.order_actions",
                                "version": "2026-07-28",
                                "extends": "dev.ucp.shopping.order",
                            },
                            {
                                "name": "br.dev.bcp.shopping.subscription",
                                "version": "2026-07-28",
                                "extends": "dev.ucp.shopping.checkout",
                            },
                        ]
                    },
                },
            ],
        },
        # A2A 1.0: how the shop authenticates a platform (its API key, bearer or X-API-Key), or nobody (`{}`)
        "securitySchemes": card["securitySchemes"],  # their contents: test_agent_card_declares_the_authentication…
        "securityRequirements": [{"schemes": {"bearer": {}}}, {"schemes": {"apiKey": {}}}, {}],
        "defaultInputModes": ["text/plain", "application/json"],
        "defaultOutputModes": ["text/plain", "application/json"],
        "skills": [
            {
                "id": "bcp-checkout",
                "name": "BCP checkout",
                "description": "Creates, updates, and completes BCP checkout sessions",
                "tags": ["commerce", "checkout", "bcp"],
            },
            {
                "id": "bcp-cart",
                "name": "BCP cart",
                "description": "Creates, updates and cancels carts (create_cart, get_cart, update_cart, cancel_cart) "
                "and turns one into a checkout (create_checkout)",
                "tags": ["commerce", "cart", "bcp"],
            },
            {
                "id": "bcp-subscription",
                "name": "BCP subscription",
                "description": "Subscribes a buyer to a plan paid by Pix Automático, reads and cancels it "
                "(create_subscription, get_subscription, cancel_subscription)",
                "tags": ["commerce", "subscription", "bcp"],
            },
            {
                "id": "policies-search",
                "name": "Store policies",
                "description": "Answers questions about returns, shipping, privacy and terms (policies.search)",
                "tags": ["commerce", "policies", "bcp"],
                "examples": ["qual é a política de trocas?"],
            },
            {
                "id": "bcp-order-actions",
                "name": "Cancel and return orders",
                "description": "Cancels an order before it ships (cancel_order) and requests a return of delivered "
                "items within the store's window (request_return); extension br.dev.bcp.shopping.order_actions",
                "tags": ["commerce", "order", "returns", "bcp"],
            },
        ],
    }


def test_agent_card_follows_a_rename_in_dados_da_loja_bcp_a2a_01(server: LiveServer):
    """Closing note 45: the card said settings.SHOP_NAME ("Loja Exemplo business agent") after the merchant renamed
    the store in the admin. The name comes from the store settings each process keeps under their version token:
    a save reaches the card on its next request, with no restart."""
    from shop.models import StoreSettings

    url = f"{server.base_url}/.well-known/agent-card.json"
    before = httpx.get(url, timeout=10).json()["name"]  # no settings row yet: the default name (SHOP_NAME)
    store = StoreSettings.objects.create(trade_name="Ateliê Ipê")
    created = httpx.get(url, timeout=10).json()["name"]
    store.trade_name = "Ateliê Ipê & Filhos"
    store.save()
    renamed = httpx.get(url, timeout=10).json()["name"]

    assert (before, created, renamed) == (
        "Loja Exemplo business agent",
        "Ateliê Ipê business agent",
        "Ateliê Ipê & Filhos business agent",
    )


def test_agent_card_lists_what_the_profile_offers_over_a2a_bcp_a2a_01(server: LiveServer):
    """QA walk: the card's BCP extension listed checkout and cart only, while A2A also serves Get Order (with
    its fiscal documents), cancel_order and request_return. It comes from the profile's registry: every
    capability of `/.well-known/bcp` except those no A2A message serves (catalog search and lookup are REST/MCP
    operations; the feed and permalinks are plain GETs)."""
    not_on_a2a = {
        "br.dev.bcp.shopping.catalog.search",
        "br.dev.bcp.shopping.catalog.lookup",
        "br.dev.bcp.shopping.catalog.feed",
        "br.dev.bcp.shopping.permalink",
    }
    profile = httpx.get(f"{server.base_url}/.well-known/bcp", timeout=10).json()["ucp"]["capabilities"]
    card = httpx.get(f"{server.base_url}/.well-known/agent-card.json", timeout=10).json()
    [bcp] = [e for e in card["capabilities"]["extensions"] if e["uri"] == EXTENSION]

    assert not_on_a2a <= set(profile)  # the names above are the profile's (a rename would fail here)
    assert bcp["params"]["capabilities"] == {
        name: [{k: v for k, v in entry.items() if k in ("version", "extends")} for entry in entries]
        for name, entries in profile.items()
        if name not in not_on_a2a
    }
    assert {"br.dev.bcp.shopping.order", "br.dev.bcp.shopping.order_actions"} <= set(bcp["params"]["capabilities"])


def test_sdk_card_resolver_reads_the_card(server: LiveServer):
    async def resolve() -> Any:
        async with httpx.AsyncClient(timeout=10) as http:
            return await A2ACardResolver(http, server.base_url).get_agent_card()

    card = asyncio.run(resolve())

    assert card.supported_interfaces[0].url == server.a2a_url
    assert card.supported_interfaces[0].protocol_binding == "JSONRPC"
    assert card.supported_interfaces[0].protocol_version == "1.0"
    assert card.capabilities.extensions[0].uri == EXTENSION
    assert [skill.id for skill in card.skills] == [
        "bcp-checkout",
        "bcp-cart",
        "bcp-subscription",
        "policies-search",
        "bcp-order-actions",
    ]


def test_bcp_profile_advertises_the_agent_card(server: LiveServer):
    """BCP-DISC-03: the a2a service's endpoint is the Agent Card URL."""
    profile = httpx.get(f"{server.base_url}/.well-known/bcp", timeout=10).json()

    services = profile["ucp"]["services"]["br.dev.bcp.shopping"]
    # (`config.access`: the agent trust tiers, issue 35, tests/bcp_app/test_trust_tiers.py)
    assert {
        "version": "2026-07-28",
        "spec": "https://bcp.dev.br/draft/specification/overview",
        "transport": "a2a",
        "endpoint": f"{server.base_url}/.well-known/agent-card.json",
    } in [{k: v for k, v in service.items() if k != "config"} for service in services]


# (A2A-Extensions activating neither BCP's nor UCP's extension is served as BCP: the card says `required: false`,
# test_a_request_activating_no_extension_is_served_as_bcp_as_the_card_says_bcp_a2a_01)
@pytest.mark.parametrize(("drop", "override"), [("A2A-Version", {}), (None, {"A2A-Version": "0.3"}),
                                                (None, {"A2A-Version": "1.1"})])  # fmt: skip
def test_a2a_version_header_is_required_bcp_a2a_03(server: LiveServer, drop: str | None, override: dict[str, str]):
    headers = {k: v for k, v in SEED_HEADERS.items() if k != drop} | override

    body = rpc(server.a2a_url, send_message([{"text": "carrinho"}], request_id=9), headers)

    assert body["id"] == 9
    assert body["error"]["code"] == -32009
    assert body["error"]["data"][0]["reason"] == "VERSION_NOT_SUPPORTED"
    assert "A2A-Version" in body["error"]["message"]


@pytest.mark.parametrize(
    "agent_header",
    [None, "", 'profile="http://agent.example/profile.json"', "profile=not-a-string", 'other="x"'],
)
def test_missing_or_bad_bcp_agent_is_invalid_profile_url_bcp_neg_01(server: LiveServer, agent_header: str | None):
    headers = {k: v for k, v in SEED_HEADERS.items() if k != "BCP-Agent"}
    if agent_header is not None:
        headers["BCP-Agent"] = agent_header

    code, message, metadata = error_of(rpc(server.a2a_url, send_message([{"text": "carrinho"}]), headers))

    assert code == -32600
    assert metadata["code"] == "invalid_profile_url"
    assert message == metadata["content"]


def test_unsupported_platform_version_bcp_neg_04(server: LiveServer):
    profile = platform_profile()
    profile["ucp"]["version"] = "2025-01-01"
    other = "https://agent.example/old-profile.json"
    cache_profile_unvalidated(other, profile)

    code, _message, metadata = error_of(
        rpc(server.a2a_url, send_message([{"text": "carrinho"}]), {**SEED_HEADERS, "BCP-Agent": f'profile="{other}"'})
    )

    assert (code, metadata["code"]) == (-32600, "version_unsupported")


def cache_profile_unvalidated(url: str, profile: dict[str, Any]) -> None:
    from datetime import timedelta

    from django.utils import timezone

    from bcp_app.models import ProfileCacheEntry
    from bcp_app.service.negotiation import url_hash

    now = timezone.now()
    ProfileCacheEntry.objects.create(
        url_hash=url_hash(url), url=url, body=profile, fetched_at=now, expires_at=now + timedelta(hours=1)
    )


def test_a_request_activating_no_extension_is_served_as_bcp_as_the_card_says_bcp_a2a_01(server: LiveServer):
    """BCP §13.3 / seed 004: the card declares the BCP extension `required: false`, yet a request activating neither
    BCP's nor UCP's extension was refused (ExtensionSupportRequiredError). It is served, as BCP (the agent header
    still names the platform, BCP-A2A-03)."""
    headers = {k: v for k, v in SEED_HEADERS.items() if k != "A2A-Extensions"}

    body = rpc(server.a2a_url, send_message([{"text": "olá, tudo bem?"}]), headers=headers)

    assert "error" not in body, body
    assert body["result"]["message"]["role"] == "ROLE_AGENT"


def test_agent_card_declares_the_authentication_the_shop_uses(server: LiveServer, settings: Any):
    """The card listed no securitySchemes while the shop reads a platform's API key (Authorization: Bearer or
    X-API-Key, BCP §18 (4)); anonymous agents are allowed only while BCP_ALLOW_ANONYMOUS is on."""
    url = f"{server.base_url}/.well-known/agent-card.json"
    open_card = httpx.get(url, timeout=10).json()
    settings.BCP_ALLOW_ANONYMOUS = False
    closed_card = httpx.get(url, timeout=10).json()

    assert {name: {kind: {k: v for k, v in scheme.items() if k != "description"} for kind, scheme in entry.items()}
            for name, entry in open_card["securitySchemes"].items()} == {
        "bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer"}},
        "apiKey": {"apiKeySecurityScheme": {"location": "header", "name": "X-API-Key"}},
    }  # fmt: skip
    assert open_card["securityRequirements"] == [{"schemes": {"bearer": {}}}, {"schemes": {"apiKey": {}}}, {}]
    assert closed_card["securityRequirements"] == [{"schemes": {"bearer": {}}}, {"schemes": {"apiKey": {}}}]


def test_unrecognised_text_gets_help_and_a_new_shop_context_bcp_a2a_04(server: LiveServer):
    from bcp_app.models import A2AContext

    body = rpc(server.a2a_url, send_message([{"text": "olá, tudo bem?"}], request_id=5))

    message = body["result"]["message"]
    assert body["id"] == 5
    assert list(body["result"]) == ["message"]
    assert list(message) == ["contextId", "messageId", "parts", "role", "extensions"]
    assert message["role"] == "ROLE_AGENT"
    assert message["extensions"] == [EXTENSION]
    assert message["parts"][0]["text"].startswith("Não entendi.")
    assert uuid.UUID(message["contextId"])
    assert list(A2AContext.objects.values_list("context_id", "checkout_id")) == [(message["contextId"], "")]


def test_sdk_client_round_trip(server: LiveServer):
    reply = sdk_send(server.base_url, [{"text": "hello there"}])

    assert reply.role == Role.ROLE_AGENT
    assert list(reply.extensions) == [EXTENSION]
    assert reply.parts[0].text.startswith("Sorry, I did not understand.")


def test_repeated_message_id_returns_the_original_reply_bcp_a2a_07(server: LiveServer):
    from bcp_app.models import A2AContext

    request = send_message([{"text": "olá"}], message_id="69da8f87-991b-479e-80dc-ed92fcb57cbe")

    first = httpx.post(server.a2a_url, content=json.dumps(request), headers=SEED_HEADERS, timeout=30)
    second = httpx.post(server.a2a_url, content=json.dumps({**request, "id": 2}), headers=SEED_HEADERS, timeout=30)

    # Byte for byte, apart from the JSON-RPC id.
    assert second.text == first.text.replace('"id":1,', '"id":2,')
    second = second.json()
    assert second["id"] == 2
    assert A2AContext.objects.count() == 1


def test_same_message_id_with_another_message_is_a_conflict_bcp_idem_05(server: LiveServer):
    """BCP-A2A-07: the messageId is the A2A agent's only key; the conflict names it, not an "idempotency key" the
    agent never sent (QA walk). BCP-IDEM-05 / §5.4: the conflict is JSON-RPC -32000 as on MCP, not -32602 (the
    params are valid; the agent must send another messageId), since A2A defines no code of its own for it."""
    rpc(server.a2a_url, send_message([{"text": "olá"}], message_id="m-1"))

    code, message, metadata = error_of(rpc(server.a2a_url, send_message([{"text": "oi"}], message_id="m-1")))

    assert (code, metadata["code"]) == (-32000, "idempotency_conflict")
    said = "Este messageId já foi usado com outra mensagem; envie a nova mensagem com outro messageId."
    assert (message, metadata["content"]) == (said, said)


def test_message_ids_are_scoped_per_caller(server: LiveServer):
    other = "https://other-agent.example/profile.json"
    cache_profile(other, platform_profile())

    first = rpc(server.a2a_url, send_message([{"text": "olá"}], message_id="shared-id"))
    second = rpc(
        server.a2a_url,
        send_message([{"text": "oi"}], message_id="shared-id"),
        {**SEED_HEADERS, "BCP-Agent": f'profile="{other}"'},
    )

    assert second["result"]["message"]["contextId"] != first["result"]["message"]["contextId"]


def test_context_of_another_caller_is_refused(server: LiveServer):
    other = "https://other-agent.example/profile.json"
    cache_profile(other, platform_profile())
    context_id = rpc(server.a2a_url, send_message([{"text": "olá"}]))["result"]["message"]["contextId"]

    code, _message, metadata = error_of(
        rpc(
            server.a2a_url,
            send_message([{"text": "carrinho"}], context_id=context_id),
            {**SEED_HEADERS, "BCP-Agent": f'profile="{other}"'},
        )
    )

    assert (code, metadata["code"]) == (-32000, "forbidden")  # BCP §5.4, as on MCP


def test_unknown_action_names_the_vocabulary(server: LiveServer):
    code, message, metadata = error_of(
        rpc(server.a2a_url, send_message([{"data": {"action": "buy_now"}, "mediaType": "application/json"}]))
    )

    assert code == -32602
    assert metadata["code"] == "invalid_request"
    assert "add_to_checkout" in message


def test_task_id_of_unknown_task_is_rejected_bcp_a2a_08(server: LiveServer):
    request = send_message([{"text": "carrinho"}])
    request["params"]["message"]["taskId"] = "task-that-does-not-exist"

    body = rpc(server.a2a_url, request)

    assert body["error"]["code"] == -32001


def test_sdk_refusals_are_said_in_portuguese_naming_what_is_wrong_bcp_a2a_02(server: LiveServer):
    """Agent QA walk: a message as ROLE_AGENT was taken as the user's; an unknown task id and empty `parts` were
    answered in the SDK's English ("Task not found", "Validation failed")."""
    as_agent = send_message([{"text": "carrinho"}])
    as_agent["params"]["message"]["role"] = "ROLE_AGENT"
    empty = send_message([])
    get_task = {"jsonrpc": "2.0", "id": 4, "method": "GetTask", "params": {"id": "task-que-nao-existe"}}

    refused, missing, unknown = (rpc(server.a2a_url, body)["error"] for body in (as_agent, empty, get_task))

    assert refused["code"] == -32602
    assert refused["message"].startswith("message.role inválido: uma mensagem enviada ao agente da loja usa ROLE_USER")
    assert (missing["code"], missing["message"]) == (
        -32602,
        "Mensagem incompleta: message.parts: informe ao menos um item.",
    )
    assert (unknown["code"], unknown["message"]) == (-32001, "Tarefa task-que-nao-existe não encontrada.")


def test_bad_json_and_unknown_method_are_json_rpc_errors(server: LiveServer):
    bad = httpx.post(server.a2a_url, content=b"{not json", headers=SEED_HEADERS, timeout=10).json()
    unknown = rpc(server.a2a_url, {"jsonrpc": "2.0", "id": 3, "method": "tasks/teleport", "params": {}})

    assert bad["error"]["code"] == -32700
    assert unknown["error"]["code"] == -32601


def signed_request(server: LiveServer, key: Any, body: bytes, *, kid: str = "plat-1") -> dict[str, str]:
    from bcp_app.protocol.signatures import HttpMessage, content_digest, sign_message

    headers = {**SEED_HEADERS, "Content-Digest": content_digest(body)}
    message = HttpMessage(method="POST", authority=f"127.0.0.1:{server.port}", path="/bcp/a2a", headers=headers)
    components = ("@method", "@authority", "@path", "content-digest", "content-type", "bcp-agent")
    return {**headers, **sign_message(message, components, key=key, keyid=kid)}


def test_rfc9421_signed_message_is_verified_with_the_platform_keys_bcp_sig_01(server: LiveServer):
    from cryptography.hazmat.primitives.asymmetric import ec

    from bcp_app.protocol import ap2

    key = ec.generate_private_key(ec.SECP256R1())
    cache_profile(SEED_PROFILE, platform_profile(keys=[ap2.public_jwk(key, kid="plat-1")]))
    body = json.dumps(send_message([{"text": "olá"}])).encode()

    accepted = httpx.post(server.a2a_url, content=body, headers=signed_request(server, key, body), timeout=30).json()
    tampered = httpx.post(
        server.a2a_url, content=body.replace(b"ol\\u00e1", b"oi"), headers=signed_request(server, key, body), timeout=30
    ).json()
    wrong_key = httpx.post(
        server.a2a_url,
        content=body,
        headers=signed_request(server, ec.generate_private_key(ec.SECP256R1()), body),
        timeout=30,
    ).json()

    assert "result" in accepted
    assert error_of(tampered)[2]["code"] == "digest_mismatch"
    assert error_of(wrong_key)[2]["code"] == "signature_invalid"
