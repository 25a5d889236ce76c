"""Staff side of buyer and agent returns (issue 35): the request shows on the order page and in the returns queue,
and the "Devolução solicitada" action page takes each step through orders.services.returns."""

from __future__ import annotations

import re
import threading
from datetime import timedelta

import pytest
from django.contrib.auth.models import Permission, User
from django.db import connection, transaction
from django.test import Client
from django.utils import timezone

from orders.errors import OrderError
from orders.models import Adjustment, Order, OrderEvent, ReturnRequest
from orders.services import (
    fulfillment_event_create,
    order_mark_delivered,
    order_refund,
    order_return,
    order_ship,
    return_request_approve,
    return_request_create,
)
from orders.types import LineQuantity
from tests.shop.test_checkout_lock import _until_someone_waits

pytestmark = pytest.mark.django_db


def _refunder() -> Client:
    user = User.objects.create_user("devolucoes", password="pw-12345678", is_staff=True)
    user.user_permissions.add(
        *Permission.objects.filter(content_type__app_label="orders", codename__in=["view_order", "refund_order",
                                                                                  "view_returnrequest"])
    )  # fmt: skip
    client = Client()
    client.force_login(user)
    return client


def _requested(place_order) -> tuple[Order, ReturnRequest]:
    order = place_order(lines=[("CAM", 3000, 2)], freight=800)
    order_ship(order_id=order.public_id, tracking_number="BR123456785BR")
    fulfillment_event_create(order_id=order.public_id, type="delivered", occurred_at=timezone.now() - timedelta(1))
    line = order.lines.get()
    request = return_request_create(order_id=order.public_id, lines=[LineQuantity(line.public_id, 1)],
                                    reason_code="defective", reason="Costura aberta")  # fmt: skip
    return order, request


def _step(client: Client, order: Order, request: ReturnRequest, step: str, **extra: str) -> str:
    response = client.post(f"/admin/orders/order/{order.public_id}/action/return-request/",
                           {"request": request.public_id, "step": step,
                            # "Reembolsar" and "Tentar de novo" ask for the tick naming the sum (a test without
                            # it passes confirm="")
                            **({"confirm": "on"} if step in ("refund", "retry") else {}), **extra},
                           follow=True)  # fmt: skip
    assert response.status_code == 200
    return response.content.decode()


def test_request_is_in_the_queue_and_on_the_order_page(place_order) -> None:
    order, request = _requested(place_order)
    client = _refunder()
    queue = client.get("/admin/orders/returnrequest/?status__exact=requested").content.decode()
    assert request.public_id in queue and f"#{order.number}" in queue and "Analisar" in queue
    page = client.get(f"/admin/orders/order/{order.pk}/change/").content.decode()
    assert "Devolução solicitada" in page and "Costura aberta" in page


def test_staff_approve_receive_and_refund_from_the_action_page(place_order) -> None:
    order, request = _requested(place_order)
    client = _refunder()
    assert "Devolução aprovada" in _step(client, order, request, "approve", note="Envie pelos Correios")
    assert "Itens recebidos" in _step(client, order, request, "receive", restock="on")
    assert "Reembolso de R$ 30,00 da devolução solicitado." in _step(client, order, request, "refund")
    request.refresh_from_db()
    # asked, not done: the return says so until the refund's answer
    assert (request.status, request.refund_amount, request.staff_note) == (
        "refund_pending",
        3000,
        "Envie pelos Correios",
    )
    assert [a.type for a in Adjustment.objects.filter(order=order)] == ["return", "refund"]
    # the refund's reason (the buyer's refund e-mail "Motivo") says why, not "Devolução ret_6a8c…"
    assert Adjustment.objects.get(order=order, type="refund").description == "Devolução: Produto com defeito"


def test_a_wrong_step_is_refused_in_words_and_changes_nothing(place_order) -> None:
    order, request = _requested(place_order)
    html = _step(_refunder(), order, request, "refund")
    assert "Solicitada" in html and "Recebida" in html  # “está Solicitada; este passo pede Recebida”
    request.refresh_from_db()
    assert request.status == "requested" and not Adjustment.objects.filter(order=order).exists()


def test_reject_needs_the_reason(place_order) -> None:
    order, request = _requested(place_order)
    client = _refunder()
    assert "Campo obrigatório" in _step(client, order, request, "reject")
    assert "Devolução recusada" in _step(client, order, request, "reject", note="Fora da política")
    request.refresh_from_db()
    assert (request.status, request.staff_note) == ("rejected", "Fora da política")


def test_a_repeated_step_says_nothing_changed_instead_of_succeeding_again(place_order) -> None:
    order, request = _requested(place_order)
    client = _refunder()
    assert "Devolução aprovada; o comprador e a plataforma foram avisados." in _step(client, order, request, "approve")
    emails, events = order.email_deliveries.count(), OrderEvent.objects.filter(order=order).count()
    # when staff approve again (a second tab, a back button), the page says so and nothing is added
    html = _step(client, order, request, "approve")
    assert "Esta devolução já estava aprovada; nada mudou." in html and "Devolução aprovada;" not in html
    assert (order.email_deliveries.count(), OrderEvent.objects.filter(order=order).count()) == (emails, events)
    assert "Itens recebidos" in _step(client, order, request, "receive", restock="on")
    assert "Os itens desta devolução já estavam recebidos; nada mudou." in _step(client, order, request, "receive")
    assert Adjustment.objects.filter(order=order, type="return").count() == 1


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_two_approvals_at_the_same_instant_show_one_success(place_order) -> None:
    # given a request, and a first approval (another tab) that holds the order's lock
    order, request = _requested(place_order)
    client = _refunder()
    second: dict[str, str] = {}

    def second_click() -> None:
        try:
            second["html"] = _step(client, order, request, "approve")
        finally:
            connection.close()

    with transaction.atomic():
        Order.objects.select_for_update().get(pk=order.pk)
        thread = threading.Thread(target=second_click)
        # when the second click reads the request as still "requested", then waits for the lock
        thread.start()
        _until_someone_waits()
        return_request_approve(return_id=request.public_id, actor="maria")
    thread.join(30)
    # then it finds the request approved under the lock and says that nothing changed (before: a second success)
    assert "Esta devolução já estava aprovada; nada mudou." in second["html"]
    assert "Devolução aprovada;" not in second["html"]
    assert OrderEvent.objects.filter(order=order, kind="return_approved").count() == 1


def test_the_change_page_reads_in_portuguese_with_items_and_money_formatted(place_order) -> None:
    # given a refunded request of one R$ 30,00 shirt
    order, request = _requested(place_order)
    client = _refunder()
    for step in ("approve", "receive", "refund"):
        _step(client, order, request, step)
    # when staff open it from the returns queue
    response = client.get(f"/admin/orders/returnrequest/{request.pk}/change/")
    assert response.status_code == 200
    html = response.content.decode()
    # then labels, requester, items and money read as words, not as stored values
    for label in ("Pedido:", "Chave da solicitação:", "Pedida por:", "Itens:", "Valor reembolsado:"):
        assert label in html
    assert "Order:" not in html and "Request key:" not in html
    assert '<div class="readonly">Comprador</div>' in html
    assert "1 × Produto CAM (CAM)" in html and "&quot;quantity&quot;" not in html and '"quantity"' not in html
    assert "R$ 30,00" in html


def test_the_step_page_names_its_buttons_by_the_next_action(place_order) -> None:
    order, request = _requested(place_order)
    client = _refunder()
    url = f"/admin/orders/order/{order.public_id}/action/return-request/?request={request.public_id}"
    html = client.get(url).content.decode()
    assert 'value="approve">Aprovar devolução</button>' in html and 'value="reject">Recusar devolução</button>' in html
    assert "Confirmar recebimento" not in html and 'value="Devolução solicitada"' not in html
    _step(client, order, request, "approve")
    assert 'value="receive">Confirmar recebimento</button>' in client.get(url).content.decode()
    _step(client, order, request, "receive")
    html = client.get(url).content.decode()
    assert 'value="refund">Reembolsar</button>' in html and "Vazio: R$ 30,00" in html


def test_a_defective_order_all_back_suggests_all_that_was_paid_and_says_so(place_order) -> None:
    # given both shirts back as defective (R$ 60,00 + R$ 8,00 freight)
    order = place_order(lines=[("CAM", 3000, 2)], freight=800)
    order_ship(order_id=order.public_id, tracking_number="BR123456785BR")
    fulfillment_event_create(order_id=order.public_id, type="delivered", occurred_at=timezone.now() - timedelta(1))
    request = return_request_create(order_id=order.public_id, lines=[LineQuantity(order.lines.get().public_id, 2)],
                                    reason_code="defective", reason="Costura aberta")  # fmt: skip
    client = _refunder()
    _step(client, order, request, "approve")
    _step(client, order, request, "receive")
    # then "Reembolsar" suggests the freight too (CDC art. 18 §1 II) and its hint says what the sum is made of
    url = f"/admin/orders/order/{order.public_id}/action/return-request/?request={request.public_id}"
    html = client.get(url).content.decode()
    assert "Vazio: R$ 68,00, tudo o que foi pago (itens e frete: todos os itens voltaram)." in html
    assert "Confirmo o reembolso de R$ 68,00" in html


def test_the_step_page_shows_what_the_buyer_asked_not_the_requests_code(place_order) -> None:
    # given a buyer's request to return 1 of the 2 shirts, in their words
    order, request = _requested(place_order)
    # when staff open "Devolução solicitada" to decide
    html = _refunder().get(f"/admin/orders/order/{order.public_id}/action/return-request/").content.decode()
    # then the choice names the item and the reason, and the buyer's words are beside it (the page showed only
    # "ret_… · Solicitada · Produto com defeito": what and why were on the order page's inline only)
    line = order.lines.get()
    label = f"1× {line.title} ({line.sku}) · Produto com defeito · Solicitada"
    assert f'<option value="{request.public_id}" selected>{label}</option>' in html
    assert "Comprador, em " in html and ": “Costura aberta”" in html


def test_staff_return_is_offered_only_for_delivered_units_and_a_crafted_post_is_refused_in_words(
    place_order,
) -> None:
    """QA: "Registrar devolução" was offered (and worked) on an order shipped but still on the road; a return is
    of what reached the buyer. Offered once delivered, for the delivered units only; the service says why."""
    client = _refunder()
    order = place_order(lines=[("CAM", 3000, 2)], freight=800)
    line = order.lines.get()
    order_ship(order_id=order.public_id, tracking_number="BR123456785BR")
    page = client.get(f"/admin/orders/order/{order.pk}/change/").content.decode()
    assert "Registrar devolução" not in page

    crafted = client.post(
        f"/admin/orders/order/{order.public_id}/action/return/",
        {f"qty_{line.public_id}": "1", "reason": "Tamanho errado", "condition": "novo"},
        follow=True,
    )
    assert "“Registrar devolução” não se aplica ao pedido" in crafted.content.decode()
    with pytest.raises(OrderError) as refused:  # any other way in (the staff API) meets the service's refusal
        order_return(order_id=order.public_id, lines=[LineQuantity(line.public_id, 1)], reason="Tamanho errado")
    assert (
        str(refused.value.message)
        == "Não é possível devolver 1 unidade de Produto CAM: nenhuma foi entregue ao comprador ainda."
    )
    assert not Adjustment.objects.filter(order=order, type="return").exists()

    order_mark_delivered(order_id=order.public_id, lines=[LineQuantity(line.public_id, 1)])
    page = client.get(f"/admin/orders/order/{order.pk}/change/").content.decode()
    form = client.get(f"/admin/orders/order/{order.public_id}/action/return/").content.decode()
    assert "Registrar devolução" in page and "até 1" in form
    with pytest.raises(OrderError) as beyond:
        order_return(order_id=order.public_id, lines=[LineQuantity(line.public_id, 2)], reason="Tamanho errado")
    assert str(beyond.value.message) == (
        "Não é possível devolver 2 unidades de Produto CAM: só 1 foi entregue ao comprador."
    )


def test_each_step_page_shows_only_the_fields_that_step_reads(place_order) -> None:
    # given a request just made (QA walk: an amount typed at "Aprovar" was dropped without a word)
    order, request = _requested(place_order)
    client = _refunder()
    url = f"/admin/orders/order/{order.public_id}/action/return-request/?request={request.public_id}"
    # then approving asks for the answer to the buyer only, receiving for the restock only, refunding for the amount
    html = client.get(url).content.decode()
    assert 'name="note"' in html and 'name="amount"' not in html and 'name="restock"' not in html
    _step(client, order, request, "approve")
    html = client.get(url).content.decode()
    assert 'name="restock"' in html and 'name="amount"' not in html
    _step(client, order, request, "receive")
    html = client.get(url).content.decode()
    assert 'name="amount"' in html and 'name="restock"' not in html and 'name="note"' not in html


def test_an_amount_sent_with_another_step_is_refused_not_dropped(place_order) -> None:
    # given two open requests on one order, so the page offers every step and every field
    order = place_order(lines=[("CAM", 3000, 2)], freight=800)
    order_ship(order_id=order.public_id, tracking_number="BR123456785BR")
    fulfillment_event_create(order_id=order.public_id, type="delivered", occurred_at=timezone.now() - timedelta(1))
    line = order.lines.get()
    one_unit = [LineQuantity(line.public_id, 1)]
    first, _second = (
        return_request_create(order_id=order.public_id, lines=one_unit, reason_code="defective") for _ in range(2)
    )
    client = _refunder()
    page = client.get(f"/admin/orders/order/{order.public_id}/action/return-request/").content.decode()
    assert 'name="amount"' in page
    # when staff type an amount and press "Aprovar devolução"
    html = _step(client, order, first, "approve", amount="50,00")
    # then the page says where the amount belongs, and nothing was approved
    assert "O valor só vale no passo “Reembolsar”" in html
    first.refresh_from_db()
    assert first.status == "requested"


def test_a_refund_of_zero_reads_as_closed_without_refund(place_order) -> None:
    order, request = _requested(place_order)
    client = _refunder()
    _step(client, order, request, "approve")
    _step(client, order, request, "receive")
    html = _step(client, order, request, "refund", amount="0")
    assert "Devolução encerrada sem reembolso." in html and "Reembolso de R$ 0,00" not in html
    assert not Adjustment.objects.filter(order=order, type="refund").exists()


def test_queue_filter_and_column_say_who_asked_capitalised(place_order) -> None:
    """QA F9: the "quem pediu" filter read "comprador" / "plataforma" in lower case beside "Solicitada"."""
    _order, request = _requested(place_order)
    queue = _refunder().get("/admin/orders/returnrequest/").content.decode()
    assert ">Comprador</a>" in queue
    assert ">Plataforma</a>" in queue
    assert '<td class="field-requested_by">Comprador</td>' in queue
    assert ">comprador<" not in queue and ">plataforma<" not in queue
    assert ReturnRequest.objects.get(pk=request.pk).requested_by == "buyer"  # the stored value stays


def test_while_the_buyer_s_request_is_open_the_return_goes_through_it_not_registrar_devolucao(place_order) -> None:
    """QA walk: with the buyer's request approved, staff used the visible "Registrar devolução": the order read
    "Devolvido" while the request stayed "Aprovada" for good (on the buyer's page too), and the refund it suggested
    left out the freight the request's own refund gives back (CDC art. 49). While a request waits (asked or
    approved) its items come back through "Devolução solicitada" → "Itens recebidos"; once received, the generic
    action is offered again for anything else delivered."""
    order, request = _requested(place_order)
    client = _refunder()
    return_request_approve(return_id=request.public_id)
    page = client.get(f"/admin/orders/order/{order.pk}/change/").content.decode()
    assert "Devolução solicitada" in page and "Registrar devolução" not in page
    line = order.lines.get()
    crafted = client.post(
        f"/admin/orders/order/{order.public_id}/action/return/",
        {f"qty_{line.public_id}": "1", "reason": "Costura aberta", "condition": "novo"},
        follow=True,
    )
    assert "“Registrar devolução” não se aplica ao pedido" in crafted.content.decode()
    assert not Adjustment.objects.filter(order=order, type="return").exists()
    _step(client, order, request, "receive")
    request.refresh_from_db()
    assert request.status == "received"
    assert "Registrar devolução" in client.get(f"/admin/orders/order/{order.pk}/change/").content.decode()


def test_the_return_form_suggests_what_was_paid_for_the_units_less_earlier_refunds(place_order) -> None:
    """QA walk: "Registrar devolução" left the refund empty with only "Reembolsável: R$ …": staff worked out the
    value of the units by hand, the coupon's share and an earlier partial refund included. Each quantity field now
    carries what the buyer paid for 0, 1, … units (orders.net_value: the coupon shared by value, R$ 7,00 →
    R$ 6,00 + R$ 1,00), the refund field is capped by what is left after the R$ 20,00 already given back, and one
    line of help says how it is computed."""
    order = place_order(lines=[("CAM", 3000, 2), ("CAN", 1000, 1)], freight=800, discounts=[(700, "PRIMEIRA10")])
    order_ship(order_id=order.public_id, tracking_number="BR123456785BR")
    order_mark_delivered(order_id=order.public_id)
    order_refund(order_id=order.public_id, amount=2000, reason="Atraso na entrega")
    shirt, mug = order.lines.order_by("position", "id")
    form = _refunder().get(f"/admin/orders/order/{order.public_id}/action/return/").content.decode()
    assert re.search(rf'name="qty_{shirt.public_id}"[^>]*data-net-values="0,2700,5400"', form)
    assert re.search(rf'name="qty_{mug.public_id}"[^>]*data-net-values="0,900"', form)
    assert re.search(r'name="refund_amount"[^>]*data-refundable="5100"', form)
    assert (
        "Sugestão: o valor pago pelas unidades devolvidas (preço menos a parte dos descontos do pedido), até "
        "R$ 51,00 (pago R$ 71,00 − já reembolsado R$ 20,00). Vazio: sem reembolso (troca)."
    ) in form
    assert "orders/return_refund.js" in form


def test_the_return_refund_asks_for_a_tick_naming_the_amount(place_order) -> None:
    """QA walk: the return's "Reembolsar" sent the money on one click (cancel asks for a tick naming the sum).
    Without it nothing changes and the page names the sum: the default, or the one typed."""
    order, request = _requested(place_order)
    client = _refunder()
    _step(client, order, request, "approve")
    _step(client, order, request, "receive")
    page = client.get(f"/admin/orders/order/{order.public_id}/action/return-request/").content.decode()
    assert "Confirmo o reembolso de R$ 30,00 (ou do valor informado acima)" in page
    html = _step(client, order, request, "refund", confirm="")
    assert "Marque “Confirmo o reembolso de R$ 30,00” para reembolsar; nada foi reembolsado." in html
    html = _step(client, order, request, "refund", confirm="", amount="25,00")
    assert "Marque “Confirmo o reembolso de R$ 25,00” para reembolsar; nada foi reembolsado." in html
    request.refresh_from_db()
    assert request.status == "received"
    assert not Adjustment.objects.filter(order=order, type="refund").exists()
    assert "Reembolso de R$ 25,00 da devolução solicitado." in _step(client, order, request, "refund", amount="25,00")


def test_a_return_refund_of_an_order_paid_outside_the_shop_tells_staff_to_pay_it(place_order) -> None:
    order = place_order(payment_type="manual", lines=[("CAM", 3000, 2)], freight=800)
    order_ship(order_id=order.public_id, tracking_number="BR123456785BR")
    fulfillment_event_create(order_id=order.public_id, type="delivered", occurred_at=timezone.now() - timedelta(1))
    request = return_request_create(order_id=order.public_id, lines=[LineQuantity(order.lines.get().public_id, 1)],
                                    reason_code="defective")  # fmt: skip
    client = _refunder()
    _step(client, order, request, "approve")
    _step(client, order, request, "receive")
    html = _step(client, order, request, "refund")
    assert (
        "Reembolso de R$ 30,00 registrado, a pagar pela loja: este pedido foi pago fora da loja, então nenhum sistema "
        "devolve o dinheiro. Devolva R$ 30,00 ao comprador (Pix, dinheiro ou transferência) e depois use “Marcar "
        "como reembolsado (fora da loja)” neste pedido."
    ) in html
