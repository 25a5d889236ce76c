"""Bad input over REST: 4xx naming the field, nothing changed, never a 500 (BCP-ERR-01/05, house rules)."""

from __future__ import annotations

import json
from typing import Any

import pytest
import schemathesis
from django.core.wsgi import get_wsgi_application
from django.test import Client
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings

from shop.models import Checkout
from tests.bcp_app.bcp_fixtures import FakePlatform, agent
from tests.bcp_app.rest_helpers import call, catalog

pytestmark = [pytest.mark.usefixtures("bcp_settings")]


@pytest.fixture
def headers(fake_platform: FakePlatform) -> dict[str, str]:
    catalog()
    return agent(fake_platform.publish())


def assert_invalid(response: Any, field: str, *, checkouts: int = 0) -> None:
    """A 400 naming `field`, with no checkout created beyond the `checkouts` the test made."""
    assert response.status_code == 400, response.content
    body = response.json()
    assert body["code"] == "invalid_request"
    assert field in body["content"], body["content"]
    assert Checkout.objects.count() == checkouts


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("raw", "field"),
    [
        ('{"line_items": [', "JSON"),
        (b"\xff\xfe{}", "JSON"),
        ("[1, 2]", "Campo inválido $: "),
        ('{"line_items": [{"item": {"id": "SKU-CAFE-500G"}, "quantity": "2"}]}', "$.line_items[0].quantity"),
        ('{"line_items": [{"item": {"id": "SKU-CAFE-500G"}, "quantity": 2.5}]}', "line_items[0].quantity"),
        ('{"line_items": [{"item": {"id": "SKU-CAFE-500G"}, "quantity": 9007199254740992}]}', "line_items[0].quantity"),
        ('{"line_items": [{"item": "SKU-CAFE-500G", "quantity": 1}]}', "line_items[0].item"),
        (
            '{"line_items": [{"item": {"id": "SKU-CAFE-500G"}, "quantity": 1}], "buyer": {"email": ["a"]}}',
            "$.buyer.email",
        ),
        (
            '{"line_items": [{"item": {"id": "SKU-CAFE-500G"}, "quantity": 1}], "payment": {"instruments": {}}}',
            "payment.instruments",
        ),
        ('{"buyer": {}}', "line_items"),
        ("{}", "line_items"),
    ],
)
def test_malformed_json_and_wrong_types_name_the_field_bcp_err_05(
    client: Client, headers: dict[str, str], raw: str | bytes, field: str
) -> None:
    assert_invalid(call(client, "post", "/checkout-sessions", headers, raw), field)


@pytest.mark.django_db
def test_huge_string_names_the_field(client: Client, headers: dict[str, str]) -> None:
    body = {"line_items": [{"item": {"id": "SKU-CAFE-500G"}, "quantity": 1}], "buyer": {"first_name": "x" * 100_000}}
    assert_invalid(call(client, "post", "/checkout-sessions", headers, body), "buyer.first_name")


@pytest.mark.django_db
def test_huge_bodies_are_refused(client: Client, headers: dict[str, str]) -> None:
    body = json.dumps({"line_items": [{"item": {"id": "SKU-CAFE-500G"}, "quantity": 1}], "pad": "x" * 3_000_000})
    response = call(client, "post", "/checkout-sessions", headers, body)
    assert response.status_code == 400
    assert response.json()["code"] in ("request_too_large", "invalid_request")
    assert Checkout.objects.count() == 0


@pytest.mark.django_db
def test_too_many_lines_names_the_field(client: Client, headers: dict[str, str]) -> None:
    lines = [{"item": {"id": f"SKU-{n}"}, "quantity": 1} for n in range(101)]
    assert_invalid(call(client, "post", "/checkout-sessions", headers, {"line_items": lines}), "line_items")


@pytest.mark.django_db
def test_wrong_types_on_update_and_complete(client: Client, headers: dict[str, str]) -> None:
    # a body's problems are about a checkout the caller holds (an unknown one is not_found, BCP-CHK-13)
    lines = [{"item": {"id": "SKU-CAFE-500G"}, "quantity": 1}]
    created = call(client, "post", "/checkout-sessions", headers, {"line_items": lines}).json()
    path = f"/checkout-sessions/{created['id']}"
    update = call(client, "put", path, headers, {"line_items": [{"quantity": 1}]})
    assert_invalid(update, "line_items[0].item", checkouts=1)
    done = call(
        client,
        "post",
        f"{path}/complete",
        {**headers, "Idempotency-Key": "k"},
        {"payment": {"instruments": [{"id": "i", "handler_id": "h"}]}},
    )
    assert_invalid(done, "payment.instruments[0].type", checkouts=1)
    cancel = call(client, "post", f"{path}/cancel", {**headers, "Idempotency-Key": "k"}, "{")
    assert_invalid(cancel, "JSON", checkouts=1)


@pytest.mark.django_db
def test_a_product_id_for_a_line_item_names_the_variant_ids_bcp_chk_05(client: Client, headers: dict[str, str]) -> None:
    """Search results carry the product id (`prod_…`) beside `variants[].id`, and agents send the former for a line:
    "not available" read as sold out, so the answer names the ids a line takes (nothing created, BCP-CHK-05)."""
    from shop.models import Variant

    product_id = Variant.objects.get(sku="SKU-CAFE-500G").product.public_id
    body = {"line_items": [{"item": {"id": product_id}, "quantity": 1}]}

    answer = call(client, "post", "/checkout-sessions", headers, body)
    english = call(client, "post", "/checkout-sessions", {**headers, "Accept-Language": "en"}, body)
    unknown = call(
        client, "post", "/checkout-sessions", headers, {"line_items": [{"item": {"id": "prod_x"}, "quantity": 1}]}
    )

    assert answer.status_code == 200
    assert answer.json()["messages"][0] == {
        "type": "error",
        "code": "item_unavailable",
        "severity": "unrecoverable",
        "content": f"{product_id} é o id de um produto: em item.id use o id de uma variante (variants[].id): "
        "SKU-CAFE-500G.",
    }
    assert english.json()["messages"][0]["content"] == (
        f"{product_id} is a product id: in item.id use the id of one of its variants (variants[].id): SKU-CAFE-500G."
    )
    assert unknown.json()["messages"][0]["content"] == "O item prod_x não está disponível."
    assert Checkout.objects.count() == 0


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)  # real WSGI requests: each one commits and closes like production
def test_schemathesis_finds_no_server_errors_bcp_err_06(fake_platform: FakePlatform) -> None:
    # BCP-ERR-06: no 5xx for any generated input.
    """Fuzz every operation of the ninja OpenAPI (bounded examples); no response may be a 5xx."""
    catalog()
    agent_header = f'profile="{fake_platform.publish()}"'
    schema = schemathesis.openapi.from_wsgi("/bcp/v1/openapi.json", get_wsgi_application())
    failures: list[str] = []
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) == 18  # checkout 5, order 1 + its actions 2, catalog 3, cart 4, subscription 3

    for operation in operations:
        _fuzz(operation, agent_header, failures)
    assert failures == []


def _fuzz(operation: Any, agent_header: str, failures: list[str]) -> None:
    @given(case=operation.as_strategy())
    @hypothesis_settings(max_examples=15, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    def run(case: Any) -> None:
        case.headers = {**(case.headers or {}), "BCP-Agent": agent_header}
        response = case.call()
        if response.status_code >= 500:
            failures.append(f"{case.method} {case.formatted_path}: {response.status_code} {response.text[:200]}")

    run()


@pytest.mark.django_db
def test_unexpected_failure_is_500_without_internals_bcp_err_06(client: Client, headers: dict[str, str]) -> None:
    """BCP-ERR-06: 500 `internal_error`, no internals, nothing stored."""
    from django.db import connection

    def crash(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        if 'INSERT INTO "shop_checkout"' in sql:  # the checkout's write (one statement with its lines, issue 34)
            raise RuntimeError("segredo interno: /srv/app/settings.py")
        return execute(sql, params, many, context)

    with connection.execute_wrapper(crash):
        response = call(
            client,
            "post",
            "/checkout-sessions",
            headers,
            {"line_items": [{"item": {"id": "SKU-CAFE-500G"}, "quantity": 1}]},
        )
    assert response.status_code == 500
    assert response.json() == {"code": "internal_error", "content": "Erro interno; nada foi alterado."}
    assert Checkout.objects.count() == 0


@pytest.mark.django_db
@pytest.mark.parametrize("raw", ["", "{}", '{"payment": {"instruments": {}}}', '{"payment": '])
def test_complete_without_key_and_a_bad_body_is_key_required_first_bcp_idem_02(
    client: Client, headers: dict[str, str], raw: str
) -> None:
    """BCP-IDEM-02: complete without key → `idempotency_key_required`, whatever the body (headers before body)."""
    response = call(client, "post", "/checkout-sessions/chk_x/complete", headers, raw)
    assert (response.status_code, response.json()["code"]) == (400, "idempotency_key_required"), response.content


@pytest.mark.django_db
@pytest.mark.parametrize("raw", ["{}", '{"line_items": ['])
def test_no_bcp_agent_and_a_bad_body_is_the_profile_error_first_bcp_neg_01(client: Client, raw: str) -> None:
    """BCP §3 / BCP-NEG-01: the profile (BCP-Agent) is checked before the body."""
    response = call(client, "post", "/checkout-sessions", {}, raw)
    assert (response.status_code, response.json()["code"]) == (400, "invalid_profile_url"), response.content


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("method", "path", "allowed"),
    [
        ("delete", "/checkout-sessions/chk_qualquer", "GET, PUT"),
        ("patch", "/checkout-sessions/chk_qualquer", "GET, PUT"),
        ("get", "/catalog/search", "POST"),
    ],
)
def test_a_method_the_path_does_not_take_is_a_json_protocol_error_bcp_err_03(
    client: Client, headers: dict[str, str], method: str, path: str, allowed: str
) -> None:
    response = getattr(client, method)(f"/bcp/v1{path}", headers=headers)
    assert response.status_code == 405
    assert response["Content-Type"] == "application/json"
    assert sorted(response["Allow"].split(", ")) == sorted(allowed.split(", "))
    assert response.json() == {
        "code": "method_not_allowed",
        "content": f"O método {method.upper()} não é aceito em /bcp/v1{path}; use {response['Allow']}.",
    }
