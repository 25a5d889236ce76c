"""The typed catalogue tools of seed 002 over a live uvicorn with the official `mcp` client."""

from __future__ import annotations

import pytest

from tests.bcp_app import test_mcp_helpers
from tests.bcp_app.test_mcp_helpers import call, call_error, make_product

# Shared fixtures (pytest finds them by name in this module).
live_mcp = test_mcp_helpers.live_mcp

pytestmark = [pytest.mark.postgres, pytest.mark.e2e]


def test_catalogue_list_returns_schema_org_products_with_offer_and_availability_urls(
    live_mcp,
    transactional_db,
    settings,
) -> None:
    # given one single-variant product in stock
    settings.BCP_PUBLIC_URL = "https://loja.example.com.br"
    make_product()
    # when
    result = call(live_mcp.mcp_url, "catalogue.list", {"query": "café"})
    # then
    assert result.is_error is False
    product = result.structured_content["results"][0]
    assert result.structured_content["status"] == "ok"
    assert result.structured_content["total"] == 1
    assert result.structured_content["page"] == 1
    assert result.structured_content["per_page"] == 12
    assert product["@type"] == "Product"
    assert product["name"] == "Café especial 500 g"
    assert product["url"] == "https://loja.example.com.br/produtos/cafe-especial-500g/" or product["url"].startswith(
        "https://loja.example.com.br/"
    )
    assert product["offers"] == {
        "@type": "Offer",
        "sku": "SKU-CAFE-500G",
        "price": 42.9,
        "priceCurrency": "BRL",
        "availability": "https://schema.org/InStock",
        "url": product["url"],
    }


def test_catalogue_list_rejects_a_misspelled_key_naming_it(live_mcp, transactional_db) -> None:
    # when an agent sends `categria` instead of `category`
    error = call_error(live_mcp.mcp_url, "catalogue.list", {"query": "botas", "categria": "homem"})
    # then a -32602 names the key
    assert error.code == -32602
    assert "categria" in error.message
    assert error.data["code"] == "invalid_request"
    assert error.data["fields"] == {"$.categria": "chave desconhecida (não faz parte do contrato)"}


def test_catalogue_list_enforces_price_range_and_bounds(live_mcp, transactional_db) -> None:
    # when price_min > price_max, and per_page above 50
    price = call_error(live_mcp.mcp_url, "catalogue.list", {"price_min": 5000, "price_max": 1000})
    per_page = call_error(live_mcp.mcp_url, "catalogue.list", {"per_page": 51})
    short = call_error(live_mcp.mcp_url, "catalogue.list", {"query": "a"})
    # then each names its fields
    assert price.code == -32602
    assert set(price.data["fields"]) == {"$.price_min", "$.price_max"}
    assert set(per_page.data["fields"]) == {"$.per_page"}
    assert set(short.data["fields"]) == {"$.query"}
    # in Portuguese, as on every BCP transport (house rule: clear Portuguese errors), not pydantic's English
    assert per_page.data["fields"] == {"$.per_page": "deve ser no máximo 50"}
    assert "$.per_page: deve ser no máximo 50" in per_page.message


def test_catalogue_list_unknown_category_is_a_domain_error_envelope(live_mcp, transactional_db) -> None:
    # when
    result = call(live_mcp.mcp_url, "catalogue.list", {"category": "nao-existe"})
    # then it is a successful tool result carrying the seed's error envelope
    assert result.is_error is False
    assert result.structured_content["status"] == "error"
    assert result.structured_content["error"]["code"] == "not_found"
    assert list(result.structured_content["error"]["fields"]) == ["$.category"]


def test_product_detail_and_catalogue_list_give_one_offer_with_a_numeric_price_seed_002(
    live_mcp, transactional_db, settings
) -> None:
    """Seed 002 output schema: `offers: z.object({"@type": z.literal("Offer"), price: z.number().nonnegative(),
    priceCurrency, availability, url})` — one Offer per product: the lowest-priced available variant, or the
    requested one; `price` a JSON number in reais (not "59.90", not an AggregateOffer)."""
    settings.BCP_PUBLIC_URL = "https://loja.example.com.br"
    # given a product with three variants: the cheapest sold out
    make_product(
        title="Camiseta",
        slug="camiseta",
        category_slug="roupas",
        variants=(("CAM-P", 5490, 0), ("CAM-M", 6990, 3), ("CAM-G", 7990, 3)),
    )
    # when
    listed = call(live_mcp.mcp_url, "catalogue.list", {"query": "camiseta"}).structured_content
    by_product = call(live_mcp.mcp_url, "product.detail", {"slug": "camiseta"}).structured_content
    by_sku = call(live_mcp.mcp_url, "product.detail", {"sku": "CAM-P"}).structured_content
    # then
    url = by_product["product"]["url"]
    lowest_available = {
        "@type": "Offer",
        "sku": "CAM-M",
        "price": 69.9,
        "priceCurrency": "BRL",
        "availability": "https://schema.org/InStock",
        "url": f"{url}?sku=CAM-M",
    }
    assert listed["results"][0]["offers"] == lowest_available
    assert by_product["product"]["offers"] == lowest_available
    assert by_sku["product"]["offers"] == {
        "@type": "Offer",
        "sku": "CAM-P",
        "price": 54.9,
        "priceCurrency": "BRL",
        "availability": "https://schema.org/OutOfStock",
        "url": f"{url}?sku=CAM-P",
    }
    assert isinstance(by_sku["product"]["offers"]["price"], float)


def test_product_detail_needs_exactly_one_identifier_and_reports_unknown(
    live_mcp,
    transactional_db,
) -> None:
    # when two identifiers are given, and when the product does not exist
    both = call_error(live_mcp.mcp_url, "product.detail", {"sku": "X", "slug": "y"})
    missing = call(live_mcp.mcp_url, "product.detail", {"slug": "nao-existe"})
    # then
    assert both.code == -32602
    assert set(both.data["fields"]) == {"$.product_id", "$.slug", "$.sku"}
    assert missing.structured_content == {
        "status": "error",
        "error": {
            "code": "not_found",
            "message": "Produto não encontrado: nao-existe.",
            "fields": {"$.slug": "Produto não encontrado: nao-existe."},
        },
    }


def test_inventory_check_reports_each_item(live_mcp, transactional_db) -> None:
    # given
    make_product(variants=(("SKU-A", 1000, 2), ("SKU-B", 1000, 0)))
    # when
    result = call(
        live_mcp.mcp_url,
        "inventory.check",
        {"items": [{"sku": "SKU-A", "quantity": 2}, {"sku": "SKU-A", "quantity": 3}, {"sku": "SKU-B", "quantity": 1}]},
    )
    unknown = call(live_mcp.mcp_url, "inventory.check", {"items": [{"sku": "NOPE", "quantity": 1}]})
    # then
    assert result.structured_content == {
        "status": "ok",
        "items": [
            {"sku": "SKU-A", "quantity": 2, "availability": "https://schema.org/InStock", "can_fulfill": True},
            {"sku": "SKU-A", "quantity": 3, "availability": "https://schema.org/InStock", "can_fulfill": False},
            {"sku": "SKU-B", "quantity": 1, "availability": "https://schema.org/OutOfStock", "can_fulfill": False},
        ],
    }
    assert unknown.structured_content["error"]["code"] == "not_found"
    assert unknown.structured_content["error"]["fields"] == {"$.items[0].sku": "SKU desconhecido: NOPE."}


def test_inventory_check_rejects_wrong_types(live_mcp, transactional_db) -> None:
    # when quantity is a string and items is empty
    wrong = call_error(live_mcp.mcp_url, "inventory.check", {"items": [{"sku": "SKU-A", "quantity": "2"}]})
    empty = call_error(live_mcp.mcp_url, "inventory.check", {"items": []})
    # then
    assert wrong.code == -32602
    assert list(wrong.data["fields"]) == ["$.items[0].quantity"]
    assert list(empty.data["fields"]) == ["$.items"]


KEY = "5b0c8f7e-2a4d-4c1e-9f3a-7d6b5e4c3b2a"
CUSTOMER = {"email": "ana@example.com.br", "name": "Ana Souza"}


def test_order_intent_creates_a_draft_checkout_and_replays_by_key(live_mcp, transactional_db) -> None:
    # given
    from shop.models import Checkout

    make_product()
    arguments = {"customer": CUSTOMER, "items": [{"sku": "SKU-CAFE-500G", "quantity": 2}], "idempotency_key": KEY}
    # when the same call is made twice
    first = call(live_mcp.mcp_url, "order.intent", arguments)
    again = call(live_mcp.mcp_url, "order.intent", arguments)
    # then one draft exists and both answers are the original draft
    draft = first.structured_content
    assert draft["status"] == "ok"
    assert draft["draft_order_id"].startswith("checkout_")
    assert draft["checkout_status"] == "incomplete"
    assert (draft["total"], draft["currency"]) == (8580, "BRL")
    assert f"/checkout/{draft['draft_order_id']}?t=" in draft["continue_url"]  # signed: it opens the checkout
    # no delivery estimate is guessed: it needs the address and the option the buyer picks at continue_url (seed 002
    # keeps the member optional; its description says so)
    assert "estimated_delivery" not in draft
    assert again.structured_content == draft
    assert Checkout.objects.count() == 1


def test_order_intent_same_key_other_arguments_is_a_conflict(live_mcp, transactional_db) -> None:
    # given a draft made with a key
    from shop.models import Checkout

    make_product()
    base = {"customer": CUSTOMER, "items": [{"sku": "SKU-CAFE-500G", "quantity": 1}], "idempotency_key": KEY}
    call(live_mcp.mcp_url, "order.intent", base)
    # when the key is reused for another request
    error = call_error(live_mcp.mcp_url, "order.intent", {**base, "items": [{"sku": "SKU-CAFE-500G", "quantity": 3}]})
    # then nothing new is created (BCP-IDEM-05 semantics)
    assert (error.code, error.data["code"]) == (-32000, "idempotency_conflict")
    assert Checkout.objects.count() == 1


def test_order_intent_out_of_stock_and_unknown_sku_are_domain_errors(live_mcp, transactional_db) -> None:
    # given
    from shop.models import Checkout

    make_product(variants=(("SKU-A", 1000, 1),))
    # when
    short = call(live_mcp.mcp_url, "order.intent", {"customer": CUSTOMER, "items": [{"sku": "SKU-A", "quantity": 2}]})
    unknown = call(live_mcp.mcp_url, "order.intent", {"customer": CUSTOMER, "items": [{"sku": "NOPE", "quantity": 1}]})
    # then
    assert short.structured_content == {
        "status": "error",
        "error": {
            "code": "out_of_stock",
            "message": "Há itens sem estoque suficiente.",
            "fields": {"$.items[0].quantity": "Disponível agora: 1."},
        },
    }
    assert unknown.structured_content["error"]["code"] == "not_found"
    assert unknown.structured_content["error"]["fields"] == {"$.items[0].sku": "SKU desconhecido: NOPE."}
    assert Checkout.objects.count() == 0


def test_order_intent_rejects_bad_key_and_nested_extra_keys(live_mcp, transactional_db) -> None:
    # when
    error = call_error(
        live_mcp.mcp_url,
        "order.intent",
        {
            "customer": {**CUSTOMER, "phone": "1"},
            "items": [{"sku": "A", "quantity": 1}],
            "idempotency_key": "abc",
        },
    )
    # then both problems are named
    assert error.code == -32602
    assert set(error.data["fields"]) == {"$.customer.phone", "$.idempotency_key"}


def test_order_status_follows_a_draft(live_mcp, transactional_db) -> None:
    # given a draft
    make_product()
    draft = call(
        live_mcp.mcp_url, "order.intent", {"customer": CUSTOMER, "items": [{"sku": "SKU-CAFE-500G", "quantity": 1}]}
    ).structured_content
    # when
    status = call(live_mcp.mcp_url, "order.status", {"id": draft["draft_order_id"]}).structured_content
    missing = call(live_mcp.mcp_url, "order.status", {"id": "checkout_nope"}).structured_content
    order = call(live_mcp.mcp_url, "order.status", {"id": "order_nope"}).structured_content
    # then
    assert status == {
        "status": "ok",
        "id": draft["draft_order_id"],
        "kind": "draft",
        "state": "incomplete",
        "total": 4290,
        "currency": "BRL",
        "continue_url": draft["continue_url"],
    }
    assert missing["error"]["code"] == "not_found"
    # orders are readable only by their platform's API key (BCP-ORD-02)
    assert order["error"]["code"] == "forbidden"


def test_corrupt_output_never_reaches_the_agent(live_mcp, transactional_db, settings) -> None:
    # given a misconfigured public URL, so product URLs would not be absolute
    settings.BCP_PUBLIC_URL = "loja.example.com.br"
    make_product()
    # when
    result = call(live_mcp.mcp_url, "catalogue.list", {"query": "café"})
    # then the output contract stops it and the seed's `internal` envelope is answered
    assert result.structured_content == {
        "status": "error",
        "error": {
            "code": "internal",
            "message": "Erro interno; nada foi alterado. Tente novamente em instantes.",
        },
    }


def test_order_intent_accepts_notes_up_to_1000_characters_seed_002(live_mcp, transactional_db) -> None:
    """Seed 002 `orderIntentInput`: `notes: z.string().max(1000).optional()` (was refused above 500)."""
    make_product()
    base = {"customer": CUSTOMER, "items": [{"sku": "SKU-CAFE-500G", "quantity": 1}]}
    accepted = call(live_mcp.mcp_url, "order.intent", {**base, "notes": "n" * 1000})
    refused = call_error(live_mcp.mcp_url, "order.intent", {**base, "notes": "n" * 1001})
    assert accepted.structured_content["status"] == "ok"
    assert refused.code == -32602
    assert list(refused.data["fields"]) == ["$.notes"]


def test_order_intent_with_pickup_preference(live_mcp, transactional_db) -> None:
    # given
    make_product()
    # when the agent states a pickup preference and notes
    result = call(
        live_mcp.mcp_url,
        "order.intent",
        {
            "customer": CUSTOMER,
            "items": [{"sku": "SKU-CAFE-500G", "quantity": 1}],
            "shipping_method": "pickup",
            "notes": "Retiro no sábado.",
        },
    )
    # then a draft exists and the buyer finishes it at continue_url
    assert result.structured_content["status"] == "ok"
    assert result.structured_content["checkout_status"] == "incomplete"


# 200 characters of words where no space leaves both halves within 100 (spaces at 5, 11, …, 95, 101, …).
MANY_WORDS = " ".join(["Maria", "Silva"] * 16 + ["Maria", "Sá"])


@pytest.mark.parametrize(
    ("name", "first", "last"),
    [
        # one 200-character word: cut where the engine's 100-character column ends, every letter kept
        ("A" * 200, "A" * 100, "A" * 100),
        # the first space leaves 196 characters after it: the split moves to the space that fits both halves
        ("Ana " + "B" * 95 + " " + "C" * 100, "Ana " + "B" * 95, "C" * 100),
        # no space fits: cut at 100 characters
        (MANY_WORDS, MANY_WORDS[:100], MANY_WORDS[100:]),
    ],
    ids=["one-word", "space-that-fits", "many-words"],
)
def test_order_intent_accepts_a_200_character_customer_name_seed_002(
    live_mcp, transactional_db, name: str, first: str, last: str
) -> None:
    """Seed 002 `orderIntentInput`: `customer.name: z.string().min(1).max(200)`. The engine keeps the buyer's
    first and last names in 100 characters each; order.intent splits the full name so both fit (issue 35,
    item 7; a 200-character name was refused with "No máximo 100 caracteres")."""
    from shop.models import Checkout

    # given
    make_product()
    assert len(name) == 200
    # when
    result = call(
        live_mcp.mcp_url,
        "order.intent",
        {"customer": {"email": "ana@example.com.br", "name": name}, "items": [{"sku": "SKU-CAFE-500G", "quantity": 1}]},
    )
    # then
    assert result.structured_content["status"] == "ok", result.structured_content
    checkout = Checkout.objects.get(public_id=result.structured_content["draft_order_id"])
    assert (checkout.buyer_first_name, checkout.buyer_last_name) == (first, last)
