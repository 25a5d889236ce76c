"""Refunds (through refund_requested → adjustment_mark_refund_result), cancellations, returns, e-mails once."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.core import mail
from django.utils import translation

from orders.errors import OrderError
from orders.models import Adjustment, EmailDelivery, OrderEvent
from orders.selectors import order_bcp_payload, order_for_bcp
from orders.services import (
    adjustment_mark_refund_result,
    order_cancel,
    order_mark_delivered,
    order_refund,
    order_return,
    order_ship,
)
from orders.signals import refund_requested, stock_return_requested
from orders.tasks import send_order_email
from orders.types import LineQuantity

pytestmark = pytest.mark.django_db


class FakePSP:
    """A test receiver playing the shop + payments side of refund_requested: answers with a fixed result."""

    def __init__(self, result: str | None) -> None:
        self.result = result
        self.calls: list[dict[str, object]] = []

    def __call__(self, sender, **kwargs) -> None:
        self.calls.append(kwargs)
        if self.result:
            adjustment_mark_refund_result(adjustment_id=kwargs["adjustment_id"], status=self.result)


@pytest.fixture
def stock_returns() -> Iterator[list[dict[str, object]]]:
    received: list[dict[str, object]] = []

    def receiver(sender, **kwargs):
        received.append(kwargs)

    stock_return_requested.connect(receiver)
    yield received
    stock_return_requested.disconnect(receiver)


def _connect(psp: FakePSP) -> None:
    refund_requested.connect(psp, weak=False)


def test_refund_success_flow(place_order, django_capture_on_commit_callbacks):
    # given a paid Pix order of R$ 38,00 and a PSP that accepts refunds
    order = place_order(lines=[("CAM", 3000, 1)], freight=800)
    psp = FakePSP("completed")
    _connect(psp)
    try:
        # when R$ 10,00 is refunded
        with django_capture_on_commit_callbacks(execute=True):
            adjustment = order_refund(order_id=order.public_id, amount=1000, reason="Item com defeito")
    finally:
        refund_requested.disconnect(psp)
    # then the shop was asked once with the payment reference, and the refund completed
    assert psp.calls == [
        {
            "order_id": order.public_id,
            "adjustment_id": adjustment.public_id,
            "payment_reference": order.payment_reference,
            "amount": 1000,
            "reason": "Item com defeito",
            "signal": refund_requested,
        }
    ]
    adjustment.refresh_from_db()
    order.refresh_from_db()
    assert (adjustment.status, adjustment.amount, adjustment.totals) == (
        "completed",
        -1000,
        [{"type": "total", "amount": -1000}],
    )
    assert (order.refunded_amount, order.payment_status) == (1000, "partially_refunded")
    assert mail.outbox[-1].subject == f"Loja Exemplo: Reembolso do pedido #{order.number}"
    assert "R$ 10,00" in mail.outbox[-1].body
    assert order_bcp_payload(order_for_bcp(order.public_id))["adjustments"][0]["status"] == "completed"


def test_refund_failure_flow_frees_the_amount(place_order, django_capture_on_commit_callbacks):
    order = place_order(lines=[("CAM", 3000, 1)], freight=800)
    psp = FakePSP("failed")
    _connect(psp)
    try:
        with django_capture_on_commit_callbacks(execute=True):
            adjustment = order_refund(order_id=order.public_id, amount=3800, reason="Cliente pediu")
    finally:
        refund_requested.disconnect(psp)
    adjustment.refresh_from_db()
    order.refresh_from_db()
    assert adjustment.status == "failed"
    assert (order.refunded_amount, order.payment_status) == (0, "paid")
    assert EmailDelivery.objects.filter(order=order, kind="refunded").count() == 0
    # a failed refund does not count: the full amount may be refunded again
    retry = order_refund(order_id=order.public_id, amount=3800, reason="Nova tentativa")
    assert retry.status == "pending"


def test_refund_more_than_paid_is_refused(place_order):
    order = place_order(lines=[("CAM", 3000, 1)], freight=800)
    order_refund(order_id=order.public_id, amount=3000, reason="Parcial")
    with pytest.raises(OrderError) as error:
        order_refund(order_id=order.public_id, amount=801, reason="Demais")
    assert error.value.field == "amount"
    assert error.value.code == "refund_exceeds_paid"
    assert "R$ 8,00" in error.value.message
    assert Adjustment.objects.filter(order=order).count() == 1


def test_refund_bad_amount_and_reason_are_named(place_order):
    order = place_order()
    for amount in (0, -5, "10", 10.5):
        with pytest.raises(OrderError) as error:
            order_refund(order_id=order.public_id, amount=amount, reason="x")
        assert error.value.field == "amount"
    with pytest.raises(OrderError) as error:
        order_refund(order_id=order.public_id, amount=100, reason="  ")
    assert error.value.field == "reason"


def test_refund_result_replay_and_conflict(place_order):
    order = place_order()
    adjustment = order_refund(order_id=order.public_id, amount=500, reason="Ajuste")
    adjustment_mark_refund_result(adjustment_id=adjustment.public_id, status="completed")
    # replaying the same result changes nothing
    again = adjustment_mark_refund_result(adjustment_id=adjustment.public_id, status="completed")
    order.refresh_from_db()
    assert (again.status, order.refunded_amount) == ("completed", 500)
    with pytest.raises(OrderError) as error:
        adjustment_mark_refund_result(adjustment_id=adjustment.public_id, status="failed")
    assert error.value.code == "invalid_status"
    with pytest.raises(OrderError) as error:
        adjustment_mark_refund_result(adjustment_id="adj_nope", status="completed")
    assert error.value.field == "adjustment_id"


def test_card_orders_request_their_refund_through_the_outbox_too(place_order, django_capture_on_commit_callbacks):
    # card refunds go to payments like Pix ones (an estorno at the gateway), no longer recorded by staff
    order = place_order(payment_type="card")
    psp = FakePSP(None)
    _connect(psp)
    try:
        with django_capture_on_commit_callbacks(execute=True):
            adjustment = order_refund(order_id=order.public_id, amount=500, reason="Ajuste")
    finally:
        refund_requested.disconnect(psp)
    assert [(c["adjustment_id"], c["amount"]) for c in psp.calls] == [(adjustment.public_id, 500)]
    assert adjustment.status == "pending"


def test_cancel_restocks_unshipped_and_refunds_everything(
    place_order, stock_returns, django_capture_on_commit_callbacks
):
    # given a paid order nothing of which has shipped
    order = place_order(lines=[("CAM", 3000, 2), ("BONE", 2000, 1)], freight=800)
    psp = FakePSP("completed")
    _connect(psp)
    try:
        with django_capture_on_commit_callbacks(execute=True):
            cancellation = order_cancel(order_id=order.public_id, reason="Cliente desistiu")
    finally:
        refund_requested.disconnect(psp)
    order.refresh_from_db()
    # then all lines are removed, stock comes back, the whole paid amount (freight included) is refunded
    assert [(line.quantity_total, line.status) for line in order.lines.all()] == [(0, "removed"), (0, "removed")]
    assert order.status == "canceled"
    assert stock_returns == [
        {"order_id": order.public_id, "items": [("CAM", 2), ("BONE", 1)], "signal": stock_return_requested}
    ]
    assert cancellation.type == "cancellation"
    assert cancellation.line_items == [
        {"id": order.lines.all()[0].public_id, "quantity": -2},
        {"id": order.lines.all()[1].public_id, "quantity": -1},
    ]
    assert [call["amount"] for call in psp.calls] == [8800]
    assert (order.refunded_amount, order.payment_status) == (8800, "refunded")
    kinds = list(EmailDelivery.objects.filter(order=order).order_by("id").values_list("kind", flat=True))
    assert kinds == ["placed", "canceled", "refunded"]


def test_cancel_after_partial_shipment_keeps_shipped_part(place_order, stock_returns):
    order = place_order(lines=[("CAM", 3000, 3)], freight=800)
    line = order.lines.get()
    order_ship(order_id=order.public_id, tracking_number="BR123456785BR", lines=[LineQuantity(line.public_id, 1)])
    order_cancel(order_id=order.public_id, reason="Sem estoque")
    line.refresh_from_db()
    order.refresh_from_db()
    assert (line.quantity_total, line.quantity_fulfilled, line.status) == (1, 1, "fulfilled")
    assert order.status == "shipped"
    refund = Adjustment.objects.get(order=order, type="refund")
    assert refund.amount == -6000  # the value of the 2 removed shirts, not the freight


def test_cancel_after_partial_shipment_refunds_what_was_paid_for_the_rest_not_its_list_price(place_order):
    # given two shirts at R$ 30,00 and a cap at R$ 20,00 with a R$ 8,00 coupon (R$ 6,00 / 2,00 by value bought)
    order = place_order(lines=[("CAM", 3000, 2), ("BONE", 2000, 1)], freight=800, discounts=[(800, "Cupom OITO")])
    shirt = order.lines.get(sku="CAM")
    # when one shirt ships and the rest is cancelled
    order_ship(order_id=order.public_id, tracking_number="BR123456785BR", lines=[LineQuantity(shirt.public_id, 1)])
    order_cancel(order_id=order.public_id, reason="Sem estoque")
    # then the refund is what the buyer paid for one shirt and the cap: R$ 50,00 less their R$ 5,00 of the coupon
    refund = Adjustment.objects.get(order=order, type="refund")
    assert refund.amount == -(3000 - 300 + 2000 - 200)


def test_cancel_when_everything_shipped_is_refused(place_order):
    order = place_order()
    order_ship(order_id=order.public_id, tracking_number="BR123456785BR")
    with pytest.raises(OrderError) as error:
        order_cancel(order_id=order.public_id, reason="tarde demais")
    assert error.value.field == "order_id"
    assert error.value.code == "all_shipped"
    assert error.value.message == f"Tudo do pedido #{order.number} já foi enviado: registre uma devolução."


def test_return_with_restock_and_refund(place_order, stock_returns):
    order = place_order(lines=[("CAM", 3000, 2)], freight=800)
    line = order.lines.get()
    order_ship(order_id=order.public_id, tracking_number="BR123456785BR")
    order_mark_delivered(order_id=order.public_id)  # a return is of what reached the buyer
    adjustment = order_return(
        order_id=order.public_id,
        lines=[LineQuantity(line.public_id, 1)],
        reason="Tamanho errado",
        restock=True,
        refund_amount=3000,
    )
    line.refresh_from_db()
    assert (line.quantity_total, line.quantity_fulfilled, line.status) == (1, 1, "fulfilled")
    assert adjustment.line_items == [{"id": line.public_id, "quantity": -1}]
    assert Adjustment.objects.get(order=order, type="refund").amount == -3000
    assert stock_returns == []  # only after commit (not executed here)


def test_return_more_than_shipped_is_refused(place_order):
    order = place_order(lines=[("CAM", 3000, 2)])
    line = order.lines.get()
    with pytest.raises(OrderError) as error:
        order_return(order_id=order.public_id, lines=[LineQuantity(line.public_id, 1)], reason="x")
    assert error.value.field == "lines[0].quantity"


def test_email_task_replayed_sends_once(place_order):
    # given the placed e-mail already sent
    order = place_order()
    delivery = EmailDelivery.objects.get(order=order, kind="placed")
    assert len(mail.outbox) == 1
    # when the task is delivered again (broker redelivery)
    assert send_order_email.delay(delivery.pk).get() == "already_sent"
    # then nothing more is sent
    assert len(mail.outbox) == 1


def test_every_outbox_kind_a_row_may_carry_has_its_handler() -> None:
    # outbox.py (the write, inside the change's transaction) and dispatch.py (the run) are apart so the
    # handlers may use services that write outbox rows; a kind without a handler would stay pending forever.
    from orders.services.dispatch import HANDLERS
    from orders.services.outbox import KINDS

    assert set(HANDLERS) == KINDS


def test_a_refund_made_in_english_keeps_the_stored_timeline_portuguese_and_tells_the_reader_in_english(place_order):
    """The timeline entry is stored in Portuguese (every later reader sees it as written): its amount stays
    "R$ 10,00" whatever the staff member's language; a refusal is read now, by them: "R$50.00" in English."""
    order = place_order(lines=[("CAM", 3000, 1)], freight=800)  # R$ 38,00 paid
    with translation.override("en"):
        order_refund(order_id=order.public_id, amount=1000, reason="Avaria")
        with pytest.raises(OrderError) as refused:
            order_refund(order_id=order.public_id, amount=5000, reason="Frete")
        said = refused.value.message
    assert (
        OrderEvent.objects.get(order=order, kind="refund_requested").message
        == "Reembolso de R$ 10,00 solicitado: Avaria"
    )
    assert "R$50.00" in said and "R$28.00" in said and "R$ " not in said
