"""Tracking by itself (issue 36): Melhor Envio's signed webhook and the Correios polling sweep turn carrier events
into the order's fulfillment events, so the buyer's page, the e-mails and the order webhooks follow."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.core import mail
from django.utils import timezone

from orders.models import Adjustment, EmailDelivery, FulfillmentEvent, OrderEvent, OutboxMessage
from orders.services import order_cancel, order_tracking_correct
from shop.freight.labels import label_request
from shop.freight.tracking import tracking_poll_due
from shop.models import LabelTrackingEvent, ShippingLabel
from shop.tasks import poll_carrier_tracking
from tests.carriers.fake_correios import FakeCorreios
from tests.carriers.fake_melhorenvio import FakeMelhorEnvio
from tests.carriers.fake_server import s10
from tests.shop.freight_helpers import shirts_order

pytestmark = pytest.mark.django_db
WEBHOOK = "/frete/webhooks/melhorenvio/"


def _bought(captured, **kwargs):  # type: ignore[no-untyped-def]
    order = shirts_order(captured, quantity=2, **kwargs)
    with captured(execute=True):
        label = label_request(order_id=order.public_id, actor="ana")
    label.refresh_from_db()
    assert label.status == "purchased"
    return order, label


def _post(client, fake: FakeMelhorEnvio, body: bytes, captured, signature: str | None = None):  # type: ignore[no-untyped-def]
    with captured(execute=True):
        return client.post(WEBHOOK, body, content_type="application/json",
                           headers={"X-ME-Signature": signature or fake.sign(body)})  # fmt: skip


def _posted(client, fake: FakeMelhorEnvio, captured):  # type: ignore[no-untyped-def]
    """A label bought and its parcel posted (the carrier's webhook): the order, the label, its code, the shipment."""
    order, label = _bought(captured)
    code = fake.orders[label.remote_id]["tracking"]
    posted = fake.webhook(label.remote_id, "order.posted", status="posted", posted_at="2026-12-05 10:00:00")
    _post(client, fake, posted, captured)
    return order, label, code, FulfillmentEvent.objects.get(order=order, type="shipped")


def test_melhor_envio_posted_then_delivered_ship_and_close_the_order(
    client,
    melhorenvio: FakeMelhorEnvio,
    django_capture_on_commit_callbacks,
) -> None:
    captured = django_capture_on_commit_callbacks
    order, label = _bought(captured)
    code = melhorenvio.orders[label.remote_id]["tracking"]
    posted = melhorenvio.webhook(label.remote_id, "order.posted", status="posted", posted_at="2026-12-05 10:00:00")
    response = _post(client, melhorenvio, posted, captured)
    assert response.status_code == 200
    shipped = FulfillmentEvent.objects.get(order=order)
    assert (shipped.type, shipped.tracking_number, shipped.carrier, shipped.line_items) == (
        "shipped", code, "Correios", [{"id": order.lines.get().public_id, "quantity": 2}],
    )  # fmt: skip
    assert shipped.occurred_at.isoformat() == "2026-12-05T13:00:00+00:00"
    assert EmailDelivery.objects.filter(order=order, kind="shipped").count() == 1
    assert OutboxMessage.objects.filter(kind="order_changed", payload__event="shipped").count() == 1
    # the same webhook again changes nothing
    _post(client, melhorenvio, posted, captured)
    assert FulfillmentEvent.objects.filter(order=order).count() == 1
    delivered = melhorenvio.webhook(label.remote_id, "order.delivered", status="delivered",
                                    delivered_at="2026-12-07 15:30:00")  # fmt: skip
    _post(client, melhorenvio, delivered, captured)
    order.refresh_from_db()
    line = order.lines.get()
    assert order.status == "delivered" and (line.quantity_shipped, line.quantity_delivered) == (2, 2)
    assert list(FulfillmentEvent.objects.filter(order=order).values_list("type", flat=True)) == [
        "shipped", "delivered",
    ]  # fmt: skip
    assert EmailDelivery.objects.filter(order=order, kind="delivered").count() == 1
    label.refresh_from_db()
    assert label.finished_at is not None
    page = client.get(f"/orders/{order.permalink_token}").content.decode()  # the buyer's page follows
    assert code in page and "Entregue" in page


def test_a_webhook_without_the_right_signature_is_refused_and_changes_nothing(
    client,
    melhorenvio: FakeMelhorEnvio,
    django_capture_on_commit_callbacks,
) -> None:
    order, label = _bought(django_capture_on_commit_callbacks)
    body = melhorenvio.webhook(label.remote_id, "order.posted", status="posted", posted_at="2026-12-05 10:00:00")
    response = _post(client, melhorenvio, body, django_capture_on_commit_callbacks,
                     signature=melhorenvio.sign(body, "not-the-secret"))  # fmt: skip
    assert response.status_code == 401
    assert FulfillmentEvent.objects.filter(order=order).count() == 0
    assert LabelTrackingEvent.objects.count() == 0
    unknown = client.post(WEBHOOK, b"not json", content_type="application/json",
                          headers={"X-ME-Signature": melhorenvio.sign(b"not json")})  # fmt: skip
    assert unknown.status_code == 401


def test_correios_polling_turns_the_sro_history_into_events_once(
    correios: FakeCorreios,
    django_capture_on_commit_callbacks,
) -> None:
    captured = django_capture_on_commit_callbacks
    order, label = _bought(captured)
    code = label.tracking_code
    correios.add_event(code, "PO", "01", "2026-12-05T10:00:00", "Objeto postado")
    correios.add_event(code, "RO", "01", "2026-12-05T18:00:00", "Objeto em transferência - por favor aguarde")
    correios.add_event(code, "OEC", "01", "2026-12-06T08:00:00", "Objeto saiu para entrega ao destinatário")
    with captured(execute=True):
        assert poll_carrier_tracking() == 3
    assert list(FulfillmentEvent.objects.filter(order=order).values_list("type", "tracking_number")) == [
        ("shipped", code), ("in_transit", code), ("out_for_delivery", code),
    ]  # fmt: skip
    assert tracking_poll_due() == 0  # polled a moment ago: not due
    correios.add_event(code, "BDE", "01", "2026-12-06T14:00:00", "Objeto entregue ao destinatário")
    ShippingLabel.objects.update(last_polled_at=timezone.now() - timedelta(hours=1))
    with captured(execute=True):
        assert tracking_poll_due() == 1  # the old events are known; only the delivery is new
    order.refresh_from_db()
    assert order.status == "delivered"
    ShippingLabel.objects.update(last_polled_at=timezone.now() - timedelta(hours=1))
    asked = len(correios.requests)
    assert tracking_poll_due() == 0 and len(correios.requests) == asked  # delivered: not polled any more


def test_returned_to_sender_opens_a_pending_adjustment_for_staff(
    correios: FakeCorreios,
    django_capture_on_commit_callbacks,
) -> None:
    captured = django_capture_on_commit_callbacks
    order, label = _bought(captured)
    code = label.tracking_code
    correios.add_event(code, "PO", "01", "2026-12-05T10:00:00", "Objeto postado")
    correios.add_event(code, "BDE", "23", "2026-12-12T10:00:00", "Objeto devolvido ao remetente")
    with captured(execute=True):
        assert tracking_poll_due() == 2
    assert list(FulfillmentEvent.objects.filter(order=order).values_list("type", flat=True)) == [
        "shipped", "returned_to_sender",
    ]  # fmt: skip
    adjustment = Adjustment.objects.get(order=order)
    assert (adjustment.type, adjustment.status, adjustment.amount) == ("return", "pending", 0)
    assert adjustment.description == f"Objeto {code} devolvido ao remetente: Objeto devolvido ao remetente"
    line = order.lines.get()
    assert line.quantity_shipped == 0  # back in the shop: may be shipped again


def _came_back(client, melhorenvio: FakeMelhorEnvio, captured):  # type: ignore[no-untyped-def]
    """A label bought, posted, then brought back by the carrier (Melhor Envio's `order.undelivered`)."""
    order, label = _bought(captured)
    posted = melhorenvio.webhook(label.remote_id, "order.posted", status="posted", posted_at="2026-12-05 10:00:00")
    _post(client, melhorenvio, posted, captured)
    back = melhorenvio.webhook(label.remote_id, "order.undelivered", status="undelivered",
                               updated_at="2026-12-12 10:00:00")  # fmt: skip
    _post(client, melhorenvio, back, captured)
    return order, label


def test_a_parcel_back_at_the_store_is_said_so_and_staff_send_it_again_with_a_new_label(
    client,
    admin_client,
    melhorenvio: FakeMelhorEnvio,
    django_capture_on_commit_callbacks,
) -> None:
    """QA walk: after `order.undelivered` the buyer read "Nada foi enviado ainda", "Pedido recebido" and "Em
    preparação"; the label box still offered print and cancel and no new label; the "Devolução" stayed pending."""
    captured = django_capture_on_commit_callbacks
    order, label = _came_back(client, melhorenvio, captured)
    label.refresh_from_db()
    assert label.status == "returned" and label.finished_at is not None
    page = client.get(f"/orders/{order.permalink_token}").content.decode()
    assert "Seu pacote voltou para a loja." in page and "Nada foi enviado ainda" not in page
    assert "<strong>Voltou para a loja</strong>" in page and "Em preparação" not in page
    assert 'data-testid="line-status">Voltou para a loja<' in page
    assert "O pacote está de volta na loja: se cancelar, o valor pago volta" in page
    assert "Pacote devolvido à loja pela transportadora" in page
    admin = admin_client.get(f"/admin/orders/order/{order.pk}/change/").content.decode()
    assert 'data-testid="label-pdf"' not in admin and 'data-testid="label-cancel"' not in admin
    assert 'data-testid="label-last-status">Devolvida ao remetente<' in admin
    assert 'data-testid="label-returned"' in admin and 'data-testid="label-buy"' in admin
    # staff send it again: a new label, posted; the bring-back is settled
    with captured(execute=True):
        admin_client.post(f"/admin/frete/{order.public_id}/comprar/")
    again = ShippingLabel.objects.get(order=order, status="purchased")
    assert again.public_id != label.public_id
    posted = melhorenvio.webhook(again.remote_id, "order.posted", status="posted", posted_at="2026-12-13 09:00:00")
    _post(client, melhorenvio, posted, captured)
    order.refresh_from_db()
    assert order.status == "shipped"
    assert Adjustment.objects.get(order=order, type="return").status == "completed"
    assert OrderEvent.objects.filter(order=order, kind="returned_to_sender_closed").count() == 1
    page = client.get(f"/orders/{order.permalink_token}").content.decode()
    assert "Seu pacote voltou para a loja." not in page and "<strong>Enviado</strong>" in page


def test_cancelling_an_order_whose_parcel_came_back_settles_the_bring_back(
    client,
    melhorenvio: FakeMelhorEnvio,
    django_capture_on_commit_callbacks,
) -> None:
    captured = django_capture_on_commit_callbacks
    order, _label = _came_back(client, melhorenvio, captured)
    with captured(execute=True):
        order_cancel(order_id=order.public_id, reason="Comprador desistiu depois da devolução", actor="ana")
    back = Adjustment.objects.get(order=order, type="return")
    assert back.status == "completed"  # was "pending" forever on the buyer's page
    page = client.get(f"/orders/{order.permalink_token}").content.decode()
    adjustments = page.split('data-testid="order-adjustments"')[1]
    assert "Seu pacote voltou para a loja." not in page and "em andamento" not in adjustments
    assert re.search(r"Pacote devolvido à loja pela transportadora\s+— concluído", adjustments)
    assert Adjustment.objects.filter(order=order, type="refund").count() == 1


def test_a_bad_tracking_code_is_refused_for_its_event_and_later_events_still_move_the_order(
    client,
    melhorenvio: FakeMelhorEnvio,
    django_capture_on_commit_callbacks,
    caplog,
) -> None:
    """QA walk: one event with a bad code stuck it on the label, and every later event was dropped (INFO)."""
    captured = django_capture_on_commit_callbacks
    order, label = _bought(captured)
    good = melhorenvio.orders[label.remote_id]["tracking"]
    posted = melhorenvio.webhook(label.remote_id, "order.posted", status="posted", tracking="BR000000000XX",
                                 posted_at="2026-12-05 10:00:00")  # fmt: skip
    with caplog.at_level("INFO", logger="shop.freight.tracking"):
        _post(client, melhorenvio, posted, captured)
    assert [r.levelname for r in caplog.records if "BR000000000XX" in r.getMessage()] == ["WARNING"]
    label.refresh_from_db()
    assert label.tracking_code == ""  # not kept
    received = melhorenvio.webhook(label.remote_id, "order.received", status="posted", updated_at="2026-12-06 08:00:00")
    _post(client, melhorenvio, received, captured)
    assert list(FulfillmentEvent.objects.filter(order=order).values_list("type", "tracking_number")) == [
        ("shipped", good), ("in_transit", good),
    ]  # fmt: skip
    label.refresh_from_db()
    assert label.tracking_code == good
    delivered = melhorenvio.webhook(label.remote_id, "order.delivered", status="delivered",
                                    delivered_at="2026-12-07 15:30:00")  # fmt: skip
    _post(client, melhorenvio, delivered, captured)
    order.refresh_from_db()
    assert order.status == "delivered"


def test_carrier_events_after_a_tracking_correction_keep_the_corrected_code(
    client,
    melhorenvio: FakeMelhorEnvio,
    django_capture_on_commit_callbacks,
) -> None:
    # QA walk: staff corrected the code ("Corrigir rastreio"); the carrier's next events came back with the label's
    # old code, and the buyer's page showed it again under "Entregue".
    captured = django_capture_on_commit_callbacks
    order, label, old, shipment = _posted(client, melhorenvio, captured)
    new = s10(99_999_999)
    with captured(execute=True):
        order_tracking_correct(order_id=order.public_id, event_id=shipment.public_id, tracking_number=new)
    received = melhorenvio.webhook(label.remote_id, "order.received", status="posted")
    delivered = melhorenvio.webhook(label.remote_id, "order.delivered", status="delivered",
                                    delivered_at="2026-12-07 15:30:00")  # fmt: skip
    _post(client, melhorenvio, received, captured)
    _post(client, melhorenvio, delivered, captured)
    after = FulfillmentEvent.objects.filter(order=order, type__in=["in_transit", "delivered"])
    assert sorted(after.values_list("type", "tracking_number", "carrier")) == [
        ("delivered", new, "Correios"), ("in_transit", new, "Correios"),
    ]  # fmt: skip
    page = client.get(f"/orders/{order.permalink_token}").content.decode()
    assert new in page and "Entregue" in page and old not in page


def test_a_new_code_the_carrier_gives_the_label_is_recorded_and_shown_to_the_buyer(
    client,
    melhorenvio: FakeMelhorEnvio,
    django_capture_on_commit_callbacks,
) -> None:
    """Merchant gap (session 48): the carrier named a new tracking code for the same parcel (its label generated
    again) and the shop kept the old one: the label, the shipment and the buyer's page followed a code the carrier no
    longer scans. The new code now corrects the shipment as “Corrigir rastreio” does: the label's code, a correction
    event, the timeline, the buyer's e-mail and page; the events go on under it, and the same webhook again changes
    nothing."""
    captured = django_capture_on_commit_callbacks
    order, label, old, shipment = _posted(client, melhorenvio, captured)
    mail.outbox.clear()
    # when the carrier's next webhook names a new code for the same order
    new = melhorenvio.retrack(label.remote_id)
    received = melhorenvio.webhook(label.remote_id, "order.received", status="posted", updated_at="2026-12-06 08:00:00")
    assert _post(client, melhorenvio, received, captured).status_code == 200
    # then the label and the shipment carry it, and the event is applied under it
    label.refresh_from_db()
    assert label.tracking_code == new
    correction = FulfillmentEvent.objects.get(order=order, type="tracking_corrected")
    assert (correction.corrects_id, correction.tracking_number, correction.carrier) == (shipment.pk, new, "Correios")
    assert FulfillmentEvent.objects.get(order=order, type="in_transit").tracking_number == new
    event = OrderEvent.objects.get(order=order, kind="tracking_corrected")
    assert (event.message, event.actor) == (f"Código de rastreio corrigido: {old} → {new} (Correios)", "transportadora")
    # the buyer is told the code to follow: one e-mail of the correction, naming it
    assert EmailDelivery.objects.filter(order=order, kind="shipped", ref=correction.public_id).count() == 1
    assert [new in m.body for m in mail.outbox] == [True]
    # the same webhook again changes nothing; the delivery comes under the new code
    _post(client, melhorenvio, received, captured)
    delivered = melhorenvio.webhook(label.remote_id, "order.delivered", status="delivered",
                                    delivered_at="2026-12-07 15:30:00")  # fmt: skip
    _post(client, melhorenvio, delivered, captured)
    assert FulfillmentEvent.objects.filter(order=order, type="tracking_corrected").count() == 1
    assert FulfillmentEvent.objects.filter(order=order, type="shipped").count() == 1
    assert FulfillmentEvent.objects.get(order=order, type="delivered").tracking_number == new
    page = client.get(f"/orders/{order.permalink_token}").content.decode()
    assert new in page and "Entregue" in page and old not in page


def test_correios_polling_asks_about_the_corrected_object_and_stops_when_another_carrier_has_it(
    correios: FakeCorreios,
    django_capture_on_commit_callbacks,
) -> None:
    """QA walk: after staff's "Corrigir rastreio" the sweep kept asking the Correios about the label's old code, so
    the real object's events never came; a correction naming another carrier left it asking for nothing useful."""
    captured = django_capture_on_commit_callbacks
    order, label = _bought(captured)
    old = label.tracking_code
    correios.add_event(old, "PO", "01", "2026-12-05T10:00:00", "Objeto postado")
    with captured(execute=True):
        assert tracking_poll_due() == 1
    shipment = FulfillmentEvent.objects.get(order=order, type="shipped")
    new = s10(99_999_999)
    with captured(execute=True):
        order_tracking_correct(order_id=order.public_id, event_id=shipment.public_id, tracking_number=new)
    correios.add_event(new, "BDE", "01", "2026-12-06T14:00:00", "Objeto entregue ao destinatário")
    ShippingLabel.objects.update(last_polled_at=timezone.now() - timedelta(hours=1))
    with captured(execute=True):
        assert tracking_poll_due() == 1
    assert any(new in path for _method, path in correios.requests)
    delivered = FulfillmentEvent.objects.get(order=order, type="delivered")
    assert delivered.tracking_number == new

    other, other_label = _bought(captured)
    correios.add_event(other_label.tracking_code, "PO", "01", "2026-12-05T10:00:00", "Objeto postado")
    with captured(execute=True):
        assert tracking_poll_due() == 1
    other_shipment = FulfillmentEvent.objects.get(order=other, type="shipped")
    with captured(execute=True):
        order_tracking_correct(
            order_id=other.public_id, event_id=other_shipment.public_id, tracking_number="JD123456789BR",
            carrier="Jadlog",
        )  # fmt: skip
    ShippingLabel.objects.update(last_polled_at=timezone.now() - timedelta(hours=1))
    asked = len(correios.requests)
    assert tracking_poll_due() == 0
    assert not any("JD123456789BR" in path for _method, path in correios.requests[asked:])


def _poll_again(captured) -> int:  # type: ignore[no-untyped-def]
    ShippingLabel.objects.update(last_polled_at=timezone.now() - timedelta(hours=1))
    with captured(execute=True):
        return tracking_poll_due()


@pytest.mark.parametrize(
    ("language", "out_subject", "failed_subject", "tracking_words"),
    [
        ("pt-br", "Seu pedido #{n} saiu para entrega", "A entrega do seu pedido #{n} não foi feita", "Rastrear"),
        ("en", "Your order #{n} is out for delivery", "Your order #{n} could not be delivered", "Track"),
    ],
)
def test_out_for_delivery_and_a_failed_delivery_are_e_mailed_once_per_shipment_and_in_transit_is_not(
    correios: FakeCorreios,
    django_capture_on_commit_callbacks,
    language: str,
    out_subject: str,
    failed_subject: str,
    tracking_words: str,
) -> None:
    """BCP-ORD-08: the carrier's steps are the order's fulfillment events; the buyer is e-mailed when the parcel is out
    for delivery and when a delivery failed or it waits at the agency, once each per shipment (a poll seeing the same
    history, a second attempt, the "aguardando retirada" after the failure send nothing more), never for a scan."""
    captured = django_capture_on_commit_callbacks
    order, label = _bought(captured, language=language)
    code = label.tracking_code
    correios.add_event(code, "PO", "01", "2026-12-05T10:00:00", "Objeto postado")
    correios.add_event(code, "RO", "01", "2026-12-05T18:00:00", "Objeto em transferência - por favor aguarde")
    mail.outbox.clear()
    with captured(execute=True):
        assert tracking_poll_due() == 2
    steps = ("out_for_delivery", "delivery_failed")
    assert [m.subject for m in mail.outbox] == [mail.outbox[0].subject]  # the shipment's; "em trânsito": none
    assert not EmailDelivery.objects.filter(order=order, kind__in=steps).exists()

    correios.add_event(code, "OEC", "01", "2026-12-06T08:00:00", "Objeto saiu para entrega ao destinatário")
    assert _poll_again(captured) == 1
    (out,) = mail.outbox[1:]
    assert out.subject == "Loja Exemplo: " + out_subject.format(n=order.number)
    tracking_url = f"https://rastreamento.correios.com.br/app/index.php?objeto={code}"
    assert f"{tracking_words}: {tracking_url}" in out.body and order.permalink_url in out.body
    assert f'href="{tracking_url}"' in out.alternatives[0][0] and order.permalink_url in out.alternatives[0][0]
    assert _poll_again(captured) == 0 and len(mail.outbox) == 2  # the same history again: nothing

    correios.add_event(code, "BDE", "20", "2026-12-06T15:00:00", "Carteiro não atendido")
    correios.add_event(code, "LDI", "01", "2026-12-07T09:00:00", "Objeto aguardando retirada no endereço indicado")
    correios.add_event(code, "OEC", "01", "2026-12-08T08:00:00", "Objeto saiu para entrega ao destinatário")
    assert _poll_again(captured) == 3
    assert list(FulfillmentEvent.objects.filter(order=order).values_list("type", flat=True)) == [
        "shipped", "in_transit", "out_for_delivery", "failed_attempt", "failed_attempt", "out_for_delivery",
    ]  # fmt: skip
    (failed,) = mail.outbox[2:]
    assert failed.subject == "Loja Exemplo: " + failed_subject.format(n=order.number)
    assert tracking_url in failed.body and order.permalink_url in failed.body
    assert _poll_again(captured) == 0 and len(mail.outbox) == 3
    assert sorted(EmailDelivery.objects.filter(order=order, kind__in=steps).values_list("kind", flat=True)) == [
        "delivery_failed", "out_for_delivery",
    ]  # fmt: skip


def test_a_late_poll_that_brings_out_for_delivery_and_delivered_together_e_mails_only_the_delivery(
    correios: FakeCorreios,
    django_capture_on_commit_callbacks,
) -> None:
    """The "saiu para entrega" e-mail, still unsent when the delivery is applied, would reach the buyer after (or with)
    "Seu pedido foi entregue": it is dropped."""
    captured = django_capture_on_commit_callbacks
    order, label = _bought(captured)
    code = label.tracking_code
    correios.add_event(code, "PO", "01", "2026-12-05T10:00:00", "Objeto postado")
    correios.add_event(code, "OEC", "01", "2026-12-06T08:00:00", "Objeto saiu para entrega ao destinatário")
    correios.add_event(code, "BDE", "01", "2026-12-06T14:00:00", "Objeto entregue ao destinatário")
    mail.outbox.clear()
    with captured(execute=True):
        assert tracking_poll_due() == 3
    assert [m.subject.split(": ", 1)[1] for m in mail.outbox] == [
        f"Seu pedido #{order.number} foi enviado", f"Seu pedido #{order.number} foi entregue",
    ]  # fmt: skip
    assert not EmailDelivery.objects.filter(order=order, kind="out_for_delivery").exists()
