"""Policies (UCP #572, BCP §4.3 links): `policies[]` on checkout, order and catalog responses from the store
settings, the storefront policy pages, and `policies.search` ("qual é a política de trocas?") over MCP (official
`mcp` client) and A2A (official `a2a-sdk` client).

BCP-CHK-21 (links include terms and privacy), BCP-DISC-07 (every transport), BCP-MCP-02 (described tool).
"""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from bcp_app.service.policies import policies_json, policy_models
from shop.models import StoreSettings
from shop.store.policies import policies_search, store_policies
from tests.bcp_app import test_mcp_helpers
from tests.bcp_app.bcp_fixtures import agent
from tests.bcp_app.rest_helpers import call, catalog, create
from tests.bcp_app.schema_check import errors

PUBLIC = "https://loja.example.com.br"
RETURN = "br.dev.bcp.shopping.policy.return"
TYPES = [
    "br.dev.bcp.shopping.policy.terms",
    "br.dev.bcp.shopping.policy.privacy",
    RETURN,
    "br.dev.bcp.shopping.policy.shipping",
]
CDC = "Você pode desistir da compra em até 7 dias do recebimento"


@pytest.fixture
def rest(bcp_settings: Any, fake_platform: Any, db: None) -> dict[str, str]:
    catalog()
    return agent(fake_platform.publish())


def assert_policies(policies: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    assert [p["type"] for p in policies] == TYPES
    for policy in policies:
        assert errors(policy, "common/types/policy.json") == [], policy
        assert policy["description"]["plain"]
        assert policy["url"].startswith(PUBLIC)
    return {p["type"]: p for p in policies}


def test_checkout_carries_the_four_policies_and_links_bcp_chk_21(client: Client, rest: dict[str, str]) -> None:
    body = create(client, rest).json()

    policies = assert_policies(body["policies"])
    returns = policies[RETURN]
    assert returns["window"] == {"days": 7, "anchor": "delivered"}
    assert returns["supported_resolutions"] == ["original_payment_method", "store_credit"]
    assert returns["url"] == f"{PUBLIC}/trocas-e-devolucoes"
    assert returns["description"]["plain"].startswith(CDC)
    assert policies["br.dev.bcp.shopping.policy.terms"]["url"] == f"{PUBLIC}/termos"
    assert "Compras feitas por agentes" in policies["br.dev.bcp.shopping.policy.terms"]["description"]["plain"]
    assert "LGPD" in policies["br.dev.bcp.shopping.policy.privacy"]["description"]["plain"]
    assert [(link["type"], link["url"]) for link in body["links"]] == [
        ("terms_of_service", f"{PUBLIC}/termos"),
        ("privacy_policy", f"{PUBLIC}/privacidade"),
        ("refund_policy", f"{PUBLIC}/trocas-e-devolucoes"),
        ("shipping_policy", f"{PUBLIC}/entrega"),
    ]


def test_an_english_checkout_has_english_link_titles_bcp_chk_21(client: Client, rest: dict[str, str]) -> None:
    """BCP-CHK-21 links and BCP §5.1 (content in the negotiated language): `links[].title` in the checkout's
    language, the same titles as its `policies[]`."""
    english = create(client, {**rest, "Accept-Language": "en"}).json()
    portuguese = create(client, rest).json()

    titles = [link["title"] for link in english["links"]]
    assert titles == [p["title"] for p in english["policies"]]
    assert titles[0] == "Terms of use"
    assert portuguese["links"][0]["title"] == "Termos de uso"


def test_store_settings_change_the_policies_at_once(client: Client, rest: dict[str, str]) -> None:
    create(client, rest)  # warms the cached policies
    row = StoreSettings.objects.create(
        returns_text="Trocas em até 30 dias, com a etiqueta.",
        returns_window_days=30,
        shipping_url="https://ajuda.example.com.br/entrega",
    )

    body = create(client, rest).json()

    policies = {p["type"]: p for p in body["policies"]}
    assert policies[RETURN]["description"]["plain"] == "Trocas em até 30 dias, com a etiqueta."
    assert policies[RETURN]["window"] == {"days": 30, "anchor": "delivered"}
    assert policies["br.dev.bcp.shopping.policy.shipping"]["url"] == "https://ajuda.example.com.br/entrega"
    assert {
        "type": "shipping_policy",
        "url": "https://ajuda.example.com.br/entrega",
        "title": "Política de entrega",
    } in body["links"]
    assert row.returns_window_days == 30


def test_the_wire_policies_are_built_once_and_each_answer_gets_its_own_copy(bcp_settings: Any, db: None) -> None:
    """`policies_json` keeps the dumped models per distinct set of policies (issue 34): the same values as the
    models give, and a body a caller changes never reaches the next answer."""
    first = policies_json("pt-br")
    assert first == [model.model_dump(exclude_none=True) for model in policy_models("pt-br")]
    first[2]["description"]["plain"] = "changed by a caller"
    first[2]["supported_resolutions"].append("nothing")
    first.append({})
    second = policies_json("pt-br")
    assert second == [model.model_dump(exclude_none=True) for model in policy_models("pt-br")]
    assert second[2]["description"]["plain"] != "changed by a caller"
    # an order's snapshot (other values) is its own entry
    kept = [{**vars(policy), "text": f"{policy.text} (pedido)"} for policy in store_policies("pt-br")]
    assert [p["description"]["plain"] for p in policies_json("pt-br", kept=kept)] == [p["text"] for p in kept]


def test_return_window_below_the_cdc_minimum_is_refused(db: None) -> None:
    from django.core.exceptions import ValidationError

    with pytest.raises(ValidationError, match="ao menos 7 dias"):
        StoreSettings(returns_window_days=5).full_clean()


def test_catalog_responses_carry_policies(client: Client, rest: dict[str, str]) -> None:
    search = call(client, "post", "/catalog/search", rest, {"query": "café"}).json()
    lookup = call(client, "post", "/catalog/lookup", rest, {"ids": ["SKU-CAFE-500G"]}).json()
    product = call(client, "post", "/catalog/product", rest, {"id": "SKU-CAFE-500G"}).json()

    for body, ref in (
        (search, "shopping/catalog_search.json#/$defs/search_response"),
        (lookup, "shopping/catalog_lookup.json#/$defs/lookup_response"),
        (product, "shopping/catalog_lookup.json#/$defs/get_product_response"),
    ):
        assert_policies(body["policies"])
        assert [e for e in errors(body, ref) if "policies" in e] == []


def test_order_carries_the_policies(db: None, bcp_settings: Any) -> None:
    from bcp_app.service import presenters
    from tests.shop.test_fiscal_lifecycle import paid_order

    order = paid_order()

    body = presenters.order(order, None)

    assert_policies(body["policies"])
    assert errors(body["policies"], "shopping/order.json#/properties/policies") == []


def test_order_keeps_the_policies_it_was_placed_under(db: None, bcp_settings: Any) -> None:
    """UCP #572 on orders: an order's `policies[]` are those in force when it was placed (a snapshot stored
    with it at placement), not today's store settings; a later order gets the new ones."""
    from bcp_app.service import presenters
    from orders.models import Order
    from shop.checkout.services import checkout_complete, checkout_create
    from shop.checkout.types import CompleteInput, LineInput, PaymentInput
    from tests.shop.checkout_factories import full_input
    from tests.shop.test_completion import CARD_OK
    from tests.shop.test_fiscal_lifecycle import paid_order

    before = paid_order()
    StoreSettings.objects.create(returns_text="Trocas em até 30 dias.", returns_window_days=30)
    checkout = checkout_create(data=full_input(LineInput("SKU-CAFE-500G", 1), option="pac")).checkout
    checkout_complete(checkout_id=checkout.public_id, data=CompleteInput(payment=PaymentInput(instruments=(CARD_OK,))))
    after = Order.objects.get(checkout_id=checkout.public_id)

    kept = {p["type"]: p for p in presenters.order(before, None)["policies"]}
    current = {p["type"]: p for p in presenters.order(after, None)["policies"]}
    assert kept[RETURN]["description"]["plain"].startswith(CDC)
    assert kept[RETURN]["window"] == {"days": 7, "anchor": "delivered"}
    assert current[RETURN]["description"]["plain"] == "Trocas em até 30 dias."
    assert current[RETURN]["window"] == {"days": 30, "anchor": "delivered"}
    assert_policies(list(kept.values()))


def test_policy_pages_show_the_store_texts_or_the_standard_ones(client: Client, db: None) -> None:
    page = client.get("/trocas-e-devolucoes").content.decode()
    assert CDC in page
    StoreSettings.objects.create(returns_window_days=14, shipping_text="Enviamos em 24 horas.")
    assert "até 14 dias do recebimento" in client.get("/trocas-e-devolucoes").content.decode()
    assert "Enviamos em 24 horas." in client.get("/entrega").content.decode()
    assert "Compras feitas por agentes" in client.get("/termos").content.decode()
    assert "LGPD" in client.get("/privacidade").content.decode()


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("qual é a política de trocas?", "returns"),
        ("Posso devolver um produto?", "returns"),
        ("What is your return policy?", "returns"),
        ("qual o prazo de entrega e o frete?", "shipping"),
        ("o que vocês fazem com meus dados pessoais (LGPD)?", "privacy"),
        ("quais são os termos de uso?", "terms"),
    ],
)
def test_policies_search_finds_the_policy_a_question_is_about(db: None, question: str, kind: str) -> None:
    assert policies_search(question)[0][0].kind == kind


def test_policies_search_without_a_match_lists_every_policy(db: None) -> None:
    assert [policy.kind for policy, _ in policies_search("olá")] == ["terms", "privacy", "returns", "shipping"]
    assert [policy.kind for policy in store_policies("en")] == ["terms", "privacy", "returns", "shipping"]


# --- MCP -------------------------------------------------------------------------------------------------------

live_mcp = test_mcp_helpers.live_mcp


@pytest.mark.postgres
@pytest.mark.e2e
def test_mcp_policies_search_answers_with_the_policy_text(
    live_mcp: Any, fake_platform: Any, bcp_settings: Any, transactional_db: None
) -> None:
    StoreSettings.objects.create(returns_text="Trocas em até 30 dias, com a nota fiscal.")
    profile = fake_platform.publish()

    result = test_mcp_helpers.call(
        live_mcp.mcp_url,
        "policies.search",
        {"meta": {"ucp-agent": {"profile": profile}}, "query": "qual é a política de trocas?"},
    )

    body = result.structured_content
    assert body["policies"][0]["type"] == RETURN
    assert body["policies"][0]["description"]["plain"] == "Trocas em até 30 dias, com a nota fiscal."
    assert result.content[0].text == body["answer"]
    assert "Trocas em até 30 dias, com a nota fiscal." in body["answer"]
    assert result.is_error is not True


@pytest.mark.postgres
@pytest.mark.e2e
def test_mcp_policies_search_needs_a_query(
    live_mcp: Any, fake_platform: Any, bcp_settings: Any, transactional_db: None
) -> None:
    error = test_mcp_helpers.call_error(
        live_mcp.mcp_url,
        "policies.search",
        {"meta": {"ucp-agent": {"profile": fake_platform.publish()}}, "question": "trocas?"},
    )
    assert error.error.code == -32602


# --- A2A -------------------------------------------------------------------------------------------------------


@pytest.mark.postgres
@pytest.mark.e2e
def test_a2a_policy_question_in_text_and_as_an_intent(bcp_settings: Any, transactional_db: None) -> None:
    from google.protobuf.json_format import MessageToDict

    from tests.bcp_app.test_a2a_helpers import (
        PIX_HANDLERS,
        SEED_PROFILE,
        LiveServer,
        cache_profile,
        data,
        platform_profile,
        sdk_send,
    )

    cache_profile(SEED_PROFILE, platform_profile(handlers=PIX_HANDLERS))
    StoreSettings.objects.create(returns_text="Trocas em até 30 dias, com a nota fiscal.")
    server = LiveServer().start()
    try:
        bcp_settings.BCP_PUBLIC_URL = server.base_url
        spoken = sdk_send(server.base_url, [{"text": "qual é a política de trocas?"}])
        structured = sdk_send(server.base_url, [data({"action": "policies.search", "query": "prazo de entrega"})])
    finally:
        server.stop()
    parts = [MessageToDict(part) for part in spoken.parts]
    assert "Trocas em até 30 dias, com a nota fiscal." in parts[0]["text"]
    assert parts[1]["data"]["a2a.bcp.policies"]["policies"][0]["type"] == RETURN
    parts = [MessageToDict(part) for part in structured.parts]
    assert parts[1]["data"]["a2a.bcp.policies"]["policies"][0]["type"] == "br.dev.bcp.shopping.policy.shipping"
