"""The order page tells the truth in every state (issue 16, item 5): the words, the estimate only for what is
still to be sent, the money after refunds, and a clear cancelled / refunded summary.
"""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from orders.services import (
    adjustment_mark_refund_result,
    order_cancel,
    order_mark_delivered,
    order_pickup_ready,
    order_place_from_checkout,
    order_refund,
    order_ship,
)
from orders.types import LineQuantity
from tests.orders.conftest import make_checkout
from tests.orders.test_emails_content import STORE

pytestmark = pytest.mark.django_db


def page(client, order) -> str:
    return client.get(f"/orders/{order.permalink_token}").content.decode()


def progress(html: str) -> str:
    found = re.search(r'data-testid="order-progress">([^<]*)<', html)
    return found.group(1) if found else ""


def totals(html: str) -> list[tuple[str, str]]:
    table = html.split('data-testid="order-totals">')[1].split("</table>")[0]
    return re.findall(r'<th scope="row">([^<]*)</th><td>([^<]*)</td>', table)


def two_items(place_order):
    order = place_order(lines=[("CAM", 3000, 2), ("BONE", 2000, 1)], freight=800)  # R$ 88,00
    return order, order.lines.get(sku="CAM"), order.lines.get(sku="BONE")


def test_paid_order_is_being_prepared_with_its_estimate(client, place_order):
    order, _, _ = two_items(place_order)
    html = page(client, order)
    assert progress(html) == "Estamos preparando seu pedido."
    assert 'data-testid="order-expectations"' in html and "Chega em 3 a 5 dias úteis" in html
    assert totals(html) == [("Subtotal", "R$ 80,00"), ("Frete SEDEX", "R$ 8,00"), ("Total", "R$ 88,00")]
    assert 'data-testid="order-closed"' not in html


def test_free_freight_reads_free_not_zero(client, place_order, mailoutbox):
    # given an order with no freight to pay (free PAC above the threshold, store pickup; QA walk: "PAC R$ 0,00")
    order = place_order(lines=[("CAM", 3000, 2)], freight=0)
    # then its page and its e-mail say "Grátis" where the freight goes, as the checkout did
    assert totals(page(client, order)) == [("Subtotal", "R$ 60,00"), ("Frete SEDEX", "Grátis"), ("Total", "R$ 60,00")]
    assert "Frete SEDEX: Grátis" in mailoutbox[0].body and "R$ 0,00" not in mailoutbox[0].body
    assert "Grátis" in mailoutbox[0].alternatives[0][0]


def test_partially_shipped_keeps_the_estimate_only_for_what_is_still_here(client, place_order):
    order, shirt, _cap = two_items(place_order)
    order_ship(order_id=order.public_id, tracking_number="BR123456785BR", lines=[LineQuantity(shirt.public_id, 2)])
    html = page(client, order)
    assert "<strong>Enviado em parte</strong>" in html
    expectations = html.split('data-testid="order-expectations">')[1].split("</ul>")[0]
    assert "Produto BONE" in expectations and "Produto CAM" not in expectations


def test_shipped_then_delivered_has_no_estimate_left(client, place_order):
    order, _, _ = two_items(place_order)
    order_ship(order_id=order.public_id, tracking_number="BR123456785BR")
    html = page(client, order)
    assert "<strong>Enviado</strong>" in html and 'data-testid="order-expectations"' not in html
    order_mark_delivered(order_id=order.public_id)
    html = page(client, order)
    assert "<strong>Entregue</strong>" in html
    assert re.findall(r'data-testid="line-status">([^<]*)<', html) == ["Entregue", "Entregue"]


def test_cancelled_order_says_so_without_preparing_or_estimate(client, place_order):
    # given a paid order cancelled before anything shipped (the refund is under way)
    order, _, _ = two_items(place_order)
    order_cancel(order_id=order.public_id, reason="Sem estoque")
    html = page(client, order)
    # then no "preparing", no delivery estimate, and the money says what happens
    assert "<strong>Cancelado</strong>" in html
    assert progress(html) == "Este pedido foi cancelado e não será enviado."
    assert "Estamos preparando seu pedido." not in html
    assert "Chega em 3 a 5 dias úteis" not in html
    closed = html.split('data-testid="order-closed">')[1].split("</div>")[0]
    assert "Pedido cancelado em" in closed and "Reembolso de R$ 88,00 em andamento." in closed
    assert totals(html) == [
        ("Subtotal", "R$ 80,00"),
        ("Frete SEDEX", "R$ 8,00"),
        ("Total", "R$ 88,00"),
        ("Pago", "R$ 88,00"),
        ("Reembolso em andamento", "-R$ 88,00"),
        ("Valor final do pedido", "R$ 0,00"),
    ]
    assert re.findall(r'data-testid="line-status">([^<]*)<', html) == ["Cancelado", "Cancelado"]
    # each line says what was ordered (struck), adding up to the subtotal, not "R$ 0,00 · 0 ×" under R$ 80,00
    assert re.findall(r'<span class="amount"><del>([^<]*)</del>', html) == ["R$ 60,00", "R$ 20,00"]
    assert re.findall(r'<span class="qty"><del>([^<]*)</del>', html) == ["2 × R$ 30,00", "1 × R$ 20,00"]
    assert "R$ 0,00</span>" not in html.split('data-testid="order-lines">')[1].split("</ul>")[0]


def test_a_line_without_a_photo_shows_the_storefronts_tile_not_a_grey_box(client, place_order):
    order, cam, _ = two_items(place_order)
    cam.image_url = ""
    cam.save(update_fields=["image_url"])
    lines = page(client, order).split('data-testid="order-lines">')[1].split("</ul>")[0]
    assert lines.count('data-testid="photo-placeholder"') == 1  # the cap keeps its photo
    assert f'aria-label="{cam.title} (sem foto)"' in lines


def test_cancelled_and_refunded(client, place_order):
    order, _, _ = two_items(place_order)
    refund = order_cancel(order_id=order.public_id, reason="Sem estoque")
    refund_adjustment = order.adjustments.get(type="refund")
    adjustment_mark_refund_result(adjustment_id=refund_adjustment.public_id, status="completed")
    html = page(client, order)
    closed = html.split('data-testid="order-closed">')[1].split("</div>")[0]
    assert "Reembolso de R$ 88,00 concluído" in closed
    assert ("Reembolsado", "-R$ 88,00") in totals(html) and ("Valor final do pedido", "R$ 0,00") in totals(html)
    assert refund is not None


def test_partially_refunded_shows_what_the_order_comes_to(client, place_order):
    order, _, _ = two_items(place_order)
    refund = order_refund(order_id=order.public_id, amount=1500, reason="Desconto combinado")
    adjustment_mark_refund_result(adjustment_id=refund.public_id, status="completed")
    html = page(client, order)
    assert progress(html) == "Estamos preparando seu pedido."
    assert totals(html)[-3:] == [
        ("Pago", "R$ 88,00"),
        ("Reembolsado", "-R$ 15,00"),
        ("Valor final do pedido", "R$ 73,00"),
    ]


def test_pickup_order_shows_the_store_hours_and_then_picked_up(client, django_capture_on_commit_callbacks):
    placed = replace(
        make_checkout(method="pickup", freight=0),
        destination=STORE,
        fulfillment_title="Retirada na loja",
        fulfillment_description="Pronto para retirada em 1 dia útil",
    )
    order = order_place_from_checkout(checkout=placed)
    html = page(client, order)
    assert 'data-testid="pickup-hours">Horário: Seg a Sex 9h–18h<' in html
    assert "Loja Paulista" in html
    order_mark_delivered(order_id=order.public_id)  # handed over at the store
    html = page(client, order)
    assert re.findall(r'data-testid="line-status">([^<]*)<', html) == ["Retirado"]


def test_a_pickup_order_speaks_of_picking_up_not_of_shipping(client, django_capture_on_commit_callbacks):
    """QA walk (a pickup order): the buyer page offered "Nada foi enviado ainda: você pode cancelar", and once
    cancelled said "Este pedido foi cancelado e não será enviado": nothing of a pickup is ever sent."""
    placed = replace(make_checkout(method="pickup", freight=0), destination=STORE, fulfillment_title="Retirada na loja")
    with django_capture_on_commit_callbacks(execute=True):
        order = order_place_from_checkout(checkout=placed)
    html = page(client, order)
    assert (
        "O pedido ainda não foi retirado: você pode cancelar, e o valor pago volta pelo mesmo meio de pagamento."
        in html
    )
    assert "Nada foi enviado ainda" not in html
    order_cancel(order_id=order.public_id, reason="Desistiu")
    assert progress(page(client, order)) == "Este pedido foi cancelado e não ficará disponível para retirada."


def test_a_pickup_order_ready_reads_ready_not_its_old_estimate(client, admin_client):
    """Issue 33: after "Pronto para retirada" the buyer page dropped the estimate ("Pronto para retirada em 1 dia
    útil") and the admin says "Pronto para retirada" instead of "Pedido recebido", on the list and the order."""
    placed = replace(
        make_checkout(method="pickup", freight=0),
        destination=STORE,
        fulfillment_title="Retirada na loja",
        fulfillment_description="Pronto para retirada em 1 dia útil",
    )
    order = order_place_from_checkout(checkout=placed)
    assert "Pronto para retirada em 1 dia útil" in page(client, order)
    listing = admin_client.get("/admin/orders/order/").content.decode()
    assert '<td class="field-situation">Pedido recebido<small' in listing
    order_pickup_ready(order_id=order.public_id, actor="lojista")
    html = page(client, order)
    assert "Pronto para retirada em 1 dia útil" not in html
    assert 'data-testid="order-expectations"' not in html
    assert re.search(r'data-testid="order-status">\s*<strong>Pronto para retirada</strong>', html)
    listing = admin_client.get("/admin/orders/order/").content.decode()
    assert '<td class="field-situation">Pronto para retirada<small' in listing
    change = admin_client.get(f"/admin/orders/order/{order.pk}/change/").content.decode()
    assert re.search(r'field-status_display">.*?<div class="readonly">Pronto para retirada</div>', change, re.S)


def test_awaiting_payment(client, place_order):
    order = place_order(paid=False)
    assert progress(page(client, order)) == "Aguardando a confirmação do pagamento."


def test_a_refund_the_provider_refused_is_explained_and_not_taken_off(client, place_order):
    """A refund the PSP refused read "Reembolso de R$ 15,00 — Falhou" and nothing more: the buyer did not know if
    the money was lost. It says what happens next, and the money still counts as paid (nothing came back)."""
    order, _, _ = two_items(place_order)
    refund = order_refund(order_id=order.public_id, amount=1500, reason="Desconto combinado")
    adjustment_mark_refund_result(adjustment_id=refund.public_id, status="failed")
    html = page(client, order)
    listed = re.sub(r"\s+", " ", html.split('data-testid="order-adjustments">')[1].split("</ul>")[0])
    assert "Reembolso de R$ 15,00 — não concluído: a loja refaz o reembolso ou combina outro meio com você" in listed
    assert totals(html) == [("Subtotal", "R$ 80,00"), ("Frete SEDEX", "R$ 8,00"), ("Total", "R$ 88,00")]
    # when the shop refunds it again, the failed one no longer says the shop will: it says it did (below)
    order_refund(order_id=order.public_id, amount=1500, reason="Desconto combinado")
    listed = re.sub(r"\s+", " ", page(client, order).split('data-testid="order-adjustments">')[1].split("</ul>")[0])
    assert "Reembolso de R$ 15,00 — não concluído; a loja fez o reembolso de novo (abaixo)" in listed
    assert "a loja refaz" not in listed
