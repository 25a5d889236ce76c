"""The order keeps the carrier of the shipping method the buyer chose (QA F7: the admin's "Registrar envio" starts
from it, and only a Correios shipment needs a tracking code)."""

from __future__ import annotations

import importlib
from dataclasses import replace

import pytest
from django.apps import apps

from orders.models import Order
from payments.sandbox.services import PayOptions, pay
from payments.selectors import pix_charge_active_for_reference
from shop.checkout.services import checkout_create
from shop.checkout.types import InstrumentInput, LineInput, PaymentInput
from shop.models import ShippingMethod
from tests.shop.checkout_factories import full_input, make_shipping, make_variant

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
