"""shop.receivers mediation of refunds: orders.refund_requested → payments, payments.refund_finished → orders."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from kernel.money import format_brl
from orders.errors import OrderError
from orders.models import Adjustment, Order
from orders.services import (
    adjustment_refund_retry,
    fulfillment_event_create,
    order_refund,
    order_ship,
    return_request_create,
)
from orders.types import LineQuantity
from payments.models import PixRefund
from payments.sandbox.services import PayOptions, pay, refund_settle
from payments.selectors import pix_charge_active_for_reference
from shop.checkout.services import checkout_create
from shop.checkout.types import InstrumentInput, LineInput, PaymentInput
from tests.orders.test_admin_returns import _refunder, _step
from tests.shop.checkout_factories import full_input, make_shipping, make_variant

pytestmark = pytest.mark.django_db

PIX = InstrumentInput(id="instr_1", handler_id="pix_recebedor_001", type="pix")


def paid_order(capture) -> Order:
    make_variant(price=4290, stock=10)
    make_shipping()
    data = replace(full_input(LineInput("SKU-CAFE-500G", 2), option="pac"), payment=PaymentInput(instruments=(PIX,)))
    # a storefront checkout (session key): its buyer's payment completes it (PIX.md §3.1 is for agents)
    checkout = checkout_create(data=data, session_key="sess-1").checkout
    with capture(execute=True):
        pay(txid=pix_charge_active_for_reference(checkout.public_id).txid, options=PayOptions())
    return Order.objects.get(checkout_id=checkout.public_id)


def test_refund_requested_reaches_payments_and_result_reaches_orders(django_capture_on_commit_callbacks):
    order = paid_order(django_capture_on_commit_callbacks)
    # when the merchant refunds part of the order
    with django_capture_on_commit_callbacks(execute=True):
        adjustment = order_refund(order_id=order.public_id, amount=1000, reason="Cliente desistiu de um item")
    # then payments got the devolução with the adjustment id as refund id
    refund = PixRefund.objects.get(refund_id=adjustment.public_id)
    assert (refund.reference, refund.amount) == (order.checkout_id, 1000)
    # when the PSP reports the devolução done, orders records the result
    with django_capture_on_commit_callbacks(execute=True):
        refund_settle(e2eid=refund.end_to_end_id, refund_id=refund.psp_refund_id, status="DEVOLVIDO")
    assert Adjustment.objects.get(public_id=adjustment.public_id).status == "completed"


def test_refund_payments_cannot_make_marks_the_adjustment_failed(django_capture_on_commit_callbacks):
    from orders.signals import refund_requested
    from shop.checkout.services import checkout_complete
    from shop.checkout.types import CompleteInput

    # given an order paid by card
    make_variant(price=4290, stock=10)
    make_shipping()
    checkout = checkout_create(data=full_input(LineInput("SKU-CAFE-500G", 1), option="pac")).checkout
    card = InstrumentInput(id="c", handler_id="gpay", type="card", credential={"token": "success_token"})
    checkout_complete(checkout_id=checkout.public_id, data=CompleteInput(payment=PaymentInput(instruments=(card,))))
    order = Order.objects.get(checkout_id=checkout.public_id)
    adjustment = order_refund(order_id=order.public_id, amount=500, reason="Brinde")
    # when a refund above what the card payment still has reaches the shop (a second, forged request)
    refund_requested.send(
        sender=Order,
        order_id=order.public_id,
        adjustment_id=adjustment.public_id,
        payment_reference=checkout.public_id,
        amount=order.paid_amount + 1,
        reason="Brinde",
    )
    # then the adjustment is marked failed instead of staying pending forever
    assert Adjustment.objects.get(public_id=adjustment.public_id).status == "failed"
    assert not PixRefund.objects.exists()


def _order_viewer() -> Client:
    """A staff member who may only view orders, signed in."""
    from django.contrib.auth.models import Permission, User

    viewer = User.objects.create_user("so-ver", password="pw-12345678", is_staff=True)
    viewer.user_permissions.add(Permission.objects.get(content_type__app_label="orders", codename="view_order"))
    outsider = Client()
    outsider.force_login(viewer)
    return outsider


def _queue_statuses(client: Client) -> list[str]:
    """The status column of the returns queue, as staff read it."""
    queue = client.get("/admin/orders/returnrequest/").content.decode()
    return re.findall(r'<td class="field-status">([^<]*)</td>', queue)


def test_a_return_refund_the_psp_refuses_is_not_shown_refunded_and_can_be_refunded_again(
    django_capture_on_commit_callbacks: Any, settings: Any
) -> None:
    """Agent walk (session 46): the queue and the order page said “Reembolsada” as soon as the refund was asked,
    and still after the PSP refused the devolução. Now: “Reembolso pendente”, then “Reembolso falhou” with a
    staff line saying what to do, “Tentar de novo” (the same refund; merchant gap, session 47: a fresh
    “Reembolsar” beside “por fora” read as a second refund) and “Reembolsada” once a refund is paid."""
    order, request, client = _return_refund_asked(django_capture_on_commit_callbacks, settings)
    assert request.status == "refund_pending" and _queue_statuses(client) == ["Reembolso pendente"]
    # when the PSP refuses the devolução
    refund = PixRefund.objects.get(refund_id=request.refund_adjustment_id)
    with django_capture_on_commit_callbacks(execute=True):
        refund_settle(e2eid=refund.end_to_end_id, refund_id=refund.psp_refund_id, status="NAO_REALIZADO")
    # then staff read that the refund failed, and what to do, not “Reembolsada”
    request.refresh_from_db()
    assert request.status == "refund_failed"
    assert _queue_statuses(client) == ["Reembolso falhou"]
    page = client.get(f"/admin/orders/order/{order.pk}/change/").content.decode()
    assert (
        f"Reembolso da devolução {request.public_id} falhou: R$ 42,90 não voltaram ao comprador; na devolução, use "
        "“Tentar de novo” ou, se a loja pagou por outro meio, “Marcar como pago por fora”."
    ) in page
    # and the order offers no fresh “Reembolsar” beside it (it read as a second refund of the same money)
    assert "/action/refund/" not in page
    # the return offers “Tentar de novo” (the same R$ 42,90, after the tick naming it) and “Marcar como pago por fora”
    action = client.get(f"/admin/orders/order/{order.public_id}/action/return-request/").content.decode()
    assert 'value="retry">Tentar de novo</button>' in action
    assert 'value="refund_offline">Marcar como pago por fora</button>' in action
    assert 'value="refund">' not in action and 'name="amount"' not in action
    assert "Confirmo o reembolso de R$ 42,90" in action
    refused = _step(client, order, request, "retry", confirm="")
    assert "Marque “Confirmo o reembolso de R$ 42,90” para reembolsar; nada foi reembolsado." in refused
    assert PixRefund.objects.count() == 1
    with django_capture_on_commit_callbacks(execute=True):
        assert "Reembolso de R$ 42,90 da devolução solicitado de novo." in _step(client, order, request, "retry")
    # a second click (a second tab) asks nothing more
    _step(client, order, request, "retry")
    assert PixRefund.objects.count() == 2
    request.refresh_from_db()
    again = PixRefund.objects.get(refund_id=request.refund_adjustment_id)
    assert again.pk != refund.pk
    with django_capture_on_commit_callbacks(execute=True):
        refund_settle(e2eid=again.end_to_end_id, refund_id=again.psp_refund_id, status="DEVOLVIDO")
    request.refresh_from_db()
    assert request.status == "refunded"
    assert _queue_statuses(client) == ["Reembolsada"]


def test_a_return_refund_the_psp_refused_can_be_marked_refunded_by_the_shop_outside_it(
    django_capture_on_commit_callbacks: Any, settings: Any
) -> None:
    """Merchant gap (closing note, session 46): a `refund_failed` return could only be refunded again through the
    PSP, while merchants often pay it by transfer or cash. “Marcar como pago por fora” records it through
    the shop's offline-refund path: nothing goes to the PSP, the timeline says how, the return is `refunded` and
    the order's webhook say so (Get Order of an agent's return: tests/bcp_app/test_order_actions_rest.py). Staff
    without “refund_order” cannot."""

    from orders.models import OrderEvent, OutboxMessage

    order, request, client = _return_refund_asked(django_capture_on_commit_callbacks, settings)
    refund = PixRefund.objects.get(refund_id=request.refund_adjustment_id)
    with django_capture_on_commit_callbacks(execute=True):
        refund_settle(e2eid=refund.end_to_end_id, refund_id=refund.psp_refund_id, status="NAO_REALIZADO")
    request.refresh_from_db()
    assert request.status == "refund_failed"
    # given the action page offers paying it outside, naming the amount
    action = client.get(f"/admin/orders/order/{order.public_id}/action/return-request/").content.decode()
    assert "Marcar como pago por fora" in action
    assert "Só depois de devolver R$ 42,90 ao comprador fora da loja: nada é enviado ao PSP." in action
    # (on the return's own page: the order's “Marcar como pago por fora” is for refunds of no return)
    assert "/action/refund-outside/" not in client.get(f"/admin/orders/order/{order.pk}/change/").content.decode()
    # when a staff member who may only view orders tries it, then nothing changes
    outsider = _order_viewer()
    form = {"request": request.public_id, "step": "refund_offline", "means": "transferencia"}
    refused = outsider.post(f"/admin/orders/order/{order.public_id}/action/return-request/", form)
    assert refused.status_code == 403
    request.refresh_from_db()
    assert request.status == "refund_failed"
    # when “Outro” comes without saying how, then the field is named and nothing changes
    page = _step(client, order, request, "refund_offline", means="outro", offline_note="")
    assert "Conte como o valor foi devolvido." in page
    request.refresh_from_db()
    assert request.status == "refund_failed"
    # when staff mark it paid by bank transfer
    hooks_before = OutboxMessage.objects.filter(kind="order_changed").count()
    with django_capture_on_commit_callbacks(execute=True):
        page = _step(client, order, request, "refund_offline", means="transferencia", offline_note="TED 4242")
    assert "Reembolso de R$ 42,90 da devolução registrado como feito pela loja, por fora." in page
    # then the return is refunded, the money counted, nothing more sent to the PSP
    request.refresh_from_db()
    order.refresh_from_db()
    assert request.status == "refunded" and request.refund_amount == 4290
    settled = Adjustment.objects.get(public_id=request.refund_adjustment_id)
    assert (settled.status, settled.amount) == ("completed", -4290)
    assert PixRefund.objects.count() == 1 and order.refunded_amount == 4290
    assert not OutboxMessage.objects.filter(key=f"refund:{settled.public_id}").exists()
    assert OrderEvent.objects.filter(order=order, kind="refund_completed").last().message == (
        "Reembolso de R$ 42,90 feito pela loja (transferência bancária)."
    )
    assert OrderEvent.objects.get(order=order, kind="note", internal=True).message == "Reembolso de R$ 42,90: TED 4242"
    assert _queue_statuses(client) == ["Reembolsada"]
    # and the presented order (Get Order) and the last order-changed row (the webhook) have the refund completed
    assert {a["id"]: a["status"] for a in json.loads(order.bcp_json)["adjustments"]}[settled.public_id] == "completed"
    hooks = list(OutboxMessage.objects.filter(kind="order_changed").order_by("id"))[hooks_before:]
    # one webhook for the one change (BCP-WH-02: notifications of one transaction fold into one row)
    assert [(hook.payload["event"], hook.payload["events"]) for hook in hooks] == [
        ("refunded", ["refund_requested", "refunded"])
    ]
    # and a second click (a second tab) changes nothing
    _step(client, order, request, "refund_offline", means="transferencia")
    assert Adjustment.objects.filter(order=order, type="refund").count() == 2


def _an_order_refund_the_psp_refused(capture: Any, settings: Any) -> tuple[Order, Adjustment]:
    """A paid order and its plain refund (R$ 15,00, no return) that the sandbox PSP refused (`NAO_REALIZADO`)."""
    settings.PIX_SANDBOX_REFUND_AUTOSETTLE = False  # the sandbox PSP answers when told to
    order = paid_order(capture)
    with capture(execute=True):
        failed = order_refund(order_id=order.public_id, amount=1500, reason="Cliente desistiu de um item")
    refund = PixRefund.objects.get(refund_id=failed.public_id)
    with capture(execute=True):
        refund_settle(e2eid=refund.end_to_end_id, refund_id=refund.psp_refund_id, status="NAO_REALIZADO")
    return order, failed


def test_an_order_refund_the_psp_refused_can_be_marked_refunded_by_the_shop_outside_it(
    django_capture_on_commit_callbacks: Any, settings: Any
) -> None:
    """Follow-up of the return's “por fora” (session 47): a plain order refund (“Reembolsar” on the order, no
    return) that the PSP refused could only be asked of the PSP again. “Marcar como pago por fora” records
    the shop's own transfer through the same offline path: nothing to the PSP, the timeline says how, Get Order has
    the refund completed (BCP §7: the failed adjustment stays failed). Staff without “refund_order” cannot."""

    from orders.models import OrderEvent, OutboxMessage

    order, failed = _an_order_refund_the_psp_refused(django_capture_on_commit_callbacks, settings)
    failed.refresh_from_db()
    assert failed.status == "failed"
    # given the order page offers paying it outside, and its page names the amount
    client = _refunder()
    url = f"/admin/orders/order/{order.public_id}/action/refund-outside/"
    assert url in client.get(f"/admin/orders/order/{order.pk}/change/").content.decode()
    action = client.get(url).content.decode()
    assert "Marcar como pago por fora" in action
    assert "Só depois de devolver R$ 15,00 ao comprador fora da loja: nada é enviado ao PSP." in action
    # when a staff member who may only view orders tries it, then nothing changes
    outsider = _order_viewer()
    form = {"adjustment": failed.public_id, "means": "transferencia", "note": "TED 4242"}
    assert outsider.post(url, form).status_code == 403
    assert Adjustment.objects.filter(order=order, type="refund").count() == 1
    # when “Outro” comes without saying how, then the field is named and nothing changes
    page = client.post(url, {"adjustment": failed.public_id, "means": "outro", "note": ""}).content.decode()
    assert "Conte como o valor foi devolvido." in page
    assert Adjustment.objects.filter(order=order, type="refund").count() == 1
    # when staff mark it paid by bank transfer
    hooks_before = OutboxMessage.objects.filter(kind="order_changed").count()
    with django_capture_on_commit_callbacks(execute=True):
        page = client.post(url, form, follow=True).content.decode()
    assert "Reembolso de R$ 15,00 registrado como feito pela loja, por fora." in page
    # then a refund of the same amount is completed, counted, and nothing more went to the PSP
    order.refresh_from_db()
    settled = Adjustment.objects.filter(order=order, type="refund").exclude(pk=failed.pk).get()
    assert (settled.status, settled.amount, settled.description) == ("completed", -1500, "Cliente desistiu de um item")
    assert PixRefund.objects.count() == 1 and order.refunded_amount == 1500
    assert not OutboxMessage.objects.filter(key=f"refund:{settled.public_id}").exists()
    assert OrderEvent.objects.filter(order=order, kind="refund_completed").get().message == (
        "Reembolso de R$ 15,00 feito pela loja (transferência bancária)."
    )
    assert OrderEvent.objects.get(order=order, kind="note", internal=True).message == "Reembolso de R$ 15,00: TED 4242"
    # and Get Order and the order webhook have it completed (the refused one stays failed)
    statuses = {a["id"]: a["status"] for a in json.loads(order.bcp_json)["adjustments"]}
    assert (statuses[failed.public_id], statuses[settled.public_id]) == ("failed", "completed")
    hooks = list(OutboxMessage.objects.filter(kind="order_changed").order_by("id"))[hooks_before:]
    # one webhook for the one change (BCP-WH-02: notifications of one transaction fold into one row)
    assert [(hook.payload["event"], hook.payload["events"]) for hook in hooks] == [
        ("refunded", ["refund_requested", "refunded"])
    ]
    # and it is not offered again; a second post (a second tab) changes nothing
    assert url not in client.get(f"/admin/orders/order/{order.pk}/change/").content.decode()
    client.post(url, form)
    assert Adjustment.objects.filter(order=order, type="refund").count() == 2


def test_an_order_refund_the_psp_refused_is_tried_again_not_refunded_a_second_time(
    django_capture_on_commit_callbacks: Any, settings: Any
) -> None:
    """Merchant gap (closing note, session 47): after a refused refund the order page offered “Reembolsar” beside
    “Marcar como reembolsado por fora”, a fresh refund that looked like a second one. Now it offers “Tentar de novo o
    reembolso” (the same amount, reason and items, after the tick naming the sum) and “Marcar como pago por fora”,
    once per failed refund, both still bounded by what was paid and not refunded."""
    from orders.models import OrderEvent

    order, failed = _an_order_refund_the_psp_refused(django_capture_on_commit_callbacks, settings)
    client = _refunder()
    change = f"/admin/orders/order/{order.pk}/change/"
    retry = f"/admin/orders/order/{order.public_id}/action/refund-retry/"
    page = client.get(change).content.decode()
    # the two ways out of the failure, and no fresh refund beside them
    assert f'<a href="{retry}"' in page and ">Tentar de novo o reembolso<" in page
    assert ">Marcar como pago por fora<" in page
    assert f"/admin/orders/order/{order.public_id}/action/refund/" not in page
    action = client.get(retry).content.decode()
    assert "R$ 15,00 — Cliente desistiu de um item" in action and "Confirmo o reembolso de R$ 15,00" in action
    # without the tick nothing is sent
    refused = client.post(retry, {"adjustment": failed.public_id}).content.decode()
    assert "Marque “Confirmo o reembolso de R$ 15,00” para reembolsar; nada foi reembolsado." in refused
    assert PixRefund.objects.count() == 1
    # when staff try it again
    form = {"adjustment": failed.public_id, "confirm": "on"}
    with django_capture_on_commit_callbacks(execute=True):
        done = client.post(retry, form, follow=True).content.decode()
    assert "Reembolso de R$ 15,00 solicitado de novo." in done
    # then the PSP got a new devolução of the same amount; the refused one stays failed (BCP §7)
    again = Adjustment.objects.filter(order=order, type="refund").exclude(pk=failed.pk).get()
    assert (again.status, again.amount, again.description) == ("pending", -1500, "Cliente desistiu de um item")
    assert PixRefund.objects.get(refund_id=again.public_id).amount == 1500
    failed.refresh_from_db()
    assert failed.status == "failed"
    assert OrderEvent.objects.filter(order=order, kind="refund_requested").last().message == (
        "Reembolso de R$ 15,00 solicitado de novo (o anterior falhou): Cliente desistiu de um item"
    )
    # and neither way is offered again for it; a second post (a second tab) sends nothing
    page = client.get(change).content.decode()
    assert "/action/refund-retry/" not in page and "/action/refund-outside/" not in page
    client.post(retry, form)
    assert PixRefund.objects.count() == 2
    outside = {"adjustment": failed.public_id, "means": "transferencia", "note": "TED"}
    client.post(f"/admin/orders/order/{order.public_id}/action/refund-outside/", outside)
    assert Adjustment.objects.filter(order=order, type="refund").count() == 2


def test_a_retried_refund_is_bounded_by_what_was_paid(django_capture_on_commit_callbacks: Any, settings: Any) -> None:
    """A failed refund tried again after other refunds took the rest of the payment: refused, naming what is left,
    nothing sent (the same bound as “Reembolsar”)."""
    order, failed = _an_order_refund_the_psp_refused(django_capture_on_commit_callbacks, settings)
    order.refresh_from_db()
    order_refund(order_id=order.public_id, amount=order.paid_amount - 1000, reason="Acordo com o comprador")
    with pytest.raises(OrderError) as refused:
        adjustment_refund_retry(adjustment_id=failed.public_id)
    assert refused.value.code == "refund_exceeds_paid"
    assert "só R$ 10,00 do valor pago pode ser reembolsado" in str(refused.value.message)
    assert Adjustment.objects.filter(order=order, type="refund").count() == 2


def test_an_order_refund_the_psp_refused_can_be_dropped_and_the_order_refunded_afresh(
    django_capture_on_commit_callbacks: Any, settings: Any
) -> None:
    """Merchant gap (session 48): after a refused refund the order offered only “Tentar de novo o reembolso” and
    “Marcar como pago por fora”; when the buyer was paid another way the shop does not count, or staff decide not to
    refund, nothing let staff drop it, and “Reembolsar” stayed hidden for good. “Descartar reembolso recusado” (with
    the tick saying nothing goes back, “refund_order” only) drops it: no money moves, the refused refund stays failed
    (BCP §7), the timeline says so for staff, and the order offers a fresh “Reembolsar”, bounded by what was paid."""

    from orders.models import OrderEvent, OutboxMessage

    order, failed = _an_order_refund_the_psp_refused(django_capture_on_commit_callbacks, settings)
    client = _refunder()
    change = f"/admin/orders/order/{order.pk}/change/"
    drop = f"/admin/orders/order/{order.public_id}/action/refund-drop/"
    refund = f"/admin/orders/order/{order.public_id}/action/refund/"
    page = client.get(change).content.decode()
    assert f'<a href="{drop}"' in page and ">Descartar reembolso recusado<" in page
    assert refund not in page
    assert "Reembolso com falha (não devolvido): R$ 15,00" in page
    _buyer_refunds(order)  # the first read of the page also fills the caches it shares
    buyer_before, statements = _buyer_refunds(order)
    assert "— não concluído: a loja refaz o reembolso ou combina outro meio com você" in buyer_before
    action = client.get(drop).content.decode()
    assert "R$ 15,00 — Cliente desistiu de um item" in action
    assert "Confirmo que este reembolso não será refeito (nada é devolvido agora)" in action
    # when a staff member who may only view orders tries it, then nothing changes
    outsider = _order_viewer()
    form = {"adjustment": failed.public_id, "reason": "Pago em dinheiro no balcão", "confirm": "on"}
    assert outsider.post(drop, form).status_code == 403
    # without the tick, or without a reason, the field is named and nothing changes
    unticked = client.post(drop, {**form, "confirm": ""}).content.decode()
    assert "Marque “Confirmo que este reembolso não será refeito (nada é devolvido agora)” para continuar." in unticked
    assert "Preencha “Motivo”." in client.post(drop, {**form, "reason": " "}).content.decode()
    assert not OrderEvent.objects.filter(order=order, kind="refund_dropped").exists()
    # when staff drop it
    hooks_before = OutboxMessage.objects.count()
    with django_capture_on_commit_callbacks(execute=True):
        done = client.post(drop, form, follow=True).content.decode()
    assert "Reembolso recusado de R$ 15,00 descartado; nada foi devolvido." in done
    # then no money moved: the refused refund stays failed, nothing more to the PSP, no webhook or e-mail
    failed.refresh_from_db()
    order.refresh_from_db()
    assert (failed.status, order.refunded_amount) == ("failed", 0)
    assert Adjustment.objects.filter(order=order, type="refund").count() == 1 and PixRefund.objects.count() == 1
    assert OutboxMessage.objects.count() == hooks_before
    event = OrderEvent.objects.get(order=order, kind="refund_dropped")
    assert (event.message, event.internal, event.actor) == (
        "Reembolso de R$ 15,00 que falhou descartado: Pago em dinheiro no balcão",
        True,
        "devolucoes",
    )
    # and the order offers a fresh refund instead of the three ways out of the failure
    page = client.get(change).content.decode()
    assert f'<a href="{refund}"' in page
    assert "/action/refund-drop/" not in page and "/action/refund-retry/" not in page
    assert "/action/refund-outside/" not in page
    # the admin's "Reembolsos" names it dropped, not a failure still to be redone
    assert "Reembolso recusado descartado (não devolvido): R$ 15,00" in page and "Reembolso com falha" not in page
    # the buyer's page no longer promises the store redoes it, keeps staff's reason off, and costs no more statements
    dropped = "— não concluído; a loja não vai refazer este reembolso — em caso de dúvida, fale com a loja"
    assert _buyer_refunds(order) == (f"Reembolso de R$ 15,00 {dropped} (Cliente desistiu de um item)", statements)
    # a second post (a second tab) changes nothing; nor can the dropped one be retried or paid outside
    client.post(drop, form)
    assert OrderEvent.objects.filter(order=order, kind="refund_dropped").count() == 1
    with pytest.raises(OrderError) as refused:
        adjustment_refund_retry(adjustment_id=failed.public_id)
    assert refused.value.code == "invalid_status"
    # the fresh refund is bounded by what was paid (the dropped one never counted)
    too_much = {"amount": "999,00", "reason": "Acordo", "confirm": "on", "known_refunds": "1"}
    bound = f"Só {format_brl(order.paid_amount)} do valor pago pode ser reembolsado"
    assert bound in client.post(refund, too_much).content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        client.post(refund, {**too_much, "amount": "15,00"})
    assert Adjustment.objects.filter(order=order, type="refund", status="pending").get().amount == -1500
    # the fresh refund is its own: the dropped one is still said dropped, not "refunded again (below)"
    assert dropped in _buyer_refunds(order)[0] and "de novo" not in _buyer_refunds(order)[0]


def _buyer_refunds(order: Order) -> tuple[str, int]:
    """The buyer's page's "Reembolsos e alterações" list as text (dates left out), and the page's statements."""
    with CaptureQueriesContext(connection) as queries:
        html = Client().get(order.permalink_path).content.decode()
    listed = html.split('data-testid="order-adjustments">')[1].split("</ul>")[0]
    text = re.sub(r"\s+", " ", re.sub(r"<time[^>]*>.*?</time>|<[^>]+>", " ", listed)).strip()
    return text, len(queries)


def _return_refund_asked(capture: Any, settings: Any) -> tuple[Any, Any, Any]:
    """A paid order delivered, a return of one unit approved, received and its Pix refund asked of a sandbox PSP that
    answers only when told to: (order, return request, the refunding staff's client)."""
    settings.PIX_SANDBOX_REFUND_AUTOSETTLE = False
    order = paid_order(capture)
    line = order.lines.get()
    with capture(execute=True):
        order_ship(order_id=order.public_id, tracking_number="BR123456785BR")
        fulfillment_event_create(order_id=order.public_id, type="delivered")
        request = return_request_create(order_id=order.public_id, lines=[LineQuantity(line.public_id, 1)],
                                        reason_code="defective")  # fmt: skip
    client = _refunder()
    _step(client, order, request, "approve")
    _step(client, order, request, "receive", restock="on")
    with capture(execute=True):
        _step(client, order, request, "refund")
    request.refresh_from_db()
    return order, request, client
