"""A control character is named by the one JSONPath form of every other field error, on REST, MCP and A2A (F2).

QA walk: a bell (U+0007) in `buyer.first_name` was refused everywhere, but named `$.buyer … em buyer.first_name`
over REST, `$.checkout … em checkout.buyer.first_name` over MCP and `message.parts[0].data.buyer.first_name` over
A2A, while `test_field_paths` shows the one form the README promises (`$.line_items[0].quantity`; over MCP in the
tool's arguments, `$.checkout.line_items[0].quantity`). REST through the Django client, MCP with the official
`mcp` client, A2A with the a2a-sdk client against live uvicorn. BCP-ERR-05.
"""

from __future__ import annotations

import pytest
from django.test import Client

from shop.models import Checkout
from tests.bcp_app import test_mcp_checkout, test_mcp_helpers
from tests.bcp_app.bcp_fixtures import FakePlatform, agent
from tests.bcp_app.rest_helpers import call, catalog
from tests.bcp_app.test_a2a_helpers import (
    LiveServer,
    live_fixture,  # noqa: F401 (fixture "live")
    sdk_send,
    server_fixture,  # noqa: F401 (fixture "server")
)
from tests.bcp_app.test_mcp_checkout import Shopper

shopper = test_mcp_checkout.shopper
live_mcp = test_mcp_helpers.live_mcp

LINE = {"item": {"id": "SKU-CAFE-500G"}, "quantity": 1}
BELL = "caractere de controle U+0007 não é permitido"


@pytest.mark.django_db
@pytest.mark.usefixtures("bcp_settings")
def test_rest_names_the_control_character_by_its_jsonpath(client: Client, fake_platform: FakePlatform) -> None:
    catalog()
    headers = agent(fake_platform.publish())

    bell = call(client, "post", "/checkout-sessions", headers, {"line_items": [LINE], "buyer": {"first_name": "A\x07"}})
    zero = call(client, "post", "/checkout-sessions", headers, {"line_items": [{**LINE, "quantity": 0}]})

    assert bell.json() == {
        "code": "invalid_request",
        "content": f"Campo inválido $.buyer.first_name: {BELL}",
        "fields": {"$.buyer.first_name": BELL},
    }
    assert zero.json()["content"].startswith("Campo inválido $.line_items[0].quantity: ")  # the same form
    assert Checkout.objects.count() == 0


@pytest.mark.postgres
def test_mcp_names_the_control_character_by_its_jsonpath_in_the_arguments(shopper: Shopper) -> None:
    bell = shopper.error("create_checkout", checkout={"line_items": [LINE], "buyer": {"first_name": "A\x07"}})
    key = shopper.error("search_catalog", catalog={"query": "café", "signals": {"k\x07": "v"}})

    assert bell.code == -32602
    assert bell.data["fields"] == {"$.checkout.buyer.first_name": BELL}
    assert bell.data["content"] == f"Argumentos inválidos para create_checkout: $.checkout.buyer.first_name: {BELL}"
    # a key holding one names its member, escaped as RFC 9535 writes it (never the raw control in the text)
    assert key.data["fields"] == {"$.catalog.signals['k\\u0007']": BELL}
    assert Checkout.objects.count() == 0


@pytest.mark.postgres
@pytest.mark.e2e
def test_a2a_names_the_control_character_by_its_jsonpath_in_the_data_part(server: LiveServer) -> None:
    from a2a.utils.errors import InvalidParamsError

    with pytest.raises(InvalidParamsError) as in_data:
        sdk_send(server.base_url, [{"data": {"action": "update_checkout", "buyer": {"first_name": "A\x07"}}}])
    with pytest.raises(InvalidParamsError) as in_text:
        sdk_send(server.base_url, [{"text": "quero café\x07"}])

    assert str(in_data.value.message) == f"Campo inválido $.buyer.first_name: {BELL}"
    assert str(in_text.value.message) == f"Campo inválido $.message.parts[0].text: {BELL}"
