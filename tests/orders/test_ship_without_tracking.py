"""A shipment by the store's own courier (motoboy, "Entrega local"): no tracking code, yet a valid BCP order and a
clean buyer page; a Correios shipment still needs its code, and a typed code is still checked (QA F7)."""

from __future__ import annotations

import pytest
from django.test import Client

from orders.errors import OrderError
from orders.models import FulfillmentEvent
from orders.selectors import order_bcp_payload
from orders.services import order_ship
from tests.bcp_app.schema_check import errors

pytestmark = pytest.mark.django_db


def _action(order, slug: str) -> str:
    return f"/admin/orders/order/{order.public_id}/action/{slug}/"


def test_own_courier_ships_without_a_code_and_the_order_stays_valid_bcp_ord(client: Client, place_order) -> None:
    # given an order the buyer chose to get by the store's motoboy
    order = place_order(carrier="Entrega local")
    # when the merchant ships it without a tracking code (and names no carrier)
    event = order_ship(order_id=order.public_id, tracking_number="")
    # then it is shipped, by the method's carrier
    order.refresh_from_db()
    assert (order.status, event.tracking_number, event.carrier) == ("shipped", "", "Entrega local")
    # and the BCP order (webhook, REST, MCP) has no empty or null tracking members and validates
    payload = order_bcp_payload(order)
    shipped = [e for e in payload["fulfillment"]["events"] if e["type"] == "shipped"]
    assert shipped[0]["carrier"] == "Entrega local"
    assert "tracking_number" not in shipped[0] and "tracking_url" not in shipped[0]
    assert errors(shipped[0], "shopping/types/fulfillment_event.json") == []
    assert errors(payload["fulfillment"], "shopping/order.json#/properties/fulfillment") == []
    # and the buyer page shows the shipment without an empty "Rastreio:" label
    html = client.get(f"/orders/{order.permalink_token}").content.decode()
    assert "event-shipped" in html
    assert "Rastreio" not in html


def test_correios_still_needs_a_code_and_a_typed_code_is_still_checked(place_order) -> None:
    correios = place_order(carrier="Correios")
    with pytest.raises(OrderError) as error:
        order_ship(order_id=correios.public_id, tracking_number="")
    assert (error.value.field, error.value.code) == ("tracking_number", "tracking_required")
    with pytest.raises(OrderError) as error:
        order_ship(order_id=correios.public_id, tracking_number="BR123456789BR")  # wrong check digit
    assert (error.value.field, error.value.code) == ("tracking_number", "bad_tracking")
    motoboy = place_order(carrier="Entrega local")
    with pytest.raises(OrderError) as error:
        order_ship(order_id=motoboy.public_id, tracking_number="BR 12/3")
    assert (error.value.field, error.value.code) == ("tracking_number", "bad_tracking")
    assert not FulfillmentEvent.objects.exists()


def test_admin_ship_page_starts_from_the_method_carrier_and_takes_no_code(admin_client: Client, place_order) -> None:
    order = place_order(lines=[("CAM", 3000, 2)], carrier="Entrega local")
    line = order.lines.get()
    page = admin_client.get(_action(order, "ship")).content.decode()
    assert 'name="carrier" value="Entrega local"' in page
    response = admin_client.post(
        _action(order, "ship"), {"tracking_number": "", "carrier": "Entrega local", f"qty_{line.public_id}": "2"}
    )
    assert response.status_code == 302
    event = FulfillmentEvent.objects.get(order=order)
    assert (event.type, event.tracking_number, event.carrier) == ("shipped", "", "Entrega local")
    messages = admin_client.get(response["Location"]).content.decode()
    assert "Envio registrado (sem código de rastreio)." in messages


def test_admin_ship_page_refuses_a_correios_shipment_without_code_on_the_field(
    admin_client: Client, place_order
) -> None:
    order = place_order(carrier="Correios")
    line = order.lines.get()
    response = admin_client.post(
        _action(order, "ship"), {"tracking_number": "", "carrier": "Correios", f"qty_{line.public_id}": "1"}
    )
    assert response.status_code == 200
    assert "todo envio pelos Correios tem um" in response.content.decode()
    assert not FulfillmentEvent.objects.exists()
