"""The buyer cancels one order, asks to return another and corrects a third one's delivery address from the order
page, in a real browser on a 360 px phone (issue 35): the forms fit the screen (no horizontal scroll), the answers
are in Portuguese, and the requests reach the same services as the agents' order_actions extension and staff."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from orders.models import Order, OrderEvent, ReturnRequest
from orders.services import order_mark_delivered, order_place_from_checkout, order_ship
from shop.checkout.fulfillment import cep_cache_forget
from tests.e2e.admin_browser import launch, needs_chromium
from tests.orders.conftest import make_checkout
from tests.shop.fake_cep import RIO_CEP, fake_cep_provider

pytestmark = [pytest.mark.e2e, needs_chromium]
SCREENSHOT_DIR = os.environ.get("SCREENSHOT_DIR", "")


def _no_horizontal_scroll(page) -> None:
    width, inner = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert width <= inner, (width, inner)


def test_buyer_cancels_and_returns_on_a_360px_phone(live_server, transactional_db, tmp_path: Path) -> None:
    from playwright.sync_api import expect, sync_playwright

    to_cancel = order_place_from_checkout(checkout=make_checkout(lines=[("CAM", 3000, 1)]))
    to_return = order_place_from_checkout(checkout=make_checkout(lines=[("CAM", 3000, 2), ("BONE", 2000, 1)]))
    order_ship(order_id=to_return.public_id, tracking_number="BR123456785BR")
    order_mark_delivered(order_id=to_return.public_id)
    shots = Path(SCREENSHOT_DIR) if SCREENSHOT_DIR else tmp_path
    with sync_playwright() as playwright:
        browser = launch(playwright)
        try:
            page = browser.new_context(locale="pt-BR", viewport={"width": 360, "height": 740}).new_page()
            # cancel: nothing shipped yet
            page.goto(f"{live_server.url}/orders/{to_cancel.permalink_token}")
            _no_horizontal_scroll(page)
            form = page.get_by_test_id("cancel-form")
            form.get_by_label("Motivo (opcional)").fill("Comprei o tamanho errado")
            form.get_by_label("Confirmo o cancelamento do pedido").check()
            form.get_by_test_id("cancel-submit").click()
            expect(page.locator(".flash")).to_contain_text("Pedido cancelado. O valor pago será devolvido")
            expect(page.get_by_test_id("order-status")).to_contain_text("Cancelado")
            assert page.get_by_test_id("cancel-form").count() == 0
            # return: delivered, within the 7 days of the CDC
            page.goto(f"{live_server.url}/orders/{to_return.permalink_token}")
            expect(page.get_by_test_id("return-window")).to_contain_text("7 dias")
            _no_horizontal_scroll(page)
            page.screenshot(path=str(shots / "order-return-form-360.png"), full_page=True)
            form = page.get_by_test_id("return-form")
            form.get_by_label("Quantidade de Produto CAM a devolver (até 2)").fill("1")
            form.get_by_label("Motivo", exact=True).select_option("defective")
            form.get_by_test_id("return-submit").click()
            expect(page.locator(".flash")).to_contain_text("Devolução solicitada.")
            expect(page.get_by_test_id("return-requests")).to_contain_text("Solicitada")
            expect(page.get_by_test_id("return-requests")).to_contain_text("1× Produto CAM")
            _no_horizontal_scroll(page)
            page.screenshot(path=str(shots / "order-return-requested-360.png"), full_page=True)
        finally:
            browser.close()
    assert Order.objects.get(pk=to_cancel.pk).status == "canceled"
    [request] = ReturnRequest.objects.filter(order=to_return)
    assert (request.status, request.reason_code, request.requested_by) == ("requested", "defective", "buyer")


def test_buyer_corrects_the_delivery_address_on_a_360px_phone(
    live_server, transactional_db, settings, tmp_path: Path
) -> None:
    """Buyer walk: the buyer typed the old flat's address. On the order page ("Pedido recebido") a bad CEP and an
    empty street are named beside their fields in Portuguese, what was typed stays; the new CEP fills street,
    bairro, city and UF as the checkout's does; the saved address is the one the page shows."""
    from playwright.sync_api import expect, sync_playwright

    order = order_place_from_checkout(checkout=make_checkout(lines=[("CAM", 3000, 1)]))
    shots = Path(SCREENSHOT_DIR) if SCREENSHOT_DIR else tmp_path
    with fake_cep_provider() as provider:
        settings.CEP_PROVIDER_URL = provider.url
        cep_cache_forget(RIO_CEP)
        with sync_playwright() as playwright:
            browser = launch(playwright)
            try:
                context = browser.new_context(
                    locale="pt-BR", viewport={"width": 360, "height": 740}, has_touch=True, is_mobile=True
                )
                page = context.new_page()
                page.goto(f"{live_server.url}{order.permalink_path}")
                summary = page.get_by_text("Corrigir endereço de entrega")
                assert summary.bounding_box()["height"] >= 44
                summary.tap()
                form = page.get_by_test_id("address-form")
                expect(form.get_by_label("Rua")).to_have_value("Rua das Flores")
                # a CEP with a digit missing and the street wiped: both named beside their fields, nothing lost
                form.get_by_label("CEP").fill("2004-002")
                form.get_by_label("Rua").fill("")
                form.get_by_label("Complemento").fill("Sala 1201")
                form.get_by_test_id("address-submit").tap()
                expect(page.get_by_test_id("address-error-cep")).to_have_text("CEP inválido: use o formato 00000-000.")
                expect(page.get_by_test_id("address-error-street")).to_have_text("Informe a rua.")
                form = page.get_by_test_id("address-form")
                expect(form).to_be_visible()  # the form stays open on the error
                expect(form.get_by_label("Complemento")).to_have_value("Sala 1201")
                _no_horizontal_scroll(page)
                page.screenshot(path=str(shots / "order-address-errors-360.png"), full_page=True)
                # the right CEP: the address comes from the CEP lookup, the buyer adds the number
                form.get_by_label("CEP").fill("20040-002")
                expect(form.get_by_label("Rua")).to_have_value("Avenida Rio Branco")
                expect(form.get_by_label("Cidade")).to_have_value("Rio de Janeiro")
                expect(form.get_by_label("UF")).to_have_value("RJ")
                form.get_by_label("Número").fill("10")
                form.get_by_test_id("address-submit").tap()
                expect(page.locator(".flash")).to_contain_text("Endereço de entrega atualizado.")
                expect(page.get_by_test_id("order-address")).to_contain_text("Avenida Rio Branco, 10 — Sala 1201")
                expect(page.get_by_test_id("order-address")).to_contain_text("CEP 20040-002")
                _no_horizontal_scroll(page)
            finally:
                browser.close()
    order.refresh_from_db()
    assert (order.destination["street"], order.destination["city"]) == ("Avenida Rio Branco", "Rio de Janeiro")
    assert OrderEvent.objects.get(order=order, kind="destination_updated").data["by"] == "buyer"
