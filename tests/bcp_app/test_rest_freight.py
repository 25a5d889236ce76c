"""Agents see the carriers' services as fulfillment options (issue 36): a BCP REST checkout with Melhor Envio
configured (a local fake) offers its services and charges the selected one, like the storefront."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from tests.bcp_app.bcp_fixtures import FakePlatform, agent
from tests.bcp_app.rest_helpers import BUYER, SP, call, catalog, create, full_update
from tests.shop.checkout_factories import make_location
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


def _lines(checkout: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {"id": li["id"], "item": {"id": li["item"]["id"]}, "quantity": li["quantity"]} for li in checkout["line_items"]
    ]


def test_fulfillment_only_when_the_extension_is_negotiated_bcp_ful_01(
    client: Client, fake_platform: FakePlatform
) -> None:
    """BCP-FUL-01: a platform whose profile lacks the fulfillment extension sees no `fulfillment` (its
    fulfillment input is ignored); one that lists it sees the methods."""
    catalog()
    profile = fake_platform.profile()
    del profile["ucp"]["capabilities"]["br.dev.bcp.shopping.fulfillment"]
    without = agent(fake_platform.serve_json("/sem-frete.json", profile))
    body = {
        "line_items": [{"item": {"id": "SKU-CAFE-500G"}, "quantity": 1}],
        "fulfillment": {"methods": [{"type": "shipping", "destinations": [SP]}]},
    }
    plain = create(client, without, body).json()
    assert "fulfillment" not in plain
    assert "br.dev.bcp.shopping.fulfillment" not in plain["ucp"]["capabilities"]
    assert [t["type"] for t in plain["totals"]] == ["subtotal", "total"]
    extended = create(client, agent(fake_platform.publish()), body).json()
    assert extended["fulfillment"]["methods"][0]["type"] == "shipping"
    assert "br.dev.bcp.shopping.fulfillment" in extended["ucp"]["capabilities"]


def test_methods_destinations_groups_and_options_have_their_members_bcp_ful_02_ful_06(
    client: Client, headers: dict[str, str]
) -> None:
    """BCP-FUL-02 (methods `id`, `type`, `line_item_ids`; destinations `type` + `id`; `shipping_address` with the
    address; `business_location` with `name`) and BCP-FUL-06 (one group per method with `id` + `line_item_ids`;
    options with `id`, a title unique among siblings, `totals` and a Description object)."""
    catalog()
    make_location()
    created = create(client, headers).json()
    path = f"/checkout-sessions/{created['id']}"
    line_ids = [li["id"] for li in created["line_items"]]
    base = {"line_items": _lines(created), "buyer": BUYER}
    shipping = call(
        client, "put", path, headers, {**base, "fulfillment": {"methods": [{"type": "shipping", "destinations": [SP]}]}}
    ).json()
    pickup = call(client, "put", path, headers, {**base, "fulfillment": {"methods": [{"type": "pickup"}]}}).json()
    for body, method_type, destination_type in (
        (shipping, "shipping", "shipping_address"),
        (pickup, "pickup", "business_location"),
    ):
        (method,) = body["fulfillment"]["methods"]
        assert (method["type"], method["line_item_ids"]) == (method_type, line_ids) and method["id"]
        assert [d["type"] for d in method["destinations"]] == [destination_type]
        assert all(d["id"] for d in method["destinations"])
        (group,) = method["groups"]
        assert group["id"] and group["line_item_ids"] == line_ids
        titles = [o["title"] for o in group["options"]]
        assert len(titles) == len(set(titles)) and titles
        for option in group["options"]:
            assert option["id"] and set(option["description"]) == {"plain"}
            assert option["title"] not in option["description"]["plain"]
            assert [t["type"] for t in option["totals"]][-1] == "total"
    address = shipping["fulfillment"]["methods"][0]["destinations"][0]
    assert {k: address[k] for k in SP} == SP
    location = pickup["fulfillment"]["methods"][0]["destinations"][0]
    assert location["name"] == "Loja Paulista"
    assert location["address"]["street_address"] == "Avenida Paulista, 1000"


def test_platform_addresses_get_business_ids_and_written_locations_are_ignored_bcp_ful_03(
    client: Client, headers: dict[str, str]
) -> None:
    """BCP-FUL-03: a shipping address the platform writes (even with an id of its own) gets an id of the
    business; a pickup destination the platform writes is not taken: the business's locations are shown."""
    catalog()
    location = make_location()
    created = create(client, headers).json()
    path = f"/checkout-sessions/{created['id']}"
    base = {"line_items": _lines(created), "buyer": BUYER}
    shipped = call(
        client,
        "put",
        path,
        headers,
        {**base, "fulfillment": {"methods": [{"type": "shipping", "destinations": [{**SP, "id": "casa-da-ana"}]}]}},
    ).json()
    (destination,) = shipped["fulfillment"]["methods"][0]["destinations"]
    assert destination["id"].startswith("dest_") and destination["id"] != "casa-da-ana"
    written = {
        "type": "business_location",
        "id": location.public_id,
        "name": "Loja inventada",
        "address": {"street_address": "Rua Falsa, 1", "address_country": "BR"},
    }
    picked = call(
        client,
        "put",
        path,
        headers,
        {**base, "fulfillment": {"methods": [{"type": "pickup", "destinations": [written, {**written, "id": "x"}]}]}},
    ).json()
    destinations = picked["fulfillment"]["methods"][0]["destinations"]
    assert [(d["id"], d["name"], d["address"]["street_address"]) for d in destinations] == [
        (location.public_id, "Loja Paulista", "Avenida Paulista, 1000")
    ]


def test_an_accepted_destination_is_echoed_and_matched_once_bcp_ful_04(client: Client, headers: dict[str, str]) -> None:
    """BCP-FUL-04: the selected destination id is echoed, exactly one destination carries it, and it is the one
    selected (a pickup location id the platform picks among the business's)."""
    catalog()
    make_location()
    other = make_location("Loja Pinheiros")
    created = create(client, headers).json()
    path = f"/checkout-sessions/{created['id']}"
    base = {"line_items": _lines(created), "buyer": BUYER}
    body = call(
        client,
        "put",
        path,
        headers,
        {**base, "fulfillment": {"methods": [{"type": "pickup", "selected_destination_id": other.public_id}]}},
    ).json()
    method = body["fulfillment"]["methods"][0]
    assert method["selected_destination_id"] == other.public_id
    matching = [d for d in method["destinations"] if d["id"] == other.public_id]
    assert [d["name"] for d in matching] == ["Loja Pinheiros"]


def test_the_selected_option_is_charged_and_required_before_ready_bcp_ful_07_ful_08(
    client: Client, headers: dict[str, str]
) -> None:
    """BCP-FUL-08: with an address but no option the checkout is not ready (the error names the group's
    `selected_option_id`); BCP-FUL-07: the selected option's cost is the `fulfillment` total."""
    catalog()
    created = create(client, headers).json()
    path = f"/checkout-sessions/{created['id']}"
    no_option = call(client, "put", path, headers, full_update(created, option=None)).json()
    assert no_option["status"] == "incomplete"
    assert ("field_required", "$.fulfillment.methods[0].groups[0].selected_option_id") in [
        (m["code"], m["path"]) for m in no_option["messages"]
    ]
    assert "fulfillment" not in [t["type"] for t in no_option["totals"]]
    sedex = call(client, "put", path, headers, full_update(no_option, option="sedex")).json()
    assert sedex["status"] == "ready_for_complete"
    option = next(o for o in sedex["fulfillment"]["methods"][0]["groups"][0]["options"] if o["id"] == "sedex")
    cost = option["totals"][-1]["amount"]
    assert sedex["totals"] == [
        {"type": "subtotal", "amount": 8580},
        {"type": "fulfillment", "display_text": "SEDEX", "amount": cost},
        {"type": "total", "amount": 8580 + cost},
    ]


def test_without_the_fulfillment_extension_the_buyer_chooses_the_delivery_bcp_ful_01_chk_08(
    client: Client, fake_platform: FakePlatform
) -> None:
    """BCP-FUL-01 / BCP-NEG-08 leave a platform without the fulfillment extension no way to name a delivery, yet
    a physical item needs one (BCP §9). Its checkout answered `incomplete` with a `recoverable` error at
    `$.fulfillment`, "the platform fixes input" (BCP §5.1), which it cannot: it stayed stuck. The buyer chooses
    the delivery on the shop's page: `requires_escalation`, `continue_url`, severity `requires_buyer_input`
    (BCP-CHK-08). A platform that negotiated the extension still fixes it itself (`recoverable`)."""
    catalog()
    profile = fake_platform.profile()
    del profile["ucp"]["capabilities"]["br.dev.bcp.shopping.fulfillment"]
    without = agent(fake_platform.serve_json("/sem-frete.json", profile))
    body = {"line_items": [{"item": {"id": "SKU-CAFE-500G"}, "quantity": 1}], "buyer": BUYER}

    handed = create(client, without, body).json()
    extended = create(client, agent(fake_platform.publish()), body).json()

    assert handed["status"] == "requires_escalation"
    assert handed["continue_url"].startswith("https://loja.example.com.br/checkout/" + handed["id"])
    assert [(m["code"], m["severity"], m["path"]) for m in handed["messages"] if m["type"] == "error"] == [
        ("field_required", "requires_buyer_input", "$.fulfillment")
    ]
    # the words say who chooses, not "enter the address" to an agent whose `fulfillment` is ignored
    assert [m["content"] for m in handed["messages"] if m["path"] == "$.fulfillment"] == [
        "O comprador escolhe a entrega (endereço ou retirada na loja) pelo continue_url."
    ]
    assert "fulfillment" not in handed
    assert extended["status"] == "incomplete"
    assert [(m["code"], m["severity"]) for m in extended["messages"] if m["type"] == "error"] == [
        ("field_required", "recoverable")
    ]
