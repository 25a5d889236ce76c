"""catalog.search over REST runs the storefront's search (shop.catalog.selectors.product_search, one code path):
plurals, variant option values and the merchant's synonyms find the same products an agent asks for (BCP §16);
an over-long query is a 400 naming `query` (BCP-CAT-01 style input error), never the whole catalog."""

from __future__ import annotations

import pytest
from django.test import Client

from shop.demo.seed import seed_catalog
from tests.bcp_app.bcp_fixtures import FakePlatform, agent
from tests.bcp_app.rest_helpers import call

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("bcp_settings")]


@pytest.fixture
def headers(fake_platform: FakePlatform) -> dict[str, str]:
    seed_catalog()
    return agent(fake_platform.publish())


@pytest.mark.parametrize(
    ("query", "handles"),
    [
        ("canecas", ["caneca-ceramica-esmaltada"]),
        ("camiseta pretas", ["camiseta-basica-preta"]),
        ("café em grãos", ["cafe-bourbon-amarelo-250g"]),  # "Em grãos" is a variant's option value
        ("celulares", ["pixel-10-pro"]),  # the demo's synonym "celular, smartphone"
    ],
)
def test_an_agent_search_finds_plurals_variant_words_and_synonyms_bcp_cat_06(
    client: Client, headers: dict[str, str], query: str, handles: list[str]
) -> None:
    body = call(client, "post", "/catalog/search", headers, {"query": query}).json()
    assert [product["handle"] for product in body["products"]] == handles
    assert body["pagination"] == {"has_next_page": False, "total_count": len(handles)}


def test_an_agent_query_over_200_characters_is_refused_naming_the_field(
    client: Client, headers: dict[str, str]
) -> None:
    response = call(client, "post", "/catalog/search", headers, {"query": "caneca " * 50})
    assert response.status_code == 400
    assert response.json()["code"] == "invalid_request"
    assert response.json()["content"] == "Campo inválido $.query: aceita no máximo 200 caracteres"
