"""Fulfillment events, line status derivation (BCP §7) and expectation services."""

from __future__ import annotations

from dataclasses import replace
from datetime import date, datetime
from zoneinfo import ZoneInfo

import pytest
from django.core import mail
from django.utils import translation

from orders.arrival import arrival_window
from orders.errors import OrderError
from orders.models import AppendOnlyError, FulfillmentEvent, derive_line_status
from orders.selectors import order_bcp_payload, order_for_bcp
from orders.services import (
    expectation_merge,
    expectation_split,
    expectation_update,
    fulfillment_event_create,
    order_cancel,
    order_mark_delivered,
    order_ship,
)
from orders.types import LineQuantity

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("total", "fulfilled", "expected"),
    [
        (0, 0, "removed"),
        (2, 2, "fulfilled"),
        (3, 1, "partial"),
        (3, 0, "processing"),
        (1, 1, "fulfilled"),
    ],
)
def test_line_status_derivation_bcp_ord_06(total, fulfilled, expected):
    """BCP-ORD-06: total == 0 → removed; fulfilled == total → fulfilled; fulfilled > 0 → partial; else processing."""
    assert derive_line_status(total=total, fulfilled=fulfilled) == expected


def test_partial_shipment_then_rest_moves_statuses(place_order, django_capture_on_commit_callbacks):
    # given an order of 3 shirts and 1 cap
    order = place_order(lines=[("CAM", 3000, 3), ("BONE", 2000, 1)])
    shirt, cap = order.lines.all()
    # when 1 shirt ships
    with django_capture_on_commit_callbacks(execute=True):
        event = order_ship(
            order_id=order.public_id, tracking_number="br123456785br", lines=[LineQuantity(shirt.public_id, 1)]
        )
    # then the shirt is partial, the cap processing, the order partially shipped, the Correios URL built
    shirt.refresh_from_db()
    cap.refresh_from_db()
    order.refresh_from_db()
    assert (shirt.quantity_fulfilled, shirt.status, cap.status) == (1, "partial", "processing")
    assert order.status == "partially_shipped"
    assert event.tracking_number == "BR123456785BR"
    assert event.carrier == "Correios"
    assert event.tracking_url == "https://rastreamento.correios.com.br/app/index.php?objeto=BR123456785BR"
    # when the rest ships without naming lines
    with django_capture_on_commit_callbacks(execute=True):
        order_ship(order_id=order.public_id, tracking_number="BR987654326BR")
    order.refresh_from_db()
    assert [(line.quantity_fulfilled, line.status) for line in order.lines.all()] == [
        (3, "fulfilled"),
        (1, "fulfilled"),
    ]
    assert order.status == "shipped"
    # when everything is delivered
    with django_capture_on_commit_callbacks(execute=True):
        order_mark_delivered(order_id=order.public_id)
    order.refresh_from_db()
    assert order.status == "delivered"
    assert [m.subject.split(": ", 1)[1] for m in mail.outbox] == [
        f"Recebemos seu pedido #{order.number}",
        f"Parte do seu pedido #{order.number} foi enviada",  # the cap and 2 shirts were still here
        f"Seu pedido #{order.number} foi enviado",
        f"Seu pedido #{order.number} foi entregue",
    ]
    assert "BR123456785BR" in mail.outbox[1].body
    # each shipment e-mail lists what that shipment carried, nothing else
    assert "1× Produto CAM (CAM)" in mail.outbox[1].body and "BONE" not in mail.outbox[1].body
    assert "2× Produto CAM (CAM)" in mail.outbox[2].body and "1× Produto BONE (BONE)" in mail.outbox[2].body


def test_shipping_more_than_ordered_is_refused(place_order):
    order = place_order(lines=[("CAM", 3000, 2)])
    line = order.lines.get()
    with pytest.raises(OrderError) as error:
        order_ship(order_id=order.public_id, tracking_number="BR123456785BR", lines=[LineQuantity(line.public_id, 3)])
    assert error.value.field == "lines[0].quantity"
    assert error.value.code == "quantity_exceeded"
    assert error.value.message == "Não é possível enviar 3 unidades de CAM: no máximo 2."
    assert FulfillmentEvent.objects.filter(order=order).count() == 0
    line.refresh_from_db()
    assert line.quantity_shipped == 0
    # one unit more than is left: the singular (no "unidade(s)")
    order_ship(order_id=order.public_id, tracking_number="BR123456785BR", lines=[LineQuantity(line.public_id, 2)])
    with pytest.raises(OrderError) as error:
        order_ship(order_id=order.public_id, tracking_number="BR123456785BR", lines=[LineQuantity(line.public_id, 1)])
    assert error.value.message == "Não é possível enviar 1 unidade de CAM: no máximo 0."


def test_shipping_twice_the_same_items_is_refused(place_order):
    order = place_order(lines=[("CAM", 3000, 1)])
    order_ship(order_id=order.public_id, tracking_number="BR123456785BR")
    with pytest.raises(OrderError) as error:
        order_ship(order_id=order.public_id, tracking_number="BR123456785BR")
    assert error.value.field == "lines"


def test_shipment_by_correios_needs_a_tracking_code(place_order):
    order = place_order()
    with pytest.raises(OrderError) as error:
        order_ship(order_id=order.public_id, tracking_number="", carrier="Correios")
    assert error.value.field == "tracking_number"


def test_unknown_line_and_zero_quantity_are_named(place_order):
    order = place_order()
    line = order.lines.get()
    with pytest.raises(OrderError) as error:
        fulfillment_event_create(order_id=order.public_id, type="processing", lines=[LineQuantity("li_nope", 1)])
    assert error.value.field == "lines[0].id"
    with pytest.raises(OrderError) as error:
        fulfillment_event_create(order_id=order.public_id, type="processing", lines=[LineQuantity(line.public_id, 0)])
    assert error.value.field == "lines[0].quantity"
    with pytest.raises(OrderError) as error:
        fulfillment_event_create(order_id=order.public_id, type="Shipped!", lines=[LineQuantity(line.public_id, 1)])
    assert error.value.field == "type"


def test_acting_on_a_canceled_order_is_refused(place_order):
    order = place_order()
    order_cancel(order_id=order.public_id, reason="Cliente desistiu")
    with pytest.raises(OrderError) as error:
        order_ship(order_id=order.public_id, tracking_number="BR123456785BR")
    assert error.value.code == "order_canceled"
    with pytest.raises(OrderError) as error:
        order_cancel(order_id=order.public_id, reason="de novo")
    assert error.value.code == "order_canceled"


def test_returned_to_sender_allows_shipping_again(place_order):
    order = place_order(lines=[("CAM", 3000, 1)])
    line = order.lines.get()
    order_ship(order_id=order.public_id, tracking_number="BR123456785BR")
    fulfillment_event_create(order_id=order.public_id, type="returned_to_sender", description="Endereço não encontrado")
    line.refresh_from_db()
    assert (line.quantity_shipped, line.status) == (0, "processing")
    order_ship(order_id=order.public_id, tracking_number="BR111111115BR")
    line.refresh_from_db()
    assert line.status == "fulfilled"


def test_pickup_delivered_directly_fulfils(place_order):
    order = place_order(method="pickup", lines=[("CAM", 3000, 2)])
    order_mark_delivered(order_id=order.public_id, description="Retirado na loja")
    order.refresh_from_db()
    assert order.status == "delivered"
    assert order.lines.get().status == "fulfilled"


def test_fulfillment_events_are_append_only_bcp_ord_08(place_order):
    order = place_order()
    event = fulfillment_event_create(order_id=order.public_id, type="processing")
    event.description = "changed"
    with pytest.raises(AppendOnlyError):
        event.save()
    with pytest.raises(AppendOnlyError):
        event.delete()


def test_expectation_split_merge_update_bcp_ord_07(place_order):
    order = place_order(lines=[("CAM", 3000, 2), ("BONE", 2000, 1)])
    shirt, cap = order.lines.all()
    original = order.expectations.get()
    # when the cap is back-ordered into its own expectation
    split = expectation_split(
        order_id=order.public_id,
        expectation_id=original.public_id,
        lines=[LineQuantity(cap.public_id, 1)],
        description="Chega em 10 dias úteis",
        fulfillable_on="2026-12-10T12:00:00-03:00",
    )
    original.refresh_from_db()
    assert original.line_items == [{"id": shirt.public_id, "quantity": 2}]
    assert split.line_items == [{"id": cap.public_id, "quantity": 1}]
    assert split.fulfillable_on == "2026-12-10T15:00:00Z"
    # when the date changes
    expectation_update(order_id=order.public_id, expectation_id=split.public_id, fulfillable_on="now")
    split.refresh_from_db()
    assert split.fulfillable_on == "now"
    # when both are merged again
    merged = expectation_merge(order_id=order.public_id, expectation_ids=[original.public_id, split.public_id])
    assert merged.line_items == [{"id": shirt.public_id, "quantity": 2}, {"id": cap.public_id, "quantity": 1}]
    assert order.expectations.count() == 1


def test_a_split_keeps_the_quotes_days_with_its_words_and_new_words_drop_them_bcp_ord_07(place_order):
    """The quote's business days date the arrival only while the expectation says the quote's words: a part split
    off with them keeps them; a part given new words ("Chega em 10 dias úteis") or an expectation re-worded by staff
    no longer does, so no date contradicts what the buyer reads."""
    order = place_order(lines=[("CAM", 3000, 2), ("BONE", 2000, 2)])
    shirt, cap = order.lines.all()
    original = order.expectations.get()
    order.expectations.update(days_min=3, days_max=5, days_from="shipping")  # as a checkout with the quote's days
    same = expectation_split(
        order_id=order.public_id, expectation_id=original.public_id, lines=[LineQuantity(cap.public_id, 1)]
    )
    later = expectation_split(
        order_id=order.public_id,
        expectation_id=original.public_id,
        lines=[LineQuantity(shirt.public_id, 1)],
        description="Chega em 10 dias úteis",
    )
    assert (same.description, same.days_min, same.days_max, same.days_from) == (
        original.description, 3, 5, "shipping"
    )  # fmt: skip
    assert (later.days_min, later.days_max, later.days_from) == (None, None, "")
    expectation_update(order_id=order.public_id, expectation_id=original.public_id, fulfillable_on="now")
    original.refresh_from_db()
    assert (original.days_min, original.days_max) == (3, 5)  # a new date alone keeps the words and the days
    expectation_update(order_id=order.public_id, expectation_id=original.public_id, description="Chega em 8 dias")
    original.refresh_from_db()
    assert (original.description, original.days_min, original.days_max, original.days_from) == (
        "Chega em 8 dias", None, None, ""
    )  # fmt: skip


def test_the_shops_handling_days_count_from_the_payment_and_a_split_keeps_them_bcp_ord_07(
    django_capture_on_commit_callbacks,
):
    """A shop that posts within 2 business days and a quote of 3 to 5: the expectation counts 5 to 7 from the
    payment; shipped, the carrier's 3 to 5 from the shipment. A part split off with the same words keeps the handling
    days; new words drop them with the rest of the days."""
    from orders.services import order_place_from_checkout
    from tests.orders.conftest import make_checkout

    placed = replace(
        make_checkout(lines=[("CAM", 3000, 2), ("BONE", 2000, 2)]), fulfillment_days=(3, 5), handling_days=2
    )
    with django_capture_on_commit_callbacks(execute=True):
        order = order_place_from_checkout(checkout=placed)
    original = order.expectations.get()
    assert (original.days_min, original.days_max, original.days_from, original.handling_days) == (5, 7, "payment", 2)
    # paid on Friday 13 Nov 2026: Mon 23 to Wed 25 (Fri 20 Consciência Negra); shipped Monday 16: Thu 19 to Tue 24
    order.placed_at = datetime(2026, 11, 13, 10, 0, tzinfo=ZoneInfo("America/Sao_Paulo"))
    monday = datetime(2026, 11, 16, 16, 0, tzinfo=ZoneInfo("America/Sao_Paulo"))
    assert arrival_window(original, order, shipped_at=None) == (date(2026, 11, 23), date(2026, 11, 25))
    assert arrival_window(original, order, shipped_at=monday) == (date(2026, 11, 19), date(2026, 11, 24))
    shirt, cap = order.lines.all()
    same = expectation_split(
        order_id=order.public_id, expectation_id=original.public_id, lines=[LineQuantity(cap.public_id, 1)]
    )
    later = expectation_split(
        order_id=order.public_id,
        expectation_id=original.public_id,
        lines=[LineQuantity(shirt.public_id, 1)],
        description="Chega em 10 dias úteis",
    )
    assert (same.days_min, same.days_max, same.days_from, same.handling_days) == (5, 7, "payment", 2)
    assert (later.days_min, later.days_max, later.days_from, later.handling_days) == (None, None, "", None)


def test_split_cannot_empty_the_source(place_order):
    order = place_order(lines=[("CAM", 3000, 1)])
    line = order.lines.get()
    expectation = order.expectations.get()
    with pytest.raises(OrderError) as error:
        expectation_split(
            order_id=order.public_id, expectation_id=expectation.public_id, lines=[LineQuantity(line.public_id, 1)]
        )
    assert error.value.field == "lines"


def test_bcp_payload_matches_the_seed_shape_bcp_ord_04(place_order):
    """The seed's order (000_3534cee046400045): one shoe line, delivered, totals subtotal/fulfillment/tax/total."""
    order = place_order(lines=[("prod_shoes", 3000, 1)], freight=800)
    line = order.lines.get()
    shipped = order_ship(order_id=order.public_id, tracking_number="BR123456785BR")  # "entregue" needs it shipped
    event = order_mark_delivered(order_id=order.public_id, description="Entregue na portaria")
    expectation_update(
        order_id=order.public_id, expectation_id=order.expectations.get().public_id, description="Entregue"
    )
    payload = order_bcp_payload(order_for_bcp(order.public_id))
    assert payload["line_items"] == [
        {
            "id": line.public_id,
            "item": {"id": "prod_shoes", "title": "Produto prod_shoes", "price": 3000, "image_url": line.image_url},
            "quantity": {"total": 1, "fulfilled": 1},
            "totals": [{"type": "subtotal", "amount": 3000}, {"type": "total", "amount": 3000}],
            "status": "fulfilled",
        }
    ]
    assert payload["fulfillment"]["expectations"][0]["destination"] == {
        "street_address": "Rua das Flores, 123",
        "extended_address": "Apto 45 - Jardim Paulista",
        "address_locality": "São Paulo",
        "address_region": "SP",
        "address_country": "BR",
        "postal_code": "01310-100",
        "first_name": "Ana",
        "last_name": "Souza",
    }
    assert payload["fulfillment"]["expectations"][0]["description"] == "Entregue"
    assert payload["fulfillment"]["events"][0]["id"] == shipped.public_id
    assert payload["fulfillment"]["events"][1:] == [
        {
            "id": event.public_id,
            "occurred_at": event.occurred_at.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "type": "delivered",
            "line_items": [{"id": line.public_id, "quantity": 1}],
            "description": "Entregue na portaria",
        }
    ]
    assert payload["checkout_id"] == order.checkout_id
    assert payload["currency"] == "BRL"
    assert payload["adjustments"] == []
    assert payload["totals"][-1] == {"type": "total", "amount": 3800}


def test_delivered_needs_a_shipment_on_a_shipping_order(place_order):
    """The rule lives in the service (admin, DRF API and any caller alike): a carrier delivers what was shipped."""
    order = place_order(lines=[("CAM", 3000, 2)])
    line = order.lines.get()
    with pytest.raises(OrderError) as error:
        order_mark_delivered(order_id=order.public_id)
    assert (error.value.field, error.value.code) == ("lines", "nothing_left")
    number = order.number
    assert error.value.message == f"Nada foi enviado ainda no pedido #{number}: registre o envio antes da entrega."
    order_ship(order_id=order.public_id, tracking_number="BR123456785BR", lines=[LineQuantity(line.public_id, 1)])
    with pytest.raises(OrderError) as error:
        order_mark_delivered(order_id=order.public_id, lines=[LineQuantity(line.public_id, 2)])
    assert (error.value.field, error.value.code) == ("lines[0].quantity", "quantity_exceeded")
    assert error.value.message == (
        "Não é possível marcar como entregue 2 unidades de CAM: só 1 foi enviada e ainda não entregue."
    )
    with translation.override("en"):  # each count takes its own plural in English too
        assert (
            error.value.message == "Cannot mark 2 units of CAM as delivered: only 1 was shipped and not delivered yet."
        )
    order_mark_delivered(order_id=order.public_id, lines=[LineQuantity(line.public_id, 1)])
    line.refresh_from_db()
    assert (line.quantity_shipped, line.quantity_delivered) == (1, 1)


@pytest.mark.parametrize("code", ["BR123456784BR", "BR12345678BR", "XYZ"])
def test_wrong_correios_code_is_refused_by_the_service(place_order, code):
    order = place_order(lines=[("CAM", 3000, 1)])
    with pytest.raises(OrderError) as error:
        order_ship(order_id=order.public_id, tracking_number=code, carrier="Correios")
    assert (error.value.field, error.value.code) == ("tracking_number", "bad_tracking")
    assert error.value.message.startswith("Código dos Correios inválido")
    assert order.fulfillment_events.count() == 0


def test_an_s10_code_without_carrier_is_checked_as_correios(place_order):
    order = place_order(lines=[("CAM", 3000, 1)])
    with pytest.raises(OrderError) as error:
        order_ship(order_id=order.public_id, tracking_number="BR123456784BR")
    assert error.value.code == "bad_tracking"
    event = order_ship(order_id=order.public_id, tracking_number="JD123", carrier="Jadlog")  # other carriers: as typed
    assert (event.tracking_number, event.carrier, event.tracking_url) == ("JD123", "Jadlog", "")


def test_service_errors_speak_the_readers_language(place_order):
    from django.utils import translation

    order = place_order(lines=[("CAM", 3000, 1)])
    with pytest.raises(OrderError) as error:
        order_ship(order_id=order.public_id, tracking_number="BR123456784BR")
    with translation.override("en"):
        assert error.value.message == (
            "Invalid Correios code: 2 letters, 9 digits and “BR” (e.g. BR123456785BR); check the check digit."
        )
    with translation.override("pt-br"):
        assert error.value.message.startswith("Código dos Correios inválido")
