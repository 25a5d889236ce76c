"""No English or raw codes left where staff read (issue 33, minor): Pix charges ("replaced"), card payments
("paid/captured", "gpay", refunds in R$), checkouts (status and delivery filters, column headers), fiscal jobs
(column headers) and the order page (checkout_…, li_…, "manual")."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from orders.services import order_place_from_checkout
from payments.card.models import CardPayment
from payments.services import pix_charge_ensure
from shop.models import Checkout
from tests.fiscal.helpers import request_issue
from tests.orders.conftest import make_checkout

pytestmark = pytest.mark.django_db


def _headers(html: str) -> list[str]:
    head = re.search(r'<table id="result_list">.*?<thead>(.*?)</thead>', html, re.S).group(1)
    return [re.sub(r"<[^>]+>", "", h).strip() for h in re.findall(r"<th[^>]*>(.*?)</th>", head, re.S)]


def test_pix_charge_reasons_read_in_portuguese(admin_client: Client) -> None:
    first = pix_charge_ensure(reference="checkout_x", amount=1000)
    pix_charge_ensure(reference="checkout_x", amount=1200)  # a new amount replaces the first charge
    first.refresh_from_db()
    assert first.status_reason == "replaced"
    html = admin_client.get("/admin/payments/pixcharge/").content.decode()
    assert "substituída por um Pix novo" in html
    assert ">replaced<" not in html


def test_card_payments_read_in_portuguese_and_reais(admin_client: Client) -> None:
    CardPayment.objects.create(
        payment_id="cp_1", reference="checkout_y", handler_id="gpay", amount=5000, status="approved",
        gateway="sandbox", gateway_status="paid/captured",
    )  # fmt: skip
    html = admin_client.get("/admin/payments/cardpayment/").content.decode()
    assert '<td class="field-gateway_status_words">paga / capturada</td>' in html
    assert '<td class="field-refunded_brl">R$ 0,00</td>' in html
    assert "Cartão (Google Pay / tokenizado)" in html
    assert "paid/captured" not in html


def test_checkouts_list_speaks_portuguese(admin_client: Client) -> None:
    Checkout.objects.create(status="incomplete", buyer_email="bia@example.com.br", fulfillment_type="pickup")
    html = admin_client.get("/admin/shop/checkout/").content.decode()
    assert _headers(html)[1:] == ["Código", "Situação", "E-mail do comprador", "Total", "Origem", "Expira em",
                                  "Criado em"]  # fmt: skip
    assert "Precisa do comprador" in html and "Retirada na loja" in html
    assert '<td class="field-origin">Loja (site)</td>' in html  # a value starts with a capital, like the others
    assert not re.search(r">\s*(requires_escalation|ready_for_complete|pickup|shipping)\s*<", html)
    filtered = admin_client.get("/admin/shop/checkout/?status__exact=incomplete").content.decode()
    assert "bia@example.com.br" in filtered


def test_fiscal_jobs_headers_in_portuguese(admin_client: Client) -> None:
    request_issue()  # a document and its issue job
    html = admin_client.get("/admin/fiscal/fiscaljob/").content.decode()
    assert _headers(html) == ["Chave", "Ação", "Situação", "Tentativas", "Próxima tentativa", "Última falha"]


def test_the_order_page_shows_no_internal_codes(admin_client: Client) -> None:
    order = order_place_from_checkout(checkout=make_checkout(payment_type="manual"))
    html = admin_client.get(f"/admin/orders/order/{order.pk}/change/").content.decode()
    assert "Venda registrada pela loja (Nova venda)" in html
    assert order.checkout_id not in html
    assert not re.search(r">li_[0-9a-f]+<", html)
