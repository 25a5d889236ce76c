"""Django admin for orders: list, search, CSV, read-only page, action pages with and without permission."""

from __future__ import annotations

import csv
import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth.models import Permission, User
from django.core import mail
from django.db import connection
from django.test import Client
from django.utils import timezone

from orders.models import Adjustment, FulfillmentEvent, Order, OrderEvent
from orders.services import order_cancel, order_mark_delivered, order_pickup_ready
from orders.services import order_ship as ship_order

pytestmark = pytest.mark.django_db


def _action(order: Order, slug: str) -> str:
    return f"/admin/orders/order/{order.public_id}/action/{slug}/"


@pytest.fixture
def viewer_client() -> Client:
    """Staff who may only look at orders."""
    user = User.objects.create_user("viewer", password="pw-viewer-123", is_staff=True)
    user.user_permissions.add(Permission.objects.get(codename="view_order"))
    client = Client()
    client.force_login(user)
    return client


def _staff_with(*codenames: str) -> Client:
    user = User.objects.create_user("staff-" + "-".join(codenames), password="pw-12345678", is_staff=True)
    user.user_permissions.add(*Permission.objects.filter(content_type__app_label="orders", codename__in=codenames))
    client = Client()
    client.force_login(user)
    return client


def test_changelist_shows_formatted_columns_and_no_delete(admin_client, place_order):
    order = place_order(lines=[("CAM", 123456, 1)], freight=0)
    response = admin_client.get("/admin/orders/order/")
    html = response.content.decode()
    assert response.status_code == 200
    assert f"#{order.number}" in html
    assert "R$ 1.234,56" in html
    assert "ana@example.com.br" in html
    assert "delete_selected" not in html
    assert "Exportar CSV" in html


@pytest.mark.parametrize(
    "query",
    ["{number}", "ana@example.com.br", "390.533.447-05", "11987654321", "cam-x", "BR123456785BR"],
)
def test_search_by_number_email_cpf_phone_sku_tracking(admin_client, place_order, query):
    from orders.services import order_ship

    order = place_order(lines=[("CAM-X", 3000, 1)])
    other = place_order(lines=[("OUTRO", 3000, 1)], email="bruno@example.com.br")
    other.buyer_tax_id = "11144477735"
    other.buyer_phone = "+5521999990000"
    other.save()
    order_ship(order_id=order.public_id, tracking_number="BR123456785BR")
    response = admin_client.get("/admin/orders/order/", {"q": query.format(number=order.number)})
    html = response.content.decode()
    assert f"#{order.number}<" in html
    assert f"#{other.number}<" not in html


@pytest.mark.parametrize("query", ["João", "joao", "SILVA", "joão santos", "Silva Santos"])
def test_search_by_the_buyers_name_accents_and_case_aside(admin_client, place_order, query):
    # given João da Silva Santos's order (his e-mail does not carry his name) and Maria Oliveira's
    order = place_order(email="js@example.com.br")
    Order.objects.filter(pk=order.pk).update(buyer_first_name="João", buyer_last_name="da Silva Santos")
    other = place_order(email="mo@example.com.br")
    Order.objects.filter(pk=other.pk).update(buyer_first_name="Maria", buyer_last_name="Oliveira")
    # when staff search the buyer's name as the buyer said it on the phone
    html = admin_client.get("/admin/orders/order/", {"q": query}).content.decode()
    # then his order is listed, not hers (the name was not searched at all: nothing was listed)
    assert f"#{order.number}<" in html
    assert f"#{other.number}<" not in html
    assert "Número, nome, e-mail" in html  # the search box says it


@pytest.mark.skipif("NAME_SEARCH_EXPECT_VENDOR" not in os.environ, reason="guard of the SQLite subprocess run only")
def test_the_name_search_subprocess_really_runs_on_sqlite() -> None:
    assert connection.vendor == os.environ["NAME_SEARCH_EXPECT_VENDOR"]


@pytest.mark.postgres
def test_the_name_search_ignores_accents_on_the_embedded_sqlite_store_too(tmp_path: Path) -> None:
    """Closing note: "joao" found "João" on PostgreSQL only (unaccent); SQLite, the store of `make run` without
    DATABASE_URL, compared the bytes. The same five cases run there, in a subprocess on a real SQLite file."""
    env = {k: v for k, v in os.environ.items() if k not in {"CI", "DATABASE_URL", "PYTEST_ADDOPTS"}}
    env["DATABASE_URL"] = f"sqlite:///{tmp_path / 'names.sqlite3'}"
    env["SHOP_VAR_DIR"] = str(tmp_path / "var")
    env["NAME_SEARCH_EXPECT_VENDOR"] = "sqlite"
    base = Path(settings.BASE_DIR)
    tests = [
        f"{__file__}::test_search_by_the_buyers_name_accents_and_case_aside",
        f"{__file__}::test_the_name_search_subprocess_really_runs_on_sqlite",
    ]
    args = [*tests, "-q", "-m", "not postgres", "-p", "no:cacheprovider", "--rootdir", str(base)]

    result = subprocess.run(
        [sys.executable, "-m", "pytest", *args],
        cwd=base,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )

    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert re.search(r"\b6 passed\b", result.stdout), result.stdout[-1500:]


@pytest.mark.parametrize("query", ["CAF-1KG", "#12"])
def test_a_sku_or_short_number_with_digits_is_not_searched_in_every_phone(admin_client, place_order, query):
    # given an order of the SKU CAF-1KG and another whose phone holds a 1 and a 12
    order = place_order(lines=[("CAF-1KG", 3000, 1)])
    Order.objects.filter(pk=order.pk).update(number=12, buyer_phone="")
    other = place_order(lines=[("CAM-P", 3000, 1)], email="bruno@example.com.br")
    Order.objects.filter(pk=other.pk).update(buyer_phone="+5511912345678")
    # when staff search the SKU, or order #12
    html = admin_client.get("/admin/orders/order/", {"q": query}).content.decode()
    # then only that order is listed: the query's digits ("1", "12") were matched inside every phone
    assert "#12<" in html
    assert f"#{other.number}<" not in html


def test_csv_export_follows_the_filter(admin_client, place_order):
    paid = place_order(lines=[("CAM", 3000, 1)], freight=800)
    place_order(paid=False)
    response = admin_client.get("/admin/orders/order/export.csv", {"payment_status__exact": "paid"})
    assert response.status_code == 200
    rows = list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode("utf-8-sig")), delimiter=";"))
    assert rows[0][:3] == ["Pedido", "Data", "Situação"]
    assert [row[0] for row in rows[1:]] == [str(paid.number)]
    assert rows[1][20:23] == ["38,00", "38,00", "0,00"]


def test_order_page_is_read_only_with_inlines_and_action_links(admin_client, place_order):
    order = place_order()
    response = admin_client.get(f"/admin/orders/order/{order.pk}/change/")
    html = response.content.decode()
    assert response.status_code == 200
    assert 'name="buyer_email"' not in html  # read-only: no input
    assert order.payment_txid in html
    for slug in ("ship", "refund", "cancel", "note", "resend-email"):
        assert _action(order, slug) in html
    # nothing shipped yet, not a pickup order: neither "entregue" nor the pickup steps are offered
    for slug in ("deliver", "tracking-fix", "pickup-ready", "pickup-done", "refund-result"):
        assert _action(order, slug) not in html
    assert "Pedido #" in html or "placed" in html  # timeline inline


def test_the_order_page_links_to_its_timeline_not_an_empty_django_history(admin_client, place_order):
    # given an order
    order = place_order()
    # when staff open it
    html = admin_client.get(f"/admin/orders/order/{order.pk}/change/").content.decode()
    # then the last tool jumps to the timeline at the foot of the page ("Histórico" opened Django's change log,
    # always "Este objeto não tem histórico de alterações": orders are not edited in that form)
    assert '<a href="#timeline-group" class="historylink">Linha do tempo</a>' in html
    assert 'id="timeline-group"' in html
    assert f"/admin/orders/order/{order.pk}/history/" not in html


def test_register_shipment_through_the_action_page(admin_client, place_order):
    order = place_order(lines=[("CAM", 3000, 2)])
    line = order.lines.get()
    page = admin_client.get(_action(order, "ship"))
    assert page.status_code == 200
    response = admin_client.post(
        _action(order, "ship"),
        {"tracking_number": "BR123456785BR", "carrier": "Correios", f"qty_{line.public_id}": "1"},
    )
    assert response.status_code == 302
    event = FulfillmentEvent.objects.get(order=order)
    assert (event.type, event.tracking_number, event.line_items) == (
        "shipped",
        "BR123456785BR",
        [{"id": line.public_id, "quantity": 1}],
    )
    assert OrderEvent.objects.filter(order=order, kind="fulfillment_shipped", actor="admin").exists()


def test_shipment_over_quantity_shows_the_field_error(admin_client, place_order):
    order = place_order(lines=[("CAM", 3000, 1)])
    line = order.lines.get()
    response = admin_client.post(_action(order, "ship"), {"tracking_number": "BR1", f"qty_{line.public_id}": "5"})
    assert response.status_code == 200
    assert FulfillmentEvent.objects.count() == 0
    assert "errorlist" in response.content.decode()


def test_mark_delivered_refund_cancel_note_resend(admin_client, place_order):
    order = place_order(lines=[("CAM", 3000, 2)], freight=800)
    line = order.lines.get()
    shipment = {"tracking_number": "BR123456785BR", "carrier": "Correios", f"qty_{line.public_id}": "1"}
    assert admin_client.post(_action(order, "ship"), shipment).status_code == 302
    assert admin_client.post(_action(order, "deliver"), {f"qty_{line.public_id}": "1"}).status_code == 302
    refund = {"amount": "10,50", "reason": "Avaria", "confirm": "on"}
    assert admin_client.post(_action(order, "refund"), refund).status_code == 302
    assert Adjustment.objects.get(order=order, type="refund").amount == -1050
    assert admin_client.post(_action(order, "note"), {"text": "Ligar para a cliente"}).status_code == 302
    assert OrderEvent.objects.get(order=order, kind="note").internal is True
    sent = len(mail.outbox)
    assert admin_client.post(_action(order, "resend-email"), {"kind": "placed"}).status_code == 302
    assert admin_client.post(_action(order, "cancel"), {"reason": "Sem estoque", "confirm": "on"}).status_code == 302
    order.refresh_from_db()
    line.refresh_from_db()
    assert (line.quantity_total, line.status) == (1, "fulfilled")
    assert order.canceled_at is not None
    assert len(mail.outbox) == sent  # e-mails go after commit (not captured in this test)


def test_refund_more_than_paid_shows_the_error(admin_client, place_order):
    order = place_order(lines=[("CAM", 3000, 1)], freight=800)
    response = admin_client.post(_action(order, "refund"), {"amount": "38,01", "reason": "x", "confirm": "on"})
    assert response.status_code == 200
    assert "R$ 38,00" in response.content.decode()
    assert Adjustment.objects.count() == 0


def test_viewer_sees_but_cannot_act(viewer_client, place_order):
    order = place_order()
    assert viewer_client.get("/admin/orders/order/").status_code == 200
    page = viewer_client.get(f"/admin/orders/order/{order.pk}/change/")
    assert page.status_code == 200
    assert _action(order, "ship") not in page.content.decode()
    for slug in ("ship", "deliver", "refund", "cancel", "note", "resend-email"):
        assert viewer_client.get(_action(order, slug)).status_code == 403
    response = viewer_client.post(_action(order, "ship"), {"tracking_number": "BR123456785BR"})
    assert response.status_code == 403
    assert FulfillmentEvent.objects.count() == 0


def test_shipping_staff_cannot_refund_and_refunding_staff_cannot_ship(place_order):
    order = place_order()
    shipper = _staff_with("view_order", "ship_order")
    refunder = _staff_with("view_order", "refund_order")
    assert shipper.get(_action(order, "ship")).status_code == 200
    assert shipper.post(_action(order, "refund"), {"amount": "1,00", "reason": "x", "confirm": "on"}).status_code == 403
    assert refunder.get(_action(order, "refund")).status_code == 200
    assert refunder.post(_action(order, "ship"), {"tracking_number": "BR123456785BR"}).status_code == 403
    assert Adjustment.objects.count() == 0 and FulfillmentEvent.objects.count() == 0


def test_bulk_mark_delivered_action_needs_ship_permission(admin_client, viewer_client, place_order):
    order = place_order(method="pickup")
    response = viewer_client.post(
        "/admin/orders/order/", {"action": "mark_delivered_action", "_selected_action": [order.pk]}
    )
    assert FulfillmentEvent.objects.count() == 0
    assert response.status_code in (200, 302)
    admin_client.post("/admin/orders/order/", {"action": "mark_delivered_action", "_selected_action": [order.pk]})
    order.refresh_from_db()
    assert order.status == "delivered"


def test_bulk_mark_delivered_says_how_many_in_proper_plural(admin_client, place_order):
    one = admin_client.post(
        "/admin/orders/order/",
        {"action": "mark_delivered_action", "_selected_action": [place_order(method="pickup").pk]},
        follow=True,
    ).content.decode()
    assert "1 pedido marcado como entregue." in one and "(s)" not in one
    both = [place_order(method="pickup").pk, place_order(method="pickup").pk]
    two = admin_client.post(
        "/admin/orders/order/", {"action": "mark_delivered_action", "_selected_action": both}, follow=True
    ).content.decode()
    assert "2 pedidos marcados como entregues." in two


def test_orders_cannot_be_added_or_deleted(admin_client, place_order):
    order = place_order()
    assert admin_client.get("/admin/orders/order/add/").status_code == 403
    assert admin_client.post(f"/admin/orders/order/{order.pk}/delete/", {"post": "yes"}).status_code == 403
    assert Order.objects.filter(pk=order.pk).exists()


def test_refund_result_page_records_a_manual_refund(admin_client, place_order):
    order = place_order(payment_type="card")
    admin_client.post(_action(order, "refund"), {"amount": "5,00", "reason": "Cartão", "confirm": "on"})
    refund = Adjustment.objects.get(order=order, type="refund")
    assert refund.status == "pending"
    response = admin_client.post(
        _action(order, "refund-result"), {"adjustment": refund.public_id, "status": "completed"}
    )
    assert response.status_code == 302
    refund.refresh_from_db()
    order.refresh_from_db()
    assert (refund.status, order.refunded_amount, order.payment_status) == ("completed", 500, "partially_refunded")


def test_change_expectation_date_and_description(admin_client, place_order):
    order = place_order()
    expectation = order.expectations.get()
    response = admin_client.post(
        _action(order, "expectation"),
        {
            "expectation": expectation.public_id,
            "description": "Chega em 10 dias úteis",
            "fulfillable_on": "2026-12-10 12:00",
        },
    )
    assert response.status_code == 302
    expectation.refresh_from_db()
    # the admin works in America/Sao_Paulo: 12:00 local is 15:00 UTC
    assert (expectation.description, expectation.fulfillable_on) == ("Chega em 10 dias úteis", "2026-12-10T15:00:00Z")


def test_action_page_breadcrumbs_are_the_django_61_list(admin_client, place_order):
    """QA: the action pages had an unstyled <div class="breadcrumbs"> (Django 6.1 styles ol.breadcrumbs)."""
    order = place_order()
    html = admin_client.get(_action(order, "ship")).content.decode()
    assert '<div class="breadcrumbs">' not in html
    assert '<ol class="breadcrumbs">' in html
    assert f'<li><a href="/admin/orders/order/{order.pk}/change/">#{order.number}</a></li>' in html
    assert '<li aria-current="page">Registrar envio</li>' in html


def _summary_status(client: Client, order: Order) -> str:
    """The status in the action page's summary line ("Ana <ana@…> · Pronto para retirada · Pago")."""
    html = re.sub(r"<[^>]+>", "", client.get(_action(order, "note")).content.decode())
    found = re.search(rf"{re.escape(order.buyer_email)}&gt; · ([^·]*) · ", html)
    return found.group(1) if found else ""


def test_action_pages_name_the_orders_current_status(admin_client, place_order):
    """Browser walk: after "Pronto para retirada" the summary line of the order's action pages still read
    "Pedido recebido · Pago" (the list and the order said "Pronto para retirada")."""
    pickup = place_order(method="pickup")
    assert _summary_status(admin_client, pickup) == "Pedido recebido"
    order_pickup_ready(order_id=pickup.public_id, actor="lojista")
    assert _summary_status(admin_client, pickup) == "Pronto para retirada"
    order_mark_delivered(order_id=pickup.public_id, description="Retirado na loja")
    assert _summary_status(admin_client, pickup) == "Entregue"
    shipped = place_order()
    ship_order(order_id=shipped.public_id, tracking_number="BR123456785BR")
    assert _summary_status(admin_client, shipped) == "Enviado"
    order_mark_delivered(order_id=shipped.public_id)
    assert _summary_status(admin_client, shipped) == "Entregue"
    canceled = place_order()
    order_cancel(order_id=canceled.public_id, reason="Sem estoque")
    assert _summary_status(admin_client, canceled) == "Cancelado"


def test_order_page_shows_labels_not_codes(admin_client, place_order):
    # given a shipped Pix order whose e-mails were sent
    from orders.services import order_ship
    from orders.types import LineQuantity

    order = place_order(lines=[("CAM-AZUL", 3000, 2)])
    line = order.lines.get()
    order_ship(order_id=order.public_id, tracking_number="BR123456785BR", lines=[LineQuantity(line.public_id, 2)])
    placed = OrderEvent.objects.get(order=order, kind="placed")
    # when staff open the order
    html = admin_client.get(f"/admin/orders/order/{order.pk}/change/").content.decode()
    # then method, payment type, availability, items and line status are words, not codes
    assert '<div class="readonly">Entrega</div>' in html
    assert '<div class="readonly">Pix</div>' in html
    assert "<p>Agora</p>" in html
    assert "<p>2× Produto CAM-AZUL (CAM-AZUL)</p>" in html
    assert f"2× {line.public_id}" not in html
    assert "<p>Enviado</p>" in html and "Atendido" not in html
    assert "Public id" not in html and "ID público" in html
    # and the timeline shows one local time (America/Sao_Paulo) with a human label, no "placed @ <UTC>" caption
    local = timezone.localtime(placed.created_at).strftime("%d/%m/%Y %H:%M")
    assert f"<p>{local}</p>" in html
    assert "<p>Pedido recebido</p>" in html
    assert "placed @" not in html
    assert "E-mail “Pedido recebido” enviado para ana@example.com.br." in html
    assert "E-mail 'placed'" not in html


def test_changelist_filters_and_columns_are_labelled_and_compact(admin_client, place_order):
    place_order(method="shipping")
    place_order(method="pickup", payment_type="card")
    html = admin_client.get("/admin/orders/order/").content.decode()
    for label in ("Entrega", "Retirada", "Pix", "Cartão"):
        assert f"{label} (1)" in html
    assert "shipping (1)" not in html and "pix (1)" not in html
    # status and payment share one column; no separate payment column to overflow 1280 px
    assert 'class="field-situation">Pedido recebido<small class="orders-payment-paid">Pago</small>' in html
    assert "column-payment_status" not in html
    assert "orders/admin.css" in html


def test_admin_sidebar_names_are_portuguese(admin_client):
    html = admin_client.get("/admin/").content.decode()
    for english in ("Coupon redemptions", "Card payments", "Payment events", "Pix charges", "Pix refunds"):
        assert english not in html
    for portuguese in ("Usos de cupom", "Pagamentos com cartão", "Eventos de pagamento", "Cobranças Pix"):
        assert portuguese in html


def test_order_page_shows_phone_and_tax_id_as_people_write_them(admin_client, place_order):
    """Walk-through: the buyer block read "+5511987654321" and "52998224725"."""
    order = place_order()
    order.buyer_phone, order.buyer_tax_id = "+5511987654321", "52998224725"
    order.save(update_fields=["buyer_phone", "buyer_tax_id"])
    html = admin_client.get(f"/admin/orders/order/{order.pk}/change/").content.decode()
    assert '<a href="https://wa.me/5511987654321" target="_blank" rel="noopener">(11) 98765-4321</a>' in html
    assert "529.982.247-25" in html
    order.buyer_phone, order.buyer_tax_id = "", "12ABC34501DE35"  # no phone; an alphanumeric CNPJ
    order.save(update_fields=["buyer_phone", "buyer_tax_id"])
    html = admin_client.get(f"/admin/orders/order/{order.pk}/change/").content.decode()
    assert "12.ABC.345/01DE-35" in html and "wa.me" not in html


def test_the_order_list_filters_orders_with_a_failed_refund(admin_client, place_order):
    """QA walk (closing the month): "which refunds failed?" — the list filtered only the pending ones, and a
    refund the PSP refused was found nowhere but on its order's page."""
    from orders.services import adjustment_mark_refund_result, order_refund

    failed_order, pending_order, _ = (place_order(lines=[("CAF", 5000, 1)]) for _ in range(3))
    failed = order_refund(order_id=failed_order.public_id, amount=1000, reason="Avaria")
    adjustment_mark_refund_result(adjustment_id=failed.public_id, status="failed")
    order_refund(order_id=pending_order.public_id, amount=500, reason="Frete")

    def listed(value: str) -> set[int]:
        response = admin_client.get(f"/admin/orders/order/?refund={value}")
        return {order.number for order in response.context["cl"].result_list}

    assert listed("failed") == {failed_order.number}
    assert listed("pending") == {pending_order.number}
    assert "Reembolso com falha" in admin_client.get("/admin/orders/order/").content.decode()


def test_order_page_values_count_a_refund_in_progress_and_name_a_failed_one(admin_client, client, place_order):
    """The admin's "Valores" said "reembolsado R$ 10,00" and nothing else while R$ 5,00 was still on its way back
    and R$ 7,00 had been refused by the provider: it now says what the buyer's page says (paid, refunded, in
    progress, final value) plus the failed refund staff must redo, which does not lower the final value; every
    amount unsigned, as the field "reembolsado" beside it."""
    import re

    from orders.services import adjustment_mark_refund_result, order_refund

    order = place_order(lines=[("CAF", 5000, 1)], freight=0)
    done = order_refund(order_id=order.public_id, amount=1000, reason="Avaria")
    adjustment_mark_refund_result(adjustment_id=done.public_id, status="completed")
    order_refund(order_id=order.public_id, amount=500, reason="Frete")
    failed = order_refund(order_id=order.public_id, amount=700, reason="Brinde")
    adjustment_mark_refund_result(adjustment_id=failed.public_id, status="failed")

    html = admin_client.get(f"/admin/orders/order/{order.pk}/change/").content.decode()
    # the field "reembolsado" and the box beside it name the same sum, unsigned (merchant gap, session 48: the box
    # read "Reembolsado: -R$ 10,00" beside the field's "R$ 10,00")
    field = html.split('class="form-row field-refunded_display')[1].split('class="form-row')[0]
    assert re.findall(r'<div class="readonly">([^<]*)</div>', field) == ["R$ 10,00"]
    shown = html.split('class="form-row field-refunds_display')[1].split("</fieldset>")[0]
    assert re.findall(r'<div class="money-[a-z_]+">([^<]*)</div>', shown) == [
        "Pago: R$ 50,00",
        "Reembolsado: R$ 10,00",
        "Reembolso em andamento: R$ 5,00",
        "Reembolso com falha (não devolvido): R$ 7,00",
        "Valor final do pedido: R$ 35,00",
    ]
    # the buyer's page counts the same money: the refund in progress is there, the failed one is not taken off
    buyer = client.get(f"/orders/{order.permalink_token}").content.decode()
    table = buyer.split('data-testid="order-totals">')[1].split("</table>")[0]
    assert re.findall(r'<th scope="row">([^<]*)</th><td>([^<]*)</td>', table)[-4:] == [
        ("Pago", "R$ 50,00"),
        ("Reembolsado", "-R$ 10,00"),
        ("Reembolso em andamento", "-R$ 5,00"),
        ("Valor final do pedido", "R$ 35,00"),
    ]
