"""Buyer permalink page `/orders/<token>`: content, languages, 404 without hint, noindex, no other order's data."""

from __future__ import annotations

import pytest
from django.conf import settings

from orders.services import order_refund, order_ship
from orders.types import LineQuantity

pytestmark = pytest.mark.django_db


def _path(order) -> str:
    return f"/orders/{order.permalink_token}"


def test_permalink_shows_the_order_in_portuguese(client, place_order):
    # given a shipped order with a completed refund
    order = place_order(lines=[("CAM", 3000, 2)], freight=800)
    line = order.lines.get()
    order_ship(order_id=order.public_id, tracking_number="BR123456784BR", lines=[LineQuantity(line.public_id, 1)])
    order_refund(order_id=order.public_id, amount=1500, reason="Desconto combinado")
    # when the buyer opens the link without logging in
    response = client.get(_path(order))
    # then the page has the order, in words, with tracking and the refund in plain language
    assert response.status_code == 200
    html = response.content.decode()
    assert f"Pedido #{order.number}" in html
    assert "Enviado em parte" in html
    assert "Pagamento" in html and "Pago" in html
    assert "Produto CAM" in html
    assert 'src="https://cdn.example.com.br/CAM.jpg"' in html
    assert "R$ 68,00" in html  # total
    assert "Frete SEDEX" in html
    assert "Rua das Flores, 123" in html and "01310-100" in html
    assert "Chega em 3 a 5 dias úteis" in html
    assert 'href="https://rastreamento.correios.com.br/app/index.php?objeto=BR123456784BR"' in html
    assert "Reembolso de R$ 15,00" in html and "em andamento" in html and "Desconto combinado" in html
    assert '<meta name="robots" content="noindex">' in html
    assert response["X-Robots-Tag"] == "noindex"
    assert response["Content-Language"] == "pt-br"
    assert response["Referrer-Policy"] == "no-referrer"


def test_permalink_follows_the_order_language_english(client, place_order):
    order = place_order(language="en")
    response = client.get(_path(order))
    html = response.content.decode()
    assert response["Content-Language"] == "en"
    assert f"Order #{order.number}" in html
    assert "Order received" in html
    assert "Awaiting payment" not in html and "Paid" in html
    assert "We are preparing your order." in html


def test_language_switch_wins_over_the_order_language(client, place_order):
    order = place_order(language="pt-br")
    assert "Order received" in client.get(_path(order) + "?lang=en").content.decode()
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "en"
    assert client.get(_path(order)).headers["Content-Language"] == "en"
    assert "Pedido recebido" in client.get(_path(order) + "?lang=pt-br").content.decode()


@pytest.mark.parametrize("token", ["x" * 32, "abc", "order_123", "%2e%2e"])
def test_unknown_tokens_are_404_without_hint(client, place_order, token):
    place_order()
    response = client.get(f"/orders/{token}")
    assert response.status_code == 404
    body = response.content.decode()
    assert "order" not in body.lower().replace("<html>", "")
    assert "Pedido" not in body
    assert response["X-Robots-Tag"] == "noindex"


def test_page_shows_no_data_of_other_orders(client, place_order):
    mine = place_order(lines=[("MINHA-CAMISA", 3000, 1)], email="ana@example.com.br")
    other = place_order(lines=[("OUTRA-CALCA", 9000, 1)], email="bruno@example.com.br")
    html = client.get(_path(mine)).content.decode()
    assert "MINHA-CAMISA" in html
    assert "OUTRA-CALCA" not in html
    assert f"#{other.number}" not in html
    assert other.permalink_token not in html


def test_internal_notes_never_reach_the_buyer(client, place_order):
    from orders.services import order_note_add

    order = place_order()
    order_note_add(order_id=order.public_id, text="Cliente difícil, conferir CPF", actor="staff")
    assert "conferir CPF" not in client.get(_path(order)).content.decode()


def test_permalink_url_is_the_bcp_permalink(place_order, settings):
    settings.BCP_PUBLIC_URL = "https://loja.example.com.br"
    order = place_order()
    assert order.permalink_url == f"https://loja.example.com.br/orders/{order.permalink_token}"


def test_backordered_expectation_shows_its_date(client, place_order):
    from orders.services import expectation_update

    order = place_order()
    expectation_update(
        order_id=order.public_id,
        expectation_id=order.expectations.get().public_id,
        description="Sob encomenda",
        fulfillable_on="2026-12-10T15:00:00Z",
    )
    html = client.get(_path(order)).content.decode()
    assert "Sob encomenda" in html
    assert "Previsão de envio: 10/12/2026" in html
