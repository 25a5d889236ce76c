"""A real browser in the admin: a pickup order through "pronto para retirada" → "retirado", and a wrong
Correios code refused, then a shipment's code corrected with one new e-mail to the buyer."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.core import mail

from orders.models import EmailDelivery, Order
from orders.services import order_place_from_checkout
from tests.e2e.admin_browser import STAFF, launch, needs_chromium, staff_login
from tests.orders.conftest import make_checkout


def _open_order(page, base: str, order: Order) -> None:
    path = f"/admin/orders/order/{order.pk}/change/"
    staff_login(page, base, path)


@pytest.mark.e2e
@needs_chromium
def test_pickup_order_ready_then_picked_up(live_server, transactional_db) -> None:
    from playwright.sync_api import expect, sync_playwright

    order = order_place_from_checkout(checkout=make_checkout(lines=[("CAF", 3590, 1)], freight=0, method="pickup"))
    User.objects.create_superuser(STAFF[0], "lojista@example.com.br", STAFF[1])
    mail.outbox.clear()
    with sync_playwright() as playwright:
        browser = launch(playwright)
        try:
            page = browser.new_page(locale="pt-BR")
            _open_order(page, live_server.url, order)
            actions = page.locator("a.orders-action")
            expect(actions.filter(has_text="Registrar envio")).to_have_count(0)
            page.click("a.orders-action:has-text('Pronto para retirada')")
            page.click("input[name=_submit]")
            expect(page.locator("ul.messagelist")).to_contain_text("Pedido pronto para retirada")
            expect(actions.filter(has_text="Pronto para retirada")).to_have_count(0)
            page.click("a.orders-action:has-text('Marcar como retirado')")
            page.check("#id_confirm")
            page.click("input[name=_submit]")
            expect(page.locator("ul.messagelist")).to_contain_text("Retirada registrada.")
        finally:
            browser.close()
    order.refresh_from_db()
    assert order.status == "delivered"
    assert [m.subject.split(": ", 1)[1] for m in mail.outbox] == [
        f"Seu pedido #{order.number} está pronto para retirada",
        f"Seu pedido #{order.number} foi entregue",
    ]


@pytest.mark.e2e
@needs_chromium
def test_wrong_tracking_code_refused_then_corrected_once(live_server, transactional_db) -> None:
    from playwright.sync_api import expect, sync_playwright

    order = order_place_from_checkout(checkout=make_checkout(lines=[("CAM", 3000, 1)]))
    User.objects.create_superuser(STAFF[0], "lojista@example.com.br", STAFF[1])
    mail.outbox.clear()
    with sync_playwright() as playwright:
        browser = launch(playwright)
        try:
            page = browser.new_page(locale="pt-BR")
            _open_order(page, live_server.url, order)
            page.click("a.orders-action:has-text('Registrar envio')")
            page.fill("#id_tracking_number", "XYZ")
            page.click("input[name=_submit]")
            expect(page.locator(".field-tracking_number .errorlist")).to_contain_text("Código dos Correios inválido")
            page.fill("#id_tracking_number", "BR123456785BR")  # valid, but the wrong parcel
            page.click("input[name=_submit]")
            expect(page.locator("ul.messagelist")).to_contain_text("BR123456785BR")
            page.click("a.orders-action:has-text('Corrigir rastreio')")
            page.fill("#id_tracking_number", "AA473124829GB")
            page.click("input[name=_submit]")
            expect(page.locator("ul.messagelist")).to_contain_text("Código de rastreio corrigido: AA473124829GB")
            # the same correction submitted again (a second tab, a double click) changes and sends nothing
            page.click("a.orders-action:has-text('Corrigir rastreio')")
            page.fill("#id_tracking_number", "AA473124829GB")
            page.click("input[name=_submit]")
            expect(page.locator(".field-tracking_number .errorlist")).to_contain_text(
                "Este já é o código do envio, com a mesma transportadora."
            )
            buyer = browser.new_context(locale="pt-BR").new_page()
            buyer.goto(f"{live_server.url}/orders/{order.permalink_token}")
            # corrections replace: one shipment, with the right code only (issue 33)
            expect(buyer.get_by_test_id("tracking-link")).to_have_count(1)
            expect(buyer.get_by_test_id("tracking-link")).to_have_text("AA473124829GB")
            expect(buyer.get_by_test_id("order-events")).not_to_contain_text("BR123456785BR")
        finally:
            browser.close()
    shipped = [m for m in mail.outbox if "foi enviado" in m.subject or "rastreio corrigido" in m.subject]
    assert len(shipped) == 2  # the shipment, then exactly one correction, which says so
    assert "Código de rastreio corrigido" in shipped[1].subject and "foi enviado" not in shipped[1].body
    assert EmailDelivery.objects.filter(order=order, kind="shipped").count() == 2


@pytest.mark.e2e
@needs_chromium
def test_delivery_address_corrected_on_a_phone_bad_fields_named_then_the_buyer_sees_it(
    live_server, transactional_db
) -> None:
    """ "Corrigir endereço de entrega" at 360 px: no sideways scroll, each bad field named in Portuguese and nothing
    saved; then the buyer's order page shows the new address."""
    from playwright.sync_api import expect, sync_playwright

    order = order_place_from_checkout(checkout=make_checkout(lines=[("CAM", 3000, 1)]))
    User.objects.create_superuser(STAFF[0], "lojista@example.com.br", STAFF[1])
    with sync_playwright() as playwright:
        browser = launch(playwright)
        try:
            page = browser.new_page(locale="pt-BR", viewport={"width": 360, "height": 800})
            _open_order(page, live_server.url, order)
            page.click("a.orders-action:has-text('Corrigir endereço de entrega')")
            expect(page.locator("#id_postal_code")).to_have_value("01310-100")
            assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
            page.fill("#id_postal_code", "2004-002")
            page.fill("#id_street", "")
            page.fill("#id_state", "SP")
            page.click("input[name=_submit]")
            expect(page.locator(".field-postal_code .errorlist")).to_have_text("CEP inválido: use o formato 00000-000.")
            expect(page.locator(".field-street .errorlist")).to_have_text("Informe a rua.")
            assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
            page.fill("#id_postal_code", "20040-002")
            page.click("input[name=_submit]")
            expect(page.locator(".field-state .errorlist")).to_have_text("A UF não corresponde ao CEP (o CEP é de RJ).")
            page.fill("#id_street", "Rua da Assembleia")
            page.fill("#id_number", "10")
            page.fill("#id_complement", "Sala 1201")
            page.fill("#id_neighborhood", "Centro")
            page.fill("#id_city", "Rio de Janeiro")
            page.fill("#id_state", "")  # empty: the CEP's
            page.click("input[name=_submit]")
            # the new CEP changes the freight: said before anything is saved, and asked
            asked = page.locator(".field-confirm_freight .errorlist")
            expect(asked).to_contain_text("Frete:")
            expect(asked).to_contain_text("Nada foi salvo ainda")
            assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
            page.check("#id_confirm_freight")
            page.click("input[name=_submit]")
            expect(page.locator("ul.messagelist")).to_contain_text("Endereço de entrega salvo")
            buyer = browser.new_context(locale="pt-BR").new_page()
            buyer.goto(f"{live_server.url}/orders/{order.permalink_token}")
            expect(buyer.get_by_test_id("order-address")).to_contain_text("Rua da Assembleia, 10 — Sala 1201")
            expect(buyer.get_by_test_id("order-address")).to_contain_text("Rio de Janeiro/RJ")
        finally:
            browser.close()
    order.refresh_from_db()
    assert (order.destination["postal_code"], order.destination["state"]) == ("20040-002", "RJ")
