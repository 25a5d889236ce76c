"""Tracking corrections (issue 33, minor): the carrier can be corrected with the code, the buyer page shows each
shipment once with its latest code (corrections replace), and the correction e-mail says it is a correction."""

from __future__ import annotations

import pytest
from django.core import mail
from django.test import Client

from orders.models import FulfillmentEvent, Order
from orders.services import order_ship, order_tracking_correct

pytestmark = pytest.mark.django_db


def _action(order: Order, slug: str) -> str:
    return f"/admin/orders/order/{order.public_id}/action/{slug}/"


def test_staff_correct_the_carrier_and_its_link(admin_client: Client, place_order, django_capture_on_commit_callbacks):
    order = place_order(lines=[("CAM", 3000, 1)])
    with django_capture_on_commit_callbacks(execute=True):
        shipment = order_ship(order_id=order.public_id, tracking_number="BR123456785BR", carrier="Correios")
    mail.outbox.clear()
    page = admin_client.get(_action(order, "tracking-fix")).content.decode()
    assert 'name="carrier"' in page and 'name="tracking_url"' in page
    # when the parcel actually left with Jadlog
    form = {
        "event": shipment.public_id,
        "tracking_number": "JD0001234567",
        "carrier": "Jadlog",
        "tracking_url": "https://www.jadlog.com.br/tracking?cte=JD0001234567",
    }
    with django_capture_on_commit_callbacks(execute=True):
        assert admin_client.post(_action(order, "tracking-fix"), form).status_code == 302
    correction = FulfillmentEvent.objects.get(order=order, type="tracking_corrected")
    assert (correction.tracking_number, correction.carrier, correction.tracking_url) == (
        "JD0001234567",
        "Jadlog",
        "https://www.jadlog.com.br/tracking?cte=JD0001234567",
    )
    assert correction.description == "Código de rastreio corrigido (era BR123456785BR / Correios)"
    assert [m.subject for m in mail.outbox] == [f"Loja Exemplo: Código de rastreio corrigido: pedido #{order.number}"]
    assert "Código de rastreio correto: JD0001234567 (Jadlog)" in mail.outbox[0].body


def test_the_carrier_alone_can_be_corrected(place_order, django_capture_on_commit_callbacks) -> None:
    order = place_order(lines=[("CAM", 3000, 1)])
    shipment = order_ship(order_id=order.public_id, tracking_number="LG0042", carrier="Loggi")
    fixed = order_tracking_correct(
        order_id=order.public_id, event_id=shipment.public_id, tracking_number="LG0042", carrier="Jadlog"
    )
    assert (fixed.tracking_number, fixed.carrier) == ("LG0042", "Jadlog")


def test_the_buyer_page_shows_only_the_latest_tracking(client: Client, place_order) -> None:
    order = place_order(lines=[("CAM", 3000, 1)])
    shipment = order_ship(order_id=order.public_id, tracking_number="BR123456785BR", carrier="Correios")
    for code in ("AA473124829GB", "PN987654326BR"):
        order_tracking_correct(order_id=order.public_id, event_id=shipment.public_id, tracking_number=code)
    html = client.get(f"/orders/{order.permalink_token}").content.decode()
    # one shipment row, with the last code; neither the old codes nor the correction rows
    assert html.count('data-testid="tracking-link"') == 1
    assert ">PN987654326BR</a>" in html
    assert "BR123456785BR" not in html and "AA473124829GB" not in html
    assert "Rastreio corrigido" not in html
