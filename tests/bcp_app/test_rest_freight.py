"""Agents see the carriers' services as fulfillment options (issue 36): a BCP REST checkout with Melhor Envio
configured (a local fake) offers its services and charges the selected one, like the storefront."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from tests.bcp_app.bcp_fixtures import FakePlatform, agent
from tests.bcp_app.rest_helpers import call, create, full_update
from tests.shop.freight_helpers import SHIRT, freight_shop, melhorenvio  # noqa: F401 (fixtures)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("bcp_settings")]


@pytest.fixture
def headers(fake_platform: FakePlatform, settings: Any) -> dict[str, str]:
    settings.BCP_PIX_SANDBOX = True
    settings.PIX_SANDBOX_WEBHOOK_URL = ""
    return agent(fake_platform.publish())


@pytest.mark.usefixtures("melhorenvio")
def test_rest_fulfillment_options_are_the_carrier_services(client: Client, headers: dict[str, str]) -> None:
    created = create(client, headers, {"line_items": [{"item": {"id": SHIRT}, "quantity": 1}]}).json()
    path = f"/checkout-sessions/{created['id']}"
    with_address = call(client, "put", path, headers, full_update(created, option=None)).json()
    group = with_address["fulfillment"]["methods"][0]["groups"][0]
    assert [(o["id"], o["title"], o["totals"][-1]["amount"]) for o in group["options"]] == [
        ("melhorenvio:1", "PAC (Correios)", 1500),
        ("melhorenvio:3", ".Package (Jadlog)", 1800),
        ("melhorenvio:2", "SEDEX (Correios)", 2200),
    ]
    chosen = call(client, "put", path, headers, full_update(with_address, option="melhorenvio:3")).json()
    assert chosen["totals"][1] == {"type": "fulfillment", "display_text": ".Package (Jadlog)", "amount": 1800}
