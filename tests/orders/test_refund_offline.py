"""Refunds of orders paid outside the shop (issue 33, major 2): no PSP will ever answer, so staff mark the refund
as given back ("Marcar como reembolsado (fora da loja)": Pix, dinheiro, transferência or outro, with a note). It is
settled once, counted on the order, on the buyer's page and in the e-mail; orders paid by Pix or card keep the
PSP's answer as the truth and are not offered the action."""

from __future__ import annotations

import pytest
from django.core import mail

from orders.admin_actions import available_actions
from orders.errors import OrderError
from orders.models import Adjustment, EmailDelivery, OrderEvent
from orders.services import adjustment_settle_offline, order_cancel, order_refund

pytestmark = pytest.mark.django_db


def _action(order, slug: str) -> str:
    return f"/admin/orders/order/{order.public_id}/action/{slug}/"


def test_staff_mark_a_manual_refund_as_given_back_once(admin_client, place_order, django_capture_on_commit_callbacks):
    order = place_order(payment_type="manual", lines=[("CAF", 5000, 1)], freight=0)
    admin_client.post(_action(order, "refund"), {"amount": "20,00", "reason": "Produto com defeito", "confirm": "on"})
    refund = Adjustment.objects.get(order=order, type="refund")
    assert refund.status == "pending"
    assert "refund-offline" in available_actions(order) and "refund-result" not in available_actions(order)

    page = admin_client.get(_action(order, "refund-offline")).content.decode()
    assert "Marcar como reembolsado (fora da loja)" in page
    assert "R$ 20,00 — Produto com defeito" in page
    # "Outro" needs a note, and nothing changes without it
    page = admin_client.post(
        _action(order, "refund-offline"), {"adjustment": refund.public_id, "means": "outro", "note": ""}
    ).content.decode()
    assert "Conte como o valor foi devolvido." in page
    refund.refresh_from_db()
    assert refund.status == "pending"

    mail.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(
            _action(order, "refund-offline"),
            {"adjustment": refund.public_id, "means": "pix", "note": "Pix da conta da loja, comprovante 123"},
            follow=True,
        )
    assert [str(m) for m in response.context["messages"]] == ["Reembolso de R$ 20,00 registrado como feito pela loja."]
    refund.refresh_from_db()
    order.refresh_from_db()
    assert refund.status == "completed"
    assert (order.refunded_amount, order.payment_status) == (2000, "partially_refunded")
    completed = OrderEvent.objects.get(order=order, kind="refund_completed")
    assert (completed.message, completed.internal, completed.actor) == (
        "Reembolso de R$ 20,00 feito pela loja (Pix).",
        False,
        "admin",
    )
    note = OrderEvent.objects.filter(order=order, kind="note").get()
    assert (note.message, note.internal) == ("Reembolso de R$ 20,00: Pix da conta da loja, comprovante 123", True)
    assert EmailDelivery.objects.filter(order=order, kind="refunded").count() == 1
    assert [m.subject.split(": ", 1)[1] for m in mail.outbox] == [f"Reembolso do pedido #{order.number}"]

    # a second tab, a double click: settled once
    assert "refund-offline" not in available_actions(order)
    assert adjustment_settle_offline(adjustment_id=refund.public_id, means="pix").status == "completed"
    order.refresh_from_db()
    assert order.refunded_amount == 2000
    assert OrderEvent.objects.filter(order=order, kind="refund_completed").count() == 1

    page = admin_client.get(order.permalink_url).content.decode()
    assert "Reembolso de R$ 20,00 — concluído (Produto com defeito)" in " ".join(page.split())


def test_a_cancelled_manual_order_reads_refunded_on_the_buyer_page(client, place_order):
    order = place_order(payment_type="manual", lines=[("CAF", 5000, 1)], freight=0)
    order_cancel(order_id=order.public_id, reason="Cliente desistiu", actor="lojista")
    page = " ".join(client.get(order.permalink_url).content.decode().split())
    assert "Reembolso de R$ 50,00 em andamento." in page
    refund = Adjustment.objects.get(order=order, type="refund")
    adjustment_settle_offline(adjustment_id=refund.public_id, means="dinheiro", actor="lojista")
    order.refresh_from_db()
    assert (order.status, order.payment_status, order.refunded_amount) == ("canceled", "refunded", 5000)
    page = " ".join(client.get(order.permalink_url).content.decode().split())
    assert "em andamento" not in page
    assert "Reembolso de R$ 50,00 concluído: a loja devolveu o valor combinado com você." in page


def test_a_pix_refund_is_settled_by_the_psp_not_by_hand(place_order):
    order = place_order(payment_type="pix")
    refund = order_refund(order_id=order.public_id, amount=500, reason="Troco")
    assert "refund-offline" not in available_actions(order) and "refund-result" in available_actions(order)
    with pytest.raises(OrderError) as error:
        adjustment_settle_offline(adjustment_id=refund.public_id, means="pix")
    assert error.value.code == "refund_through_psp"
    refund.refresh_from_db()
    assert refund.status == "pending"


def test_unknown_means_is_refused(place_order):
    order = place_order(payment_type="manual")
    refund = order_refund(order_id=order.public_id, amount=500, reason="Troco")
    with pytest.raises(OrderError) as error:
        adjustment_settle_offline(adjustment_id=refund.public_id, means="cheque")
    assert (error.value.field, error.value.code) == ("means", "bad_means")
