"""Order placement from a checkout: idempotency, numbering, copied data, timeline, e-mail, signal."""

from __future__ import annotations

import dataclasses

import pytest
from django.core import mail

from orders.errors import OrderError
from orders.models import EmailDelivery, Order, OrderEvent
from orders.selectors import order_by_checkout
from orders.services import order_place_from_checkout
from orders.signals import order_changed
from tests.orders.conftest import make_checkout

pytestmark = pytest.mark.django_db


def test_place_copies_buyer_lines_totals_and_payment(place_order):
    # given a settled Pix checkout / when it is placed
    order = place_order(lines=[("CAM-P-AZUL", 3000, 2), ("MEIA-01", 1290, 1)], freight=800)
    # then the order is a full copy
    assert order.public_id.startswith("order_")
    assert order.currency == "BRL"
    assert order.totals == [
        {"type": "subtotal", "amount": 7290},
        {"type": "fulfillment", "amount": 800, "display_text": "Frete SEDEX"},
        {"type": "total", "amount": 8090},
    ]
    assert order.total_amount == 8090
    assert order.paid_amount == 8090
    assert order.payment_status == "paid"
    assert order.status == "placed"
    assert order.buyer_tax_id == "39053344705"
    assert order.destination["postal_code"] == "01310-100"
    assert [(line.sku, line.quantity_total, line.status) for line in order.lines.all()] == [
        ("CAM-P-AZUL", 2, "processing"),
        ("MEIA-01", 1, "processing"),
    ]
    expectation = order.expectations.get()
    assert expectation.public_id.startswith("exp_")
    assert expectation.method_type == "shipping"
    assert expectation.description == "Chega em 3 a 5 dias úteis"
    assert len(order.permalink_token) >= 22  # ≥ 128 bits of randomness, URL-safe
    assert order.permalink_url == f"http://127.0.0.1:8000/orders/{order.permalink_token}"


def test_place_is_idempotent_on_checkout_id(django_capture_on_commit_callbacks):
    # given a checkout already placed
    checkout = make_checkout()
    received: list[str] = []

    def receiver(sender, order_id, event, **kwargs):
        received.append(event)

    order_changed.connect(receiver)
    try:
        with django_capture_on_commit_callbacks(execute=True):
            first = order_place_from_checkout(checkout=checkout)
        # when the settlement is replayed
        with django_capture_on_commit_callbacks(execute=True):
            second = order_place_from_checkout(checkout=checkout)
    finally:
        order_changed.disconnect(receiver)
    # then there is still one order, one timeline event, one e-mail and one signal
    assert second.pk == first.pk
    assert Order.objects.filter(checkout_id=checkout.checkout_id).count() == 1
    assert list(OrderEvent.objects.filter(order=first, kind="placed").values_list("kind", flat=True)) == ["placed"]
    assert len(mail.outbox) == 1
    assert received == ["placed"]


def test_numbers_are_sequential_and_unique(place_order):
    first = place_order()
    second = place_order()
    assert second.number == first.number + 1
    assert first.number >= 1001


def test_placed_email_has_permalink_in_order_language(place_order):
    # when an English order is placed
    order = place_order(language="en")
    # then one e-mail in English carrying the permalink, HTML and text
    assert len(mail.outbox) == 1
    message = mail.outbox[0]
    assert message.to == ["ana@example.com.br"]
    assert message.subject == f"Loja Exemplo: We received your order #{order.number}"
    assert order.permalink_url in message.body
    html = message.alternatives[0].content
    assert order.permalink_url in html
    assert EmailDelivery.objects.get(order=order, kind="placed").sent_at is not None


def test_placed_email_in_portuguese(place_order):
    order = place_order(language="pt-BR")
    assert order.language == "pt-br"
    assert mail.outbox[0].subject == f"Loja Exemplo: Recebemos seu pedido #{order.number}"
    assert "R$ 38,00" in mail.outbox[0].body


def test_place_without_lines_is_refused_naming_the_field():
    checkout = dataclasses.replace(make_checkout(), lines=[])
    with pytest.raises(OrderError) as error:
        order_place_from_checkout(checkout=checkout)
    assert error.value.field == "lines"
    assert Order.objects.count() == 0


def test_place_with_bad_quantity_names_the_line():
    checkout = make_checkout()
    bad = dataclasses.replace(checkout.lines[0], quantity=0)
    with pytest.raises(OrderError) as error:
        order_place_from_checkout(checkout=dataclasses.replace(checkout, lines=[bad]))
    assert error.value.field == "lines[0].quantity"


def test_order_by_checkout_finds_the_order(place_order):
    order = place_order()
    assert order_by_checkout(order.checkout_id).public_id == order.public_id
    assert order_by_checkout("checkout_nope") is None
