"""Order work in the admin as it happens: only valid actions, pickup steps, Correios codes with their
check digit and a correction that re-notifies once, "entregue" only for what shipped, Portuguese refusals,
"Pagamento confirmado" with the Pix endToEndId on the timeline."""

from __future__ import annotations

import re

import pytest
from django.core import mail
from django.test import Client

from kernel.money import format_brl
from orders.errors import OrderError
from orders.models import (
    EmailDelivery,
    FulfillmentEvent,
    FulfillmentExpectation,
    Order,
    OrderEvent,
    OutboxMessage,
)
from orders.selectors import order_bcp_payload, order_for_bcp
from orders.services import (
    correios_code_valid,
    expectation_merge,
    expectation_split,
    order_cancel,
    order_destination_set,
    order_dispute_record,
    order_mark_delivered,
    order_return,
    order_ship,
)
from orders.types import LineQuantity
from payments.models import PixPayment
from payments.sandbox.services import PayOptions, pay
from payments.selectors import pix_charge_latest_for_reference

pytestmark = pytest.mark.django_db


def _action(order: Order, slug: str) -> str:
    return f"/admin/orders/order/{order.public_id}/action/{slug}/"


def _page(client: Client, order: Order) -> str:
    return client.get(f"/admin/orders/order/{order.pk}/change/").content.decode()


def test_correios_check_digit() -> None:
    # UPU S10: weights 8 6 4 2 3 5 9 7, mod 11 (0 → 5, 1 → 0)
    assert [correios_code_valid(c) for c in ("BR123456785BR", "AA473124829GB", "BR123456784BR", "XYZ")] == [
        True,
        True,
        False,
        False,
    ]


def test_prazo_says_the_stores_posting_time_when_the_order_counts_from_the_payment(
    admin_client: Client, django_capture_on_commit_callbacks
) -> None:
    """Closing note 45: the change page's "Prazo" said the carrier's "Chega em 3 a 5 dias úteis" alone, for an order
    whose arrival is dated from the payment with the store's 2 days of posting (as the buyer's checkout said). It says
    both, with the order's rule for the total (orders.arrival.days_from_payment); an order without handling days
    keeps the carrier's words."""
    from dataclasses import replace

    from orders.services import order_place_from_checkout
    from tests.orders.conftest import make_checkout

    with django_capture_on_commit_callbacks(execute=True):
        posted = order_place_from_checkout(checkout=replace(make_checkout(), fulfillment_days=(3, 5), handling_days=2))
        plain = order_place_from_checkout(checkout=replace(make_checkout(), fulfillment_days=(3, 5)))

    def prazo(order: Order) -> str:
        html = _page(admin_client, order)
        found = re.search(r"<label>Prazo:</label>\s*<div class=\"readonly\">(.*?)</div>", html, re.S)
        assert found, "no Prazo field on the change page"
        return found.group(1).strip()

    assert prazo(posted) == (
        "Chega em 3 a 5 dias úteis após a postagem; a loja posta em até 2 dias úteis após o pagamento "
        "(5 a 7 dias úteis desde o pagamento)"
    )
    assert prazo(plain) == "Chega em 3 a 5 dias úteis"


def test_canceled_order_offers_no_work_and_refuses_a_forced_action(admin_client: Client, place_order) -> None:
    order = place_order(lines=[("CAM", 3000, 1)], freight=0)
    order_cancel(order_id=order.public_id, reason="Desistiu", refund=False)
    html = _page(admin_client, order)
    for slug in ("ship", "deliver", "cancel", "pickup-ready", "expectation"):
        assert _action(order, slug) not in html
    for slug in ("note", "resend-email"):
        assert _action(order, slug) in html
    response = admin_client.post(_action(order, "ship"), {"tracking_number": "BR123456785BR"}, follow=True)
    assert response.status_code == 200
    assert "“Registrar envio” não se aplica ao pedido" in response.content.decode()
    assert "Cancelado" in response.content.decode()
    assert FulfillmentEvent.objects.filter(order=order).count() == 0


def test_the_cancel_page_backs_out_with_voltar_not_a_second_cancelar(admin_client: Client, place_order) -> None:
    # given a paid order
    order = place_order()
    # when staff open "Cancelar pedido"
    html = admin_client.get(f"/admin/orders/order/{order.public_id}/action/cancel/").content.decode()
    # then the way out says where it goes: beside "Cancelar pedido" a button "Cancelar" read as a second cancel
    assert f'href="/admin/orders/order/{order.pk}/change/" class="closelink">Voltar ao pedido</a>' in html
    assert ">Cancelar</a>" not in html
    # and the confirmation names what goes back: everything paid, freight included, as nothing shipped
    assert f"Confirmo o cancelamento e o reembolso de {format_brl(order.paid_amount)}" in html


def test_the_cancel_page_says_nothing_is_refunded_when_the_med_already_returned_the_pix(
    admin_client: Client, place_order
) -> None:
    """Walk h44: after the MED returned the whole Pix, "Cancelar pedido" still asked to confirm "o valor pago é
    reembolsado" (nothing was left to refund); an unpaid order read the same."""
    order = place_order()
    dispute = {"checkout_id": order.checkout_id, "infraction_id": "med_1", "amount": order.paid_amount}
    order_dispute_record(**dispute, event="opened", situation="scam")
    order_dispute_record(**dispute, event="closed", outcome="returned", returned_amount=order.paid_amount)

    html = admin_client.get(f"/admin/orders/order/{order.public_id}/action/cancel/").content.decode()
    assert "Confirmo o cancelamento (nada a reembolsar: o valor pago já foi devolvido)" in html
    assert "o valor pago é reembolsado" not in html and "reembolso de" not in html

    unpaid = place_order(paid=False)
    html = admin_client.get(f"/admin/orders/order/{unpaid.public_id}/action/cancel/").content.decode()
    assert "Confirmo o cancelamento (nada foi pago, nada a reembolsar)" in html


def test_pickup_order_goes_through_ready_then_picked_up(
    admin_client: Client, place_order, django_capture_on_commit_callbacks
) -> None:
    order = place_order(lines=[("CAF", 3590, 1)], freight=0, method="pickup")
    html = _page(admin_client, order)
    assert _action(order, "ship") not in html and _action(order, "deliver") not in html
    assert _action(order, "pickup-ready") in html and _action(order, "pickup-done") not in html
    mail.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        assert admin_client.post(_action(order, "pickup-ready"), {"description": ""}).status_code == 302
    assert [m.subject for m in mail.outbox] == [f"Loja Exemplo: Seu pedido #{order.number} está pronto para retirada"]
    assert "Leve o número do pedido e um documento com foto." in mail.outbox[0].body
    html = _page(admin_client, order)
    assert _action(order, "pickup-ready") not in html and _action(order, "pickup-done") in html
    # forcing "ready" again is refused and sends nothing
    with django_capture_on_commit_callbacks(execute=True):
        admin_client.post(_action(order, "pickup-ready"), {})
    assert len(mail.outbox) == 1
    # picking up needs the confirmation box, and the refusal names it (QA walk: "Este campo é obrigatório.")
    refused = admin_client.post(_action(order, "pickup-done"), {})
    assert "Marque “Confirmo que o comprador retirou o pedido” para continuar." in refused.content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        assert admin_client.post(_action(order, "pickup-done"), {"confirm": "on"}).status_code == 302
    order.refresh_from_db()
    assert order.status == "delivered"
    assert [e.type for e in order.fulfillment_events.order_by("occurred_at", "id")] == ["ready_for_pickup", "delivered"]
    assert mail.outbox[-1].subject == f"Loja Exemplo: Seu pedido #{order.number} foi entregue"


def test_registrar_envio_opened_by_url_on_a_pickup_order_says_it_is_for_pickup(
    admin_client: Client, place_order
) -> None:
    """Merchant walk h49: "Registrar envio" typed in the address bar for a pickup order got the generic "não se
    aplica… na situação atual", as if waiting would help. It says the order is picked up and which steps it has."""
    order = place_order(lines=[("CAF", 3590, 1)], freight=0, method="pickup")
    for response in (
        admin_client.get(_action(order, "ship"), follow=True),
        admin_client.post(_action(order, "ship"), {}, follow=True),
    ):
        page = response.content.decode()
        assert (
            f"O pedido #{order.number} é para retirada na loja: use “Pronto para retirada” e “Marcar como retirado”."
        ) in page
        assert "não se aplica" not in page
    assert not FulfillmentEvent.objects.filter(order=order).exists()


@pytest.mark.parametrize(
    "code",
    ["XYZ", "BR123456784BR", "BR12345678BR"],
)
def test_wrong_correios_code_is_refused_in_portuguese(admin_client: Client, place_order, code: str) -> None:
    order = place_order(lines=[("CAM", 3000, 1)])
    line = order.lines.get()
    response = admin_client.post(
        _action(order, "ship"), {"tracking_number": code, "carrier": "Correios", f"qty_{line.public_id}": "1"}
    )
    assert response.status_code == 200
    assert "Código dos Correios inválido" in response.content.decode()
    assert FulfillmentEvent.objects.count() == 0


def test_tracking_correction_renotifies_the_buyer_once(
    admin_client: Client, place_order, django_capture_on_commit_callbacks
) -> None:
    order = place_order(lines=[("CAM", 3000, 1)])
    with django_capture_on_commit_callbacks(execute=True):
        shipment = order_ship(order_id=order.public_id, tracking_number="BR123456785BR", carrier="Correios")
    assert _action(order, "tracking-fix") in _page(admin_client, order)
    mail.outbox.clear()
    bad = admin_client.post(_action(order, "tracking-fix"), {"event": shipment.public_id, "tracking_number": "BR1"})
    assert "Código dos Correios inválido" in bad.content.decode()
    form = {"event": shipment.public_id, "tracking_number": "AA473124829GB"}
    with django_capture_on_commit_callbacks(execute=True):
        assert admin_client.post(_action(order, "tracking-fix"), form).status_code == 302
    with django_capture_on_commit_callbacks(execute=True):
        again = admin_client.post(_action(order, "tracking-fix"), form)
    assert "Este já é o código do envio, com a mesma transportadora." in again.content.decode()
    # the shipment is never edited: the correction is an event of its own, naming it, with its items
    shipment.refresh_from_db()
    assert shipment.tracking_number == "BR123456785BR"
    correction = FulfillmentEvent.objects.get(order=order, type="tracking_corrected")
    assert (correction.corrects_id, correction.line_items, correction.tracking_number, correction.tracking_url) == (
        shipment.pk,
        shipment.line_items,
        "AA473124829GB",
        "https://rastreamento.correios.com.br/app/index.php?objeto=AA473124829GB",
    )
    events = order_bcp_payload(order_for_bcp(order.public_id))["fulfillment"]["events"]
    assert [(e["type"], e["tracking_number"]) for e in events] == [
        ("shipped", "BR123456785BR"),
        ("tracking_corrected", "AA473124829GB"),
    ]
    assert len(mail.outbox) == 1
    # the e-mail says it is a correction, not "Seu pedido foi enviado" again (issue 33)
    assert mail.outbox[0].subject == f"Loja Exemplo: Código de rastreio corrigido: pedido #{order.number}"
    assert f"Corrigimos o código de rastreio do envio do seu pedido #{order.number}." in mail.outbox[0].body
    assert "foi enviado" not in mail.outbox[0].body
    assert "Código de rastreio correto: AA473124829GB (Correios)" in mail.outbox[0].body
    assert EmailDelivery.objects.filter(order=order, kind="shipped").count() == 2  # original + one correction
    event = OrderEvent.objects.get(order=order, kind="tracking_corrected")
    assert event.message == "Código de rastreio corrigido: BR123456785BR → AA473124829GB (Correios)"


def test_delivered_offers_only_shipped_quantities(admin_client: Client, place_order) -> None:
    other = place_order(lines=[("CAM", 3000, 3)])
    other_line = other.lines.get()
    order_ship(order_id=other.public_id, tracking_number="BR123456785BR", lines=[LineQuantity(other_line.public_id, 1)])
    page = admin_client.get(_action(other, "deliver")).content.decode()
    assert f'name="qty_{other_line.public_id}"' in page and 'max="1"' in page
    response = admin_client.post(_action(other, "deliver"), {f"qty_{other_line.public_id}": "2"})
    assert response.status_code == 200
    assert "Certifique-se que este valor seja menor ou igual a 1." in response.content.decode()
    assert other.fulfillment_events.filter(type="delivered").count() == 0


def test_refund_refusals_are_in_portuguese(admin_client: Client, place_order) -> None:
    order = place_order(lines=[("CAM", 3000, 1)], freight=800)
    # more than was paid is refused on the field before the tick is asked (QA walk: R$ 999,00 was to be confirmed,
    # then refused)
    html = admin_client.post(_action(order, "refund"), {"amount": "38,01", "reason": "x"}).content.decode()
    assert "Só R$ 38,00 do valor pago pode ser reembolsado." in html
    assert "Marque “Confirmo o reembolso" not in html
    html = admin_client.post(_action(order, "refund"), {"amount": "0", "reason": "x", "confirm": "on"}).content.decode()
    assert "O valor deve ser maior que zero." in html
    html = admin_client.post(
        _action(order, "refund"), {"amount": "dez", "reason": "x", "confirm": "on"}
    ).content.decode()
    assert "Valor inválido: use reais e centavos, por exemplo 35,90." in html
    assert order.adjustments.count() == 0


def test_pix_payment_is_on_the_timeline_with_its_end_to_end_id(
    admin_client: Client, django_capture_on_commit_callbacks
) -> None:
    from tests.shop.test_completion import PIX, complete, ready_checkout

    checkout = ready_checkout()
    complete(checkout, PIX)
    charge = pix_charge_latest_for_reference(checkout.public_id)
    with django_capture_on_commit_callbacks(execute=True):
        pay(txid=charge.txid, options=PayOptions())
    order = Order.objects.get(checkout_id=checkout.public_id)
    e2e = PixPayment.objects.get(txid=charge.txid).end_to_end_id
    event = OrderEvent.objects.get(order=order, kind="payment_confirmed")
    assert event.message == f"Pagamento Pix confirmado: R$ 104,70 (endToEndId {e2e})."  # 2 × 42,90 + frete
    assert e2e in _page(admin_client, order)


def test_cancelling_a_partly_shipped_order_says_what_was_cancelled(admin_client: Client, place_order) -> None:
    """Walk-through: after one of two units shipped, "Cancelar pedido" answered "Pedido cancelado." while the
    order stayed "Enviado" and only the unshipped unit was refunded."""
    order = place_order(lines=[("CAM", 3000, 2)], freight=0)
    line = order.lines.get()
    order_ship(order_id=order.public_id, tracking_number="BR123456785BR", lines=[LineQuantity(line.public_id, 1)])
    form = admin_client.get(_action(order, "cancel")).content.decode()
    assert "Confirmo o cancelamento do que não foi enviado (o valor desses itens é reembolsado)" in form
    # the box left unticked is named by the label shown (QA walk: "Este campo é obrigatório.")
    unticked = admin_client.post(_action(order, "cancel"), {"reason": "Sem estoque"}).content.decode()
    assert (
        "Marque “Confirmo o cancelamento do que não foi enviado (o valor desses itens é reembolsado)” para continuar."
        in unticked
    )
    response = admin_client.post(_action(order, "cancel"), {"reason": "Sem estoque", "confirm": "on"}, follow=True)
    html = response.content.decode()
    assert "Cancelado o que não tinha sido enviado; o que já foi enviado continua no pedido." in html
    assert "Pedido cancelado." not in html
    order.refresh_from_db()
    assert order.status == "shipped"
    # a whole cancellation keeps its short words, with the sum that goes back
    whole = place_order(lines=[("CAF", 3590, 1)], freight=0)
    assert (
        "Confirmo o cancelamento e o reembolso de R$ 35,90"
        in admin_client.get(_action(whole, "cancel")).content.decode()
    )
    response = admin_client.post(_action(whole, "cancel"), {"reason": "Desistiu", "confirm": "on"}, follow=True)
    # and says the money the same click sent back (QA walk: "Pedido cancelado." alone, the refund unmentioned)
    assert "Pedido cancelado. Reembolso de R$ 35,90 solicitado." in response.content.decode()


def _expectation_items(html: str) -> list[str]:
    """The "itens" cells of the expectations inline ("Expectativas de entrega"), in order."""
    section = html.split('id="expectations-group"')[1].split("</fieldset>")[0]
    return [
        re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", cell)).strip()
        for cell in re.findall(r'<td class="field-items">(.*?)</td>', section, re.S)
    ]


def test_expectations_in_the_admin_show_what_is_left_not_the_cancelled_units(admin_client: Client, place_order) -> None:
    """QA F10: after a cancellation the admin's expectations listed the plan as placed (cancelled units included)."""
    order = place_order(lines=[("CAM", 3000, 4)], freight=0)
    line = order.lines.get()
    first = order.expectations.get()
    expectation_split(
        order_id=order.public_id,
        expectation_id=first.public_id,
        lines=[LineQuantity(line.public_id, 2)],
        description="Chega depois",
    )
    order_ship(order_id=order.public_id, tracking_number="BR123456785BR", lines=[LineQuantity(line.public_id, 2)])
    order_cancel(order_id=order.public_id, reason="Sem estoque")
    html = admin_client.get(f"/admin/orders/order/{order.pk}/change/").content.decode()
    # the shipped units left with the first expectation (nothing of it is still to send); the later one's units
    # were cancelled
    assert _expectation_items(html) == ["enviado: 2× Produto CAM (CAM)", "cancelado: 2× Produto CAM (CAM)"]


def test_an_expectations_remainder_is_what_is_left_to_ship_not_what_shipped(admin_client: Client, place_order) -> None:
    """Gap: a shipped unit was counted as left in its expectation (the admin listed it as still planned, the buyer's
    page gave it an estimate, "Dividir" offered to move it). What is left to send is each line's units still in the
    shop, the last planned first (BCP-ORD-07: expectations only say what is still expected)."""
    order = place_order(lines=[("CAM", 3000, 3)], freight=0)
    line = order.lines.get()
    first = order.expectations.get()
    expectation_split(
        order_id=order.public_id, expectation_id=first.public_id, lines=[LineQuantity(line.public_id, 1)],
        description="Chega depois",
    )  # fmt: skip
    order_ship(order_id=order.public_id, tracking_number="BR123456785BR", lines=[LineQuantity(line.public_id, 1)])
    html = admin_client.get(f"/admin/orders/order/{order.pk}/change/").content.decode()
    assert _expectation_items(html) == ["1× Produto CAM (CAM) · enviado: 1× Produto CAM (CAM)", "1× Produto CAM (CAM)"]
    buyer = admin_client.get(f"/orders/{order.permalink_token}").content.decode()
    estimates = buyer.split('data-testid="order-expectations">')[1].split("</ul>")[0]
    assert re.findall(r"(\d)× Produto CAM", re.sub(r"<[^>]+>", "", estimates)) == ["1", "1"]


def test_a_line_sent_back_in_a_return_reads_devolvido_in_the_items(admin_client: Client, place_order) -> None:
    """QA walk: after "Registrar devolução" of the only dress, the order's items said "Removido"."""
    order = place_order(lines=[("VEST", 18990, 1), ("BRINCO", 2990, 1)], freight=0)
    dress, _earring = order.lines.order_by("position")
    order_ship(order_id=order.public_id, tracking_number="BR123456785BR")
    order_mark_delivered(order_id=order.public_id)
    order_return(order_id=order.public_id, lines=[LineQuantity(dress.public_id, 1)], reason="Ficou grande")
    html = _page(admin_client, order)
    section = html.split('id="lines-group"')[1].split("</fieldset>")[0]
    statuses = re.findall(r'<td class="field-status"><p>([^<]*)</p></td>', section)
    assert statuses == ["Devolvido", "Entregue"]  # the earring was delivered: the buyer's page says so too


def test_split_and_merge_move_only_what_is_left_to_send(admin_client: Client, place_order) -> None:
    """Gap: "Dividir previsão" offered the line's remainder as its maximum (4 shirts) when the chosen expectation
    had 1 left to send, and counted shipped units as movable; "Juntar previsões" listed an expectation whose units
    all shipped. They count what is left to send (BCP-ORD-07); the field's maximum and its message say so."""
    order = place_order(lines=[("CAM", 3000, 4), ("BONE", 2000, 1)], freight=0)
    shirt, cap = order.lines.all()
    first = order.expectations.get()
    later = expectation_split(
        order_id=order.public_id,
        expectation_id=first.public_id,
        lines=[LineQuantity(shirt.public_id, 2), LineQuantity(cap.public_id, 1)],
        description="Chega depois",
    )
    # the first box's 2 shirts and one of the later ones went: 1 shirt and the cap are left, both in "Chega depois"
    order_ship(order_id=order.public_id, tracking_number="BR123456785BR", lines=[LineQuantity(shirt.public_id, 3)])
    page = admin_client.get(_action(order, "split"))
    form = page.content.decode()
    assert "Chega depois (1× Produto CAM (CAM), 1× Produto BONE (BONE))" in form
    assert f'<option value="{first.public_id}"' not in form  # everything of it shipped: nothing to split
    field = page.context["form"].fields[f"qty_{shirt.public_id}"]
    assert (field.max_value, str(field.help_text)) == (1, "até 1")
    # more shirts than "Chega depois" still has to send: refused on the field, naming the expectation and the line
    html = admin_client.post(
        _action(order, "split"), {"expectation": later.public_id, f"qty_{shirt.public_id}": "2"}
    ).content.decode()
    assert "A previsão “Chega depois” tem só 1× Produto CAM (CAM) a enviar: informe até 1." in html
    assert FulfillmentExpectation.objects.filter(order=order).count() == 2
    # the service says the same to a caller past the form (the API), and never moves a shipped unit
    with pytest.raises(OrderError) as error:
        expectation_split(
            order_id=order.public_id, expectation_id=first.public_id, lines=[LineQuantity(shirt.public_id, 1)]
        )
    assert error.value.code == "nothing_left" and "já foi enviado" in str(error.value.message)
    # a split of what is left to send: the cap goes to its own box, the shirt stays
    admin_client.post(
        _action(order, "split"),
        {"expectation": later.public_id, f"qty_{cap.public_id}": "1", "description": "Segunda caixa"},
    )
    expectations = order_bcp_payload(order_for_bcp(order.public_id))["fulfillment"]["expectations"]
    # (BCP Get Order keeps each expectation's promised units and says in its description what already left)
    assert [(e["description"], [i["quantity"] for i in e["line_items"]]) for e in expectations] == [
        ("Enviado", [2]),
        ("1 de 2 unidades enviadas; falta enviar 1× Produto CAM (Chega depois)", [2]),
        ("Segunda caixa", [1]),
    ]
    # "Juntar previsões" lists only the two with something to send
    merge = admin_client.get(_action(order, "merge")).content.decode()
    assert f'value="{first.public_id}"' not in merge and f'value="{later.public_id}"' in merge


def test_an_expectation_emptied_by_a_cancel_is_not_offered_to_split_or_merge(admin_client: Client, place_order) -> None:
    """Order of 4, 2 back-ordered then cancelled: "Juntar previsões" is not offered for the emptied expectation, and
    "Dividir previsão" lists only what is left (2×, not the 4 placed)."""
    order = place_order(lines=[("CAM", 3000, 4)], freight=0)
    line = order.lines.get()
    first = order.expectations.get()
    later = expectation_split(
        order_id=order.public_id,
        expectation_id=first.public_id,
        lines=[LineQuantity(line.public_id, 2)],
        description="Chega depois",
    )
    order_ship(order_id=order.public_id, tracking_number="BR123456785BR", lines=[LineQuantity(line.public_id, 2)])
    order_cancel(order_id=order.public_id, reason="Sem estoque")
    html = _page(admin_client, order)
    # everything left was shipped or cancelled: nothing to re-date, split or merge
    assert _action(order, "split") not in html and _action(order, "merge") not in html
    with pytest.raises(OrderError) as error:
        expectation_merge(order_id=order.public_id, expectation_ids=[first.public_id, later.public_id])
    assert error.value.field == "expectation_ids[1]"
    assert error.value.message == "A previsão “Chega depois” não tem mais nada a cumprir: seus itens foram cancelados."


def test_refund_asks_for_a_tick_naming_the_amount_and_changes_nothing_without_it(
    admin_client: Client, place_order
) -> None:
    """QA walk: "Reembolsar" sent the money on one click, while "Cancelar pedido" asks "Confirmo o cancelamento e o
    reembolso de R$ …". Without the tick nothing is refunded, the page says which sum it is about and the tick
    names it."""
    order = place_order(lines=[("CAM", 3000, 1)], freight=800)
    # labelled as Django's admin labels a checkbox: no colon after it (QA walk: "…informado acima:")
    label = '<label for="id_confirm" class="vCheckboxLabel">Confirmo o reembolso do valor informado acima</label>'
    assert label in admin_client.get(_action(order, "refund")).content.decode()
    response = admin_client.post(_action(order, "refund"), {"amount": "10,00", "reason": "Avaria"})
    assert response.status_code == 200
    html = response.content.decode()
    assert "Marque “Confirmo o reembolso de R$ 10,00” para reembolsar; nada foi reembolsado." in html
    assert '<label for="id_confirm" class="vCheckboxLabel">Confirmo o reembolso de R$ 10,00</label>' in html
    assert order.adjustments.count() == 0
    response = admin_client.post(_action(order, "refund"), {"amount": "10,00", "reason": "Avaria", "confirm": "on"})
    assert response.status_code == 302
    assert list(order.adjustments.values_list("type", "amount")) == [("refund", -1000)]


def test_a_refund_of_an_order_paid_outside_the_shop_tells_staff_to_pay_it_themselves(
    admin_client: Client, place_order
) -> None:
    """QA walk: on a counter sale ("pago fora da loja") the refund read "Reembolso de R$ 30,00 solicitado", as if a
    payment provider would send it; nobody will. The message and the order's "Valores" say staff pay it and then
    mark it paid."""
    order = place_order(payment_type="manual", lines=[("CAF", 5000, 1)], freight=0)
    # said on the refund page already, before staff refund (QA walk)
    assert (
        "Pago fora da loja: nenhum sistema devolve o dinheiro; a loja o devolve ao comprador e depois usa “Marcar "
        "como reembolsado (fora da loja)”."
    ) in admin_client.get(_action(order, "refund")).content.decode()
    response = admin_client.post(
        _action(order, "refund"), {"amount": "30,00", "reason": "Avaria", "confirm": "on"}, follow=True
    )
    assert [str(m) for m in response.context["messages"]] == [
        "Reembolso de R$ 30,00 registrado, a pagar pela loja: este pedido foi pago fora da loja, então nenhum sistema "
        "devolve o dinheiro. Devolva R$ 30,00 ao comprador (Pix, dinheiro ou transferência) e depois use “Marcar "
        "como reembolsado (fora da loja)” neste pedido."
    ]
    assert "Reembolso em andamento: R$ 30,00" in _page(admin_client, order)
    assert (
        "Pago fora da loja: a loja devolve R$ 30,00 ao comprador (Pix, dinheiro ou transferência) e depois usa "
        "“Marcar como reembolsado (fora da loja)”."
    ) in _page(admin_client, order)
    # cancelling such an order says it too, for the refund the cancel wrote (R$ 20,00 left)
    response = admin_client.post(_action(order, "cancel"), {"reason": "Desistiu", "confirm": "on"}, follow=True)
    assert [str(m) for m in response.context["messages"]] == [
        "Pedido cancelado. Reembolso de R$ 20,00 registrado, a pagar pela loja: este pedido foi pago fora da loja, "
        "então nenhum sistema devolve o dinheiro. Devolva R$ 20,00 ao comprador (Pix, dinheiro ou transferência) e "
        "depois use “Marcar como reembolsado (fora da loja)” neste pedido."
    ]
    # a Pix order's refund goes through the PSP: no such words
    pix = place_order(lines=[("CAF", 5000, 1)], freight=0)
    response = admin_client.post(
        _action(pix, "refund"), {"amount": "30,00", "reason": "Avaria", "confirm": "on"}, follow=True
    )
    assert [str(m) for m in response.context["messages"]] == ["Reembolso de R$ 30,00 solicitado."]
    assert "Pago fora da loja" not in _page(admin_client, pix)
    assert "Pago fora da loja" not in admin_client.get(_action(pix, "refund")).content.decode()


def test_a_refund_of_a_boleto_order_tells_staff_to_transfer_it_and_where_to_record_it(
    admin_client: Client, place_order
) -> None:
    """QA walk: on a boleto order the refund read "Reembolso de R$ 50,00 solicitado", as if the gateway would send
    it; a boleto has no estorno, the shop transfers the money and records it under "Devoluções de boleto"."""
    order = place_order(payment_type="boleto", lines=[("CAF", 5000, 1)], freight=0)
    assert order.payment_reference  # the refund is handed to payments (a boleto refund awaiting the transfer)
    # said on the refund page already, before staff refund (QA walk: it read as a Pix order's)
    assert (
        "Boleto não tem estorno automático: a loja transfere o valor ao comprador e registra a transferência em "
        "Pagamentos → Devoluções de boleto."
    ) in admin_client.get(_action(order, "refund")).content.decode()
    response = admin_client.post(
        _action(order, "refund"), {"amount": "30,00", "reason": "Avaria", "confirm": "on"}, follow=True
    )
    assert [str(m) for m in response.context["messages"]] == [
        "Reembolso de R$ 30,00 registrado, a transferir pela loja: boleto não tem estorno automático. Combine com o "
        "comprador uma chave Pix ou conta, transfira R$ 30,00 e registre a transferência em Pagamentos → Devoluções "
        "de boleto."
    ]


def test_a_tracking_code_already_on_another_order_is_accepted_with_a_warning_naming_it(
    admin_client: Client, place_order
) -> None:
    """QA walk: one code went on two orders without a word (a typo, or a label stuck on the wrong parcel: the buyer
    follows someone else's delivery). Not refused — a carrier may carry two orders of one buyer in one parcel —
    but the page warns, naming the other order; a code corrected away no longer counts."""
    first = place_order(lines=[("CAM", 3000, 1)])
    order_ship(order_id=first.public_id, tracking_number="BR123456785BR", carrier="Correios")
    second = place_order(lines=[("CAM", 3000, 1)])
    line = second.lines.get()
    response = admin_client.post(
        _action(second, "ship"),
        {"tracking_number": "br 123456785 br", "carrier": "Correios", f"qty_{line.public_id}": "1"},
        follow=True,
    )
    assert [(m.level_tag, str(m)) for m in response.context["messages"]] == [
        ("success", "Envio registrado: BR123456785BR"),
        (
            "warning",
            f"Atenção: o código de rastreio BR123456785BR também está no pedido #{first.number}. Confira se o código "
            "está certo; se for outro, use “Corrigir rastreio”.",
        ),
    ]
    assert FulfillmentEvent.objects.filter(order=second, type="shipped", tracking_number="BR123456785BR").exists()
    # the second order's code corrected to its own: no warning, and the first order's is no longer shared
    shipment = FulfillmentEvent.objects.get(order=second, type="shipped")
    response = admin_client.post(
        _action(second, "tracking-fix"), {"event": shipment.public_id, "tracking_number": "AA473124829GB"}, follow=True
    )
    assert [m.level_tag for m in response.context["messages"]] == ["success"]
    third = place_order(lines=[("CAM", 3000, 1)])
    line = third.lines.get()
    response = admin_client.post(
        _action(third, "ship"),
        {"tracking_number": "AA473124829GB", "carrier": "Correios", f"qty_{line.public_id}": "1"},
        follow=True,
    )
    assert [str(m) for m in response.context["messages"]][1:] == [
        f"Atenção: o código de rastreio AA473124829GB também está no pedido #{second.number}. Confira se o código "
        "está certo; se for outro, use “Corrigir rastreio”."
    ]
    # and the second order's old code, corrected away, names only the first order now
    fourth = place_order(lines=[("CAM", 3000, 1)])
    line = fourth.lines.get()
    response = admin_client.post(
        _action(fourth, "ship"),
        {"tracking_number": "BR123456785BR", "carrier": "Correios", f"qty_{line.public_id}": "1"},
        follow=True,
    )
    assert f"também está no pedido #{first.number}." in [str(m) for m in response.context["messages"]][1]


def test_staff_correct_the_buyers_e_mail_and_phone_and_the_next_e_mail_goes_there(
    admin_client: Client, place_order, django_capture_on_commit_callbacks
) -> None:
    """Own-shop walk: Atendimento could fix only the CPF; a buyer who mistyped the e-mail never got a thing."""
    order = place_order(lines=[("CAM", 3000, 1)])
    assert _action(order, "buyer-contact") in _page(admin_client, order)
    opened = admin_client.get(_action(order, "buyer-contact")).content.decode()
    assert 'value="ana@example.com.br"' in opened
    form = {"first_name": "Ana", "last_name": "Souza", "email": "ana@exemplo", "phone": "(11) 9876"}
    bad = admin_client.post(_action(order, "buyer-contact"), form).content.decode()
    assert "E-mail inválido: confira o endereço (nome@dominio.com.br)." in bad
    order.refresh_from_db()
    assert order.buyer_email == "ana@example.com.br"  # nothing saved
    form.update(email="Ana.Souza@Example.com.br", phone="(21) 99876-5432")
    with django_capture_on_commit_callbacks(execute=True):
        saved = admin_client.post(_action(order, "buyer-contact"), form, follow=True).content.decode()
    assert "Dados do comprador salvos (e-mail, celular)." in saved
    order.refresh_from_db()
    assert (order.buyer_email, order.buyer_phone) == ("ana.souza@example.com.br", "+5521998765432")
    event = OrderEvent.objects.filter(order=order, kind="buyer_updated").latest("id")
    assert event.internal and event.message.startswith(
        "Dados do comprador corrigidos: e-mail (antes: ana@example.com.br)"
    )
    mail.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        order_ship(order_id=order.public_id, tracking_number="BR123456785BR", carrier="Correios")
    assert [m.to for m in mail.outbox] == [["ana.souza@example.com.br"]]
    # the same data again changes nothing
    again = admin_client.post(_action(order, "buyer-contact"), form, follow=True).content.decode()
    assert "Nada mudou: os dados do comprador já eram esses." in again


ADDRESS = {
    "postal_code": "20040002",
    "street": "Rua da Assembleia",
    "number": "10",
    "complement": "Sala 1201",
    "neighborhood": "Centro",
    "city": "Rio de Janeiro",
    "state": "rj",
}


def test_staff_correct_the_delivery_address_each_bad_field_named_and_the_buyer_sees_the_new_one(
    admin_client: Client, place_order, django_capture_on_commit_callbacks
) -> None:
    """Merchant walk: the buyer typed the old flat's address; staff could fix the name and the CPF, not where the
    parcel goes. The checkout's CEP/UF rules, every bad field named at once, nothing saved on error."""
    order = place_order(lines=[("CAM", 3000, 1)])
    Order.objects.filter(pk=order.pk).update(platform_id="plat_agente")  # an agent's order: the platform is told
    url = _action(order, "destination")
    assert url in _page(admin_client, order)
    opened = admin_client.get(url).content.decode()
    assert 'value="01310-100"' in opened and 'value="Rua das Flores"' in opened and 'inputmode="numeric"' in opened
    bad = {**ADDRESS, "postal_code": "2004-002", "street": "", "number": "", "state": "SP"}
    page = admin_client.post(url, bad).content.decode()
    assert "CEP inválido: use o formato 00000-000." in page
    assert "Informe a rua." in page and "Informe o número (ou S/N)." in page
    page = admin_client.post(url, {**ADDRESS, "state": "SP"}).content.decode()
    assert "A UF não corresponde ao CEP (o CEP é de RJ)." in page
    page = admin_client.post(url, {**ADDRESS, "postal_code": "00000-000", "neighborhood": ""}).content.decode()
    assert "CEP 00000-000 não existe." in page and "Informe o bairro." in page
    order.refresh_from_db()
    assert order.destination["postal_code"] == "01310-100"  # nothing saved
    assert not OrderEvent.objects.filter(order=order, kind="destination_updated").exists()

    # the new CEP changes the freight: said first, nothing saved (tests/shop/test_freight_labels.py), then ticked
    asked = admin_client.post(url, ADDRESS).content.decode()
    assert "Nada foi salvo ainda: confira e marque a caixa abaixo para salvar o endereço novo." in asked
    order.refresh_from_db()
    assert order.destination["postal_code"] == "01310-100"
    with django_capture_on_commit_callbacks(execute=True):
        ticked = {**ADDRESS, "confirm_freight": "on", "freight_cep": "20040002"}
        saved = admin_client.post(url, ticked, follow=True).content.decode()
    assert (
        "Endereço de entrega salvo (CEP, rua, número, complemento, bairro, cidade, UF). O comprador vê o novo na "
        "página do pedido e nos e-mails."
    ) in saved
    order.refresh_from_db()
    assert {key: order.destination[key] for key in ADDRESS} == {
        **ADDRESS, "postal_code": "20040-002", "state": "RJ"
    }  # fmt: skip
    assert order.destination["first_name"] == "Ana"  # the recipient stays
    assert [e.destination["postal_code"] for e in FulfillmentExpectation.objects.filter(order=order)] == ["20040-002"]
    event = OrderEvent.objects.get(order=order, kind="destination_updated")
    assert event.internal and event.actor == "admin"
    assert event.message == (
        "Endereço de entrega corrigido: CEP (antes: 01310-100); rua (antes: Rua das Flores); número (antes: 123); "
        "complemento (antes: Apto 45); bairro (antes: Jardim Paulista); cidade (antes: São Paulo); UF (antes: SP)."
    )
    announced = OutboxMessage.objects.filter(kind="order_changed", payload__event="buyer_updated").get()
    assert announced.payload["platform_id"] == "plat_agente"
    destination = order_bcp_payload(order_for_bcp(order.public_id))["fulfillment"]["expectations"][0]["destination"]
    assert (destination["street_address"], destination["postal_code"]) == ("Rua da Assembleia, 10", "20040-002")
    # the buyer's page and the next e-mail show the new address
    permalink = Client().get(order.permalink_path).content.decode()
    assert "Rua da Assembleia, 10 — Sala 1201" in permalink and "CEP 20040-002" in permalink
    assert "Rua das Flores" not in permalink
    mail.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        order_ship(order_id=order.public_id, tracking_number="BR123456785BR", carrier="Correios")
    sent = mail.outbox[0].alternatives[0][0]
    assert "Rua da Assembleia, 10 — Sala 1201" in sent and "20040-002" in sent
    # the same address again changes nothing; once shipped, it is no longer offered nor taken
    assert _action(order, "destination") not in _page(admin_client, order)
    refused = admin_client.post(url, ADDRESS, follow=True).content.decode()
    assert "“Corrigir endereço de entrega” não se aplica ao pedido" in refused


def test_a_delivered_order_returned_in_full_offers_no_delivery_address_correction(
    admin_client: Client, place_order
) -> None:
    """Merchant walk h48: after "Registrar devolução" of everything that arrived, the order page offered "Corrigir
    endereço de entrega" again (no line counts as shipped any more) and its form only refused it, telling staff to
    ask the carrier to redirect a parcel that had already come back. Only an order still "Pedido recebido" is
    offered it, as the service takes only that."""
    order = place_order(lines=[("CAM", 3000, 1)], freight=0)
    (line,) = order.lines.all()
    order_ship(order_id=order.public_id, tracking_number="BR123456785BR")
    order_mark_delivered(order_id=order.public_id)
    order_return(order_id=order.public_id, lines=[LineQuantity(line.public_id, 1)], reason="Desistiu")
    order.refresh_from_db()
    assert order.status == "returned"
    assert _action(order, "destination") not in _page(admin_client, order)
    refused = admin_client.post(_action(order, "destination"), ADDRESS, follow=True).content.decode()
    assert "“Corrigir endereço de entrega” não se aplica ao pedido" in refused


def test_the_same_address_again_changes_nothing(admin_client: Client, place_order) -> None:
    order = place_order(lines=[("CAM", 3000, 1)])
    same = {**{k: order.destination[k] for k in ADDRESS}, "postal_code": "01310100"}
    page = admin_client.post(_action(order, "destination"), same, follow=True).content.decode()
    assert "Nada mudou: o endereço de entrega já era esse." in page
    assert not OrderEvent.objects.filter(order=order, kind="destination_updated").exists()


def test_staff_correcting_the_delivery_address_email_the_buyer_once_per_change(
    admin_client: Client, place_order, django_capture_on_commit_callbacks
) -> None:
    """Merchant walk h49: the buyer's own correction sent the `address_updated` e-mail, staff's in the admin sent
    nothing, and the buyer did not know where the order would go. Staff's sends it too, once per real change,
    saying the shop changed it (not "na página do pedido")."""
    order = place_order(lines=[("CAM", 3000, 1)])
    mail.outbox.clear()
    ticked = {**ADDRESS, "confirm_freight": "on", "freight_cep": "20040002"}
    for _again in range(2):  # the same address again: nothing changed, nothing sent
        with django_capture_on_commit_callbacks(execute=True):
            admin_client.post(_action(order, "destination"), ticked)

    assert [m.subject for m in mail.outbox] == [f"Loja Exemplo: Endereço de entrega do pedido #{order.number} alterado"]
    body, html = mail.outbox[0].body, mail.outbox[0].alternatives[0][0]
    assert f"A loja alterou o endereço de entrega do pedido #{order.number}. Ela vai enviá-lo para o endereço" in body
    assert "Se o endereço não estiver certo, fale com a loja antes do envio." in body
    assert "na página do pedido" not in body and "Se não foi você" not in body
    assert "Rua da Assembleia, 10 — Sala 1201" in body and "Rua da Assembleia, 10 — Sala 1201" in html
    assert f"A loja alterou o endereço de entrega do pedido #{order.number}." in html
    assert EmailDelivery.objects.filter(order=order, kind="address_updated").count() == 1
    # a second real change is told too
    with django_capture_on_commit_callbacks(execute=True):
        order_destination_set(order_id=order.public_id, **{**ADDRESS, "number": "12"}, actor="ana")
    assert EmailDelivery.objects.filter(order=order, kind="address_updated").count() == 2
    assert "Rua da Assembleia, 12 — Sala 1201" in mail.outbox[-1].body


def test_a_pickup_order_has_no_delivery_address_to_correct(admin_client: Client, place_order) -> None:
    order = place_order(lines=[("CAM", 3000, 1)], method="pickup", freight=0)
    assert _action(order, "destination") not in _page(admin_client, order)
    with pytest.raises(OrderError) as refused:
        order_destination_set(order_id=order.public_id, **{**ADDRESS, "postal_code": "20040-002"})
    assert refused.value.message == (
        f"O pedido #{order.number} não é para entrega (é retirada ou digital): não tem endereço de entrega."
    )


def test_delivery_address_correction_statement_budget(
    place_order, django_assert_max_num_queries, django_capture_on_commit_callbacks
) -> None:
    """One short transaction of 15 statements: savepoint, the order locked, its live label (the shop's guard), the
    order and its expectations written, the timeline line, the buyer's e-mail row, the BCP snapshot read (order,
    lines, expectations, events, adjustments) and written, the outbox row, release."""
    order = place_order(lines=[("CAM", 3000, 1), ("CAN", 2000, 2)])
    with django_assert_max_num_queries(15):
        order_destination_set(order_id=order.public_id, **ADDRESS, actor="ana")
    order.refresh_from_db()
    assert order.destination["city"] == "Rio de Janeiro"
