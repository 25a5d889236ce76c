"""Catalog search / lookup / get_product over REST (BCP §16, BCP-CAT-*)."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from shop.models import Category, Product, Variant
from tests.bcp_app.bcp_fixtures import VERSION, FakePlatform, agent
from tests.bcp_app.rest_helpers import call

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("bcp_settings")]


@pytest.fixture
def headers(fake_platform: FakePlatform) -> dict[str, str]:
    return agent(fake_platform.publish())


def camiseta() -> Product:
    category = Category.objects.create(name="Roupas", slug="roupas")
    product = Product.objects.create(
        title="Camiseta básica", slug="camiseta-basica", category=category, description="Algodão orgânico."
    )
    for position, (size, stock) in enumerate((("P", 3), ("M", 0), ("G", 5))):
        Variant.objects.create(
            product=product,
            sku=f"CAM-{size}",
            title=size,
            price=5990 + position * 100,
            stock=stock,
            options={"tamanho": size},
            position=position,
        )
    return product


def test_search_without_query_or_filters_is_rejected_bcp_cat_01(client: Client, headers: dict[str, str]) -> None:
    response = call(client, "post", "/catalog/search", headers, {"pagination": {"limit": 5}})
    assert (response.status_code, response.json()["code"]) == (400, "invalid_request")
    # Said to a person: the field, no spec id (REST's body is the search itself).
    assert response.json()["content"] == "Informe query (o texto da busca) ou filters."


def test_search_without_query_or_filters_speaks_the_negotiated_language_bcp_cat_01(
    client: Client, headers: dict[str, str]
) -> None:
    """BCP-CAT-01 (query or filters) in English when Accept-Language asks for it (BCP §5.1)."""
    response = call(client, "post", "/catalog/search", {**headers, "Accept-Language": "en"}, {})
    assert response.json()["content"] == "Provide query (the search text) or filters."


def test_search_finds_products_with_prices_as_objects_bcp_cat_06(client: Client, headers: dict[str, str]) -> None:
    product = camiseta()
    body = call(client, "post", "/catalog/search", headers, {"query": "camiseta"}).json()
    assert body["ucp"] == {
        "version": VERSION,
        "capabilities": {"br.dev.bcp.shopping.catalog.search": [{"version": VERSION}]},
    }
    assert body["pagination"] == {"has_next_page": False, "total_count": 1}
    found = body["products"][0]
    assert (found["id"], found["title"], found["description"]) == (
        product.public_id,
        "Camiseta básica",
        {"plain": "Algodão orgânico."},
    )
    assert found["price_range"] == {
        "min": {"amount": 5990, "currency": "BRL"},
        "max": {"amount": 6190, "currency": "BRL"},
    }
    assert found["options"] == [{"name": "tamanho", "values": [{"label": "P"}, {"label": "M"}, {"label": "G"}]}]
    assert found["variants"][1] == {
        "id": "CAM-M",
        "sku": "CAM-M",
        "title": "M",
        "description": {"plain": "Camiseta básica — M"},
        "price": {"amount": 6090, "currency": "BRL"},
        "availability": {"available": False, "status": "out_of_stock"},
        "options": [{"name": "tamanho", "label": "M"}],
    }


def test_search_in_a_category_the_shop_does_not_have_is_an_empty_result_bcp_cat_07(
    client: Client, headers: dict[str, str]
) -> None:
    # BCP-CAT-07: `has_next_page` is present on an empty result too.
    """BCP §16: an empty result is `products: []` (with `has_next_page`), not an error: an agent filtering by a
    category slug it guessed gets nothing, as it would for a query that matches nothing (it was a 400)."""
    camiseta()
    for slug in ("nao-existe", "Roupas de Verão"):
        response = call(client, "post", "/catalog/search", headers, {"filters": {"categories": [slug]}})
        assert response.status_code == 200, response.content
        assert (response.json()["products"], response.json()["pagination"]) == (
            [],
            {"has_next_page": False, "total_count": 0},
        )
    assert (
        call(client, "post", "/catalog/search", headers, {"filters": {"categories": ["roupas"]}}).json()["pagination"][
            "total_count"
        ]
        == 1
    )


def test_search_paginates_with_a_cursor_default_limit_10_bcp_cat_07(client: Client, headers: dict[str, str]) -> None:
    """BCP-CAT-07: cursor pagination, default limit 10, `has_next_page` on every page."""
    category = Category.objects.create(name="Cafés", slug="cafes")
    for n in range(12):
        product = Product.objects.create(title=f"Café {n:02d}", slug=f"cafe-{n:02d}", category=category)
        Variant.objects.create(product=product, sku=f"CAFE-{n:02d}", price=1000 + n, stock=1)
    first = call(client, "post", "/catalog/search", headers, {"filters": {"categories": ["cafes"]}}).json()
    assert len(first["products"]) == 10
    assert first["pagination"] == {"has_next_page": True, "cursor": "p2", "total_count": 12}
    second = call(
        client,
        "post",
        "/catalog/search",
        headers,
        {"filters": {"categories": ["cafes"]}, "pagination": {"cursor": "p2"}},
    ).json()
    assert [p["title"] for p in second["products"]] == ["Café 10", "Café 11"]
    assert second["pagination"] == {"has_next_page": False, "total_count": 12}
    bad = call(
        client,
        "post",
        "/catalog/search",
        headers,
        {"filters": {"categories": ["cafes"]}, "pagination": {"cursor": "zzz"}},
    )
    assert (bad.status_code, bad.json()["code"]) == (400, "invalid_request")
    # The field as a JSONPath in the body sent, like every other invalid_request (README "Language").
    assert bad.json()["content"] == "Campo inválido $.pagination.cursor: cursor desconhecido."
    # a cursor past the last page: the storefront's sentence continues the field's, in lower case after the colon
    past = call(
        client,
        "post",
        "/catalog/search",
        headers,
        {"filters": {"categories": ["cafes"]}, "pagination": {"cursor": "p9"}},
    )
    assert past.json()["content"] == "Campo inválido $.pagination.cursor: a página 9 não existe; há 2 páginas."


def test_lookup_deduplicates_and_correlates_inputs_bcp_cat_02_03(client: Client, headers: dict[str, str]) -> None:
    """BCP-CAT-02 (ids deduplicated, product once, `inputs`); BCP-CAT-03 (unknown id: fewer products)."""
    product = camiseta()
    body = call(client, "post", "/catalog/lookup", headers, {"ids": ["CAM-G", "CAM-P", "CAM-G", "NAO-EXISTE"]}).json()
    assert len(body["products"]) == 1
    variants = body["products"][0]["variants"]
    assert [(v["id"], v["inputs"]) for v in variants] == [
        ("CAM-P", [{"id": "CAM-P", "match": "exact"}]),
        ("CAM-G", [{"id": "CAM-G", "match": "exact"}]),
    ]
    assert body["messages"] == [{"type": "info", "code": "not_found", "content": "Id não encontrado: NAO-EXISTE."}]
    by_product = call(client, "post", "/catalog/lookup", headers, {"ids": [product.public_id]}).json()
    assert [v["inputs"] for v in by_product["products"][0]["variants"]] == [
        [{"id": product.public_id, "match": "featured"}]
    ] * 3
    # a product id beside one of its variant ids: each id is accounted for on every variant it resolved to
    both = call(client, "post", "/catalog/lookup", headers, {"ids": ["CAM-G", product.public_id]}).json()
    assert len(both["products"]) == 1 and "messages" not in both
    featured = {"id": product.public_id, "match": "featured"}
    assert {v["id"]: v["inputs"] for v in both["products"][0]["variants"]} == {
        "CAM-P": [featured],
        "CAM-M": [featured],
        "CAM-G": [{"id": "CAM-G", "match": "exact"}, featured],
    }


def test_lookup_accepts_ten_ids_and_refuses_too_many_bcp_cat_04(client: Client, headers: dict[str, str]) -> None:
    """BCP-CAT-04: ≥ 10 ids accepted (the limit, 50, too); above it 400 `request_too_large`."""
    ok = call(client, "post", "/catalog/lookup", headers, {"ids": [f"X-{n}" for n in range(10)]})
    assert (ok.status_code, ok.json()["products"]) == (200, [])
    limit = call(client, "post", "/catalog/lookup", headers, {"ids": [f"X-{n}" for n in range(50)]})
    assert (limit.status_code, limit.json()["products"]) == (200, [])
    too_many = call(client, "post", "/catalog/lookup", headers, {"ids": [f"X-{n}" for n in range(51)]})
    assert (too_many.status_code, too_many.json()["code"]) == (400, "request_too_large")


def test_get_product_puts_the_requested_variant_first_bcp_cat_05(client: Client, headers: dict[str, str]) -> None:
    """BCP-CAT-05: the requested variant first, `selected` when the product has options."""
    camiseta()
    body = call(client, "post", "/catalog/product", headers, {"id": "CAM-G"}).json()
    product = body["product"]
    assert [v["id"] for v in product["variants"]] == ["CAM-G", "CAM-P", "CAM-M"]
    assert product["selected"] == [{"name": "tamanho", "label": "G"}]
    assert product["options"] == [
        {
            "name": "tamanho",
            "values": [
                {"label": "P", "available": True, "exists": True},
                {"label": "M", "available": False, "exists": True},
                {"label": "G", "available": True, "exists": True},
            ],
        }
    ]
    selected = call(
        client,
        "post",
        "/catalog/product",
        headers,
        {"id": product["id"], "selected": [{"name": "tamanho", "label": "P"}]},
    ).json()
    assert selected["product"]["variants"][0]["id"] == "CAM-P"


def test_get_product_unknown_is_not_found_bcp_cat_05(client: Client, headers: dict[str, str]) -> None:
    """BCP-CAT-05: an unknown id is an Error Response `not_found`."""
    body = call(client, "post", "/catalog/product", headers, {"id": "prod_nada"}).json()
    assert body == {
        "ucp": {
            "version": VERSION,
            "status": "error",
            "capabilities": {"br.dev.bcp.shopping.catalog.lookup": [{"version": VERSION}]},
        },
        "messages": [
            {"type": "error", "code": "not_found", "severity": "unrecoverable", "content": "Produto não encontrado."}
        ],
    }


def test_variant_ids_work_as_checkout_item_ids_bcp_cat_08(client: Client, headers: dict[str, str]) -> None:
    """BCP-CAT-08: the REST lookup endpoint answers and variant ids work as checkout `item.id`."""
    camiseta()
    variant_id = call(client, "post", "/catalog/lookup", headers, {"ids": ["CAM-P"]}).json()["products"][0]["variants"][
        0
    ]["id"]
    created: Any = call(
        client, "post", "/checkout-sessions", headers, {"line_items": [{"item": {"id": variant_id}, "quantity": 1}]}
    )
    assert created.status_code == 201
    assert created.json()["line_items"][0]["item"]["id"] == "CAM-P"
