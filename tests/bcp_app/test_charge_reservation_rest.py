"""BCP REST (BCP-PAY, PIX.md §2.2): the Pix charge an update issues reserves the stock first, so a platform
whose buyer cannot get the goods is told before any charge is issued (issue 31)."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from payments.models import PixCharge
from shop.models import Variant
from tests.bcp_app.rest_helpers import call, full_update
from tests.bcp_app.test_statement_budgets import headers  # noqa: F401  (fixture)

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres, pytest.mark.usefixtures("bcp_settings")]


def _created(client: Client, headers: dict[str, str], quantity: int) -> dict[str, Any]:  # noqa: F811
    body = {"line_items": [{"item": {"id": "SKU-CAFE-500G"}, "quantity": quantity}], "buyer": {"email": "a@b.com.br"}}
    response = call(client, "post", "/checkout-sessions", {**headers, "Idempotency-Key": f"c{quantity}"}, body)
    assert response.status_code == 201, response.content
    return response.json()


def _select_pix(client: Client, headers: dict[str, str], checkout: dict[str, Any]) -> dict[str, Any]:  # noqa: F811
    """The address first (for the shipping options), then the option and Pix, as a platform does."""
    path = f"/checkout-sessions/{checkout['id']}"
    addressed = call(
        client, "put", path, {**headers, "Idempotency-Key": f"a{checkout['id']}"}, full_update(checkout, pix=False)
    )
    body = full_update(addressed.json())
    answer = call(client, "put", path, {**headers, "Idempotency-Key": f"p{checkout['id']}"}, body)
    assert answer.status_code == 200, answer.content
    return answer.json()


def test_pix_update_for_units_another_charge_holds_is_refused_before_charging(
    client: Client,
    headers: dict[str, str],  # noqa: F811
) -> None:
    # given two platform checkouts created while 10 units were free: 10 coffees and 1 coffee
    first, second = _created(client, headers, 10), _created(client, headers, 1)
    # when the first selects Pix, its charge holds the 10 units
    first = _select_pix(client, headers, first)
    assert first["status"] == "ready_for_complete", first["messages"]
    assert Variant.objects.get().stock == 0
    # then the second selecting Pix is refused in Portuguese, before any charge is issued for it
    refused = _select_pix(client, headers, second)
    assert refused["status"] == "incomplete"
    assert any(m["code"] == "out_of_stock" and "sem estoque" in m["content"] for m in refused["messages"]), refused
    assert list(PixCharge.objects.values_list("reference", flat=True)) == [first["id"]]
    assert Variant.objects.get().stock == 0
