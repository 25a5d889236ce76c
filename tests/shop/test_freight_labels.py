"""Labels from the admin (issue 36): "Comprar etiqueta" on an order and for a selection, bought through an
outbox row exactly once (double click, crashed worker), cost recorded, PDF to print, cancel in the window."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.messages import get_messages
from django.utils import timezone

from orders.models import OrderEvent, OutboxMessage
from orders.services import order_cancel
from orders.tasks import sweep_outbox
from shop.freight.labels import FreightError, label_request
from shop.models import ShippingLabel, StoreSettings
from tests.carriers.fake_correios import FakeCorreios
from tests.carriers.fake_melhorenvio import PDF, FakeMelhorEnvio
from tests.shop.freight_helpers import shirts_order

pytestmark = pytest.mark.django_db


def _buy(client, order, captured):  # type: ignore[no-untyped-def]
    with captured(execute=True):
        return client.post(f"/admin/frete/{order.public_id}/comprar/", follow=True)


def test_comprar_etiqueta_buys_once_records_the_cost_and_prints_the_pdf(
    admin_client,
    melhorenvio: FakeMelhorEnvio,
    django_capture_on_commit_callbacks,
) -> None:
    order = shirts_order(django_capture_on_commit_callbacks)
    page = admin_client.get(f"/admin/orders/order/{order.pk}/change/").content.decode()
    assert 'data-testid="label-buy"' in page
    response = _buy(admin_client, order, django_capture_on_commit_callbacks)
    # The purchase runs after the request's commit (a worker, or in-process with no broker).
    assert "Compra da etiqueta solicitada: ela aparece aqui em instantes." in response.content.decode()
    label = ShippingLabel.objects.get(order=order)
    remote = next(iter(melhorenvio.orders.values()))
    assert (label.status, label.service_code, label.service_name, label.carrier_name, label.cost) == (
        "purchased", "melhorenvio:2", "SEDEX", "Correios", 2200,
    )  # fmt: skip
    assert label.remote_id == remote["id"] and label.tracking_code == ""  # Melhor Envio tells it on posting
    assert melhorenvio.checkouts == [remote["id"]]
    requested = OrderEvent.objects.get(order=order, kind="label_requested")
    assert requested.message == "Etiqueta pedida (1 volume) por admin."  # the singular, not "volume(s)"
    event = OrderEvent.objects.get(order=order, kind="label_purchased")
    assert event.message == "Etiqueta comprada: SEDEX (Correios), custo R$ 22,00."
    page = admin_client.get(f"/admin/orders/order/{order.pk}/change/").content.decode()
    assert 'data-testid="label-cost">R$ 22,00<' in page and 'data-testid="label-buy"' not in page
    pdf = admin_client.get(f"/admin/frete/etiqueta/{label.public_id}/pdf/")
    assert pdf["Content-Type"] == "application/pdf" and pdf.content == PDF


def test_a_double_click_buys_one_label(
    admin_client,
    melhorenvio: FakeMelhorEnvio,
    django_capture_on_commit_callbacks,
) -> None:
    order = shirts_order(django_capture_on_commit_callbacks)
    _buy(admin_client, order, django_capture_on_commit_callbacks)
    _buy(admin_client, order, django_capture_on_commit_callbacks)
    assert ShippingLabel.objects.filter(order=order).count() == 1
    assert OutboxMessage.objects.filter(kind="label_purchase").count() == 1
    assert len(melhorenvio.carts) == 1 and len(melhorenvio.checkouts) == 1


def test_a_worker_that_never_heard_the_checkout_answer_is_finished_by_the_sweep_once(
    settings,
    melhorenvio: FakeMelhorEnvio,
    django_capture_on_commit_callbacks,
) -> None:
    settings.CARRIER_LABEL_DEADLINE_MS = 1000
    melhorenvio.hang_after["/api/v2/me/shipment/checkout"] = 1.5  # paid there, the answer lost here
    order = shirts_order(django_capture_on_commit_callbacks)
    with django_capture_on_commit_callbacks(execute=True):
        label = label_request(order_id=order.public_id, actor="ana")
    label.refresh_from_db()
    message = OutboxMessage.objects.get(kind="label_purchase")
    assert (label.status, label.remote_state["checkout"], message.status) == ("requested", "sent", "pending")
    assert label.last_error.startswith("Transportadora indisponível")
    OutboxMessage.objects.filter(pk=message.pk).update(created_at=timezone.now() - timedelta(minutes=5))
    assert sweep_outbox() == 1
    label.refresh_from_db()
    assert label.status == "purchased" and label.cost == 2200
    assert len(melhorenvio.checkouts) == 1 and melhorenvio.balance == 100_000 - 2200
    assert sweep_outbox() == 0  # done: nothing left to run


def test_a_carrier_refusal_fails_the_label_in_portuguese_and_charges_nothing(
    admin_client,
    melhorenvio: FakeMelhorEnvio,
    django_capture_on_commit_callbacks,
) -> None:
    melhorenvio.balance = 0
    order = shirts_order(django_capture_on_commit_callbacks)
    _buy(admin_client, order, django_capture_on_commit_callbacks)
    page = admin_client.get(f"/admin/orders/order/{order.pk}/change/").content.decode()
    assert 'data-testid="label-error">Melhor Envio recusou: Saldo insuficiente para a compra das etiquetas.<' in page
    assert 'data-testid="label-buy"' in page  # staff may try again
    label = ShippingLabel.objects.get(order=order)
    assert label.status == "failed" and melhorenvio.checkouts == []
    assert OutboxMessage.objects.get(kind="label_purchase").status == "done"  # not retried: staff decides
    melhorenvio.balance = 10_000  # after topping up the wallet, a new purchase is possible
    _buy(admin_client, order, django_capture_on_commit_callbacks)
    assert list(ShippingLabel.objects.filter(order=order).values_list("status", flat=True)) == ["purchased", "failed"]


def test_cancel_within_the_window_and_refused_after_posting(
    admin_client,
    melhorenvio: FakeMelhorEnvio,
    django_capture_on_commit_callbacks,
) -> None:
    order = shirts_order(django_capture_on_commit_callbacks)
    _buy(admin_client, order, django_capture_on_commit_callbacks)
    label = ShippingLabel.objects.get(order=order)
    url = f"/admin/frete/etiqueta/{label.public_id}/cancelar/"
    # the button asks first: neither opening it nor a POST without the confirmation cancels
    asked = admin_client.get(url).content.decode()
    assert "Cancelar a etiqueta" in asked and 'data-testid="confirm-label-cancel"' in asked
    assert 'data-testid="confirm-label-cancel"' in admin_client.post(url).content.decode()
    label.refresh_from_db()
    assert label.status == "purchased"
    page = admin_client.post(url, {"post": "yes"}, follow=True).content.decode()
    assert "Etiqueta cancelada." in page
    label.refresh_from_db()
    assert label.status == "canceled" and melhorenvio.orders[label.remote_id]["status"] == "canceled"
    _buy(admin_client, order, django_capture_on_commit_callbacks)
    second = ShippingLabel.objects.get(order=order, status="purchased")
    melhorenvio.orders[second.remote_id]["status"] = "posted"
    page = admin_client.post(
        f"/admin/frete/etiqueta/{second.public_id}/cancelar/", {"post": "yes"}, follow=True
    ).content.decode()
    assert "O Melhor Envio não permite mais cancelar esta etiqueta" in page
    second.refresh_from_db()
    assert second.status == "purchased"


def test_an_order_cancelled_with_a_bought_label_says_to_cancel_the_label(
    admin_client,
    melhorenvio: FakeMelhorEnvio,
    django_capture_on_commit_callbacks,
) -> None:
    # QA walk: the merchant cancelled an order whose label was bought; the label stayed paid and nothing said so.
    order = shirts_order(django_capture_on_commit_callbacks)
    _buy(admin_client, order, django_capture_on_commit_callbacks)
    label = ShippingLabel.objects.get(order=order)
    page = admin_client.get(f"/admin/orders/order/{order.pk}/change/").content.decode()
    assert 'data-testid="label-of-canceled-order"' not in page
    with django_capture_on_commit_callbacks(execute=True):
        order_cancel(order_id=order.public_id, reason="Cliente desistiu")
    page = admin_client.get(f"/admin/orders/order/{order.pk}/change/").content.decode()
    assert (
        "O pedido foi cancelado, mas a etiqueta comprada continua ativa: cancele a etiqueta para a transportadora"
        " devolver R$ 22,00." in page
    )
    assert f"/admin/frete/etiqueta/{label.public_id}/cancelar/" in page  # and the button to do it is there
    admin_client.post(f"/admin/frete/etiqueta/{label.public_id}/cancelar/", {"post": "yes"})
    page = admin_client.get(f"/admin/orders/order/{order.pk}/change/").content.decode()
    assert 'data-testid="label-of-canceled-order"' not in page


def test_comprar_etiqueta_for_a_selection(
    admin_client,
    melhorenvio: FakeMelhorEnvio,
    django_capture_on_commit_callbacks,
) -> None:
    first = shirts_order(django_capture_on_commit_callbacks)
    second = shirts_order(django_capture_on_commit_callbacks, quantity=10)
    pickup = shirts_order(django_capture_on_commit_callbacks, method="pickup")
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(
            "/admin/orders/order/",
            {"action": "buy_labels_action", "_selected_action": [first.pk, second.pk, pickup.pk]},
            follow=True,
        )
    page = response.content.decode()
    assert "Etiqueta solicitada para 2 pedidos: a compra segue na transportadora." in page
    assert (
        f'<li class="error">#{pickup.number}: O pedido #{pickup.number} não é para entrega: não precisa de etiqueta.'
        in page
    )
    costs = dict(ShippingLabel.objects.values_list("order_id", "cost"))
    assert costs == {first.pk: 2200, second.pk: 2200 + 2 * 700}  # ten shirts: 2.916 kg cubic


@pytest.mark.django_db(transaction=True)  # real commits: with no broker the purchase runs before the answer
def test_a_selection_with_too_little_balance_says_which_order_failed_and_why(
    admin_client,
    melhorenvio: FakeMelhorEnvio,
    django_capture_on_commit_callbacks,
) -> None:
    """QA walk: with the wallet short, the action said "Etiqueta solicitada para 1 pedido." in green and the
    refusal only showed on the order page."""
    first = shirts_order(django_capture_on_commit_callbacks)
    second = shirts_order(django_capture_on_commit_callbacks)
    melhorenvio.balance = 2200  # enough for the first SEDEX label only
    response = admin_client.post(
        "/admin/orders/order/", {"action": "buy_labels_action", "_selected_action": [first.pk, second.pk]}, follow=True
    )
    page = response.content.decode()
    assert '<li class="success">Etiqueta comprada para 1 pedido.</li>' in page
    assert (
        f'<li class="error">#{second.number}: etiqueta não comprada: Melhor Envio recusou: Saldo insuficiente para a'
        " compra das etiquetas.</li>"
    ) in page
    assert "Etiqueta solicitada" not in page


def test_a_selection_without_a_carrier_is_refused_once_in_the_merchants_words(
    admin_client, settings, django_capture_on_commit_callbacks
) -> None:
    """QA walk (a new merchant, no carrier): "Comprar etiqueta de envio" on a selection answered, once per order,
    "… é ligada por quem instala a loja (CARRIER, no README)": a setting's name and a file she has never seen."""
    settings.CARRIER = ""
    first = shirts_order(django_capture_on_commit_callbacks)
    second = shirts_order(django_capture_on_commit_callbacks)
    response = admin_client.post(
        "/admin/orders/order/", {"action": "buy_labels_action", "_selected_action": [first.pk, second.pk]}
    )
    assert [str(m) for m in get_messages(response.wsgi_request)] == [
        "Nenhuma transportadora está configurada; peça a quem instalou a loja para configurar a integração com os"
        " Correios ou Melhor Envio. Até lá, registre o envio com o código de rastreio."
    ]
    # and the order page's own "Comprar etiqueta" says the same, without a setting's name
    order_page = admin_client.post(f"/admin/frete/{first.public_id}/comprar/", follow=True).content.decode()
    assert "Nenhuma transportadora está configurada; peça a quem instalou a loja" in order_page
    assert "CARRIER" not in order_page and "README" not in order_page
    assert ShippingLabel.objects.count() == 0


def test_a_label_a_worker_fails_after_the_answer_is_under_the_label_filter(
    admin_client,
    melhorenvio: FakeMelhorEnvio,
    django_capture_on_commit_callbacks,
) -> None:
    first = shirts_order(django_capture_on_commit_callbacks)
    second = shirts_order(django_capture_on_commit_callbacks)
    melhorenvio.balance = 2200
    with django_capture_on_commit_callbacks(execute=True):  # the purchases run after the answer, as a worker's
        response = admin_client.post(
            "/admin/orders/order/", {"action": "buy_labels_action", "_selected_action": [first.pk, second.pk]}
        )
    shown = [str(m) for m in get_messages(response.wsgi_request)]
    assert shown == [
        "Etiqueta solicitada para 2 pedidos: a compra segue na transportadora."
        ' <a href="/admin/orders/order/?label=failed">Ver etiquetas não compradas</a>'
    ]
    listed = admin_client.get("/admin/orders/order/", {"label": "failed"}).context["cl"].result_list
    assert [o.pk for o in listed] == [second.pk]
    melhorenvio.balance = 10_000  # topped up: bought again, nothing left under the filter
    _buy(admin_client, second, django_capture_on_commit_callbacks)
    assert list(admin_client.get("/admin/orders/order/", {"label": "failed"}).context["cl"].result_list) == []


def test_correios_label_cost_is_the_quote_and_the_code_comes_at_once(
    admin_client,
    correios: FakeCorreios,
    django_capture_on_commit_callbacks,
) -> None:
    order = shirts_order(django_capture_on_commit_callbacks)
    _buy(admin_client, order, django_capture_on_commit_callbacks)
    label = ShippingLabel.objects.get(order=order)
    prepostagem = next(iter(correios.prepostagens.values()))
    assert (label.status, label.service_code, label.cost, label.tracking_code) == (
        "purchased", "correios:03220", 2500, prepostagem["codigoObjeto"],
    )  # fmt: skip


def test_what_cannot_have_a_label_is_refused_in_words(
    settings,
    melhorenvio: FakeMelhorEnvio,
    django_capture_on_commit_callbacks,
) -> None:
    order = shirts_order(django_capture_on_commit_callbacks)
    settings.CARRIER = ""
    with pytest.raises(
        FreightError, match=r"Nenhuma transportadora está configurada; .*registre o envio com o código de rastreio"
    ):
        label_request(order_id=order.public_id)
    settings.CARRIER = "melhorenvio"
    with pytest.raises(FreightError, match=r"Pedido não encontrado\."):
        label_request(order_id="order_nao_existe")
    assert ShippingLabel.objects.count() == 0


def test_without_a_carrier_the_order_page_offers_an_address_label_to_print(
    admin_client, client, settings, django_capture_on_commit_callbacks
) -> None:
    """QA walk (a new merchant, own courier, no carrier): the label box said "Nenhuma transportadora configurada
    (CARRIER)" and there was nothing to print for the parcel."""
    settings.CARRIER = ""
    StoreSettings.objects.update_or_create(
        pk=1,
        defaults={"legal_name": "Ana Souza Confecções ME", "street": "Rua da Bahia", "number": "1200",
                  "complement": "sala 804", "neighborhood": "Centro", "city": "Belo Horizonte", "state": "MG",
                  "postal_code": "30130-010"},
    )  # fmt: skip
    order = shirts_order(django_capture_on_commit_callbacks, quantity=2)
    page = admin_client.get(f"/admin/orders/order/{order.pk}/change/").content.decode()
    assert "(CARRIER)" not in page and "numa entrega própria (motoboy)" in page
    url = f"/admin/frete/{order.public_id}/endereco/"
    assert f'href="{url}"' in page
    label = admin_client.get(url)
    assert label.status_code == 200
    html = label.content.decode()
    to = html.split('data-testid="label-to"')[1].split("</section>")[0]
    assert "Rua da Assembleia, 10" in to and "Rio de Janeiro/RJ" in to and "CEP 20040-002" in to
    sender = html.split('data-testid="label-from"')[1].split("</section>")[0]
    assert "Ana Souza Confecções ME" in sender and "Rua da Bahia, 1200 — sala 804" in sender and "30130-010" in sender
    assert f"Pedido #{order.number}: 2×" in html
    assert 'rel="icon"' in html  # as the admin's pages: without it the browser asked for /favicon.ico (404)
    # the buyer's address is for staff only
    assert client.get(url).status_code == 302  # to the admin login


def test_label_request_statement_budget(
    melhorenvio: FakeMelhorEnvio,
    django_capture_on_commit_callbacks,
    django_assert_max_num_queries,
) -> None:
    order = shirts_order(django_capture_on_commit_callbacks)
    with django_assert_max_num_queries(17):  # 13 statements and 4 savepoint commands
        label_request(order_id=order.public_id, actor="ana")


def test_the_delivery_address_waits_for_the_bought_label_to_be_canceled_and_a_new_cep_says_its_freight(
    admin_client,
    melhorenvio: FakeMelhorEnvio,
    django_capture_on_commit_callbacks,
) -> None:
    """Shipping engineer's rule: a label bought for the old address would send the parcel there; the correction
    waits for "Cancelar etiqueta". A new CEP's freight is said, and the shop absorbs it (nothing is charged)."""
    order = shirts_order(django_capture_on_commit_callbacks)  # to Rio, SEDEX paid R$ 8,00
    _buy(admin_client, order, django_capture_on_commit_callbacks)
    label = ShippingLabel.objects.get(order=order, status="purchased")
    url = f"/admin/orders/order/{order.public_id}/action/destination/"
    manaus = {"postal_code": "69005-070", "street": "Rua Guilherme Moreira", "number": "5", "complement": "",
              "neighborhood": "Centro", "city": "Manaus", "state": "AM"}  # fmt: skip
    refusal = (
        f"O pedido #{order.number} já tem etiqueta comprada (SEDEX) para o endereço atual. Cancele a etiqueta "
        "primeiro (“Cancelar etiqueta”, no quadro da etiqueta deste pedido), corrija o endereço e compre outra "
        "etiqueta."
    )
    assert refusal in admin_client.get(url).content.decode()  # said before staff type
    assert refusal in admin_client.post(url, manaus).content.decode()
    order.refresh_from_db()
    assert order.destination["postal_code"] == "20040-002"
    admin_client.post(f"/admin/frete/etiqueta/{label.public_id}/cancelar/", {"post": "yes"})

    difference = (
        "Frete: para o CEP novo, “SEDEX” custaria R$ 22,00; o comprador pagou R$ 8,00. A diferença fica com a loja: "
        "nada é cobrado nem devolvido ao comprador."
    )
    # Merchant gap (closing note, session 46): the difference was said only after the save. The first POST of a
    # CEP that changes the freight now says it and asks, saving nothing
    asked = admin_client.post(url, manaus)
    page = asked.content.decode()
    order.refresh_from_db()
    assert asked.status_code == 200 and order.destination["postal_code"] == "20040-002"
    assert difference in page and "Nada foi salvo ainda: confira e marque a caixa abaixo para salvar" in page
    assert 'name="freight_cep" value="69005070"' in page and 'name="confirm_freight"' in page
    # a tick given for another CEP does not count: that CEP's freight is asked again
    elsewhere = {**manaus, "postal_code": "69005-080", "confirm_freight": "on", "freight_cep": "01310100"}
    assert "Nada foi salvo ainda" in admin_client.post(url, elsewhere).content.decode()
    order.refresh_from_db()
    assert order.destination["postal_code"] == "20040-002"
    # the second POST, ticked, saves
    with django_capture_on_commit_callbacks(execute=True):
        page = admin_client.post(
            url, {**manaus, "confirm_freight": "on", "freight_cep": "69005070"}, follow=True
        ).content.decode()
    order.refresh_from_db()
    assert (order.destination["postal_code"], order.destination["state"]) == ("69005-070", "AM")
    assert "Endereço de entrega salvo (CEP, rua, número, complemento, bairro, cidade, UF)." in page
    assert difference in page
    assert order.paid_amount == 5990 + 800 and not order.adjustments.exists()  # nothing charged nor refunded
