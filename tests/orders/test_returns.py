"""Cancel and return asked by the buyer or an agent (issue 35): the rules of orders.services.returns — cancel only
before shipping, return only delivered units within the window (CDC art. 49: 7 days at least), quantities never
asked twice, staff steps in order, and never more money back than was paid."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone, translation

from kernel.money import apportion
from orders.errors import OrderError
from orders.models import Adjustment, Order, OrderEvent, OutboxMessage, ReturnRequest
from orders.net_value import lines_net_value
from orders.services import (
    fulfillment_event_create,
    order_cancel_requested,
    order_refund,
    order_ship,
    return_request_approve,
    return_request_create,
    return_request_receive,
    return_request_refund,
    return_request_reject,
)
from orders.types import LineQuantity

pytestmark = pytest.mark.django_db


def _delivered(place_order, *, lines=None, days_ago: int = 1, window: int | None = None, discounts=None) -> Order:
    order = place_order(lines=lines or [("CAM", 3000, 2), ("MEIA", 1000, 1)], freight=800, discounts=discounts)
    if window is not None:
        Order.objects.filter(pk=order.pk).update(policies=[{"kind": "returns", "return_window_days": window}])
    order_ship(order_id=order.public_id, tracking_number="BR123456785BR")
    fulfillment_event_create(
        order_id=order.public_id, type="delivered", occurred_at=timezone.now() - timedelta(days=days_ago)
    )
    order.refresh_from_db()
    return order


def _line(order: Order, sku: str) -> str:
    return order.lines.get(sku=sku).public_id


def test_buyer_cancels_before_shipping_and_gets_all_paid_back(place_order) -> None:
    # given a paid order of R$ 78,00 (2 × 30 + 10 + 8 frete) not yet shipped
    order = place_order(lines=[("CAM", 3000, 2), ("MEIA", 1000, 1)], freight=800)
    # when the buyer cancels it
    adjustment = order_cancel_requested(order_id=order.public_id, reason="Comprei errado")
    # then the order is canceled and a pending refund of everything paid (freight included) goes to the outbox
    order.refresh_from_db()
    assert (order.status, adjustment.type) == ("canceled", "cancellation")
    refund = Adjustment.objects.get(order=order, type="refund")
    assert (refund.amount, refund.status) == (-7800, "pending")
    assert OutboxMessage.objects.filter(key=f"refund:{refund.public_id}").count() == 1
    assert OrderEvent.objects.filter(order=order, kind="canceled", actor="comprador").count() == 1


def test_cancel_after_shipping_is_refused_in_portuguese_and_changes_nothing(place_order) -> None:
    order = place_order(lines=[("CAM", 3000, 1)])
    order_ship(order_id=order.public_id, tracking_number="BR123456785BR")
    with pytest.raises(OrderError) as refused:
        order_cancel_requested(order_id=order.public_id, requested_by="platform", platform_id="plat_x")
    assert refused.value.code == "already_shipped"
    assert refused.value.message == (
        f"O pedido #{order.number} já foi enviado e não pode mais ser cancelado: depois de recebê-lo, solicite a "
        "devolução."
    )
    order.refresh_from_db()
    assert order.status == "shipped" and not Adjustment.objects.filter(order=order).exists()


def test_cancel_twice_is_refused_the_second_time_without_a_second_refund(place_order) -> None:
    order = place_order(lines=[("CAM", 3000, 1)])
    order_cancel_requested(order_id=order.public_id)
    with pytest.raises(OrderError) as refused:
        order_cancel_requested(order_id=order.public_id)
    assert refused.value.code == "order_canceled"
    assert Adjustment.objects.filter(order=order, type="refund").count() == 1


def test_return_request_within_the_window(place_order) -> None:
    order = _delivered(place_order, days_ago=6)
    request = return_request_create(
        order_id=order.public_id, lines=[LineQuantity(_line(order, "CAM"), 1)], reason_code="changed_mind",
        requested_by="platform", platform_id="plat_x",
    )  # fmt: skip
    assert (request.status, request.line_items) == ("requested", [{"id": _line(order, "CAM"), "quantity": 1}])
    assert OrderEvent.objects.filter(order=order, kind="return_requested", actor="plataforma plat_x").count() == 1


def test_return_after_the_cdc_seven_days_is_refused(place_order) -> None:
    # given an order delivered 8 days ago under the minimum window (7 days, CDC art. 49)
    order = _delivered(place_order, days_ago=8, window=7)
    deadline = timezone.localtime(order.fulfillment_events.get(type="delivered").occurred_at + timedelta(days=7))
    with pytest.raises(OrderError) as refused:
        return_request_create(order_id=order.public_id, lines=[LineQuantity(_line(order, "CAM"), 1)],
                              reason_code="changed_mind")  # fmt: skip
    assert refused.value.code == "return_window_closed"
    assert refused.value.message == (
        f"O prazo de 7 dias para devolver o pedido #{order.number} terminou em {deadline:%d/%m/%Y}."
    )
    assert not ReturnRequest.objects.exists()


def test_a_longer_store_window_is_honoured_and_a_shorter_one_is_raised_to_seven_days(place_order) -> None:
    generous = _delivered(place_order, days_ago=20, window=30)
    return_request_create(order_id=generous.public_id, lines=[LineQuantity(_line(generous, "CAM"), 1)],
                          reason_code="defective")  # fmt: skip
    short = _delivered(place_order, days_ago=6, window=3)  # a policy below the CDC still gives 7 days
    return_request_create(order_id=short.public_id, lines=[LineQuantity(_line(short, "CAM"), 1)],
                          reason_code="defective")  # fmt: skip
    assert ReturnRequest.objects.count() == 2


def test_quantities_beyond_what_was_delivered_or_already_asked_are_refused(place_order) -> None:
    order = _delivered(place_order)
    cam = _line(order, "CAM")
    return_request_create(order_id=order.public_id, lines=[LineQuantity(cam, 1)], reason_code="defective")
    with pytest.raises(OrderError) as refused:
        return_request_create(order_id=order.public_id, lines=[LineQuantity(cam, 2)], reason_code="defective")
    assert (refused.value.field, refused.value.code) == ("lines[0].quantity", "quantity_exceeded")
    assert refused.value.message == (
        "Não é possível devolver 2 unidades de Produto CAM: só 1 unidade recebida ainda não foi pedida em devolução."
    )
    with translation.override("en"):  # the refusal is translated when read, plurals included
        assert (
            refused.value.message
            == "Cannot return 2 units of Produto CAM: only 1 received unit is not in a return request yet."
        )
    with pytest.raises(OrderError) as unknown:
        return_request_create(order_id=order.public_id, lines=[LineQuantity("li_nope", 1)], reason_code="defective")
    assert unknown.value.field == "lines[0].id"
    with pytest.raises(OrderError) as reason:
        return_request_create(order_id=order.public_id, lines=[LineQuantity(cam, 1)], reason_code="porque sim")
    assert reason.value.field == "reason_code"
    with pytest.raises(OrderError) as other:
        return_request_create(order_id=order.public_id, lines=[LineQuantity(cam, 1)], reason_code="other")
    assert (other.value.field, other.value.code) == ("reason", "required")
    assert other.value.message == "Conte o que aconteceu: com “Outro motivo” a descrição é obrigatória."  # not "Campo…"
    assert ReturnRequest.objects.count() == 1


def test_undelivered_items_cannot_be_returned(place_order) -> None:
    order = place_order(lines=[("CAM", 3000, 1)])
    with pytest.raises(OrderError) as refused:
        return_request_create(order_id=order.public_id, lines=[LineQuantity(_line(order, "CAM"), 1)],
                              reason_code="defective")  # fmt: skip
    # the code the order's order_actions gives for it (QA walk: an agent read quantity_exceeded here)
    assert (refused.value.field, refused.value.code) == ("order_id", "nothing_to_return")
    assert refused.value.message == f"O pedido #{order.number} não tem itens entregues que possam ser devolvidos."


def test_a_replayed_request_key_returns_the_first_request(place_order) -> None:
    order = _delivered(place_order)
    first = return_request_create(order_id=order.public_id, lines=[LineQuantity(_line(order, "CAM"), 2)],
                                  reason_code="defective", request_key="nonce-1")  # fmt: skip
    again = return_request_create(order_id=order.public_id, lines=[LineQuantity(_line(order, "CAM"), 2)],
                                  reason_code="defective", request_key="nonce-1")  # fmt: skip
    assert again.pk == first.pk and ReturnRequest.objects.count() == 1


def test_staff_steps_approve_receive_refund_reuse_the_ledger(place_order) -> None:
    # given a delivered order of R$ 78,00 and a request to return one shirt (R$ 30,00)
    order = _delivered(place_order)
    request = return_request_create(order_id=order.public_id, lines=[LineQuantity(_line(order, "CAM"), 1)],
                                    reason_code="defective")  # fmt: skip
    with pytest.raises(OrderError) as early:
        return_request_receive(return_id=request.public_id)
    assert early.value.code == "invalid_return_status"
    # when staff approve, receive and refund it, each twice (a double click): the second call of each step says,
    # from the row it locked, that it changed nothing
    steps = [
        (return_request_approve(return_id=request.public_id, actor="maria").changed,
         return_request_approve(return_id=request.public_id, actor="maria").changed),
        (return_request_receive(return_id=request.public_id, actor="maria").changed,
         return_request_receive(return_id=request.public_id, actor="maria").changed),
        (return_request_refund(return_id=request.public_id, actor="maria").changed,
         (repeat := return_request_refund(return_id=request.public_id, actor="maria")).changed),
    ]  # fmt: skip
    assert steps == [(True, False), (True, False), (True, False)]
    request = repeat.request
    # then one return adjustment, one pending refund of the item's value, one line unit less
    assert (request.status, request.refund_amount) == ("refund_pending", 3000)  # refunded once the PSP pays it
    assert Adjustment.objects.filter(order=order, type="return").count() == 1
    refund = Adjustment.objects.get(order=order, type="refund")
    assert (refund.amount, refund.public_id) == (-3000, request.refund_adjustment_id)
    assert order.lines.get(sku="CAM").quantity_total == 1
    kinds = list(OrderEvent.objects.filter(order=order, kind__startswith="return").values_list("kind", flat=True))
    assert kinds == ["return_requested", "return_approved", "returned", "return_refunded"]


def test_withdrawal_of_everything_gives_back_the_freight_too(place_order) -> None:
    order = _delivered(place_order, lines=[("CAM", 3000, 1)])
    request = return_request_create(order_id=order.public_id, lines=[LineQuantity(_line(order, "CAM"), 1)],
                                    reason_code="changed_mind")  # fmt: skip
    return_request_approve(return_id=request.public_id)
    return_request_receive(return_id=request.public_id)
    request = return_request_refund(return_id=request.public_id).request
    assert request.refund_amount == 3800  # R$ 30,00 + R$ 8,00 frete: all that was paid


def test_refund_never_exceeds_what_was_paid(place_order) -> None:
    # given R$ 30,00 of R$ 38,00 already refunded by staff, then a return of the R$ 30,00 shirt
    order = _delivered(place_order, lines=[("CAM", 3000, 1)])
    order_refund(order_id=order.public_id, amount=3000, reason="Acordo")
    request = return_request_create(order_id=order.public_id, lines=[LineQuantity(_line(order, "CAM"), 1)],
                                    reason_code="defective")  # fmt: skip
    return_request_approve(return_id=request.public_id)
    return_request_receive(return_id=request.public_id)
    # when staff ask to refund R$ 30,00 again, it is refused; the default is what is left (R$ 8,00)
    with pytest.raises(OrderError) as refused:
        return_request_refund(return_id=request.public_id, amount=3000)
    assert refused.value.code == "refund_exceeds_paid"
    request = return_request_refund(return_id=request.public_id).request
    assert request.refund_amount == 800
    assert sum(-a.amount for a in Adjustment.objects.filter(order=order, type="refund")) == 3800


def test_reject_needs_a_reason_and_frees_the_quantities(place_order) -> None:
    order = _delivered(place_order)
    cam = _line(order, "CAM")
    request = return_request_create(order_id=order.public_id, lines=[LineQuantity(cam, 2)], reason_code="defective")
    with pytest.raises(OrderError) as missing:
        return_request_reject(return_id=request.public_id, note="")
    assert missing.value.field == "note"
    assert return_request_reject(return_id=request.public_id, note="Fora das condições da política").changed
    assert not return_request_reject(return_id=request.public_id, note="Outra vez").changed  # a second click
    again = return_request_create(order_id=order.public_id, lines=[LineQuantity(cam, 2)], reason_code="defective")
    assert again.status == "requested"


def test_statement_budgets_of_the_staff_steps(place_order, django_assert_max_num_queries) -> None:
    # Each step is one transaction with a fixed number of statements, whatever the order's size.
    order = _delivered(place_order)
    with django_assert_max_num_queries(17):  # with the buyer's e-mail row (the request arrived)
        request = return_request_create(order_id=order.public_id, lines=[LineQuantity(_line(order, "CAM"), 1)],
                                        reason_code="defective")  # fmt: skip
    with django_assert_max_num_queries(16):  # with the buyer's e-mail row
        return_request_approve(return_id=request.public_id)
    with django_assert_max_num_queries(21):
        return_request_receive(return_id=request.public_id)
    with django_assert_max_num_queries(27):  # order_refund's own work (outbox row, timeline, webhook row)
        return_request_refund(return_id=request.public_id)


def test_no_cancel_while_the_pix_is_disputed(place_order) -> None:
    # a refund now could pay the buyer twice: the MED dispute may return the same Pix
    order = place_order(lines=[("CAM", 3000, 1)])
    Order.objects.filter(pk=order.pk).update(payment_dispute="open")
    with pytest.raises(OrderError) as refused:
        order_cancel_requested(order_id=order.public_id)
    assert refused.value.code == "payment_disputed"
    assert not Adjustment.objects.filter(order=order).exists()


def test_the_buyer_is_told_by_e_mail_when_staff_approve_or_reject(
    place_order, django_capture_on_commit_callbacks, mailoutbox
) -> None:
    order = _delivered(place_order)
    cam = _line(order, "CAM")
    first = return_request_create(order_id=order.public_id, lines=[LineQuantity(cam, 1)], reason_code="defective")
    second = return_request_create(order_id=order.public_id, lines=[LineQuantity(cam, 1)], reason_code="other",
                                   reason="Não gostei da cor")  # fmt: skip
    with django_capture_on_commit_callbacks(execute=True):
        return_request_approve(return_id=first.public_id, note="Use a etiqueta enviada por e-mail")
        return_request_approve(return_id=first.public_id)  # a second click: no second e-mail
        return_request_reject(return_id=second.public_id, note="Cor não é defeito; troca só em 7 dias")
    returns = [m for m in mailoutbox if "devolução" in m.subject]
    assert [m.subject for m in returns] == [
        f"Loja Exemplo: Sua devolução do pedido #{order.number}",
        f"Loja Exemplo: Sua devolução do pedido #{order.number}",
    ]
    assert "aprovou a devolução" in returns[0].body and "Use a etiqueta enviada por e-mail" in returns[0].body
    assert "recusou a devolução" in returns[1].body and "Cor não é defeito" in returns[1].body


def test_the_buyer_is_told_by_e_mail_that_the_return_request_arrived(
    place_order, django_capture_on_commit_callbacks, mailoutbox
) -> None:
    """The buyer's walk: asking for a return sent nothing, so the buyer did not know it had arrived."""
    order = _delivered(place_order)
    mailoutbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        # the request, then its replay (the page's nonce again): one e-mail
        for _ in range(2):
            return_request_create(
                order_id=order.public_id, lines=[LineQuantity(_line(order, "CAM"), 1)], reason_code="defective",
                request_key="nonce-1",
            )  # fmt: skip
    returns = [m for m in mailoutbox if "devolução" in m.subject]
    assert [m.subject for m in returns] == [f"Loja Exemplo: Sua devolução do pedido #{order.number}"]
    assert f"Recebemos seu pedido de devolução no pedido #{order.number}." in returns[0].body
    assert "aprovou" not in returns[0].body and "recusou" not in returns[0].body


def _refunded_by_default(order: Order, lines: list[LineQuantity], reason_code: str = "defective") -> ReturnRequest:
    reason = "Não serviu no pé" if reason_code == "other" else ""  # "Outro motivo" needs the buyer's words
    request = return_request_create(order_id=order.public_id, lines=lines, reason_code=reason_code, reason=reason)
    return_request_approve(return_id=request.public_id)
    return_request_receive(return_id=request.public_id)
    return return_request_refund(return_id=request.public_id).request


def test_a_coupon_order_refunds_what_was_paid_for_the_item_not_its_list_price(place_order) -> None:
    # given QA's order: one R$ 59,90 item and a R$ 20,00 one, BEMVINDO10 (10 %: R$ 7,99 off) and R$ 8,00 freight
    order = _delivered(place_order, lines=[("BLUSA", 5990, 1), ("MEIA", 2000, 1)],
                       discounts=[(799, "Cupom BEMVINDO10")])  # fmt: skip
    # when the R$ 59,90 item comes back and staff refund the default
    request = _refunded_by_default(order, [LineQuantity(_line(order, "BLUSA"), 1)])
    # then the buyer gets the R$ 53,91 paid for it (59,90 less its R$ 5,99 share of the coupon)
    assert request.refund_amount == 5391
    assert Adjustment.objects.get(order=order, type="refund").amount == -5391


def test_a_pix_discount_order_refunds_the_item_net_of_its_share(place_order) -> None:
    # given 2 × R$ 30,00 + R$ 10,00 paid by Pix with 5 % off (R$ 3,50) and R$ 8,00 freight
    order = _delivered(place_order, discounts=[(350, "Desconto Pix (5%)")])
    # when one shirt of two comes back: the shirts' share is R$ 3,00, so one shirt's R$ 1,50
    request = _refunded_by_default(order, [LineQuantity(_line(order, "CAM"), 1)])
    assert request.refund_amount == 2850


def test_an_order_without_discount_still_refunds_the_list_value(place_order) -> None:
    order = _delivered(place_order)
    request = _refunded_by_default(order, [LineQuantity(_line(order, "CAM"), 2), LineQuantity(_line(order, "MEIA"), 1)],
                                   reason_code="other")  # fmt: skip
    assert request.refund_amount == 7000  # 2 × 30 + 10, no freight: "Outro motivo" leaves the freight to staff


@pytest.mark.parametrize("reason_code", ["defective", "damaged", "wrong_item"])
def test_every_item_back_by_the_shops_fault_gives_back_the_freight_too(place_order, reason_code) -> None:
    """CDC art. 18 §1 II: a defective (or damaged, or wrong) product is refunded as all that was paid."""
    order = _delivered(place_order)
    request = _refunded_by_default(order, [LineQuantity(_line(order, "CAM"), 2), LineQuantity(_line(order, "MEIA"), 1)],
                                   reason_code=reason_code)  # fmt: skip
    assert request.refund_amount == 7800  # 2 × 30 + 10 + R$ 8,00 frete


def test_part_of_the_order_back_by_the_shops_fault_keeps_the_freight(place_order) -> None:
    order = _delivered(place_order)
    request = _refunded_by_default(order, [LineQuantity(_line(order, "CAM"), 2)], reason_code="defective")
    assert request.refund_amount == 6000  # the freight carried the socks the buyer kept


def test_returning_every_line_refunds_exactly_the_discounted_items_total(place_order) -> None:
    # given three lines whose shares of a R$ 10,00 coupon do not divide evenly (largest remainders)
    order = _delivered(place_order, lines=[("A", 3333, 1), ("B", 3333, 2), ("C", 1001, 3)],
                       discounts=[(1000, "Cupom DEZ")])  # fmt: skip
    request = _refunded_by_default(order, [LineQuantity(_line(order, sku), q) for sku, q in (("A", 1), ("B", 2),
                                                                                           ("C", 3))],
                                   reason_code="other")  # fmt: skip
    assert request.refund_amount == 3333 + 6666 + 3003 - 1000  # the items as paid, not the freight


def test_lines_net_value_apportions_by_largest_remainder_in_centavos() -> None:
    lines = [("a", 3333, 1), ("b", 3333, 2), ("c", 1001, 3)]
    everything = {"a": 1, "b": 2, "c": 3}
    assert lines_net_value(lines, 1000, everything) == 13002 - 1000
    # each line's share is the NF-e's vDesc of it, and the shares sum to the discount
    assert apportion(1000, [3333, 6666, 3003]) == [256, 513, 231]
    assert [lines_net_value(lines, 1000, {k: q}) for k, q in everything.items()] == [3077, 6153, 2772]
    assert lines_net_value(lines, 1000, {"b": 1}) == 3333 - 257  # half of 513, rounded half up
    assert lines_net_value(lines, 0, everything) == 13002


def test_withdrawal_of_everything_with_a_coupon_still_gives_back_all_that_was_paid(place_order) -> None:
    order = _delivered(place_order, lines=[("CAM", 3000, 1)], discounts=[(300, "Cupom BEMVINDO10")])
    request = _refunded_by_default(order, [LineQuantity(_line(order, "CAM"), 1)], reason_code="changed_mind")
    assert request.refund_amount == 3500  # R$ 27,00 paid for the shirt + R$ 8,00 frete
