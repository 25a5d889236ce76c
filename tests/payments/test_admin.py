"""Admin for payments: every list and detail page renders; nothing can be added, edited or deleted."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib import admin
from django.test import Client
from django.urls import reverse

from payments.models import (
    CardPayment,
    CardRefund,
    CardWebhookEvent,
    PaymentEvent,
    PixCharge,
    PixPayment,
    PixRefund,
    PixWebhookEvent,
)
from payments.services import card_payment_authorize, pix_charge_ensure
from tests.payments.helpers import body, e2eid, item, post_signed

pytestmark = pytest.mark.django_db
MODELS = [PixCharge, PixPayment, PixWebhookEvent, PixRefund, CardPayment, CardRefund, CardWebhookEvent, PaymentEvent]


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_changelist_and_detail_render_read_only(admin_client: Client, client: Client, model: Any) -> None:
    # given one row of every kind
    charge = pix_charge_ensure(reference="checkout_admin", amount=1000)
    card_payment_authorize(reference="checkout_card", amount=500, handler_id="gpay", token="success_token")
    post_signed(client, body(item(e2e=e2eid(), txid=charge.txid, valor="10.00")))
    if model is CardRefund:
        from payments.card.refunds import card_refund_request

        card_refund_request(reference="checkout_card", amount=100, refund_id="adj_admin", reason="Brinde")
    if model is CardWebhookEvent:
        CardWebhookEvent.objects.create(event_id="hook_admin", type="charge.paid", payload={}, body_sha256="0" * 64)
    if model in (PixPayment, PixRefund):
        from django.utils import timezone

        from payments.refunds import refund_automatic

        payment = PixPayment.objects.create(
            end_to_end_id=e2eid(),
            charge=charge,
            txid=charge.txid,
            amount=1000,
            paid_at=timezone.now(),
            outcome="refunded_late",
        )
        refund_automatic(payment=payment, reference="checkout_admin", reason="Pagamento recebido após expiração")
    row = model.objects.first()
    opts = model._meta
    model_admin = admin.site._registry[model]
    # when the back office opens the list and the row
    listing = admin_client.get(reverse(f"admin:{opts.app_label}_{opts.model_name}_changelist"))
    detail = admin_client.get(reverse(f"admin:{opts.app_label}_{opts.model_name}_change", args=[row.pk]))
    # then both render and money cannot be touched
    assert (listing.status_code, detail.status_code) == (200, 200)
    assert model_admin.has_add_permission(listing.wsgi_request) is False
    assert model_admin.has_change_permission(detail.wsgi_request, row) is False
    assert model_admin.has_delete_permission(detail.wsgi_request, row) is False


def test_pix_charges_list_money_in_reais_and_statuses_in_portuguese(admin_client) -> None:
    pix_charge_ensure(reference="checkout_brl", amount=699900)
    html = admin_client.get("/admin/payments/pixcharge/").content.decode()
    assert '<td class="field-amount_brl">R$ 6.999,00</td>' in html
    assert '<td class="field-status">Ativa</td>' in html
    assert "699900" not in html
