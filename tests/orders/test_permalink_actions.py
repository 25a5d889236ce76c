"""The buyer cancels, asks for a return or corrects the delivery address on the order page (issue 35): the same
services as the agents and staff, refusals in Portuguese beside the form, nothing changed by a refused or repeated
submit."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from orders.lookup import ACTION_MAX_PER_ORDER
from orders.models import Adjustment, EmailDelivery, Order, OrderEvent, OutboxMessage, ReturnRequest
from orders.selectors import order_actions_bcp
from orders.services import adjustment_mark_refund_result, fulfillment_event_create, order_ship
from orders.types import LineQuantity

pytestmark = pytest.mark.django_db


def _delivered(place_order, *, days_ago: int = 1) -> Order:
    order = place_order(lines=[("CAM", 3000, 2)], freight=800)
    order_ship(order_id=order.public_id, tracking_number="BR123456785BR")
    fulfillment_event_create(order_id=order.public_id, type="delivered",
                             occurred_at=timezone.now() - timedelta(days=days_ago))  # fmt: skip
    return order


def test_the_page_offers_cancel_before_shipping_and_cancels(client: Client, place_order) -> None:
    order = place_order(lines=[("CAM", 3000, 1)], freight=800)
    page = client.get(f"/orders/{order.permalink_token}").content.decode()
    assert 'data-testid="cancel-form"' in page and 'data-testid="return-form"' not in page
    response = client.post(f"/orders/{order.permalink_token}/cancelar", {"confirm": "on", "reason": "Errei o tamanho"})
    assert response.status_code == 302 and response["Location"] == f"/orders/{order.permalink_token}"
    order.refresh_from_db()
    assert order.status == "canceled"
    # a second click (another tab) changes nothing and is not an error
    again = client.post(f"/orders/{order.permalink_token}/cancelar", {"confirm": "on"})
    assert again.status_code == 302
    assert Adjustment.objects.filter(order=order, type="refund").count() == 1
    page = client.get(f"/orders/{order.permalink_token}", follow=True).content.decode()
    assert "Pedido cancelado. O valor pago será devolvido" in page and 'data-testid="cancel-form"' not in page


def test_the_reason_the_shop_wrote_reads_in_the_buyers_language(
    client: Client, place_order, mailoutbox, django_capture_on_commit_callbacks
) -> None:
    """QA walk in English: the order page and the refund e-mail said "(Cancelado pelo comprador)", the reason the
    shop stores when the buyer gives none; it stays Portuguese in the records and reads in the reader's language."""
    order = place_order(lines=[("CAM", 3000, 1)], freight=800, language="en")
    client.post(f"/orders/{order.permalink_token}/cancelar", {"confirm": "on"}, HTTP_ACCEPT_LANGUAGE="en")
    assert Adjustment.objects.get(order=order, type="refund").description == "Cancelado pelo comprador"
    page = client.get(f"/orders/{order.permalink_token}", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert "(Canceled by the buyer)" in page and "Cancelado pelo comprador" not in page
    # and the date ending in "p.m." / "a.m." is not followed by a second full stop ("11:18 p.m..")
    assert "Order canceled on " in page and ".m..<" not in page
    refund = Adjustment.objects.get(order=order, type="refund")
    with django_capture_on_commit_callbacks(execute=True):
        adjustment_mark_refund_result(adjustment_id=refund.public_id, status="completed")
    refunded = [m for m in mailoutbox if m.subject.startswith("Loja Exemplo: Refund")]
    assert refunded and "Reason: Canceled by the buyer" in refunded[-1].body
    # a reason the buyer typed is shown as typed
    other = place_order(lines=[("CAM", 3000, 1)], freight=800)
    client.post(f"/orders/{other.permalink_token}/cancelar", {"confirm": "on", "reason": "Cancelado pelo comprador!"})
    assert "(Cancelado pelo comprador!)" in client.get(f"/orders/{other.permalink_token}").content.decode()


def test_cancel_without_confirming_is_refused_in_words(client: Client, place_order) -> None:
    order = place_order(lines=[("CAM", 3000, 1)])
    response = client.post(f"/orders/{order.permalink_token}/cancelar", {})
    assert response.status_code == 400
    assert "Marque a confirmação para cancelar o pedido." in response.content.decode()
    assert Order.objects.get(pk=order.pk).status == "placed"


def test_the_page_asks_for_a_return_and_a_double_submit_adds_nothing(client: Client, place_order) -> None:
    order = _delivered(place_order)
    line = order.lines.get()
    page = client.get(f"/orders/{order.permalink_token}").content.decode()
    assert 'data-testid="return-form"' in page and 'data-testid="cancel-form"' not in page
    form = {"qty_" + line.public_id: "1", "reason_code": "defective", "reason": "Furo na manga", "nonce": "n-123"}
    for _ in range(2):
        assert client.post(f"/orders/{order.permalink_token}/devolver", form).status_code == 302
    [request] = ReturnRequest.objects.all()
    assert (request.requested_by, request.line_items) == ("buyer", [{"id": line.public_id, "quantity": 1}])
    page = client.get(f"/orders/{order.permalink_token}").content.decode()
    assert "Solicitada" in page and "Produto com defeito" in page


def test_return_refusals_show_beside_the_form(client: Client, place_order) -> None:
    order = _delivered(place_order)
    line = order.lines.get()
    too_many = client.post(f"/orders/{order.permalink_token}/devolver",
                           {"qty_" + line.public_id: "5", "reason_code": "defective"})  # fmt: skip
    assert too_many.status_code == 400
    refusal = "Não é possível devolver 5 unidades de Produto CAM: só 2 unidades recebidas ainda não foram pedidas"
    assert refusal in too_many.content.decode()
    nothing = client.post(f"/orders/{order.permalink_token}/devolver", {"reason_code": "defective"})
    assert "Informe a quantidade de pelo menos um item." in nothing.content.decode()
    no_reason = client.post(f"/orders/{order.permalink_token}/devolver", {"qty_" + line.public_id: "1"})
    assert "Escolha o motivo da devolução" in no_reason.content.decode()
    # "Outro motivo" without saying what: the error names the description (QA walk: only "Campo obrigatório.")
    untold = client.post(f"/orders/{order.permalink_token}/devolver",
                         {"qty_" + line.public_id: "1", "reason_code": "other", "reason": "  "})  # fmt: skip
    assert untold.status_code == 400
    assert "Conte o que aconteceu: com “Outro motivo” a descrição é obrigatória." in untold.content.decode()
    assert not ReturnRequest.objects.exists()


def test_a_parcel_on_the_road_cannot_be_returned_yet(client: Client, place_order) -> None:
    """QA walk: "Enviado / Em trânsito" offered "Solicitar devolução" and accepted it. Only delivered units can
    come back (README); the page, the agents' order_actions (BCP-ORDER-ACTIONS) and the service agree."""
    order = place_order(lines=[("CAM", 3000, 2)], freight=800)
    order_ship(order_id=order.public_id, tracking_number="BR123456785BR")
    fulfillment_event_create(order_id=order.public_id, type="in_transit")
    line = order.lines.get()
    page = client.get(f"/orders/{order.permalink_token}").content.decode()
    assert 'data-testid="return-form"' not in page and 'data-testid="cancel-form"' not in page
    assert order_actions_bcp(order, now=timezone.now())["order_actions"]["return"] == {
        "available": False, "unavailable_reason": "nothing_to_return", "window_days": 7, "line_items": [],
    }  # fmt: skip
    asked = client.post(f"/orders/{order.permalink_token}/devolver",
                        {"qty_" + line.public_id: "1", "reason_code": "defective", "nonce": "n-1"})  # fmt: skip
    assert asked.status_code == 400
    assert f"O pedido #{order.number} não tem itens entregues que possam ser devolvidos." in asked.content.decode()
    assert not ReturnRequest.objects.exists()
    # one of the two delivered: that one may come back, not the one still travelling
    fulfillment_event_create(order_id=order.public_id, type="delivered", lines=[LineQuantity(line.public_id, 1)])
    fresh = Order.objects.get(pk=order.pk)
    assert order_actions_bcp(fresh, now=timezone.now())["order_actions"]["return"]["line_items"] == [
        {"id": line.public_id, "quantity": 1}
    ]
    page = client.get(f"/orders/{order.permalink_token}").content.decode()
    assert f'name="qty_{line.public_id}" min="0" max="1"' in page


def test_after_the_window_the_page_offers_no_return(client: Client, place_order) -> None:
    order = _delivered(place_order, days_ago=30)
    page = client.get(f"/orders/{order.permalink_token}").content.decode()
    assert 'data-testid="return-form"' not in page
    refused = client.post(f"/orders/{order.permalink_token}/devolver",
                          {"qty_" + order.lines.get().public_id: "1", "reason_code": "changed_mind"})  # fmt: skip
    assert "O prazo de 7 dias para devolver" in refused.content.decode()


def test_unknown_token_is_404(client: Client) -> None:
    assert client.post("/orders/naoexiste-naoexiste-naoexiste/cancelar", {"confirm": "on"}).status_code == 404


def test_part_shipped_the_buyer_cancels_the_rest_and_is_told_what_shipped(client: Client, place_order) -> None:
    """Gap: with the shirts shipped and the cap still in the shop, "Cancelar" was gone and an agent's cancel said
    "O pedido já foi enviado e não pode mais ser cancelado", as if nothing could be. The page names what shipped
    and what may still be cancelled; the cancel takes only the cap and gives back what was paid for it (not the
    freight: the shirts travelled) (BCP-ORDER-ACTIONS)."""
    order = place_order(lines=[("CAM", 3000, 2), ("BONE", 2000, 1)], freight=800)
    shirt, cap = order.lines.get(sku="CAM"), order.lines.get(sku="BONE")
    order_ship(order_id=order.public_id, tracking_number="BR123456785BR", lines=[LineQuantity(shirt.public_id, 2)])
    fresh = Order.objects.get(pk=order.pk)
    assert order_actions_bcp(fresh, now=timezone.now())["order_actions"]["cancel"] == {"available": True}
    page = client.get(f"/orders/{order.permalink_token}").content.decode()
    note = page.split('data-testid="cancel-refund-note">')[1].split("</p>")[0]
    assert note == (
        "Já enviado: 2× Produto CAM; isso segue para você (depois de receber, você pode pedir a devolução). Ainda não "
        "enviado: 1× Produto BONE; você pode cancelar esses itens. O valor pago por eles volta pelo mesmo meio de "
        "pagamento."
    )
    assert "Confirmo o cancelamento de 1× Produto BONE" in page

    response = client.post(f"/orders/{order.permalink_token}/cancelar", {"confirm": "on"}, follow=True)

    assert "Cancelado o que ainda não tinha sido enviado (1× Produto BONE). O valor desses itens será devolvido" in (
        response.content.decode()
    )
    order.refresh_from_db()
    shirt.refresh_from_db()
    cap.refresh_from_db()
    assert (order.status, shirt.quantity_total, cap.quantity_total) == ("shipped", 2, 0)
    assert Adjustment.objects.get(order=order, type="refund").amount == -2000  # the cap, not the freight
    # everything left has shipped now: a second cancel is refused in words, the page offers none
    assert order_actions_bcp(order, now=timezone.now())["order_actions"]["cancel"] == {
        "available": False, "unavailable_reason": "already_shipped",
    }  # fmt: skip
    assert 'data-testid="cancel-form"' not in client.get(f"/orders/{order.permalink_token}").content.decode()


# The buyer's address form posts the checkout's names (`cep`, `uf`): checkout.js's CEP lookup fills them.
NEW_ADDRESS = {
    "cep": "20040002",
    "street": "Rua da Assembleia",
    "number": "10",
    "complement": "Sala 1201",
    "neighborhood": "Centro",
    "city": "Rio de Janeiro",
    "uf": "rj",
}


def test_the_buyer_corrects_the_delivery_address_while_the_order_is_received(
    client: Client, place_order, django_capture_on_commit_callbacks
) -> None:
    """Buyer walk: staff could correct the delivery address ("Corrigir endereço de entrega"), the buyer who typed
    the old flat's could not. The order page offers it while the order is "Pedido recebido": the staff's service
    and rules, every bad field named beside it with what was typed kept, the timeline saying the buyer changed
    it, the platform's order webhook (BCP-ORDER-WEBHOOK), and staff told what the freight to the new CEP costs."""
    order = place_order(lines=[("CAM", 3000, 1)])
    Order.objects.filter(pk=order.pk).update(platform_id="plat_agente")  # an agent's order: the platform is told
    url = f"/orders/{order.permalink_token}/endereco"
    page = client.get(order.permalink_path).content.decode()
    assert 'data-testid="address-form"' in page and f'action="{url}"' in page
    assert 'value="01310-100"' in page and 'value="Rua das Flores"' in page and 'data-cep-url="/cep/00000000"' in page

    bad = client.post(url, {**NEW_ADDRESS, "cep": "2004-002", "street": "", "number": "", "uf": "SP"})

    assert bad.status_code == 400
    html = bad.content.decode()
    assert 'data-testid="address-error-cep">CEP inválido: use o formato 00000-000.</p>' in html
    assert 'data-testid="address-error-street">Informe a rua.</p>' in html
    assert 'data-testid="address-error-number">Informe o número (ou S/N).</p>' in html
    assert 'value="2004-002"' in html and 'value="Sala 1201"' in html  # what the buyer typed stays
    assert '<details class="address-fix" data-testid="address-fix" open>' in html
    wrong_uf = client.post(url, {**NEW_ADDRESS, "uf": "SP"}).content.decode()
    assert 'data-testid="address-error-uf">A UF não corresponde ao CEP (o CEP é de RJ).</p>' in wrong_uf
    order.refresh_from_db()
    assert order.destination["postal_code"] == "01310-100"  # nothing saved
    assert not OrderEvent.objects.filter(order=order, kind="destination_updated").exists()

    with django_capture_on_commit_callbacks(execute=True):
        saved = client.post(url, NEW_ADDRESS)

    assert saved.status_code == 302 and saved["Location"] == order.permalink_path
    order.refresh_from_db()
    assert (order.destination["postal_code"], order.destination["state"]) == ("20040-002", "RJ")
    event = OrderEvent.objects.get(order=order, kind="destination_updated")
    assert event.message.startswith(
        "O comprador corrigiu o endereço de entrega na página do pedido: CEP (antes: 01310-100); rua (antes: Rua "
        "das Flores);"
    )
    assert event.internal and event.data["by"] == "buyer"
    announced = OutboxMessage.objects.filter(kind="order_changed", payload__event="buyer_updated").get()
    assert announced.payload["platform_id"] == "plat_agente"
    # staff read on the timeline what the freight to the new CEP would cost (the admin says it after its save)
    assert OrderEvent.objects.filter(order=order, kind="note", message__startswith="Frete: ").exists()
    page = client.get(order.permalink_path).content.decode()
    assert "Endereço de entrega atualizado. A loja vai enviar o pedido para ele." in page
    assert "Rua da Assembleia, 10 — Sala 1201" in page and "CEP 20040-002" in page
    # the same address again changes nothing and says so
    again = client.post(url, NEW_ADDRESS, follow=True).content.decode()
    assert "Nada mudou: o endereço de entrega já era esse." in again
    assert OrderEvent.objects.filter(order=order, kind="destination_updated").count() == 1


def test_the_buyer_gets_one_email_with_the_address_they_corrected(
    client: Client, place_order, mailoutbox, django_capture_on_commit_callbacks
) -> None:
    """Browser walk: the buyer's correction on the order page sent no e-mail; staff changes of a shipment's code do
    (`tracking_corrected`). The buyer is told once, with the new address, in an order e-mail of its own."""
    order = place_order(lines=[("CAM", 3000, 1)])
    mailoutbox.clear()
    url = f"/orders/{order.permalink_token}/endereco"
    with django_capture_on_commit_callbacks(execute=True):
        client.post(url, NEW_ADDRESS)
    with django_capture_on_commit_callbacks(execute=True):
        client.post(url, NEW_ADDRESS)  # the same address again: nothing changed, nothing sent

    assert [m.subject for m in mailoutbox] == [f"Loja Exemplo: Endereço de entrega do pedido #{order.number} alterado"]
    body = mailoutbox[0].body
    assert f"O endereço de entrega do pedido #{order.number} foi alterado na página do pedido." in body
    assert "Rua da Assembleia, 10 — Sala 1201" in body and "CEP 20040-002" in body
    assert "Rua da Assembleia, 10 — Sala 1201" in mailoutbox[0].alternatives[0].content
    assert EmailDelivery.objects.filter(order=order, kind="address_updated").count() == 1


def test_the_order_page_forms_are_rate_limited_per_order(client: Client, place_order) -> None:
    """Browser walk: the address and cancel POSTs of the order page (anyone holding the link) had no limit, while
    the order lookup has one. Past the attempts of the window, both are refused in words and change nothing."""
    order = place_order(lines=[("CAM", 3000, 1)])
    url = f"/orders/{order.permalink_token}/endereco"
    for _attempt in range(ACTION_MAX_PER_ORDER):
        assert client.post(url, {**NEW_ADDRESS, "cep": "2004"}).status_code == 400

    refused = client.post(url, NEW_ADDRESS)
    cancel = client.post(f"/orders/{order.permalink_token}/cancelar", {"confirm": "on"})

    assert refused.status_code == 429
    assert 'data-testid="address-refusal">Muitas tentativas. Tente de novo em alguns minutos.</p>' in (
        refused.content.decode()
    )
    assert cancel.status_code == 429
    assert 'data-testid="action-error">Muitas tentativas. Tente de novo em alguns minutos.</p>' in (
        cancel.content.decode()
    )
    order.refresh_from_db()
    assert (order.destination["postal_code"], order.status) == ("01310-100", "placed")


def test_once_shipped_the_buyer_can_no_longer_change_the_address(client: Client, place_order) -> None:
    order = place_order(lines=[("CAM", 3000, 1)])
    page = client.get(order.permalink_path).content.decode()
    order_ship(order_id=order.public_id, tracking_number="BR123456785BR")
    assert 'data-testid="address-form"' in page
    assert 'data-testid="address-form"' not in client.get(order.permalink_path).content.decode()
    # a form left open in another tab: refused in words, nothing saved
    refused = client.post(f"/orders/{order.permalink_token}/endereco", NEW_ADDRESS)
    assert refused.status_code == 400
    assert f"O pedido #{order.number} já foi enviado (no todo ou em parte): o endereço não muda mais aqui." in (
        refused.content.decode()
    )
    # a bad CEP typed in that old tab: the refusal is said all the same (not an empty page)
    typo = client.post(f"/orders/{order.permalink_token}/endereco", {**NEW_ADDRESS, "cep": "2004"})
    assert 'data-testid="address-refusal">' in typo.content.decode() and "já foi enviado" in typo.content.decode()
    order.refresh_from_db()
    assert order.destination["postal_code"] == "01310-100"


def test_a_pickup_order_offers_no_address_form(client: Client, place_order) -> None:
    order = place_order(lines=[("CAM", 3000, 1)], method="pickup", freight=0)
    assert 'data-testid="address-form"' not in client.get(order.permalink_path).content.decode()
    assert client.post(f"/orders/{order.permalink_token}/endereco", NEW_ADDRESS).status_code == 400


def test_the_address_form_needs_the_page_csrf_token_and_a_known_token(place_order) -> None:
    """The token in the link is the key (as for cancel and return); a POST from another site carries no CSRF token."""
    order = place_order(lines=[("CAM", 3000, 1)])
    browser = Client(enforce_csrf_checks=True)
    assert browser.post(f"/orders/{order.permalink_token}/endereco", NEW_ADDRESS).status_code == 403
    assert browser.post("/orders/naoexiste-naoexiste-naoexiste/endereco", NEW_ADDRESS).status_code == 403
    assert Client().post("/orders/naoexiste-naoexiste-naoexiste/endereco", NEW_ADDRESS).status_code == 404
    order.refresh_from_db()
    assert order.destination["postal_code"] == "01310-100"
