"""The typed catalogue tools of seed 002 over a live uvicorn with the official `mcp` client."""

from __future__ import annotations

import pytest

from tests.bcp_app.test_mcp_helpers import call, call_error, live_mcp, make_product  # noqa: F401

pytestmark = [pytest.mark.postgres, pytest.mark.e2e]


def test_catalogue_list_returns_schema_org_products_with_offer_and_availability_urls(
    live_mcp, transactional_db, settings  # noqa: F811
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
        "price": "42.90",
        "priceCurrency": "BRL",
        "availability": "https://schema.org/InStock",
        "url": product["url"],
    }


def test_catalogue_list_rejects_a_misspelled_key_naming_it(live_mcp, transactional_db) -> None:  # noqa: F811
    # when an agent sends `categria` instead of `category`
    error = call_error(live_mcp.mcp_url, "catalogue.list", {"query": "botas", "categria": "homem"})
    # then a -32602 names the key
    assert error.code == -32602
    assert "categria" in error.message
    assert error.data["code"] == "invalid_request"
    assert error.data["fields"] == {"categria": "chave desconhecida (não faz parte do contrato)"}


def test_catalogue_list_enforces_price_range_and_bounds(live_mcp, transactional_db) -> None:  # noqa: F811
    # when price_min > price_max, and per_page above 50
    price = call_error(live_mcp.mcp_url, "catalogue.list", {"price_min": 5000, "price_max": 1000})
    per_page = call_error(live_mcp.mcp_url, "catalogue.list", {"per_page": 51})
    short = call_error(live_mcp.mcp_url, "catalogue.list", {"query": "a"})
    # then each names its fields
    assert price.code == -32602
    assert set(price.data["fields"]) == {"price_min", "price_max"}
    assert set(per_page.data["fields"]) == {"per_page"}
    assert set(short.data["fields"]) == {"query"}


def test_catalogue_list_unknown_category_is_a_domain_error_envelope(live_mcp, transactional_db) -> None:  # noqa: F811
    # when
    result = call(live_mcp.mcp_url, "catalogue.list", {"category": "nao-existe"})
    # then it is a successful tool result carrying the seed's error envelope
    assert result.is_error is False
    assert result.structured_content["status"] == "error"
    assert result.structured_content["error"]["code"] == "not_found"
    assert list(result.structured_content["error"]["fields"]) == ["category"]


def test_product_detail_by_sku_with_variants_is_aggregate_offer(live_mcp, transactional_db) -> None:  # noqa: F811
    # given a product with two variants, one sold out
    make_product(
        title="Camiseta", slug="camiseta", category_slug="roupas",
        variants=(("CAM-P", 5990, 0), ("CAM-M", 6990, 3)),
    )
    # when
    result = call(live_mcp.mcp_url, "product.detail", {"sku": "CAM-P"})
    # then
    offers = result.structured_content["product"]["offers"]
    assert result.structured_content["status"] == "ok"
    assert offers["@type"] == "AggregateOffer"
    assert (offers["lowPrice"], offers["highPrice"], offers["offerCount"]) == ("59.90", "69.90", 2)
    assert [(o["sku"], o["availability"]) for o in offers["offers"]] == [
        ("CAM-P", "https://schema.org/OutOfStock"),
        ("CAM-M", "https://schema.org/InStock"),
    ]


def test_product_detail_needs_exactly_one_identifier_and_reports_unknown(
    live_mcp, transactional_db  # noqa: F811
) -> None:
    # when two identifiers are given, and when the product does not exist
    both = call_error(live_mcp.mcp_url, "product.detail", {"sku": "X", "slug": "y"})
    missing = call(live_mcp.mcp_url, "product.detail", {"slug": "nao-existe"})
    # then
    assert both.code == -32602
    assert set(both.data["fields"]) == {"product_id", "slug", "sku"}
    assert missing.structured_content == {
        "status": "error",
        "error": {
            "code": "not_found",
            "message": "Produto não encontrado: nao-existe.",
            "fields": {"slug": "Produto não encontrado: nao-existe."},
        },
    }


def test_inventory_check_reports_each_item(live_mcp, transactional_db) -> None:  # noqa: F811
    # given
    make_product(variants=(("SKU-A", 1000, 2), ("SKU-B", 1000, 0)))
    # when
    result = call(
        live_mcp.mcp_url, "inventory.check",
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
    assert unknown.structured_content["error"]["fields"] == {"items.0.sku": "SKU desconhecido: NOPE."}


def test_inventory_check_rejects_wrong_types(live_mcp, transactional_db) -> None:  # noqa: F811
    # when quantity is a string and items is empty
    wrong = call_error(live_mcp.mcp_url, "inventory.check", {"items": [{"sku": "SKU-A", "quantity": "2"}]})
    empty = call_error(live_mcp.mcp_url, "inventory.check", {"items": []})
    # then
    assert wrong.code == -32602
    assert list(wrong.data["fields"]) == ["items.0.quantity"]
    assert list(empty.data["fields"]) == ["items"]
