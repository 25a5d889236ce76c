"""Buyer e-mails: every kind, HTML + text, pt-BR and English, after commit, once."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core import mail
from django.utils import timezone

from orders.models import EmailDelivery, OutboxMessage
from orders.services import (
    adjustment_mark_refund_result,
    order_cancel,
    order_email_resend,
    order_mark_delivered,
    order_payment_confirm,
    order_place_from_checkout,
    order_refund,
    order_ship,
)
from orders.services.dispatch import outbox_process
from orders.tasks import send_pending_emails
from orders.types import LineQuantity
from tests.orders.conftest import make_checkout

pytestmark = pytest.mark.django_db

SUBJECTS = {
    "pt-br": [
        "Recebemos seu pedido #{n}",
        "Pagamento confirmado: pedido #{n}",
        "Parte do seu pedido #{n} foi enviada",  # 1 of the 2 shirts
        "Parte do seu pedido #{n} foi entregue",  # the other one never shipped
        "Reembolso do pedido #{n}",
        "Parte do seu pedido #{n} foi cancelada",  # the shirt that never shipped
    ],
    "en": [
        "We received your order #{n}",
        "Payment confirmed: order #{n}",
        "Part of your order #{n} has shipped",
        "Part of your order #{n} was delivered",
        "Refund for order #{n}",
        "Part of your order #{n} was canceled",
    ],
}


@pytest.mark.parametrize("language", ["pt-br", "en"])
def test_every_email_kind_in_both_languages(place_order, django_capture_on_commit_callbacks, language):
    # given an order placed before its payment arrived (2 items so that one can still be canceled)
    order = place_order(language=language, paid=False, lines=[("CAM", 3000, 2)], freight=800)
    line = order.lines.get()
    with django_capture_on_commit_callbacks(execute=True):
        order_payment_confirm(order_id=order.public_id, paid_amount=6800, txid="txid-confirmado")
    with django_capture_on_commit_callbacks(execute=True):
        order_ship(order_id=order.public_id, tracking_number="BR123456785BR", lines=[LineQuantity(line.public_id, 1)])
    with django_capture_on_commit_callbacks(execute=True):
        order_mark_delivered(order_id=order.public_id)
    with django_capture_on_commit_callbacks(execute=True):
        refund = order_refund(order_id=order.public_id, amount=500, reason="Avaria")
    with django_capture_on_commit_callbacks(execute=True):
        adjustment_mark_refund_result(adjustment_id=refund.public_id, status="completed")
    with django_capture_on_commit_callbacks(execute=True):
        order_cancel(order_id=order.public_id, reason="Sem estoque", refund=False)
    # then six e-mails, one per kind, in the order's language, each with text and HTML
    expected = [f"Loja Exemplo: {subject.format(n=order.number)}" for subject in SUBJECTS[language]]
    assert [message.subject for message in mail.outbox] == expected
    for message in mail.outbox:
        assert message.to == ["ana@example.com.br"]
        assert order.permalink_url in message.body
        html, mimetype = message.alternatives[0]
        assert mimetype == "text/html"
        assert order.permalink_url in html
        assert "&amp;" not in message.body  # the text part is not HTML-escaped
    shipped = mail.outbox[2]
    assert "BR123456785BR" in shipped.body
    assert "https://rastreamento.correios.com.br/app/index.php?objeto=BR123456785BR" in shipped.alternatives[0][0]
    assert ("R$5.00" if language == "en" else "R$ 5,00") in mail.outbox[4].body  # as the reader writes amounts


def test_replayed_event_does_not_send_twice(place_order, django_capture_on_commit_callbacks):
    order = place_order()
    with django_capture_on_commit_callbacks(execute=True):
        order_payment_confirm(order_id=order.public_id, paid_amount=order.paid_amount)  # already paid: replay
    refund = order_refund(order_id=order.public_id, amount=100, reason="x")
    for _ in range(3):
        with django_capture_on_commit_callbacks(execute=True):
            adjustment_mark_refund_result(adjustment_id=refund.public_id, status="completed")
    assert [m.subject.split(": ", 1)[1] for m in mail.outbox] == [
        f"Recebemos seu pedido #{order.number}",
        f"Reembolso do pedido #{order.number}",
    ]
    assert EmailDelivery.objects.filter(order=order).count() == 2


def test_resend_sends_again_on_request(place_order, django_capture_on_commit_callbacks):
    order = place_order()
    with django_capture_on_commit_callbacks(execute=True):
        order_email_resend(order_id=order.public_id, kind="placed", actor="staff")
    assert len(mail.outbox) == 2
    assert mail.outbox[0].subject == mail.outbox[1].subject


def test_only_an_email_the_order_had_is_sent_again(place_order, admin_client):
    """QA walk: Atendimento re-sent "Pedido entregue" for an order never shipped (and "Pronto para retirada" for a
    delivery): the buyer read that it had arrived. The form offers what the order had; the service refuses the rest."""
    from orders.errors import OrderError

    order = place_order()
    page = admin_client.get(f"/admin/orders/order/{order.public_id}/action/resend-email/").content.decode()
    assert 'value="placed"' in page
    assert 'value="delivered"' not in page and 'value="ready_for_pickup"' not in page and 'value="refunded"' not in page
    response = admin_client.post(f"/admin/orders/order/{order.public_id}/action/resend-email/", {"kind": "delivered"})
    assert response.status_code == 200 and "errorlist" in response.content.decode()
    with pytest.raises(OrderError) as refused:
        order_email_resend(order_id=order.public_id, kind="delivered", actor="staff")
    assert refused.value.code == "email_never_sent"
    assert refused.value.message == (
        "Este pedido nunca recebeu o e-mail “Pedido entregue”: só é possível reenviar um e-mail já enviado."
    )
    assert EmailDelivery.objects.filter(order=order, kind="delivered").count() == 0


def test_orders_without_email_send_nothing(place_order):
    order = place_order(email="")
    assert len(mail.outbox) == 0
    assert EmailDelivery.objects.filter(order=order).count() == 0


def test_sweep_sends_emails_whose_enqueue_was_lost():
    # given a payment confirmed whose after-commit e-mail task never ran (callbacks not executed = lost enqueue)
    order = order_place_from_checkout(checkout=make_checkout(paid=False))
    order_payment_confirm(order_id=order.public_id, paid_amount=order.total_amount)
    delivery = EmailDelivery.objects.get(order=order, kind="payment_confirmed")
    assert delivery.sent_at is None
    EmailDelivery.objects.filter(pk=delivery.pk).update(created_at=timezone.now() - timedelta(minutes=5))
    # when the beat sweep runs twice
    assert send_pending_emails.delay().get() == 1
    assert send_pending_emails.delay().get() == 0
    # then the e-mail went out exactly once
    assert len(mail.outbox) == 1


def test_the_placed_email_comes_from_the_order_outbox_row_once():
    # given a placement whose after-commit task never ran: the e-mail is not written with the order
    order = order_place_from_checkout(checkout=make_checkout())
    assert EmailDelivery.objects.filter(order=order).count() == 0
    message = OutboxMessage.objects.get(payload__order_id=order.public_id)
    assert message.payload["event"] == "placed"
    # when the outbox sweep runs the row, and a duplicate task runs it again after a lost "done"
    assert outbox_process(message_id=message.pk) == "done"
    OutboxMessage.objects.filter(pk=message.pk).update(status=OutboxMessage.Status.PENDING)
    assert outbox_process(message_id=message.pk) == "done"
    # then the buyer got "Pedido recebido" exactly once
    assert EmailDelivery.objects.get(order=order, kind="placed").sent_at is not None
    assert len(mail.outbox) == 1
