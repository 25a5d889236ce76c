"""Our responses validate against the spec's JSON Schemas; pydantic models accept and describe them (BCP §1)."""

from __future__ import annotations

import filecmp
from typing import Any

import pytest
from django.test import Client
from pydantic import BaseModel

from bcp_app.protocol import schemas
from bcp_app.protocol.schemas import common
from tests.bcp_app.bcp_fixtures import FakePlatform, agent
from tests.bcp_app.rest_helpers import call, catalog, create, ready_checkout
from tests.bcp_app.schema_check import SHARED, VENDORED, errors

pytestmark = [pytest.mark.usefixtures("bcp_settings")]
CHECKOUT_WITH_EXTENSIONS = "shopping/fulfillment.json#/$defs/br.dev.bcp.shopping.checkout"


@pytest.fixture
def headers(fake_platform: FakePlatform, settings: Any) -> dict[str, str]:
    settings.BCP_PIX_SANDBOX = True
    catalog()
    return agent(fake_platform.publish())


@pytest.mark.skipif(not SHARED.is_dir(), reason="spec checkout not mounted")
def test_vendored_schemas_equal_the_spec() -> None:
    comparison = filecmp.dircmp(SHARED, VENDORED)
    pending = [comparison]
    while pending:
        current = pending.pop()
        assert current.left_only == [] and current.diff_files == [], current.left
        pending.extend(current.subdirs.values())


@pytest.mark.django_db
def test_checkout_responses_validate_bcp_chk_02(client: Client, headers: dict[str, str]) -> None:
    created = create(client, headers).json()
    ready = ready_checkout(client, headers)
    for body in (created, ready):
        assert errors(body, "shopping/checkout.json") == []
        assert errors(body, CHECKOUT_WITH_EXTENSIONS) == []
        assert schemas.CheckoutResponse.model_validate(body).id == body["id"]


@pytest.mark.django_db
def test_error_responses_validate_bcp_err_02(client: Client, headers: dict[str, str]) -> None:
    body = call(client, "get", "/checkout-sessions/checkout_x", headers).json()
    assert errors(body, "common/types/error_response.json") == []
    schemas.ErrorResponse.model_validate(body)


@pytest.mark.django_db
def test_catalog_responses_validate_bcp_cat_06(client: Client, headers: dict[str, str]) -> None:
    search = call(client, "post", "/catalog/search", headers, {"query": "café"}).json()
    lookup = call(client, "post", "/catalog/lookup", headers, {"ids": ["SKU-CAFE-500G"]}).json()
    product = call(client, "post", "/catalog/product", headers, {"id": "SKU-CAFE-500G"}).json()
    assert errors(search, "shopping/catalog_search.json#/$defs/search_response") == []
    assert errors(lookup, "shopping/catalog_lookup.json#/$defs/lookup_response") == []
    assert errors(product, "shopping/catalog_lookup.json#/$defs/get_product_response") == []
    schemas.SearchResponse.model_validate(search)
    schemas.LookupResponse.model_validate(lookup)
    schemas.ProductResponse.model_validate(product)


def test_request_models_ignore_unknown_members_and_response_only_fields_bcp_sec_03() -> None:
    parsed = schemas.CheckoutCreateRequest.model_validate(
        {
            "line_items": [{"item": {"id": "SKU-1", "price": 1, "title": "x"}, "quantity": 1, "totals": []}],
            "status": "completed",
            "totals": [],
            "ucp": {"anything": True},
            "extra": {"x": 1},
        }
    )
    assert parsed.model_dump(exclude_none=True) == {"line_items": [{"item": {"id": "SKU-1"}, "quantity": 1}]}


@pytest.mark.parametrize(
    ("body", "where"),
    [
        ({"line_items": [{"item": {"id": "S"}, "quantity": "2"}]}, ("line_items", 0, "quantity")),
        ({"line_items": [{"item": {"id": "S"}, "quantity": 0}]}, ("line_items", 0, "quantity")),
        ({"line_items": [{"item": {"id": 7}, "quantity": 1}]}, ("line_items", 0, "item", "id")),
        ({"line_items": []}, ("line_items",)),
        ({"line_items": [{"item": {"id": "S"}, "quantity": 1}], "buyer": {"email": 5}}, ("buyer", "email")),
    ],
)
def test_request_models_are_strict_about_types(body: dict[str, Any], where: tuple[Any, ...]) -> None:
    with pytest.raises(Exception) as err:
        schemas.CheckoutCreateRequest.model_validate(body)
    assert err.value.errors()[0]["loc"] == where  # type: ignore[attr-defined]


def _models() -> list[type[BaseModel]]:
    found: list[type[BaseModel]] = []
    for module in (
        common,
        schemas.checkout,
        schemas.payment,
        schemas.fulfillment,
        schemas.discount,
        schemas.order,
        schemas.catalog,
        schemas.profile,
    ):
        found += [
            v
            for v in vars(module).values()
            if isinstance(v, type) and issubclass(v, BaseModel) and v.__module__ == module.__name__
        ]
    return found


@pytest.mark.parametrize("model", _models(), ids=lambda m: m.__name__)
def test_every_field_has_a_description(model: type[BaseModel]) -> None:
    missing = [name for name, field in model.model_fields.items() if not field.description]
    assert missing == []
