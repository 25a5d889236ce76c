"""QA walk: "Devoluções de boleto" — staff transfer the money back themselves, so the page names the order and the
buyer to contact (for a Pix key), reads in Portuguese, and a save without the transfer's description stays on the
page with only its error (it said the error *and* "saved" and went back to the list)."""

from __future__ import annotations

import re
from datetime import date

import pytest
from django.test import Client

from orders.models import Order
from orders.services import order_place_from_checkout
from payments.models import BoletoPayment, BoletoRefund
from tests.orders.conftest import make_checkout

pytestmark = pytest.mark.django_db


@pytest.fixture
def refund() -> BoletoRefund:
    order = order_place_from_checkout(checkout=make_checkout(payment_type="boleto"))
    payment = BoletoPayment.objects.create(
        payment_id="bol_1", reference=order.checkout_id, handler_id="br.dev.bcp.boleto", amount=3800, status="paid",
        due_date=date(2026, 12, 10), gateway="sandbox", gateway_charge_id="ch_1", line="0" * 47, paid_amount=3800,
    )  # fmt: skip
    return BoletoRefund.objects.create(
        refund_id="adj_abc123", payment=payment, reference=order.checkout_id, amount=2500, reason="Item avariado"
    )


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def test_the_refund_page_names_the_order_and_the_buyer_to_contact(admin_client: Client, refund: BoletoRefund) -> None:
    order = Order.objects.get(checkout_id=refund.reference)
    html = admin_client.get(f"/admin/payments/boletorefund/{refund.pk}/change/").content.decode()
    text = _text(html)
    assert f'<a href="/admin/orders/order/{order.pk}/change/">#{order.number}</a>' in html
    assert "Ana Souza" in text and "ana@example.com.br" in text and "(11) 98765-4321" in text
    assert "adj_abc123 (Aguardando transferência)" in text and "awaiting_transfer" not in text
    assert refund.reference not in text  # the checkout's id says nothing to staff
    listing = admin_client.get("/admin/payments/boletorefund/").content.decode()
    assert f"#{order.number}" in listing and "Ana Souza" in listing and refund.reference not in _text(listing)


def test_a_save_without_the_transfer_stays_on_the_page_with_only_the_error(
    admin_client: Client, refund: BoletoRefund
) -> None:
    url = f"/admin/payments/boletorefund/{refund.pk}/change/"
    response = admin_client.post(url, {"transfer_note": ""})
    assert response.status_code == 200  # not a redirect to the list
    text = _text(response.content.decode())
    assert "Descreva a transferência (banco, data, id do Pix) em 4 a 200 caracteres." in text
    assert "sucesso" not in text and "salv" not in text.lower().replace("salvar", "")
    refund.refresh_from_db()
    assert refund.status == "awaiting_transfer"

    done = admin_client.post(url, {"transfer_note": "Pix enviado E1234 em 07/12"})
    assert done.status_code == 302
    refund.refresh_from_db()
    assert (refund.status, refund.transfer_note, refund.finished_by) == (
        "completed",
        "Pix enviado E1234 em 07/12",
        "admin",
    )
