"""The order keeps the carrier of the shipping method the buyer chose (QA F7: the admin's "Registrar envio" starts
from it, and only a Correios shipment needs a tracking code)."""

from __future__ import annotations

import importlib
import re
from dataclasses import replace
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from django.apps import apps
from django.core import mail
from django.test import Client
from django.utils.timezone import localdate

from kernel.business_days import add_business_days
from orders.arrival import window_words_pt
from orders.models import Order
from orders.selectors import order_bcp_payload
from orders.services import fulfillment_event_create
from payments.sandbox.services import PayOptions, pay
from payments.selectors import pix_charge_active_for_reference
from shop.checkout.services import checkout_create
from shop.checkout.types import AddressInput, CheckoutInput, InstrumentInput, LineInput, PaymentInput
from shop.models import ShippingMethod
from shop.store.services import store_row
from tests.shop.checkout_factories import (
    BUYER,
    full_input,
    make_location,
    make_shipping,
    make_variant,
    pickup,
    shipping,
)
from tests.shop.freight_helpers import SHIRT

pytestmark = pytest.mark.django_db

BACKFILL = importlib.import_module("shop.migrations.0034_backfill_order_fulfillment_carrier")
PIX = InstrumentInput(id="instr_1", handler_id="pix_recebedor_001", type="pix")


@pytest.mark.parametrize(("option", "carrier"), [("pac", "Correios"), ("motoboy", "Entrega local")])
def test_paid_order_keeps_the_method_carrier(django_capture_on_commit_callbacks, option: str, carrier: str) -> None:
    make_variant(price=4290, stock=10)
    ShippingMethod.objects.filter(code=make_shipping()["motoboy"].code).update(carrier="Entrega local")
    data = replace(full_input(LineInput("SKU-CAFE-500G", 1), option=option), payment=PaymentInput(instruments=(PIX,)))
    checkout = checkout_create(data=data, session_key="sess-1").checkout
    with django_capture_on_commit_callbacks(execute=True):
        pay(txid=pix_charge_active_for_reference(checkout.public_id).txid, options=PayOptions())
    order = Order.objects.get(checkout_id=checkout.public_id)
    assert order.fulfillment_carrier == carrier
    # an order placed before the field existed gets it from its checkout (data migration)
    Order.objects.filter(pk=order.pk).update(fulfillment_carrier="")
    BACKFILL.backfill(apps, None)
    order.refresh_from_db()
    assert order.fulfillment_carrier == carrier


SP_TZ = ZoneInfo("America/Sao_Paulo")
RJ = AddressInput(street="Av. Rio Branco", number="1", address_locality="Rio de Janeiro", postal_code="20040-002")


@pytest.mark.parametrize(
    ("carrier", "option", "days", "window"),
    [
        # .Package (Jadlog) quoted 3 to 5 business days: Mon 16, Tue 17, Wed 18 … Thu 19, (Fri 20 Consciência Negra,
        # the weekend), Mon 23
        ("melhorenvio", "melhorenvio:3", (3, 5), "entre 18/11 e 23/11"),
        ("correios", "correios:03298", (6, 6), "em 24/11"),  # PAC, 6 business days
    ],
)
def test_the_carrier_quotes_days_date_the_arrival_once_shipped_on_a_friday(
    request: pytest.FixtureRequest,
    client: Client,
    admin_client: Client,
    django_capture_on_commit_callbacks: Any,
    carrier: str,
    option: str,
    days: tuple[int, int],
    window: str,
) -> None:
    """The quote's business days go from the checkout's option onto the order's expectation; shipped on Friday 13
    Nov 2026, the buyer's page and Get Order give the dates (weekend and national holiday skipped), not only
    "Chega em 3 a 5 dias úteis a partir do envio" (BCP-ORD-07: the expectation's description)."""
    request.getfixturevalue(carrier)
    data = CheckoutInput(lines=(LineInput(SHIRT, 1),), buyer=BUYER, fulfillment=shipping(RJ, option=option),
                         payment=PaymentInput(instruments=(PIX,)))  # fmt: skip
    checkout = checkout_create(data=data, session_key="sess-1").checkout
    assert checkout.selected_option_id == option
    with django_capture_on_commit_callbacks(execute=True):
        pay(txid=pix_charge_active_for_reference(checkout.public_id).txid, options=PayOptions())
    order = Order.objects.get(checkout_id=checkout.public_id)
    expectation = order.expectations.get()
    assert (expectation.days_min, expectation.days_max, expectation.days_from) == (*days, "shipping")
    promise = expectation.description
    # before shipping: the shop keeps no handling days, so the words of the quote stay
    html = client.get(order.permalink_path).content.decode()
    assert f"<strong>{promise}</strong>" in html
    assert order_bcp_payload(order)["fulfillment"]["expectations"][0]["description"] == promise
    # shipped on Friday 13 Nov 2026
    fulfillment_event_create(order_id=order.public_id, type="shipped", tracking_number="BR123456785BR",
                             occurred_at=datetime(2026, 11, 13, 16, 0, tzinfo=SP_TZ))  # fmt: skip
    html = client.get(order.permalink_path).content.decode()
    on_the_way = html.split('data-testid="order-on-the-way">')[1].split("</ul>")[0]
    assert " ".join(re.sub(r"<[^>]+>", " ", on_the_way).split()) == (
        f"A caminho · enviado em 13/11/2026 Previsão de entrega: {window} 1× Camiseta básica preta — M"
    )
    body = order_bcp_payload(Order.objects.get(pk=order.pk))  # the stored body Get Order and webhooks send
    assert body["fulfillment"]["expectations"][0]["description"] == f"Enviado; previsão de entrega {window}"
    # the admin's order page says it too
    page = admin_client.get(f"/admin/orders/order/{order.pk}/change/").content.decode()
    assert window in page


def test_a_pickup_order_keeps_no_delivery_days(django_capture_on_commit_callbacks: Any) -> None:
    make_variant(price=4290, stock=10)
    make_shipping()
    location = make_location()
    data = replace(full_input(LineInput("SKU-CAFE-500G", 1), option=None), payment=PaymentInput(instruments=(PIX,)))
    data = replace(data, fulfillment=pickup(location.public_id, option="retirada"))
    checkout = checkout_create(data=data, session_key="sess-1").checkout
    with django_capture_on_commit_callbacks(execute=True):
        pay(txid=pix_charge_active_for_reference(checkout.public_id).txid, options=PayOptions())
    expectation = Order.objects.get(checkout_id=checkout.public_id).expectations.get()
    assert (expectation.method_type, expectation.days_min, expectation.days_max, expectation.days_from) == (
        "pickup",
        None,
        None,
        "",
    )


def test_the_shops_handling_days_date_the_arrival_from_the_payment_until_it_ships(
    melhorenvio: Any, client: Client, admin_client: Client, django_capture_on_commit_callbacks: Any
) -> None:
    """The merchant's "prazo de postagem" (2 business days from payment to the carrier) and the quote's 3 to 5 days:
    until it ships the buyer's page, Get Order (BCP-ORD-07: the expectation's description) and the order e-mail
    count 2 + 3 to 2 + 5 business days from the payment; once shipped, the carrier's 3 to 5 from the shipment."""
    # given a shop that posts within 2 business days, as set on its settings page
    row = store_row()
    row.handling_days = 2
    row.save()
    assert 'name="handling_days"' in admin_client.get(f"/admin/shop/storesettings/{row.pk}/change/").content.decode()
    # when a buyer pays a .Package (Jadlog, 3 to 5 business days) order
    data = CheckoutInput(lines=(LineInput(SHIRT, 1),), buyer=BUYER, fulfillment=shipping(RJ, option="melhorenvio:3"),
                         payment=PaymentInput(instruments=(PIX,)))  # fmt: skip
    checkout = checkout_create(data=data, session_key="sess-1").checkout
    with django_capture_on_commit_callbacks(execute=True):
        pay(txid=pix_charge_active_for_reference(checkout.public_id).txid, options=PayOptions())
    order = Order.objects.get(checkout_id=checkout.public_id)
    expectation = order.expectations.get()
    # then the expectation counts handling + carrier from the payment
    assert (expectation.days_min, expectation.days_max, expectation.days_from, expectation.handling_days) == (
        5,
        7,
        "payment",
        2,
    )
    paid_on = localdate(order.placed_at)
    window = window_words_pt((add_business_days(paid_on, 5), add_business_days(paid_on, 7)))
    assert order_bcp_payload(order)["fulfillment"]["expectations"][0]["description"] == f"Chega {window}"
    confirmation = next(m for m in mail.outbox if m.to == [order.buyer_email])
    assert f" · Previsão de entrega {window}" in confirmation.body
    # and, paid on Friday 13 Nov 2026, the page says Mon 23 to Wed 25 (Fri 20 Consciência Negra, the weekend)
    Order.objects.filter(pk=order.pk).update(placed_at=datetime(2026, 11, 13, 10, 0, tzinfo=SP_TZ))
    html = client.get(order.permalink_path).content.decode()
    assert "<strong>Chega entre 23/11 e 25/11</strong>" in html
    # when it ships early, on Monday 16: the carrier's 3 to 5 days from then (Thu 19 to Tue 24)
    with django_capture_on_commit_callbacks(execute=True):
        fulfillment_event_create(order_id=order.public_id, type="shipped", tracking_number="BR123456785BR",
                                 occurred_at=datetime(2026, 11, 16, 16, 0, tzinfo=SP_TZ))  # fmt: skip
    html = client.get(order.permalink_path).content.decode()
    on_the_way = html.split('data-testid="order-on-the-way">')[1].split("</ul>")[0]
    assert " ".join(re.sub(r"<[^>]+>", " ", on_the_way).split()) == (
        "A caminho · enviado em 16/11/2026 Previsão de entrega: entre 19/11 e 24/11 1× Camiseta básica preta — M"
    )
    body = order_bcp_payload(Order.objects.get(pk=order.pk))
    assert body["fulfillment"]["expectations"][0]["description"] == "Enviado; previsão de entrega entre 19/11 e 24/11"
    assert " · Previsão de entrega entre 19/11 e 24/11" in mail.outbox[-1].body
    assert "entre 19/11 e 24/11" in admin_client.get(f"/admin/orders/order/{order.pk}/change/").content.decode()
